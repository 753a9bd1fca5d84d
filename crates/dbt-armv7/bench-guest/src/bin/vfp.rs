//! VFP and Advanced SIMD: a double-precision dot product (VLDR, VFMA.F64) over two
//! 4096-element vectors, 64 times, and a NEON checksum (VLD1.8 of 32 bytes, VADD.I32,
//! VEOR) over 64 KiB, 64 times. The loops are written in A32 assembly (`.fpu neon-vfpv4`):
//! the rest of the program is compiled for `armv7a-none-eabi`, which has no FPU.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

const N: usize = 4096;
static mut X: [f64; N] = [0.0; N];
static mut Y: [f64; N] = [0.0; N];
static mut BYTES: [u8; 65536] = [0; 65536];

/// `sum(x[i] * y[i])` with two fused multiply-add chains, as bits.
fn dot(x: &[f64; N], y: &[f64; N]) -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: reads N doubles from each array; the VFP registers it uses (d0-d5) cannot
    // be declared as clobbers without an FPU target feature, and no compiled code of this
    // program uses them.
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
            n = inout(reg) N / 2 => _,
            lo = out(reg) lo,
            hi = out(reg) hi,
            options(nostack, readonly),
        );
    }
    (hi as u64) << 32 | lo as u64
}

/// A NEON checksum of `b`: 32-bit lane sums and XORs of 32-byte chunks.
fn checksum(b: &[u8; 65536]) -> u32 {
    let r: u32;
    // SAFETY: reads the 64 KiB buffer; d0-d7 as in `dot` (no compiled code uses them).
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

#[no_mangle]
extern "C" fn guest_main() {
    // SAFETY: single-threaded; the only references to X, Y, BYTES.
    let (x, y, bytes) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(X),
            &mut *core::ptr::addr_of_mut!(Y),
            &mut *core::ptr::addr_of_mut!(BYTES),
        )
    };
    let mut rng = rt::Rng(0x0f1e_2d3c);
    // Doubles built from integers (no FPU in the compiled code): sign, a small exponent
    // range and a random mantissa.
    for v in x.iter_mut().chain(y.iter_mut()) {
        let m = (rng.next() as u64) << 20 | rng.next() as u64 >> 12;
        let e = 1020 + (rng.next() & 7) as u64;
        let s = (rng.next() & 1) as u64;
        *v = f64::from_bits(s << 63 | e << 52 | (m & 0xf_ffff_ffff_ffff));
    }
    for b in bytes.iter_mut() {
        *b = rng.next() as u8;
    }
    let mut h = 0u32;
    for k in 0..64 {
        // Each round sees different inputs: one element's sign and one byte change.
        x[k * 7] = f64::from_bits(x[k * 7].to_bits() ^ 1 << 63);
        bytes[k * 1009] ^= 0x5a;
        let d = dot(core::hint::black_box(x), core::hint::black_box(y));
        h = (h ^ d as u32 ^ (d >> 32) as u32).wrapping_mul(0x9e37_79b1);
        h = (h ^ checksum(core::hint::black_box(bytes))).wrapping_mul(0x9e37_79b1);
    }
    rt::report("vfp", h);
}
