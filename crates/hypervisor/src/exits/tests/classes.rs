//! One test (at least) per exception class: the emulated answer for good input, the
//! architectural refusal for bad input.

use el2_core::exit::ec;
use el2_core::mmio::{AccessSize, MmioAccess};
use el2_core::switch::{ExitKind, RawExit};
use vtimer::PhysTimerReg;

use super::mock::{Rig, DEV_BASE, DEV_IRQ, DIRTY_CALL, EL1H, PC, RAM_BASE, VBAR};
use super::{dabt, esr, hpfar, sysreg_iss, DFSC_PERMISSION_L3, DFSC_TRANSLATION_L3, IL};
use crate::exits::Devices;
use crate::exits::{Outcome, VmEnd, HV_EXIT_COUNT, HV_YIELD};
use crate::stats::ExitReason;

const NOT_SUPPORTED: u64 = u64::MAX;
/// `ESR_EL1` of an injected UNDEFINED exception (EC 0, IL).
const ESR_UNDEFINED: u64 = 0x0200_0000;
/// Vector offset of a synchronous exception from the current EL with `SP_ELx`.
const VECTOR_CURRENT_SPX: u64 = 0x200;
/// Vector offset of a synchronous exception from a lower EL in AArch32.
const VECTOR_LOWER_A32: u64 = 0x600;

fn count(r: &Rig, reason: ExitReason) -> u64 {
    r.stats.get(reason as usize).unwrap()
}

/// Asserts an UNDEFINED exception was injected at EL1h for the instruction at [`PC`].
fn assert_undefined(r: &Rig) {
    assert_eq!(r.vcpu.el1.esr_el1, ESR_UNDEFINED);
    assert_eq!(r.vcpu.el1.elr_el1, PC);
    assert_eq!(r.vcpu.regs.pc, VBAR + VECTOR_CURRENT_SPX);
}

fn hvc(r: &mut Rig, x0: u64) -> Outcome {
    r.vcpu.regs.x[0] = x0;
    r.sync(esr(ec::HVC64, 0), 0, 0)
}

#[test]
fn hvc64_smccc_version() {
    let mut r = Rig::new();
    assert_eq!(hvc(&mut r, 0x8000_0000), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0001);
    assert_eq!(r.vcpu.regs.pc, PC, "ELR_EL2 already points after an HVC");
    assert_eq!(count(&r, ExitReason::Hvc), 1);
    assert!(r.vm.warnings.is_empty());
}

#[test]
fn hvc64_bad_immediate_and_unknown_function() {
    let mut r = Rig::new();
    assert_eq!(r.sync(esr(ec::HVC64, 0x1234), 0, 0), Outcome::Refused);
    assert_eq!(r.vcpu.regs.x[0], NOT_SUPPORTED);
    assert!(r.vm.warnings[0].contains("HVC #0x1234 is not an SMCCC call"));
    assert_eq!(hvc(&mut r, 0x8200_ffff), Outcome::Refused);
    assert_eq!(r.vcpu.regs.x[0], NOT_SUPPORTED);
    assert!(r.vm.warnings[1].contains("SMCCC function 0x8200ffff not supported"));
    // A feature query answering NOT_SUPPORTED about another function is no refusal.
    r.vcpu.regs.x[1] = 0x8200_ffff;
    assert_eq!(hvc(&mut r, 0x8000_0001), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], NOT_SUPPORTED);
    assert_eq!(r.vm.warnings.len(), 2);
    assert!(!r.injected());
}

#[test]
fn hvc64_vendor_calls() {
    let mut r = Rig::new();
    assert_eq!(hvc(&mut r, u64::from(HV_YIELD)), Outcome::Yield);
    assert_eq!(r.vcpu.regs.x[0], 0);
    // HV_EXIT_COUNT counts the stored exits plus this run's, the call itself included.
    for _ in 0..5 {
        r.vm.stored.count(ExitReason::Hvc);
    }
    r.vcpu.regs.x[1] = ExitReason::Hvc as u64;
    assert_eq!(hvc(&mut r, u64::from(HV_EXIT_COUNT)), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 5 + 2);
    r.vcpu.regs.x[1] = 99;
    assert_eq!(hvc(&mut r, u64::from(HV_EXIT_COUNT)), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], NOT_SUPPORTED);
    // Served outside the handlers (dirty logging).
    (r.vcpu.regs.x[1], r.vcpu.regs.x[2]) = (RAM_BASE, 0x1000);
    assert_eq!(hvc(&mut r, u64::from(DIRTY_CALL)), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 7);
    assert_eq!(r.vm.vendor_calls, [(DIRTY_CALL, RAM_BASE, 0x1000)]);
}

#[test]
fn hvc64_psci_power() {
    let mut r = Rig::new();
    // CPU_ON of vCPU 1 (entry in x2, context in x3).
    (r.vcpu.regs.x[1], r.vcpu.regs.x[2]) = (1, RAM_BASE);
    assert_eq!(hvc(&mut r, 0xc400_0003), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0);
    assert!(r.vm.vcpus_on[1]);
    // CPU_SUSPEND returns at once.
    assert_eq!(hvc(&mut r, 0xc400_0001), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0);
    // CPU_OFF with another vCPU on: the VM goes on.
    assert_eq!(hvc(&mut r, 0x8400_0002), Outcome::Yield);
    assert_eq!(r.vm.end, None);
    // The last vCPU off ends the VM.
    r.vm.vcpus_on[1] = false;
    r.vm.vcpus_on[0] = true;
    assert_eq!(hvc(&mut r, 0x8400_0002), Outcome::Yield);
    assert_eq!(r.vm.end, Some(VmEnd::PowerOff));

    let mut r = Rig::new();
    assert_eq!(hvc(&mut r, 0x8400_0009), Outcome::Yield);
    assert_eq!(r.vm.end, Some(VmEnd::Reset));
    assert_eq!(r.vm.infos, ["PSCI SYSTEM_RESET"]);
    let mut r = Rig::new();
    assert_eq!(hvc(&mut r, 0x8400_0008), Outcome::Yield);
    assert_eq!(r.vm.end, Some(VmEnd::PowerOff));
}

#[test]
fn hvc32_uses_the_32_bit_convention() {
    let mut r = Rig::new();
    // PSCI_VERSION with garbage in the upper halves of the registers.
    r.vcpu.regs.x[0] = 0xffff_ffff_8400_0000;
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0000);
    // An SMC64 function ID is not a call from AArch32.
    r.vcpu.regs.x[0] = 0xc400_0003;
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Refused);
    assert_eq!(r.vcpu.regs.x[0], NOT_SUPPORTED);
    assert!(!r.vm.vcpus_on[1]);
    // A non-zero immediate is no SMCCC call either.
    assert_eq!(r.sync(esr(ec::HVC32, 1), 0, 0), Outcome::Refused);
    assert_eq!(count(&r, ExitReason::Hvc), 3);
}

#[test]
fn smc64_steps_over_the_smc() {
    let mut r = Rig::new();
    r.vcpu.regs.x[0] = 0x8000_0000;
    assert_eq!(r.sync(esr(ec::SMC64, 0), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0001);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    assert_eq!(count(&r, ExitReason::Smc), 1);
    r.vcpu.regs.x[0] = 0x8200_ffff;
    assert_eq!(r.sync(esr(ec::SMC64, 0), 0, 0), Outcome::Refused);
    assert_eq!(r.vcpu.regs.pc, PC + 8);
}

#[test]
fn smc32_condition_failed_is_a_nop() {
    let mut r = Rig::new();
    // AArch32 user mode, Z clear; SMC with COND = EQ (CV = 1).
    r.vcpu.regs.pstate = 0x10;
    r.vcpu.regs.x[0] = 0x8400_0000;
    let cond_eq = 1 << 24; // CV = 1, COND = 0b0000 (EQ)
    assert_eq!(r.sync(esr(ec::SMC32, cond_eq), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x8400_0000, "not executed");
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // Z set: it passes and is a PSCI call.
    r.vcpu.regs.pstate |= 1 << 30;
    assert_eq!(r.sync(esr(ec::SMC32, cond_eq), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0000);
}

/// `ID_AA64PFR0_EL1` read into x3.
fn mrs_pfr0() -> u64 {
    esr(ec::SYS64, sysreg_iss(3, 0, 0, 4, 0, 3, true))
}

#[test]
fn sys64_id_registers_are_sanitised_and_read_only() {
    let mut r = Rig::new();
    // SVE (bits [35:32]) present in hardware: hidden from the guest.
    r.vm.id_regs.insert((4, 0), 0x1_0000_0011);
    assert_eq!(r.sync(mrs_pfr0(), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[3], 0x11);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // MSR to an ID register: UNDEFINED.
    let mut r = Rig::new();
    let msr = esr(ec::SYS64, sysreg_iss(3, 0, 0, 4, 0, 3, false));
    assert_eq!(r.sync(msr, 0, 0), Outcome::Injected);
    assert_undefined(&r);
    assert!(r.vm.warnings[0].contains("write of S3_0_C0_C4_0: ID registers are read-only"));
}

#[test]
fn sys64_unknown_register_is_undefined() {
    let mut r = Rig::new();
    // PMCCNTR_EL0 (S3_3_C9_C13_0): the PMU is hidden.
    let mrs = esr(ec::SYS64, sysreg_iss(3, 3, 9, 13, 0, 1, true));
    assert_eq!(r.sync(mrs, 0, 0), Outcome::Injected);
    assert_undefined(&r);
    assert!(r.vm.warnings[0].starts_with("read of S3_3_C9_C13_0: unknown or hidden"));
    assert_eq!(count(&r, ExitReason::SysReg), 1);
}

#[test]
fn sys64_physical_timer() {
    let mut r = Rig::new();
    // CNTP_TVAL_EL0 = 100 at counter 5000, then CNTP_CVAL_EL0 read back.
    r.vcpu.regs.x[2] = 100;
    let tval = esr(ec::SYS64, sysreg_iss(3, 3, 14, 2, 0, 2, false));
    assert_eq!(r.sync(tval, 0, 0), Outcome::Emulated);
    assert_eq!(r.timer.read(PhysTimerReg::Cval, 0), r.vm.now + 100);
    let cval = esr(ec::SYS64, sysreg_iss(3, 3, 14, 2, 2, 4, true));
    assert_eq!(r.sync(cval, 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[4], r.vm.now + 100);
    assert_eq!(r.vcpu.regs.pc, PC + 8);
}

#[test]
fn sys64_sgi_registers() {
    let mut r = Rig::new();
    r.vcpu.regs.x[5] = 0x0100_0001; // INTID 1 to target list {0}
    let sgi1r = esr(ec::SYS64, sysreg_iss(3, 0, 12, 11, 5, 5, false));
    assert_eq!(r.sync(sgi1r, 0, 0), Outcome::Emulated);
    assert_eq!(r.vm.sgis.len(), 1);
    // They are write-only.
    let read = esr(ec::SYS64, sysreg_iss(3, 0, 12, 11, 5, 5, true));
    assert_eq!(r.sync(read, 0, 0), Outcome::Injected);
    // Without a virtual GICv3 they are unknown registers.
    let mut r = Rig::new();
    r.vm.has_gicv3 = false;
    assert_eq!(r.sync(sgi1r, 0, 0), Outcome::Injected);
    assert_undefined(&r);
}

#[test]
fn sys64_debug_registers_first_use_and_actlr() {
    let mut r = Rig::new();
    // DBGBVR0_EL1 write (op0 = 2): the first use makes them live, re-executed untrapped.
    let dbg = esr(ec::SYS64, sysreg_iss(2, 0, 0, 0, 4, 1, false));
    assert_eq!(r.sync(dbg, 0, 0), Outcome::Emulated);
    assert!(r.vm.debug_active);
    assert_eq!(r.vcpu.regs.pc, PC);
    // ACTLR_EL1 reads its value at creation.
    r.vcpu.el1.actlr_el1 = 0x42;
    let actlr = esr(ec::SYS64, sysreg_iss(3, 0, 1, 0, 1, 7, true));
    assert_eq!(r.sync(actlr, 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[7], 0x42);
}

#[test]
fn dabt_mmio_store_then_load() {
    let mut r = Rig::new();
    r.vcpu.regs.x[1] = 0xffff_ffff_0000_abcd;
    let (e, far, hp) = dabt(DEV_BASE, 0, 1, false, true); // strb w1 to the first register
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated);
    let (e, far, hp) = dabt(DEV_BASE + 8, 2, 1, false, true); // str w1
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated);
    let (e, far, hp) = dabt(DEV_BASE + 8, 1, 2, true, false); // ldrh x2
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[2], 0xabcd);
    assert_eq!(r.vcpu.regs.pc, PC + 12);
    assert_eq!(count(&r, ExitReason::Mmio), 3);
    // The device's line went high with bit 0 of its first register (reported once).
    assert_eq!(r.vm.lines.0, [(DEV_IRQ, true)]);
}

#[test]
fn dabt_unbacked_and_refused_accesses_abort() {
    let mut r = Rig::new();
    let (e, far, hp) = dabt(0x0b00_0000, 2, 1, false, false);
    assert_eq!(r.sync(e, far, hp), Outcome::Injected);
    // Data abort from the current EL (EC 0x25), IL, synchronous external abort (DFSC 0x10).
    assert_eq!(r.vcpu.el1.esr_el1, 0x9600_0010);
    assert_eq!(r.vcpu.el1.far_el1, 0x0b00_0000);
    assert_eq!(r.vcpu.regs.pc, VBAR + VECTOR_CURRENT_SPX);
    assert!(r.vm.warnings[0].starts_with("read at IPA 0xb000000"));
    assert!(r.vm.warnings[0].contains("no device there"));
    // The device refuses 64-bit accesses.
    let mut r = Rig::new();
    let (e, far, hp) = dabt(DEV_BASE, 3, 1, true, true);
    assert_eq!(r.sync(e, far, hp), Outcome::Injected);
    assert!(r.vm.warnings[0].contains("regs refused it: external abort"));
    assert_eq!(count(&r, ExitReason::DataAbortInjected), 1);
    // A stage-1 table walk into MMIO space.
    let mut r = Rig::new();
    let iss = (1 << 7) | DFSC_TRANSLATION_L3;
    assert_eq!(
        r.sync(esr(ec::DABT_LOW, iss), DEV_BASE, hpfar(DEV_BASE)),
        Outcome::Injected
    );
}

#[test]
fn dabt_in_ram_dirty_log_and_permission() {
    let mut r = Rig::new();
    let page = RAM_BASE + 0x3000;
    r.vm.dirty_logged.insert(page);
    let store = esr(ec::DABT_LOW, (1 << 6) | DFSC_PERMISSION_L3);
    assert_eq!(r.sync(store, page + 8, hpfar(page)), Outcome::Emulated);
    assert_eq!(r.vm.dirtied, [page]);
    assert_eq!(r.vcpu.regs.pc, PC, "the guest retries the store");
    assert_eq!(count(&r, ExitReason::DirtyLog), 1);
    // A read permission fault on RAM is nothing the hypervisor set up: abort.
    let load = esr(ec::DABT_LOW, DFSC_PERMISSION_L3);
    assert_eq!(r.sync(load, page, hpfar(page)), Outcome::Injected);
}

#[test]
fn dabt_without_syndrome_is_decoded() {
    let mut r = Rig::new();
    // `ldp w1, w2, [x0]` at the PC (stage 1 off: VA = IPA), x0 = the device.
    r.vm.ram.insert(PC, 0x2940_0801);
    r.vcpu.regs.x[0] = DEV_BASE;
    let mut put = |offset, value| {
        let acc = MmioAccess {
            ipa: DEV_BASE + offset,
            size: AccessSize::Word,
            is_write: true,
            rt: 0,
            sign_extend: false,
            sf: false,
            acquire_release: false,
        };
        r.vm.mmio(&acc, value);
    };
    put(0, 0x1111);
    put(4, 0x2222);
    let no_isv = esr(ec::DABT_LOW, DFSC_TRANSLATION_L3);
    assert_eq!(r.sync(no_isv, DEV_BASE, hpfar(DEV_BASE)), Outcome::Emulated);
    assert_eq!((r.vcpu.regs.x[1], r.vcpu.regs.x[2]), (0x1111, 0x2222));
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // Something that is not a load/store at the PC: abort.
    r.vm.ram.insert(PC + 4, 0);
    assert_eq!(r.sync(no_isv, DEV_BASE, hpfar(DEV_BASE)), Outcome::Injected);
    assert!(r.vm.warnings[0].contains("not an emulatable load/store"));
}

#[test]
fn iabt_outside_ram_aborts() {
    let mut r = Rig::new();
    let out = r.sync(
        esr(ec::IABT_LOW, DFSC_TRANSLATION_L3),
        0x0b00_0000,
        hpfar(0x0b00_0000),
    );
    assert_eq!(out, Outcome::Injected);
    // Instruction abort from the current EL (EC 0x21), synchronous external abort.
    assert_eq!(r.vcpu.el1.esr_el1, 0x8600_0010);
    assert_eq!(r.vcpu.el1.far_el1, 0x0b00_0000);
    assert_eq!(count(&r, ExitReason::InstructionAbort), 1);
}

/// `ESR_EL2` of a `WFIT` with its timeout in x3 (`TI` = 0b10, `RV`, `Rn` = 3).
fn wfit() -> u64 {
    esr(ec::WFX, (3 << 5) | (1 << 2) | 0b10)
}

#[test]
fn wfi_blocks_unless_something_is_pending() {
    let mut r = Rig::new();
    assert_eq!(r.sync(esr(ec::WFX, 0), 0, 0), Outcome::Yield);
    assert_eq!(r.vm.blocked, Some(None));
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    let mut r = Rig::new();
    r.vm.wake = true;
    assert_eq!(r.sync(esr(ec::WFX, 0), 0, 0), Outcome::Emulated);
    assert!(!r.vm.wake, "the kick is consumed");
    r.vm.irq_pending = true;
    assert_eq!(r.sync(esr(ec::WFX, 0), 0, 0), Outcome::Emulated);
    assert_eq!(r.vm.blocked, None);
    assert_eq!(count(&r, ExitReason::Wfx), 2);
}

#[test]
fn wfit_timeouts() {
    // CNTVOFF = 1000, now = 5000: a virtual count of 3000 has passed, 9000 has not.
    let mut r = Rig::new();
    r.vcpu.regs.x[3] = 3000;
    assert_eq!(r.sync(wfit(), 0, 0), Outcome::Emulated);
    r.vcpu.regs.x[3] = 9000;
    assert_eq!(r.sync(wfit(), 0, 0), Outcome::Yield);
    assert_eq!(r.vm.blocked, Some(Some(10_000)));
    // Beyond the counter's range: an ordinary WFI.
    let mut r = Rig::new();
    r.vcpu.regs.x[3] = u64::MAX;
    assert_eq!(r.sync(wfit(), 0, 0), Outcome::Yield);
    assert_eq!(r.vm.blocked, Some(None));
    // No register reported (ISS.RV = 0): the wait ends at once.
    let mut r = Rig::new();
    assert_eq!(r.sync(esr(ec::WFX, 0b10), 0, 0), Outcome::Emulated);
    assert_eq!(r.vm.blocked, None);
}

#[test]
fn fp_first_use_loads_the_fp_state() {
    let mut r = Rig::new();
    assert_eq!(r.sync(esr(ec::FP_ASIMD, 0), 0, 0), Outcome::Emulated);
    assert!(r.vcpu.fp_loaded);
    assert_eq!(r.vcpu.regs.pc, PC, "the instruction is re-executed");
    assert_eq!(count(&r, ExitReason::FpTrap), 1);
}

#[test]
fn aarch32_coprocessor_accesses() {
    for class in [
        ec::CP15_32,
        ec::CP15_64,
        ec::CP14_32,
        ec::CP14_LS,
        ec::CP10_ID,
        ec::CP14_64,
    ] {
        // From AArch32 user mode, condition AL (CV = 1, COND = 0xe): UNDEFINED, taken to
        // the guest's EL1 from a lower EL in AArch32.
        // (The debug registers are live already, so CP14 accesses are not claimed.)
        let mut r = Rig::new();
        r.vcpu.regs.pstate = 0x10;
        r.vm.debug_active = true;
        let iss = (1 << 24) | (0xe << 20) | 1;
        assert_eq!(
            r.sync(esr(class, iss), 0, 0),
            Outcome::Injected,
            "EC {class:#x}"
        );
        assert_eq!(r.vcpu.regs.pc, VBAR + VECTOR_LOWER_A32);
        assert!(r.vm.warnings[0].contains("no such register is emulated"));
        // Condition EQ with Z clear: not executed, stepped over.
        let mut r = Rig::new();
        r.vcpu.regs.pstate = 0x10;
        let iss = (1 << 24) | 1;
        assert_eq!(
            r.sync(esr(class, iss), 0, 0),
            Outcome::Emulated,
            "EC {class:#x}"
        );
        assert_eq!(r.vcpu.regs.pc, PC + 4);
        assert!(!r.injected());
    }
}

#[test]
fn classes_never_emulated_are_undefined() {
    let refused = [
        ec::UNKNOWN,
        ec::PAC,
        ec::LS64,
        ec::BTI,
        ec::ILLEGAL_STATE,
        ec::SVC32,
        ec::SVC64,
        ec::SVE,
        ec::ERET,
        ec::FPAC,
        ec::SME,
        ec::PC_ALIGN,
        ec::SP_ALIGN,
        ec::MOPS,
        ec::FP_EXC32,
        ec::FP_EXC64,
        ec::SERROR,
        ec::BREAKPT_LOW,
        ec::SOFTSTP_LOW,
        ec::WATCHPT_LOW,
        ec::BKPT32,
        ec::VECTOR32,
        ec::BRK64,
        0x21, // instruction abort from EL2 itself
        0x25, // data abort from EL2 itself
        0x3f, // unallocated
    ];
    for class in refused {
        let mut r = Rig::new();
        assert_eq!(
            r.sync(esr(class, 0x1234), 0, 0),
            Outcome::Injected,
            "EC {class:#x}"
        );
        assert_undefined(&r);
        assert_eq!(r.vm.warnings.len(), 1);
        assert_eq!(count(&r, ExitReason::Other), 1);
    }
}

#[test]
fn irq_exits_and_time_slices() {
    let irq = RawExit {
        kind: ExitKind::Irq,
        esr: 0,
        far: 0,
        hpfar: 0,
    };
    let mut r = Rig::new();
    assert_eq!(r.exit(irq), Outcome::Emulated);
    assert!(r.vm.ppis.is_empty());
    // The virtual timer fired: its PPI goes high for the guest.
    r.vm.vtimer_irq = true;
    assert_eq!(r.exit(irq), Outcome::Emulated);
    assert_eq!(r.vm.ppis, [(vtimer::VIRT_TIMER_PPI, true)]);
    r.vm.slice_over = true;
    assert_eq!(
        r.exit(RawExit {
            kind: ExitKind::Fiq,
            ..irq
        }),
        Outcome::Yield
    );
    assert_eq!(count(&r, ExitReason::Irq), 3);
    assert!(!r.injected());
}

#[test]
fn serror_stops_the_vm() {
    let mut r = Rig::new();
    let serror = RawExit {
        kind: ExitKind::SError,
        esr: 0xbe00_0000,
        far: 0,
        hpfar: 0,
    };
    assert_eq!(r.exit(serror), Outcome::Yield);
    assert_eq!(r.vm.end, Some(VmEnd::Crashed));
    assert!(r.vm.warnings[0].contains("SError from guest (ESR_EL2=0xbe000000)"));
}

#[test]
fn sixteen_bit_instructions_step_by_two() {
    // A trapped T32 16-bit instruction (IL = 0) is stepped over by 2 bytes.
    let mut r = Rig::new();
    r.vcpu.regs.pstate = EL1H;
    let wfi16 = esr(ec::WFX, 0) & !IL;
    r.vm.wake = true;
    assert_eq!(r.sync(wfi16, 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.pc, PC + 2);
}
