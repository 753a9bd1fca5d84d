//! Floating-point and Advanced SIMD (NEON) arithmetic with known answers. Under the
//! hypervisor the first FP/SIMD instruction traps to EL2 (lazy FP switching); the values
//! must then survive a trap (an HVC) unchanged.

use crate::{fail, say};
use core::arch::aarch64::{
    float32x4_t, float64x2_t, vaddvq_f32, vgetq_lane_f64, vld1q_f32, vld1q_f64, vmulq_f32,
    vsqrtq_f64,
};
use core::arch::asm;
use core::hint::black_box;
use guest_rt::psci;

/// Sum of 1/k^2 for k = 1..=200 in f64, added in order (computed on the host).
const BASEL_200: f64 = 1.639_946_546_014_997_1;

/// Runs the FP/NEON checks; fails the run on a wrong answer.
pub fn check() {
    let basel = basel_sum(black_box(200));
    if (basel - BASEL_200).abs() > 1e-12 {
        fail(format_args!(
            "fp: sum 1/k^2 = {basel}, expected {BASEL_200}"
        ));
    }

    let dot = neon_dot(
        black_box([1.0, 2.0, 3.0, 4.0]),
        black_box([5.0, 6.0, 7.0, 8.0]),
    );
    if dot != 70.0 {
        fail(format_args!("neon: dot product = {dot}, expected 70"));
    }

    let (r2, r9) = neon_sqrt(black_box([2.0, 9.0]));
    if (r2 - core::f64::consts::SQRT_2).abs() > 1e-15 || r9 != 3.0 {
        fail(format_args!("neon: sqrt([2, 9]) = [{r2}, {r9}]"));
    }

    let (a, b) = survives_hvc(black_box(1.5), black_box(0x0123_4567_89ab_cdef));
    if a != 1.5 || b != 0x0123_4567_89ab_cdef {
        fail(format_args!(
            "fp: d16/v31 changed across an HVC: {a} {b:#x}"
        ));
    }
    say!("fp/neon: ok (sum 1/k^2 = {basel}, dot = {dot}, sqrt 2 = {r2}, regs kept over HVC)");
}

fn basel_sum(n: u32) -> f64 {
    (1..=n).map(|k| 1.0 / f64::from(k * k)).sum()
}

fn neon_dot(a: [f32; 4], b: [f32; 4]) -> f32 {
    // SAFETY: NEON is a baseline feature of the aarch64-unknown-none target (and CPACR_EL1.FPEN
    // is set by guest-rt); both pointers address 4 readable, aligned f32 values.
    unsafe {
        let (va, vb): (float32x4_t, float32x4_t) = (vld1q_f32(a.as_ptr()), vld1q_f32(b.as_ptr()));
        vaddvq_f32(vmulq_f32(va, vb))
    }
}

fn neon_sqrt(x: [f64; 2]) -> (f64, f64) {
    // SAFETY: NEON is a baseline feature of the target (see `neon_dot`); the pointer
    // addresses 2 readable, aligned f64 values.
    unsafe {
        let v: float64x2_t = vld1q_f64(x.as_ptr());
        let r = vsqrtq_f64(v);
        (vgetq_lane_f64::<0>(r), vgetq_lane_f64::<1>(r))
    }
}

/// Puts `a` in d16 and `b` in v31, makes a PSCI_VERSION HVC, and returns them read back.
fn survives_hvc(a: f64, b: u64) -> (f64, u64) {
    let (mut ra, mut rb) = (a, b);
    // SAFETY: PSCI_VERSION has no side effects; per SMCCC it changes only x0..x17, which are
    // declared, and must leave the FP/SIMD registers alone: that is what is checked.
    unsafe {
        asm!(
            "hvc #0",
            inout("x0") u64::from(psci::PSCI_VERSION) => _,
            out("x1") _, out("x2") _, out("x3") _, out("x4") _, out("x5") _, out("x6") _,
            out("x7") _, out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
            out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
            inout("v16") ra, inout("v31") rb,
            options(nostack),
        );
    }
    (ra, rb)
}
