//! The seeded coprocessor storm: random `MCR`/`MRC`/`MCRR`/`MRRC` to CP15 and CP14 at PL1
//! (random opc1/CRn/CRm/opc2, random values written), each generated at run time. Every
//! access must complete, raise UNDEFINED or (cache maintenance by address outside the
//! guest's RAM) take an external abort. Writes that would take away the guest's own
//! ability to go on are redrawn: SCTLR (the MMU stays off, so TTBR0/1, TTBCR, DACR and the
//! memory attributes are written like any other register), VBAR (the vectors that count
//! the outcomes), and the CP14 debug registers at opc1 = 0, CRn = 0 (DBGDSCRext, the
//! breakpoint and watchpoint registers: a debug exception would go to a vector that does
//! not resume).

use crate::probes::run_code;
use crate::rt::counts;

/// Accesses of the storm unless the command line says `storm=N`.
pub const ACCESSES: u32 = 4096;
/// `MRC p14/p15, 0, r0, c0, c0, 0` without the coprocessor (bits 8..11) and `L` (bit 20).
const MCR_R0: u32 = 0xee00_0010;
/// `MCRR p14/p15, 0, r0, r1, c0` likewise.
const MCRR_R0_R1: u32 = 0xec41_0000;
/// `L`: a read (`MRC`, `MRRC`).
const READ: u32 = 1 << 20;

/// Outcomes of the storm's accesses: `[coprocessor (0: CP14, 1: CP15)][write?]` each
/// `[completed, UNDEFINED, external abort]`.
pub type Outcomes = [[[u32; 3]; 2]; 2];

/// An xorshift32 generator.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// Whether an access (already decoded) is one of the excluded writes.
fn excluded(cp15: bool, write: bool, wide: bool, opc1: u32, crn: u32, crm: u32, opc2: u32) -> bool {
    if !write || wide {
        return false;
    }
    let sctlr = (opc1, crn, crm, opc2) == (0, 1, 0, 0);
    let vbar = (opc1, crn, crm, opc2) == (0, 12, 0, 0);
    if cp15 {
        sctlr || vbar
    } else {
        opc1 == 0 && crn == 0
    }
}

/// Runs one generated instruction with `r0`, `r1` = `a`, `b` and returns its outcome
/// (0: completed, 1: UNDEFINED, 2: external abort).
pub type Execute = fn(insn: u32, a: u32, b: u32) -> usize;

/// Runs one generated instruction at PL1 (Supervisor mode).
pub fn at_pl1(insn: u32, a: u32, b: u32) -> usize {
    let (u0, d0) = counts();
    run_code(insn, a, b);
    let (u1, d1) = counts();
    if u1 != u0 {
        1
    } else if d1 != d0 {
        2
    } else {
        0
    }
}

/// Runs `accesses` accesses of the storm from `seed`, each with `execute` (at PL1:
/// [`at_pl1`]; at PL0: `crate::storm_pl0::at_pl0`), and returns their outcomes.
pub fn run(seed: u32, accesses: u32, execute: Execute) -> Outcomes {
    // Spread the seed (xorshift never leaves 0).
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9) | 1);
    let mut out: Outcomes = [[[0; 3]; 2]; 2];
    let mut n = 0;
    while n < accesses {
        let r = rng.next();
        let cp15 = r & 1 != 0;
        let write = r & 2 != 0;
        // One in four is a 64-bit transfer (MCRR/MRRC).
        let wide = (r >> 2) & 3 == 0;
        let (opc1, crn, crm, opc2) = ((r >> 4) & 15, (r >> 8) & 15, (r >> 12) & 15, (r >> 16) & 7);
        // Three in four have the opc1 where most registers are (0 for MCR/MRC, 0..3 for
        // MCRR/MRRC), so the storm reaches registers and not only UNDEFINED encodings.
        let common = (r >> 19) & 3 != 0;
        let opc1 = match (wide, common) {
            (false, true) => 0,
            (false, false) => opc1 & 7,
            (true, true) => opc1 & 3,
            (true, false) => opc1,
        };
        if excluded(cp15, write, wide, opc1, crn, crm, opc2) {
            continue;
        }
        let coproc = if cp15 { 15 } else { 14 };
        let dir = if write { 0 } else { READ };
        let insn = if wide {
            MCRR_R0_R1 | dir | (coproc << 8) | (opc1 << 4) | crm
        } else {
            MCR_R0 | dir | (opc1 << 21) | (crn << 16) | (coproc << 8) | (opc2 << 5) | crm
        };
        let (a, b) = (rng.next(), rng.next());
        let outcome = execute(insn, a, b);
        out[usize::from(cp15)][usize::from(write)][outcome] += 1;
        n += 1;
    }
    out
}
