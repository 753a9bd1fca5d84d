//! The fast path (`exits/fast.rs`): every exit it takes leaves the vCPU exactly as the
//! general path does (registers, PC, counters, injected exceptions, device state), and
//! every exit it declines is left untouched.

use el2_core::exit::ec;
use el2_core::switch::{ExitKind, RawExit};

use super::mock::{Rig, DEV_BASE, DEV_IRQ, PC};
use super::{dabt, esr, sysreg_iss, IL};
use crate::exits::{Fast, FastCtx};
use crate::stats::ExitReason;

/// What a test compares between the two paths: registers, PC, `ESR_EL1`, exit counters,
/// interrupt lines, warnings, SGIs sent.
type Observed = (Vec<u64>, u64, u64, Vec<u64>, Vec<(u32, bool)>, usize, usize);

/// What a test compares between the two paths.
fn observable(r: &Rig) -> Observed {
    let counts = (0..11).map(|i| r.stats.get(i).unwrap()).collect();
    (
        r.vcpu.regs.x.to_vec(),
        r.vcpu.regs.pc,
        r.vcpu.el1.esr_el1,
        counts,
        r.vm.lines.0.clone(),
        r.vm.warnings.len(),
        r.vm.sgis.len(),
    )
}

/// Runs one exit through the fast path on one rig and the general path on another (both
/// prepared by `setup`); asserts the fast path took it (with `expect`) and both agree.
fn same_as_general(setup: impl Fn(&mut Rig), e: (u64, u64, u64), expect: Fast) {
    let (mut fast, mut slow) = (Rig::new(), Rig::new());
    setup(&mut fast);
    setup(&mut slow);
    assert_eq!(fast.fast(e.0, e.1, e.2, true), expect);
    slow.sync(e.0, e.1, e.2);
    assert_eq!(observable(&fast), observable(&slow));
}

/// Offers an exit to the fast path and asserts it declined without touching anything.
fn declined(setup: impl Fn(&mut Rig), e: (u64, u64, u64), lrs_idle: bool) {
    let mut r = Rig::new();
    setup(&mut r);
    let before = observable(&r);
    assert_eq!(r.fast(e.0, e.1, e.2, lrs_idle), Fast::Slow);
    assert_eq!(observable(&r), before);
}

fn x0(v: u64) -> impl Fn(&mut Rig) {
    move |r: &mut Rig| {
        r.vcpu.regs.x[0] = v;
        r.vcpu.regs.x[1] = 0x8000_0000; // the feature queried by *_FEATURES
        r.vcpu.regs.x[2] = 0x5555;
    }
}

#[test]
fn hvc_queries_match_the_general_path() {
    let hvc = (esr(ec::HVC64, 0), 0, 0);
    // SMCCC_VERSION, SMCCC_ARCH_FEATURES, PSCI_VERSION, PSCI_FEATURES.
    for id in [0x8000_0000, 0x8000_0001, 0x8400_0000, 0x8400_000a] {
        same_as_general(x0(id), hvc, Fast::Done);
    }
    let mut r = Rig::new();
    x0(0x8000_0000)(&mut r);
    r.fast(hvc.0, 0, 0, true);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0001);
    assert_eq!(r.vcpu.regs.pc, PC, "ELR_EL2 already points after an HVC");
    assert_eq!(r.stats.get(ExitReason::Hvc as usize), Some(1));
}

#[test]
fn other_calls_are_declined() {
    // PSCI CPU_OFF, SYSTEM_OFF, an unknown function, vendor calls, and
    // SMCCC_ARCH_WORKAROUND_1 on a CPU that needs no mitigation (refused: the general path
    // logs it); then HVC #1 and an SMC.
    for id in [
        0x8400_0002,
        0x8400_0008,
        0x8200_ffff,
        0x8600_0001,
        0x8600_0002,
        0x8000_8000,
    ] {
        declined(x0(id), (esr(ec::HVC64, 0), 0, 0), true);
    }
    declined(x0(0x8000_0000), (esr(ec::HVC64, 1), 0, 0), true);
    declined(x0(0x8000_0000), (esr(ec::SMC64, 0), 0, 0), true);
}

#[test]
fn id_register_reads_match_the_general_path() {
    let setup = |r: &mut Rig| {
        r.vm.id_regs.insert((4, 0), 0x1111_2222_3333_4444);
    };
    // mrs x3, ID_AA64PFR0_EL1 (sanitised: EL2 and others hidden).
    let read = (esr(ec::SYS64, sysreg_iss(3, 0, 0, 4, 0, 3, true)), 0, 0);
    same_as_general(setup, read, Fast::Done);
    // Into XZR: nothing written, PC still steps.
    let xzr = (esr(ec::SYS64, sysreg_iss(3, 0, 0, 4, 0, 31, true)), 0, 0);
    same_as_general(setup, xzr, Fast::Done);
    // A write to an ID register (UNDEFINED) and a non-ID register go the general way.
    declined(
        setup,
        (esr(ec::SYS64, sysreg_iss(3, 0, 0, 4, 0, 3, false)), 0, 0),
        true,
    );
    declined(
        setup,
        (esr(ec::SYS64, sysreg_iss(3, 3, 14, 2, 1, 3, true)), 0, 0),
        true,
    );
}

/// ISS of `MRC`/`MCR p15, opc1, Rt, CRn, CRm, opc2` (`cond`: `Some(COND)` with `CV` set).
fn mcr_iss(opc1: u32, crn: u32, crm: u32, opc2: u32, rt: u32, cond: Option<u32>) -> u32 {
    let cv = cond.map_or(0, |c| (1 << 24) | (c << 20));
    cv | (opc2 << 17) | (opc1 << 14) | (crn << 10) | (rt << 5) | (crm << 1) | 1
}

#[test]
fn aarch32_id_register_reads_match_the_general_path() {
    let setup = |r: &mut Rig| {
        r.vcpu.controls.el1_aarch32 = true;
        r.vcpu.regs.pstate = el2_core::aarch32::CPSR_SVC_MASKED;
        // ID_PFR1 with Virtualization [15:12] = 1: hidden either way; the high word is not
        // an AArch32 register's.
        r.vm.id_regs.insert((1, 1), 0xdead_0000_1000_1011);
    };
    // MRC p15, 0, r13, c0, c1, 1 (SVC mode's r13 is X19 in ISS.Rt), A32 and T32 (IL).
    let read = esr(ec::CP15_32, mcr_iss(0, 0, 1, 1, 19, Some(0xe)));
    same_as_general(setup, (read, 0, 0), Fast::Done);
    same_as_general(setup, (read & !IL, 0, 0), Fast::Done);
    // Conditional, without a valid condition, a write, another CRn: the general path.
    for iss in [
        mcr_iss(0, 0, 1, 1, 3, Some(0x0)),
        mcr_iss(0, 0, 1, 1, 3, None),
        mcr_iss(0, 0, 1, 1, 3, Some(0xe)) & !1,
        mcr_iss(0, 1, 0, 1, 3, Some(0xe)),
        mcr_iss(1, 0, 1, 1, 3, Some(0xe)),
    ] {
        declined(setup, (esr(ec::CP15_32, iss), 0, 0), true);
    }
}

#[test]
fn mmio_matches_the_general_path() {
    let none = |_: &mut Rig| {};
    // A write that leaves the device's line low, then one that raises it.
    let value = |v: u64| move |r: &mut Rig| r.vcpu.regs.x[1] = v;
    same_as_general(value(2), dabt(DEV_BASE, 0, 1, false, true), Fast::Done);
    same_as_general(value(1), dabt(DEV_BASE, 0, 1, false, true), Fast::Changed);
    // A load.
    same_as_general(none, dabt(DEV_BASE + 8, 2, 2, true, false), Fast::Done);
    // Nothing there, and a device that refuses (64-bit): an external abort, as generally.
    same_as_general(none, dabt(0x0b00_0000, 2, 1, false, false), Fast::Changed);
    same_as_general(none, dabt(DEV_BASE, 3, 1, true, true), Fast::Changed);
    let mut r = Rig::new();
    r.vcpu.regs.x[1] = 1;
    let e = dabt(DEV_BASE, 0, 1, false, true);
    assert_eq!(r.fast(e.0, e.1, e.2, true), Fast::Changed);
    assert_eq!(r.vm.lines.0, vec![(DEV_IRQ, true)]);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    assert_eq!(r.stats.get(ExitReason::Mmio as usize), Some(1));
}

#[test]
fn mmio_with_list_registers_in_use_is_declined() {
    declined(|_| {}, dabt(DEV_BASE + 8, 2, 2, true, false), false);
}

#[test]
fn interrupts_are_declined() {
    let mut r = Rig::new();
    let raw = RawExit {
        kind: ExitKind::Irq,
        esr: esr(ec::HVC64, 0),
        far: 0,
        hpfar: 0,
    };
    let mut ctx = FastCtx {
        vcpu: &mut r.vcpu,
        timer: &mut r.timer,
        stats: &mut r.stats,
        sw: &super::mock::MemSwitch,
        vm: &mut r.vm,
    };
    assert_eq!(crate::exits::try_fast(&raw, &mut ctx, true), Fast::Slow);
}

#[test]
fn sgi_writes_match_the_general_path() {
    // msr ICC_SGI1R_EL1, x2
    let write = (esr(ec::SYS64, sysreg_iss(3, 0, 12, 11, 5, 2, false)), 0, 0);
    let gicv3 = |r: &mut Rig| {
        r.vm.has_gicv3 = true;
        r.vcpu.regs.x[2] = 0x0001_0000_0000_0001; // SGI 1 to Aff0 0
    };
    same_as_general(gicv3, write, Fast::Changed);
    let mut r = Rig::new();
    gicv3(&mut r);
    r.fast(write.0, 0, 0, true);
    assert_eq!(r.vm.sgis.len(), 1);
    // Without a virtual GICv3 it is UNDEFINED, from the general path.
    let no_gicv3 = |r: &mut Rig| {
        r.vm.has_gicv3 = false;
        r.vcpu.regs.x[2] = 1;
    };
    declined(no_gicv3, write, true);
    // A read of the write-only register too.
    let read = (esr(ec::SYS64, sysreg_iss(3, 0, 12, 11, 5, 2, true)), 0, 0);
    declined(gicv3, read, true);
}

#[test]
fn aborts_that_are_not_plain_mmio_are_declined() {
    let none = |_: &mut Rig| {};
    let (e, far, hp) = dabt(DEV_BASE, 2, 1, false, false);
    let iss = (e & 0x01ff_ffff) as u32;
    let with_iss = |iss: u32| (esr(ec::DABT_LOW, iss), far, hp);
    // Permission fault, no valid syndrome, stage-1 walk, cache maintenance.
    declined(
        none,
        with_iss((iss & !0x3f) | super::DFSC_PERMISSION_L3),
        true,
    );
    declined(none, with_iss(iss & !(1 << 24)), true);
    declined(none, with_iss(iss | (1 << 7)), true);
    declined(none, with_iss(iss | (1 << 8)), true);
    // A translation fault inside guest RAM.
    declined(
        none,
        dabt(super::mock::RAM_BASE + 0x100, 2, 1, false, false),
        true,
    );
}
