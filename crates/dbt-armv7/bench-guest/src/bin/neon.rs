//! Advanced SIMD the way Linux and its userland use it, beyond whole-register loads and
//! integer adds: a ChaCha20 block function on Q registers (VADD.I32, VEOR, VREV32.16,
//! VSHL/VSRI rotates, VTBL byte rotate, VEXT diagonalisation; the shape of the kernel's
//! chacha-neon), a stereo mixer in single precision (VLD2.32 de-interleave, VMUL/VMLA by
//! scalar, VABS/VMAX, VCVT to integers, VQMOVN saturation, VPMAX), and an 8-bit alpha
//! blend (VMULL.U8/VMLAL.U8 widening, VRSHRN narrowing). A32 assembly (`.fpu
//! neon-vfpv4`); the rest of the program is compiled for `armv7a-none-eabi` (no FPU).
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

/// Stereo frames of the mixer.
const FRAMES: usize = 4096;
/// Bytes of each blended image.
const PIXELS: usize = 65536;

static mut SAMPLES: [u32; 2 * FRAMES] = [0; 2 * FRAMES];
static mut MIXED: [i16; FRAMES] = [0; FRAMES];
static mut IMG_A: [u8; PIXELS] = [0; PIXELS];
static mut IMG_B: [u8; PIXELS] = [0; PIXELS];
static mut BLEND: [u8; PIXELS] = [0; PIXELS];

/// The byte shuffle that rotates each 32-bit lane left by 8 (as chacha-neon's table).
static ROL8: [u8; 8] = [3, 0, 1, 2, 7, 4, 5, 6];

/// ChaCha20's 20 rounds (10 double rounds) on `state`, into `out` (without the final
/// addition of the input).
fn chacha_permute(state: &[u32; 16], out: &mut [u32; 16]) {
    // SAFETY: reads 64 bytes of `state` and 8 of ROL8, writes 64 bytes of `out`; d0-d10
    // cannot be declared as clobbers without an FPU target feature, and no compiled code
    // of this program uses them.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "vld1.32 {{d0-d3}}, [{s}]!",
            "vld1.32 {{d4-d7}}, [{s}]",
            "vld1.8 {{d10}}, [{t}]",
            "1:",
            // Column round: rotates by 16 (VREV32.16), 12, 8 (VTBL), 7.
            "vadd.i32 q0, q0, q1",
            "veor q3, q3, q0",
            "vrev32.16 q3, q3",
            "vadd.i32 q2, q2, q3",
            "veor q4, q1, q2",
            "vshl.i32 q1, q4, #12",
            "vsri.32 q1, q4, #20",
            "vadd.i32 q0, q0, q1",
            "veor q4, q3, q0",
            "vtbl.8 d6, {{d8}}, d10",
            "vtbl.8 d7, {{d9}}, d10",
            "vadd.i32 q2, q2, q3",
            "veor q4, q1, q2",
            "vshl.i32 q1, q4, #7",
            "vsri.32 q1, q4, #25",
            // Diagonal round: the rows rotated by VEXT, the rotate by 8 as VSHL/VSRI.
            "vext.8 q1, q1, q1, #4",
            "vext.8 q2, q2, q2, #8",
            "vext.8 q3, q3, q3, #12",
            "vadd.i32 q0, q0, q1",
            "veor q3, q3, q0",
            "vrev32.16 q3, q3",
            "vadd.i32 q2, q2, q3",
            "veor q4, q1, q2",
            "vshl.i32 q1, q4, #12",
            "vsri.32 q1, q4, #20",
            "vadd.i32 q0, q0, q1",
            "veor q4, q3, q0",
            "vshl.i32 q3, q4, #8",
            "vsri.32 q3, q4, #24",
            "vadd.i32 q2, q2, q3",
            "veor q4, q1, q2",
            "vshl.i32 q1, q4, #7",
            "vsri.32 q1, q4, #25",
            "vext.8 q1, q1, q1, #12",
            "vext.8 q2, q2, q2, #8",
            "vext.8 q3, q3, q3, #4",
            "subs {n}, {n}, #1",
            "bne 1b",
            "vst1.32 {{d0-d3}}, [{o}]!",
            "vst1.32 {{d4-d7}}, [{o}]",
            s = inout(reg) state.as_ptr() => _,
            t = in(reg) ROL8.as_ptr(),
            o = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) 10 => _,
            options(nostack),
        );
    }
}

/// Mixes the interleaved stereo `samples` (f32 bits) into `out` with gains `g` (f32
/// bits): `sat16(int(l * g0 + r * g1))`; returns the peak magnitude (f32 bits).
fn mix(samples: &[u32; 2 * FRAMES], out: &mut [i16; FRAMES], g: &[u32; 2]) -> u32 {
    let peak: u32;
    // SAFETY: reads the samples and gains, writes `out`; d0-d15 as in `chacha_permute`.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "vld1.32 {{d8}}, [{g}]",
            "vmov.i32 q7, #0",
            "1:",
            "vld2.32 {{d0-d3}}, [{p}]!",
            "vmul.f32 q2, q0, d8[0]",
            "vmla.f32 q2, q1, d8[1]",
            "vabs.f32 q3, q2",
            "vmax.f32 q7, q7, q3",
            "vcvt.s32.f32 q2, q2",
            "vqmovn.s32 d6, q2",
            "vst1.16 {{d6}}, [{o}]!",
            "subs {n}, {n}, #1",
            "bne 1b",
            "vpmax.f32 d14, d14, d15",
            "vpmax.f32 d14, d14, d14",
            "vmov {r}, s28",
            g = in(reg) g.as_ptr(),
            p = inout(reg) samples.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) FRAMES / 4 => _,
            r = out(reg) peak,
            options(nostack),
        );
    }
    peak
}

/// `out = (a * alpha + b * (255 - alpha) + 128) >> 8`, byte by byte (`alpha` = 0x90).
fn blend(a: &[u8; PIXELS], b: &[u8; PIXELS], out: &mut [u8; PIXELS]) {
    // SAFETY: reads `a` and `b`, writes `out`; d0-d31 as in `chacha_permute`.
    unsafe {
        core::arch::asm!(
            ".fpu neon-vfpv4",
            "vmov.i8 d30, #0x90",
            "vmov.i8 d31, #0x6f",
            "1:",
            "vld1.8 {{d0}}, [{a}]!",
            "vld1.8 {{d1}}, [{b}]!",
            "vmull.u8 q2, d0, d30",
            "vmlal.u8 q2, d1, d31",
            "vrshrn.i16 d6, q2, #8",
            "vst1.8 {{d6}}, [{o}]!",
            "subs {n}, {n}, #1",
            "bne 1b",
            a = inout(reg) a.as_ptr() => _,
            b = inout(reg) b.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) PIXELS / 8 => _,
            options(nostack),
        );
    }
}

#[no_mangle]
extern "C" fn guest_main() {
    // SAFETY: single-threaded; the only references to these statics.
    let (samples, mixed, img_a, img_b, out) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(SAMPLES),
            &mut *core::ptr::addr_of_mut!(MIXED),
            &mut *core::ptr::addr_of_mut!(IMG_A),
            &mut *core::ptr::addr_of_mut!(IMG_B),
            &mut *core::ptr::addr_of_mut!(BLEND),
        )
    };
    let mut rng = rt::Rng(0x2e0e_5eed);
    let mut h = 0u32;
    let mix_h = |h: u32, v: u32| (h ^ v).wrapping_mul(0x9e37_79b1);
    // ChaCha20: 1024 blocks of one key and nonce, counter 0..1023.
    let mut state = [0u32; 16];
    state[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for w in state[4..].iter_mut() {
        *w = rng.next();
    }
    let mut block = [0u32; 16];
    for counter in 0..1024 {
        state[12] = counter;
        chacha_permute(core::hint::black_box(&state), &mut block);
        for (b, s) in block.iter().zip(&state) {
            h = mix_h(h, b.wrapping_add(*s));
        }
    }
    // Samples: signs, exponents up to 2^17 (some mixes saturate), random mantissas.
    for v in samples.iter_mut() {
        let r = rng.next();
        *v = (r & 1) << 31 | (120 + (r >> 1) % 25) << 23 | (rng.next() & 0x7f_ffff);
    }
    for round in 0..32u32 {
        let g = [0x3f40_0000 ^ round, 0x3f00_0000 + (round << 16)]; // ~0.75, ~0.5
        samples[round as usize * 97] ^= 1 << 31;
        h = mix_h(h, mix(core::hint::black_box(samples), mixed, &g));
        for s in mixed.chunks_exact(2) {
            h = mix_h(h, (s[0] as u16 as u32) << 16 | s[1] as u16 as u32);
        }
    }
    for (a, b) in img_a.iter_mut().zip(img_b.iter_mut()) {
        let r = rng.next();
        (*a, *b) = (r as u8, (r >> 8) as u8);
    }
    for round in 0..8usize {
        img_a[round * 4099] ^= 0xa5;
        blend(core::hint::black_box(img_a), img_b, out);
        for w in out.chunks_exact(8) {
            let lo = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            let hi = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
            h = mix_h(h, lo ^ hi.rotate_left(7));
        }
    }
    rt::report("neon", h);
}
