//! Part 1's `matmul` and `vfp` loops and their data, shared by the `matmul` and `vfp`
//! programs here (which `a64-runner` runs) and by `guests/armv7-dbtbench`'s in-VM rows
//! (`#[path]`), so both measure the same code. The inputs are filled by [`matmul_fill`] and
//! [`vfp_fill`] from the caller's generator, outside the kernels. The VFP/NEON loops are
//! A32 assembly (`.fpu neon-vfpv4`): the programs are compiled for `armv7a-none-eabi`,
//! which has no FPU, so no compiled code uses d0-d7.

#![allow(dead_code)]

use core::hint::black_box;
use core::ptr::{addr_of, addr_of_mut};

/// Matrix size of `matmul`.
const N: usize = 96;
static mut A: [[u32; N]; N] = [[0; N]; N];
static mut B: [[u32; N]; N] = [[0; N]; N];
static mut C: [[u32; N]; N] = [[0; N]; N];

/// Elements of each `vfp` vector.
const V: usize = 4096;
static mut X: [f64; V] = [0.0; V];
static mut Y: [f64; V] = [0.0; V];
static mut BYTES: [u8; 65536] = [0; 65536];

/// Fills `matmul`'s inputs from `next` (part 1's generator, seed `0x0bad_cafe`).
pub fn matmul_fill(mut next: impl FnMut() -> u32) {
    // SAFETY: one CPU; the only references to A and B while they are filled.
    let (a, b) = unsafe { (&mut *addr_of_mut!(A), &mut *addr_of_mut!(B)) };
    for i in 0..N {
        for j in 0..N {
            a[i][j] = next() & 0xffff;
            b[i][j] = next() & 0xffff;
        }
    }
}

/// Fills `vfp`'s inputs from `next` (part 1's generator, seed `0x0f1e_2d3c`): doubles
/// built from integers (sign, a small exponent range, a random mantissa), then the bytes.
pub fn vfp_fill(mut next: impl FnMut() -> u32) {
    // SAFETY: one CPU; the only references to X, Y and BYTES while they are filled.
    let (x, y, bytes) = unsafe {
        (
            &mut *addr_of_mut!(X),
            &mut *addr_of_mut!(Y),
            &mut *addr_of_mut!(BYTES),
        )
    };
    for v in x.iter_mut().chain(y.iter_mut()) {
        let m = (next() as u64) << 20 | next() as u64 >> 12;
        let e = 1020 + (next() & 7) as u64;
        let s = (next() & 1) as u64;
        *v = f64::from_bits(s << 63 | e << 52 | (m & 0xf_ffff_ffff_ffff));
    }
    for v in bytes.iter_mut() {
        *v = next() as u8;
    }
}

/// 96 x 96 integer matrix multiply, then a hash of the product.
pub fn matmul() -> u32 {
    // SAFETY: one CPU; shared references to A and B, the only one to C.
    let (a, b, c) = unsafe {
        (
            black_box(&*addr_of!(A)),
            black_box(&*addr_of!(B)),
            &mut *addr_of_mut!(C),
        )
    };
    for i in 0..N {
        for j in 0..N {
            let mut s = 0u32;
            for k in 0..N {
                s = s.wrapping_add(a[i][k].wrapping_mul(b[k][j]));
            }
            c[i][j] = s;
        }
    }
    let mut h = 0u32;
    for row in c.iter() {
        for &v in row {
            h = h.rotate_left(3) ^ v;
        }
    }
    h
}

/// `sum(x[i] * y[i])` with two fused multiply-add chains (VLDR, VFMA.F64), as bits.
fn dot(x: &[f64; V], y: &[f64; V]) -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: reads V doubles from each array; d0-d5 are used by no compiled code.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "vmov.i64 d4, #0",
            "vmov.i64 d5, #0",
            "1:",
            "vldr d0, [{x}]",
            "vldr d1, [{y}]",
            "vldr d2, [{x}, #8]",
            "vldr d3, [{y}, #8]",
            "vfma.f64 d4, d0, d1",
            "vfma.f64 d5, d2, d3",
            "add {x}, {x}, #16",
            "add {y}, {y}, #16",
            "subs {n}, {n}, #1",
            "bne 1b",
            "vadd.f64 d4, d4, d5",
            "vmov {lo}, {hi}, d4",
            x = inout(reg) x.as_ptr() => _,
            y = inout(reg) y.as_ptr() => _,
            n = inout(reg) V / 2 => _,
            lo = out(reg) lo,
            hi = out(reg) hi,
            options(nostack, readonly),
        );
    }
    (hi as u64) << 32 | lo as u64
}

/// A NEON checksum of `b` (VLD1.8 of 32 bytes, VADD.I32, VEOR).
fn checksum(b: &[u8; 65536]) -> u32 {
    let r: u32;
    // SAFETY: reads the 64 KiB buffer; d0-d7 are used by no compiled code.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "vmov.i32 d4, #0",
            "vmov.i32 d5, #0",
            "vmov.i32 d6, #0",
            "vmov.i32 d7, #0",
            "1:",
            "vld1.8 {{d0-d3}}, [{p}]!",
            "vadd.i32 d4, d4, d0",
            "veor d5, d5, d1",
            "vadd.i32 d6, d6, d2",
            "veor d7, d7, d3",
            "subs {n}, {n}, #1",
            "bne 1b",
            "vadd.i32 d4, d4, d6",
            "veor d5, d5, d7",
            "veor d4, d4, d5",
            "vmov {r}, {t}, d4",
            "eor {r}, {r}, {t}",
            p = inout(reg) b.as_ptr() => _,
            n = inout(reg) 65536 / 32 => _,
            r = out(reg) r,
            t = out(reg) _,
            options(nostack, readonly),
        );
    }
    r
}

/// 64 rounds of the dot product and the checksum, each on slightly changed inputs.
pub fn vfp() -> u32 {
    // SAFETY: one CPU; the only references to X, Y and BYTES.
    let (x, y, bytes) = unsafe {
        (
            &mut *addr_of_mut!(X),
            &mut *addr_of_mut!(Y),
            &mut *addr_of_mut!(BYTES),
        )
    };
    let mut h = 0u32;
    for k in 0..64 {
        x[k * 7] = f64::from_bits(x[k * 7].to_bits() ^ 1 << 63);
        bytes[k * 1009] ^= 0x5a;
        let d = dot(black_box(x), black_box(y));
        h = (h ^ d as u32 ^ (d >> 32) as u32).wrapping_mul(0x9e37_79b1);
        h = (h ^ checksum(black_box(bytes))).wrapping_mul(0x9e37_79b1);
    }
    h
}
