//! The coprocessor storm at PL0 (User mode): the same generator and exclusions as the PL1
//! storm (`crate::storm`), each generated instruction run in USR mode and followed by
//! `SVC #0`. PL1 writes `RESUME`, switches to USR with `CPS` and branches to the code; the
//! `SVC` (the access completed), the UNDEFINED exception or the data abort all come back
//! through the vectors of `crate::rt`, which return to Supervisor mode with `CPS` (not an
//! exception return: see the root README on QEMU 7.2's SPSR) at `RESUME`. USR mode shares
//! r0..r12 with Supervisor mode and has its own SP and LR, so the storm loop's state is
//! intact.
//!
//! After the random accesses, fixed probes check what the architecture says about PL0:
//! PL1-only registers (SCTLR, TTBR0, DACR, VBAR, MIDR, TPIDRPRW, CNTKCTL, TPIDRURO
//! writes, ICIALLU) must be UNDEFINED; TPIDRURW must read back at PL0 and PL1 what PL0
//! wrote, TPIDRURO what PL1 wrote, CP15DMB must complete, and CNTFRQ and CNTVCT must
//! complete at PL0 with `CNTKCTL.{PL0PCTEN, PL0VCTEN}` set and be UNDEFINED with them
//! clear.

use core::arch::asm;
use core::ptr::addr_of_mut;

use crate::rt::{counts, fail, svcs};
use crate::storm::{self, Outcomes};
use crate::storm_report::{check_guarded, guarded, print_counts};
use crate::uart::{putdec, puts};

/// `SVC #0`: the USR code's way back to PL1.
const SVC_0: u32 = 0xef00_0000;
/// `L`: a read (`MRC`, `MRRC`).
const READ: u32 = 1 << 20;

/// The generated instruction and `SVC #0`, run in USR mode.
static mut USR_CODE: [u32; 2] = [0; 2];

/// The PL0 phase's results for [`verdict`]: accesses, their outcomes, and the fixed
/// probes (PL1-only ones found UNDEFINED, user ones found completed).
pub struct Pl0Storm {
    accesses: u32,
    out: Outcomes,
    undefined_probes: u32,
    user_probes: u32,
}

/// `MCR`/`MRC p15, opc1, r0, CRn, CRm, opc2` (`read`: `MRC`).
const fn cp15(read: bool, opc1: u32, crn: u32, crm: u32, opc2: u32) -> u32 {
    let dir = if read { READ } else { 0 };
    0xee00_0f10 | dir | (opc1 << 21) | (crn << 16) | (opc2 << 5) | crm
}

/// `MRRC p15, opc1, r0, r1, CRm`.
const fn mrrc15(opc1: u32, crm: u32) -> u32 {
    0xec51_0f00 | (opc1 << 4) | crm
}

/// Runs `insn` in USR mode with `r0`, `r1` = `a`, `b`, then `SVC #0`; returns the outcome
/// (0: completed, 1: UNDEFINED, 2: external abort) and `r0`, `r1` afterwards.
fn run_user(insn: u32, a: u32, b: u32) -> (usize, u32, u32) {
    let code = addr_of_mut!(USR_CODE);
    let (u0, d0) = counts();
    let s0 = svcs();
    let (r0, r1): (u32, u32);
    // SAFETY: USR_CODE is ours; the MMU and caches are off, and the DSB/ISB/ICIALLU make
    // the new instructions visible. In USR mode only the generated instruction and the
    // SVC run; every way back (SVC, UNDEFINED, data abort) goes through the vectors to
    // label 2 in Supervisor mode with SP_svc untouched; r3, r12 and LR are clobbered.
    unsafe {
        (*code)[0] = insn;
        (*code)[1] = SVC_0;
        asm!(
            "dsb sy",
            "mcr p15, 0, {z}, c7, c5, 0",
            "dsb sy",
            "isb",
            "adr r12, 2f",
            "ldr r3, =RESUME",
            "str r12, [r3]",
            "cps #0x10",
            "bx {c}",
            "2:",
            z = in(reg) 0u32,
            c = in(reg) code as u32,
            inout("r0") a => r0, inout("r1") b => r1, out("r3") _, out("r12") _, out("lr") _,
            options(nostack),
        );
    }
    let (u1, d1) = counts();
    let s1 = svcs();
    let outcome = match (s1 - s0, u1 - u0, d1 - d0) {
        (1, 0, 0) => 0,
        (0, 1, 0) => 1,
        (0, 0, 1) => 2,
        _ => fail("PL0 access without exactly one way back; insn", insn),
    };
    (outcome, r0, r1)
}

/// The PL0 storm's [`storm::Execute`].
pub fn at_pl0(insn: u32, a: u32, b: u32) -> usize {
    run_user(insn, a, b).0
}

/// Fails with `what` unless the PL0 outcome of `insn` is `want`.
fn expect(insn: u32, a: u32, want: usize, what: &str) -> (u32, u32) {
    let (got, r0, r1) = run_user(insn, a, 0);
    if got != want {
        puts("armv7-hostile: PL0 probe ");
        puts(what);
        puts(": outcome ");
        putdec(got as u32);
        puts(", expected ");
        putdec(want as u32);
        puts("\n");
        fail("PL0 probe", insn);
    }
    (r0, r1)
}

/// PL1 reads of SCTLR, TTBR0, DACR, TPIDRURO, CNTKCTL and CNTFRQ.
fn pl1_state() -> [u32; 6] {
    let (a, b, c, d, e, f): (u32, u32, u32, u32, u32, u32);
    // SAFETY: reads of PL1 CP15 registers (the generic timer's CNTKCTL and CNTFRQ too).
    unsafe {
        asm!(
            "mrc p15, 0, {a}, c1, c0, 0",
            "mrc p15, 0, {b}, c2, c0, 0",
            "mrc p15, 0, {c}, c3, c0, 0",
            "mrc p15, 0, {d}, c13, c0, 3",
            "mrc p15, 0, {e}, c14, c1, 0",
            "mrc p15, 0, {f}, c14, c0, 0",
            a = out(reg) a, b = out(reg) b, c = out(reg) c, d = out(reg) d,
            e = out(reg) e, f = out(reg) f,
            options(nomem, nostack),
        );
    }
    [a, b, c, d, e, f]
}

/// Writes TPIDRURO and CNTKCTL at PL1.
fn pl1_write(tpidruro: u32, cntkctl: u32) {
    // SAFETY: TPIDRURO and CNTKCTL only govern what PL0 sees.
    unsafe {
        asm!(
            "mcr p15, 0, {t}, c13, c0, 3",
            "mcr p15, 0, {k}, c14, c1, 0",
            "isb",
            t = in(reg) tpidruro, k = in(reg) cntkctl,
            options(nomem, nostack),
        );
    }
}

/// The fixed probes; returns (PL1-only probes found UNDEFINED, user probes completed).
fn probes() -> (u32, u32) {
    let [sctlr, ttbr0, dacr, tpidruro, cntkctl, cntfrq] = pl1_state();
    // PL1-only: UNDEFINED at PL0. Writes carry the current value, so a PL0 write that
    // wrongly completed changes nothing before the guest reports it.
    let pl1_only = [
        (cp15(true, 0, 1, 0, 0), 0, "SCTLR read"),
        (cp15(false, 0, 1, 0, 0), sctlr, "SCTLR write"),
        (cp15(true, 0, 2, 0, 0), 0, "TTBR0 read"),
        (cp15(false, 0, 2, 0, 0), ttbr0, "TTBR0 write"),
        (mrrc15(0, 2), 0, "TTBR0 64-bit read"),
        (cp15(true, 0, 3, 0, 0), 0, "DACR read"),
        (cp15(false, 0, 3, 0, 0), dacr, "DACR write"),
        (cp15(true, 0, 12, 0, 0), 0, "VBAR read"),
        (cp15(true, 0, 0, 0, 0), 0, "MIDR read"),
        (cp15(true, 0, 13, 0, 4), 0, "TPIDRPRW read"),
        (cp15(false, 0, 13, 0, 3), tpidruro, "TPIDRURO write"),
        (cp15(true, 0, 14, 1, 0), 0, "CNTKCTL read"),
        (cp15(false, 0, 7, 5, 0), 0, "ICIALLU"),
    ];
    for (insn, a, what) in pl1_only {
        expect(insn, a, 1, what);
    }
    let mut user = 0;
    // TPIDRURW: PL0 writes, PL0 and PL1 read it back.
    let tpidrurw = 0x5a5a_0000 ^ sctlr;
    expect(cp15(false, 0, 13, 0, 2), tpidrurw, 0, "TPIDRURW write");
    let (got, _) = expect(cp15(true, 0, 13, 0, 2), 0, 0, "TPIDRURW read");
    if got != tpidrurw {
        fail("TPIDRURW read at PL0", got);
    }
    let pl1: u32;
    // SAFETY: a read of TPIDRURW.
    unsafe { asm!("mrc p15, 0, {v}, c13, c0, 2", v = out(reg) pl1, options(nomem, nostack)) };
    if pl1 != tpidrurw {
        fail("TPIDRURW read at PL1 after the PL0 write", pl1);
    }
    // TPIDRURO: PL1 writes, PL0 reads; the generic timer: PL0 counter access enabled.
    let ro = 0xc0de_0000 | (tpidruro & 0xffff);
    pl1_write(ro, 0b11);
    let (got, _) = expect(cp15(true, 0, 13, 0, 3), 0, 0, "TPIDRURO read");
    if got != ro {
        fail("TPIDRURO read at PL0", got);
    }
    expect(cp15(false, 0, 7, 10, 5), 0, 0, "CP15DMB");
    let (got, _) = expect(
        cp15(true, 0, 14, 0, 0),
        0,
        0,
        "CNTFRQ read (CNTKCTL.PL0VCTEN)",
    );
    if got != cntfrq {
        fail("CNTFRQ read at PL0", got);
    }
    let (lo, hi) = expect(mrrc15(1, 14), 0, 0, "CNTVCT read (CNTKCTL.PL0VCTEN)");
    if lo == 0 && hi == 0 {
        fail("CNTVCT read at PL0 is zero", 0);
    }
    user += 6;
    // Counter access disabled: UNDEFINED.
    pl1_write(ro, 0);
    expect(cp15(true, 0, 14, 0, 0), 0, 1, "CNTFRQ read (CNTKCTL = 0)");
    expect(mrrc15(1, 14), 0, 1, "CNTVCT read (CNTKCTL = 0)");
    pl1_write(tpidruro, cntkctl);
    (pl1_only.len() as u32 + 2, user)
}

/// Runs `accesses` accesses of the storm from `seed` at PL0 (the same sequence the PL1
/// storm began with), prints the counts, checks SCTLR/VBAR/MIDR and runs the fixed probes.
pub fn run(seed: u32, accesses: u32) -> Pl0Storm {
    let mut report = Pl0Storm {
        accesses,
        out: [[[0; 3]; 2]; 2],
        undefined_probes: 0,
        user_probes: 0,
    };
    if accesses == 0 {
        return report;
    }
    let before = guarded();
    report.out = storm::run(seed, accesses, at_pl0);
    let after = guarded();
    print_counts("storm PL0 ", &report.out);
    check_guarded(before, after, " (PL0 storm)");
    (report.undefined_probes, report.user_probes) = probes();
    check_guarded(before, guarded(), " (PL0 probes)");
    report
}

/// Prints the PL0 verdict (after PSCI has answered): every access accounted for, some
/// UNDEFINED (most of CP15 is PL1-only), the probes as the architecture says.
pub fn verdict(pl0: &Pl0Storm) {
    if pl0.accesses == 0 {
        return;
    }
    let sum = |k: usize| pl0.out.iter().flatten().map(|o| o[k]).sum::<u32>();
    let (done, undef, abort) = (sum(0), sum(1), sum(2));
    if done + undef + abort != pl0.accesses {
        fail("PL0 storm accesses accounted for", done + undef + abort);
    }
    if undef == 0 {
        fail("PL0 storm met no UNDEFINED; completed", done);
    }
    puts("armv7-hostile: PL0 coprocessor storm: ");
    putdec(pl0.accesses);
    puts(" accesses, ");
    putdec(done);
    puts(" completed, ");
    putdec(undef);
    puts(" UNDEFINED, ");
    putdec(abort);
    puts(" external aborts; ");
    putdec(pl0.undefined_probes);
    puts(" PL1-only probes UNDEFINED, ");
    putdec(pl0.user_probes);
    puts(" user probes completed: PASS\n");
}
