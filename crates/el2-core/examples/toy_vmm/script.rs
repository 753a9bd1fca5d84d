//! What the toy guest does: PSCI calls, console output through the UART, an ID-register
//! read, and two accesses the VMM refuses, then `SYSTEM_OFF`.

use el2_core::exit::SysRegAccess;
use el2_core::inject;
use el2_core::mmio::AccessSize;
use el2_core::psci::{self, AffinityState, PsciReturn};

use crate::guest::{Expect, Step};
use crate::syndrome;
use crate::uart;
use crate::vmm::GUEST_ID_AA64PFR0;

/// MPIDR of the secondary vCPU the guest starts.
pub const SECONDARY_MPIDR: u64 = 1;
/// Where the secondary vCPU starts.
pub const SECONDARY_ENTRY: u64 = 0x4009_0000;
/// The context id the secondary vCPU finds in `X0`.
pub const SECONDARY_CONTEXT: u64 = 0x5ec0_0001;
/// An IPA in the device region that no device backs.
pub const UNBACKED_IPA: u64 = 0x0a00_0000;
/// What the guest prints on the UART.
pub const CONSOLE_TEXT: &[u8] = b"ok\n";

/// `HVC #0` with `X0..X3` = `regs`, expecting `X0` = `x0` back.
fn hvc(insn: &'static str, regs: [u64; 4], x0: u64) -> Step {
    Step {
        insn,
        regs: (0..).zip(regs).collect(),
        exit: syndrome::hvc(0),
        expect: Expect::Next(Some((0, x0))),
    }
}

/// `STRB W1, [X0]` of `byte` to the UART's data register.
fn putc(byte: u8) -> Step {
    let ipa = uart::BASE + uart::DR;
    Step {
        insn: "strb w1, [x0]          // UARTDR",
        regs: vec![(0, ipa), (1, u64::from(byte))],
        exit: syndrome::data_abort(ipa, ipa, AccessSize::Byte, 1, false, true),
        expect: Expect::Next(None),
    }
}

/// The guest's trapping instructions, in order.
pub fn steps() -> Vec<Step> {
    let psci_version = u64::from(psci::PSCI_VERSION);
    let cpu_on = u64::from(psci::CPU_ON_64);
    let affinity_info = u64::from(psci::AFFINITY_INFO_64);
    let fr = uart::BASE + uart::FR;
    // `mrs x2, id_aa64pfr0_el1`: Op0 = 3, Op1 = 0, CRn = 0, CRm = 4, Op2 = 0.
    let read_pfr0 = SysRegAccess {
        op0: 3,
        op1: 0,
        crn: 0,
        crm: 4,
        op2: 0,
        rt: 2,
        is_read: true,
    };
    // `msr s3_1_c15_c2_0, x3`: an IMPLEMENTATION DEFINED register (HCR_EL2.TIDCP traps it).
    let write_impdef = SysRegAccess {
        op0: 3,
        op1: 1,
        crn: 15,
        crm: 2,
        op2: 0,
        rt: 3,
        is_read: false,
    };

    let mut steps = vec![
        hvc(
            "hvc #0                 // PSCI_VERSION",
            [psci_version, 0, 0, 0],
            psci::PSCI_VERSION_1_0,
        ),
        hvc(
            "hvc #0                 // CPU_ON(1, entry, context)",
            [cpu_on, SECONDARY_MPIDR, SECONDARY_ENTRY, SECONDARY_CONTEXT],
            PsciReturn::Success.to_reg(),
        ),
        hvc(
            "hvc #0                 // AFFINITY_INFO(1, level 0)",
            [affinity_info, SECONDARY_MPIDR, 0, 0],
            AffinityState::On as u64,
        ),
        hvc(
            "hvc #0                 // CPU_ON(1, ...) again",
            [cpu_on, SECONDARY_MPIDR, SECONDARY_ENTRY, SECONDARY_CONTEXT],
            PsciReturn::AlreadyOn.to_reg(),
        ),
        Step {
            insn: "ldr w2, [x0, #0x18]    // UARTFR",
            regs: vec![(0, uart::BASE)],
            exit: syndrome::data_abort(fr, fr, AccessSize::Word, 2, false, false),
            expect: Expect::Next(Some((2, uart::FR_TXFE | uart::FR_RXFE))),
        },
    ];
    let mut text = CONSOLE_TEXT.iter().map(|&b| putc(b));
    steps.extend(text.next());
    steps.push(Step {
        insn: "(a physical IRQ arrives: the host's timer tick)",
        regs: Vec::new(),
        exit: syndrome::irq(),
        expect: Expect::Same,
    });
    steps.extend(text);
    steps.extend([
        Step {
            insn: "mrs x2, id_aa64pfr0_el1",
            regs: Vec::new(),
            exit: syndrome::sysreg(read_pfr0),
            expect: Expect::Next(Some((2, GUEST_ID_AA64PFR0))),
        },
        Step {
            insn: "msr s3_1_c15_c2_0, x3  // IMPLEMENTATION DEFINED",
            regs: vec![(3, 1)],
            exit: syndrome::sysreg(write_impdef),
            expect: Expect::Exception {
                esr_el1: inject::esr_undefined(),
            },
        },
        Step {
            insn: "str w1, [x0]           // nothing mapped there",
            regs: vec![(0, UNBACKED_IPA)],
            exit: syndrome::data_abort(
                UNBACKED_IPA,
                UNBACKED_IPA,
                AccessSize::Word,
                1,
                false,
                true,
            ),
            expect: Expect::Exception {
                esr_el1: inject::esr_data_external_abort(false, true),
            },
        },
        Step {
            insn: "hvc #0                 // SYSTEM_OFF",
            regs: vec![(0, u64::from(psci::SYSTEM_OFF))],
            exit: syndrome::hvc(0),
            expect: Expect::Stop,
        },
    ]);
    steps
}
