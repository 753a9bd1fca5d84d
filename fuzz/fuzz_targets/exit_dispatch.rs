//! The exit handlers (`hypervisor::exits::handle`, the table by `ESR_EL2.EC`) on a mock VM:
//! a run of exits of any kind and syndrome, from a vCPU with registers, `PSTATE`,
//! `SCTLR_EL1` and code at its PC from the input (ISV=0 aborts fetch and decode it). No
//! handler panics; every outcome is an emulated result, an injected and logged exception,
//! or a logged refusal with `NOT_SUPPORTED` in x0 — the contract of the crate's proptest.
#![no_main]

use el2_core::switch::{ExitKind, RawExit};
use hypervisor::exits::mock::{Rig, DEV_BASE, EL1H, ESR_SENTINEL, PC, RAM_BASE, RAM_SIZE};
use hv_fuzz::Input;
use hypervisor::exits::Outcome;
use libfuzzer_sys::fuzz_target;

/// Bytes of guest code written at the vCPU's PC.
const CODE_BYTES: usize = 64;
/// Most exits handled per input.
const MAX_EXITS: usize = 64;
/// `PSTATE`s: AArch64 EL1h, EL1t, EL0t; AArch32 states get random flags and IT bits.
const PSTATES: [u64; 3] = [EL1H, 0x3c4, 0];
/// `PSTATE.M[4]`: AArch32.
const NRW: u64 = 0x10;
/// `PSTATE.M` field.
const MODE_MASK: u64 = 0x1f;

fn ipa(input: &mut Input<'_>) -> u64 {
    match input.u8() % 4 {
        0 => RAM_BASE + (input.u64() % RAM_SIZE),
        1 => DEV_BASE + u64::from(input.u16()),
        _ => input.u64(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut r = Rig::new();
    r.vcpu.regs.pstate = if input.bool() {
        (u64::from(input.u32()) & !MODE_MASK) | NRW
    } else {
        input.pick(&PSTATES)
    };
    r.vcpu.el1.sctlr_el1 = if input.bool() { input.u64() } else { 0 };
    for x in r.vcpu.regs.x.iter_mut() {
        *x = match input.u8() % 3 {
            0 => u64::from(input.u8()),
            1 => ipa(&mut input),
            _ => input.u64(),
        };
    }
    let code: [u8; CODE_BYTES] = input.array();
    r.vm.load_ram(PC, &code);
    r.vm.has_gicv3 = input.bool();
    r.vm.irq_pending = input.bool();
    r.vm.wake = input.bool();
    r.vm.slice_over = input.bool();
    if input.bool() {
        r.vm.dirty_logged
            .insert(RAM_BASE + (u64::from(input.u8()) << 12));
    }
    for _ in 0..MAX_EXITS {
        if input.is_empty() {
            break;
        }
        let kind = match input.u8() % 8 {
            0 => ExitKind::Irq,
            1 => ExitKind::Fiq,
            2 => ExitKind::SError,
            _ => ExitKind::Sync,
        };
        let esr = input.u64();
        let far = input.u64();
        let hpfar = if input.bool() {
            ipa(&mut input) >> 8
        } else {
            input.u64()
        };
        let before = r.vm.warnings.len();
        r.vcpu.el1.esr_el1 = ESR_SENTINEL;
        let out = r.exit(RawExit {
            kind,
            esr,
            far,
            hpfar,
        });
        let logged = r.vm.warnings.len() > before;
        match out {
            Outcome::Injected => {
                assert!(r.injected(), "Injected without an exception");
                assert!(logged, "an injected exception is always logged");
            }
            Outcome::Refused => {
                assert!(!r.injected(), "a refusal injects nothing");
                assert!(logged, "a refusal is always logged");
                assert_eq!(
                    r.vcpu.regs.x[0],
                    u64::MAX,
                    "a refusal answers NOT_SUPPORTED"
                );
            }
            Outcome::Emulated | Outcome::Yield => {
                assert!(!r.injected(), "exception injected but not reported");
            }
        }
    }
});
