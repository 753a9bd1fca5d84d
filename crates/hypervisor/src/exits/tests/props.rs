//! Random exits against the whole table: whatever the syndrome, the registers, the mode or
//! the address, no handler panics, and every outcome is an emulated result, an injected
//! exception or a logged refusal.

use proptest::prelude::*;

use el2_core::exit::ec;
use el2_core::switch::{ExitKind, RawExit};

use super::mock::{Rig, DEV_BASE, DEV_SIZE, EL1H, RAM_BASE, RAM_SIZE};
use super::{dabt, esr, hpfar};
use crate::exits::Outcome;
use crate::layout::IPA_BITS;

/// Guest `PSTATE`s: AArch64 EL1h/EL1t/EL0t, and AArch32 with random flags and IT bits.
fn pstate() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(EL1H),
        Just(0x3c4),
        Just(0),
        any::<u32>().prop_map(|v| (u64::from(v) & !0x1f) | 0x10),
    ]
}

/// Checks that `out` is one of the three architectural kinds of answer and agrees with
/// what the guest and the console saw.
fn check(r: &Rig, out: Outcome, warnings_before: usize) -> Result<(), TestCaseError> {
    let logged = r.vm.warnings.len() > warnings_before;
    match out {
        Outcome::Injected => {
            prop_assert!(r.injected(), "Injected without an exception");
            prop_assert!(logged, "an injected exception is always logged");
        }
        Outcome::Refused => {
            prop_assert!(!r.injected());
            prop_assert!(logged, "a refusal is always logged");
            prop_assert_eq!(r.vcpu.regs.x[0], u64::MAX);
        }
        Outcome::Emulated | Outcome::Yield => prop_assert!(!r.injected()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Any synchronous exit: every class, any syndrome, any registers.
    #[test]
    fn any_syndrome(
        class in 0u8..64,
        iss in any::<u32>(),
        il in any::<bool>(),
        far in any::<u64>(),
        hpfar in any::<u64>(),
        x in prop::collection::vec(any::<u64>(), 31),
        pstate in pstate(),
        sctlr in any::<u64>(),
    ) {
        let mut r = Rig::new();
        r.vcpu.regs.x.copy_from_slice(&x);
        r.vcpu.regs.pstate = pstate;
        r.vcpu.el1.sctlr_el1 = sctlr;
        let esr = (esr(class, iss & 0x01ff_ffff) & !super::IL) | if il { super::IL } else { 0 };
        let out = r.sync(esr, far, hpfar);
        check(&r, out, 0)?;
    }

    /// Any single-register MMIO access (valid syndrome) anywhere in the guest's IPA space:
    /// inside the register file it is emulated (except the 64-bit accesses it refuses),
    /// anywhere else outside RAM it aborts.
    #[test]
    fn any_mmio_access(
        ipa in 0u64..(1 << IPA_BITS),
        sas in 0u32..4,
        srt in 0u32..32,
        sf in any::<bool>(),
        write in any::<bool>(),
        value in any::<u64>(),
    ) {
        let mut r = Rig::new();
        r.vcpu.regs.x.fill(value);
        let (e, far, hp) = dabt(ipa, sas, srt, sf, write);
        let out = r.sync(e, far, hp);
        check(&r, out, 0)?;
        let bytes = 1u64 << sas;
        let in_ram = ipa.wrapping_sub(RAM_BASE) < RAM_SIZE;
        let in_dev = ipa >= DEV_BASE && ipa + bytes <= DEV_BASE + DEV_SIZE;
        if in_dev && bytes < 8 {
            prop_assert_eq!(out, Outcome::Emulated);
        } else if !in_ram {
            prop_assert_eq!(out, Outcome::Injected);
        }
    }

    /// Data aborts with any fault status and syndrome bits, in and around guest RAM.
    #[test]
    fn any_abort_near_ram(
        offset in 0u64..(2 * RAM_SIZE),
        iss in any::<u32>(),
        logged in any::<bool>(),
    ) {
        let mut r = Rig::new();
        let ipa = RAM_BASE - RAM_SIZE / 2 + offset;
        if logged {
            r.vm.dirty_logged.insert(ipa & !0xfff);
        }
        let out = r.sync(esr(ec::DABT_LOW, iss & 0x01ff_ffff), ipa, hpfar(ipa));
        check(&r, out, 0)?;
    }

    /// Sequences of exits of every kind on one vCPU: state left by one exit never breaks
    /// the next.
    #[test]
    fn exit_sequences(
        exits in prop::collection::vec((0u8..4, 0u8..64, any::<u32>(), any::<u64>()), 1..32),
    ) {
        let mut r = Rig::new();
        for (kind, class, iss, addr) in exits {
            let kind = match kind {
                0 => ExitKind::Irq,
                1 => ExitKind::Fiq,
                2 => ExitKind::SError,
                _ => ExitKind::Sync,
            };
            r.vcpu.el1.esr_el1 = super::mock::ESR_SENTINEL;
            let before = r.vm.warnings.len();
            let raw = RawExit {
                kind,
                esr: esr(class, iss & 0x01ff_ffff),
                far: addr,
                hpfar: hpfar(addr),
            };
            let out = r.exit(raw);
            check(&r, out, before)?;
        }
    }
}
