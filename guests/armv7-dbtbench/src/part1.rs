//! Part 1's `matmul` and `vfp` kernels as in-VM rows: the loops and their data are
//! `crates/dbt-armv7/bench-guest/src/part1_loops.rs`, the file part 1's `matmul` and `vfp`
//! programs (which `a64-runner` runs) are built from, so both measure the same code. Here
//! the inputs are set up once by [`setup`] instead of inside the timed run.

#[path = "../../../crates/dbt-armv7/bench-guest/src/part1_loops.rs"]
mod loops;

pub use loops::{matmul, vfp};

/// Part 1's xorshift generator (`bench-guest/src/rt.rs` `Rng`).
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

/// Gives PL0 and PL1 the FP unit (`CPACR.cp10/cp11` = full access) and enables it
/// (`FPEXC.EN`), as an OS does before the first VFP instruction.
fn fpu_on() {
    // SAFETY: CPACR and FPEXC only enable the FP unit; no compiled code uses it.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "mrc p15, 0, {t}, c1, c0, 2",
            "orr {t}, {t}, #0xf00000",
            "mcr p15, 0, {t}, c1, c0, 2",
            "isb",
            "mov {t}, #0x40000000",
            "vmsr fpexc, {t}",
            t = out(reg) _,
            options(nostack, nomem),
        );
    }
}

/// Fills the inputs (part 1's generators and seeds) and turns the FP unit on.
pub fn setup() {
    let mut rng = Rng(0x0bad_cafe);
    loops::matmul_fill(|| rng.next());
    let mut rng = Rng(0x0f1e_2d3c);
    loops::vfp_fill(|| rng.next());
    fpu_on();
}
