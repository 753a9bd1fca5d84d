//! The seeded VFP (and Advanced SIMD register transfer) sequence generator: each
//! instruction is built from an encoding family with random fields, constrained by
//! construction only (it never asks the decoder, the interpreter or the translator what to
//! keep). A case loads D0-D31 from the scratch window (`VLDMIA r11!` twice), sets FPSCR
//! from r12 (`VMSR`), runs 1-8 random instructions, stores D0-D31 back over the same
//! window (`VSTMDB r11!` twice, so r11 ends where it started) and reads FPSCR into r12:
//! the harness's record then holds every D register, FPSCR, the APSR and memory.
//!
//! Families: three-operand arithmetic (VMLA/VMLS/VNMLA/VNMLS/VMUL/VNMUL/VADD/VSUB/VDIV,
//! VFMA/VFMS/VFNMA/VFNMS), VMOV immediate and register, VABS/VNEG/VSQRT, VCMP/VCMPE
//! (register and #0), VCVT (double<->single, integer<->float with and without round to
//! zero, fixed point of 16 and 32 bits), VCVTB/VCVTT, VMRS (Rt and `APSR_nzcv`), VMSR,
//! VMOV core<->S, two cores<->two S or one D, core<->D scalar (8/16/32 bits), VDUP,
//! VLDR/VSTR around r11, VSTMDB/VLDMIA r11! pairs and VPUSH/VPOP pairs. A32 words get a
//! condition a quarter of the time; Thumb instructions are unconditional or alone in an
//! IT block.

use super::gen_a32::dest;
use super::harness::{random_regs, Case, SCR};
use super::Rng;

/// Offset of the D-register image in the scratch window (r11 points there).
pub const FP_AREA: usize = SCR as usize / 2;

/// The FPSCR bits a case starts with: RMode, FZ, DN, AHP, NZCV, QC and a few cumulative
/// flags (Len/Stride and the trap enables are RAZ/WI on a Cortex-A15).
fn fpscr(rng: &mut Rng) -> u32 {
    let mut v = rng.below(4) << 22;
    if rng.below(4) == 0 {
        v |= 1 << 24; // FZ
    }
    if rng.below(4) == 0 {
        v |= 1 << 25; // DN
    }
    if rng.below(8) == 0 {
        v |= 1 << 26; // AHP
    }
    v |= rng.u32() & 0xf800_0000;
    if rng.below(4) == 0 {
        v |= rng.u32() & 0x9f;
    }
    v
}

/// An interesting 32-bit floating-point pattern.
fn f32_bits(rng: &mut Rng) -> u32 {
    let s = rng.below(2) << 31;
    s | match rng.below(12) {
        0 => 0,
        1 => 0x7f80_0000,                           // infinity
        2 => 0x7fc0_0000 | rng.u32() & 0x3f_ffff,   // quiet NaN
        3 => 0x7f80_0001 | rng.u32() & 0x1f_ffff,   // signalling NaN
        4 => rng.u32() & 0x7f_ffff,                 // denormal
        5 => 0x3f80_0000 | (rng.u32() & 0x7) << 20, // near one
        6 => (rng.below(16) + 120) << 23 | rng.u32() & 0x7f_ffff,
        7 => 0x7f7f_ffff,                              // largest
        8 => 0x0080_0000,                              // smallest normal
        9 => (127 + 31) << 23 | rng.u32() & 0x7f_ffff, // near 2^31
        _ => rng.u32() & 0x7fff_ffff,
    }
}

/// An interesting 64-bit floating-point pattern.
fn f64_bits(rng: &mut Rng) -> u64 {
    let s = (rng.below(2) as u64) << 63;
    let r = rng.next();
    s | match rng.below(12) {
        0 => 0,
        1 => 0x7ff0_0000_0000_0000,
        2 => 0x7ff8_0000_0000_0000 | r & 0x7_ffff_ffff_ffff,
        3 => 0x7ff0_0000_0000_0001 | r & 0x3_ffff_ffff_ffff,
        4 => r & 0xf_ffff_ffff_ffff,
        5 => 0x3ff0_0000_0000_0000 | (r & 0xff) << 44,
        6 => ((rng.below(64) + 1000) as u64) << 52 | r & 0xf_ffff_ffff_ffff,
        7 => 0x7fef_ffff_ffff_ffff,
        8 => (0x380 + rng.below(2) as u64 - 1) << 52 | r & 0xf_ffff_ffff_ffff, // near f32 denormals
        9 => ((1023 + 31) as u64) << 52 | r & 0xf_ffff_ffff_ffff,
        _ => r & 0x7fff_ffff_ffff_ffff,
    }
}

/// Fills the D-register image of a scratch window with interesting values.
pub fn fill_fp_area(rng: &mut Rng, scr: &mut [u8]) {
    for d in 0..32 {
        let v = if rng.below(2) == 0 {
            f64_bits(rng)
        } else {
            (f32_bits(rng) as u64) << 32 | f32_bits(rng) as u64
        };
        scr[FP_AREA + 8 * d..FP_AREA + 8 * d + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// `D:Vd`-style fields for register `n` of a double (`dp`) or single operand, as
/// (4-bit field, extra bit).
fn split(n: u32, dp: bool) -> (u32, u32) {
    if dp {
        (n & 15, n >> 4)
    } else {
        (n >> 1, n & 1)
    }
}

fn with_d(w: u32, n: u32, dp: bool) -> u32 {
    let (v, b) = split(n, dp);
    w | v << 12 | b << 22
}
fn with_n(w: u32, n: u32, dp: bool) -> u32 {
    let (v, b) = split(n, dp);
    w | v << 16 | b << 7
}
fn with_m(w: u32, n: u32, dp: bool) -> u32 {
    let (v, b) = split(n, dp);
    w | v | b << 5
}

/// One VFP-family instruction in A32 layout with condition AL (`0xe.......`), or a pair
/// (VPUSH/VPOP, VSTMDB/VLDMIA) that must stay together.
fn insn(rng: &mut Rng) -> Vec<u32> {
    let dp = rng.below(2) == 1;
    let sz = (dp as u32) << 8;
    let r = |rng: &mut Rng| rng.below(32);
    let base = 0xee00_0a00 | sz;
    match rng.below(20) {
        0..=4 => {
            let opc1 =
                [0b0000, 0b0001, 0b0010, 0b0011, 0b1000, 0b1001, 0b1010][rng.below(7) as usize];
            let op6 = if opc1 == 0b1000 { 0 } else { rng.below(2) };
            let w = base | opc1 << 20 | op6 << 6;
            let w = with_d(w, r(rng), dp);
            let w = with_n(w, r(rng), dp);
            vec![with_m(w, r(rng), dp)]
        }
        5 => {
            // VMOV immediate.
            let imm = rng.below(256);
            let w = base | 0b1011 << 20 | (imm >> 4) << 16 | (imm & 15);
            vec![with_d(w, r(rng), dp)]
        }
        6 | 7 => {
            // VMOV/VABS/VNEG/VSQRT, VCMP{E} (register or #0), VCVT double<->single.
            let (opc2, t7) = [
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (4, 0),
                (4, 1),
                (5, 0),
                (5, 1),
                (7, 1),
            ][rng.below(9) as usize];
            let w = base | 0b1011 << 20 | opc2 << 16 | t7 << 7 | 1 << 6;
            let dst_dp = if opc2 == 7 { !dp } else { dp };
            let w = with_d(w, r(rng), dst_dp);
            vec![if opc2 == 5 { w } else { with_m(w, r(rng), dp) }]
        }
        8 | 9 => {
            // VCVT between integers and floating point.
            if rng.below(2) == 0 {
                let w = base | 0b1011 << 20 | 0b1000 << 16 | rng.below(2) << 7 | 1 << 6;
                vec![with_m(with_d(w, r(rng), dp), r(rng), false)]
            } else {
                let opc2 = 0b1100 | rng.below(2);
                let w = base | 0b1011 << 20 | opc2 << 16 | rng.below(2) << 7 | 1 << 6;
                vec![with_m(with_d(w, r(rng), false), r(rng), dp)]
            }
        }
        10 => {
            // VCVT fixed point, in place: fbits = size - imm, imm <= size.
            let sx = rng.below(2);
            let size = if sx == 1 { 32 } else { 16 };
            let imm = rng.below(size + 1) % 32;
            let opc2 = 0b1010 | rng.below(2) << 2 | rng.below(2);
            let w = base | 0b1011 << 20 | opc2 << 16 | sx << 7 | 1 << 6 | (imm & 1) << 5 | imm >> 1;
            vec![with_d(w, r(rng), dp)]
        }
        11 => {
            // VCVTB/VCVTT (single <-> half).
            let w = 0xee00_0a00
                | 0b1011 << 20
                | (0b0010 | rng.below(2)) << 16
                | rng.below(2) << 7
                | 1 << 6;
            vec![with_m(with_d(w, r(rng), false), r(rng), false)]
        }
        12 => {
            // VMRS Rt/APSR_nzcv, FPSCR or VMSR FPSCR, Rt (Rt with masked contents would be
            // a constraint by value; any register goes: unimplemented bits are RAZ/WI).
            match rng.below(3) {
                0 => vec![0xeef1_fa10],
                1 => vec![0xeef1_0a10 | dest(rng) << 12],
                _ => vec![0xeee1_0a10 | rng.below(13) << 12],
            }
        }
        13 => {
            // VMOV core <-> single.
            let l = rng.below(2);
            let rt = if l == 1 { dest(rng) } else { rng.below(15) };
            let s = r(rng);
            vec![0xee00_0a10 | l << 20 | (s >> 1) << 16 | (s & 1) << 7 | rt << 12]
        }
        14 => {
            // VMOV two cores <-> two singles / one double.
            let l = rng.below(2);
            let (rt, rt2) = if l == 1 {
                let a = dest(rng);
                let mut b = dest(rng);
                while b == a {
                    b = dest(rng);
                }
                (a, b)
            } else {
                (rng.below(15), rng.below(15))
            };
            let m = if dp { r(rng) } else { rng.below(31) };
            let w = 0xec40_0a10 | sz | l << 20 | rt2 << 16 | rt << 12;
            vec![with_m(w, m, dp)]
        }
        15 => {
            // VMOV core <-> D scalar, VDUP from core.
            let dn = r(rng);
            let (v, b) = split(dn, true);
            match rng.below(3) {
                0 => {
                    let opc = [
                        0b1000 | rng.below(8),
                        0b0001 | rng.below(4) << 1,
                        rng.below(2) << 2,
                    ][rng.below(3) as usize];
                    let u = if opc & 0b1000 != 0 || opc & 1 != 0 {
                        rng.below(2)
                    } else {
                        0
                    };
                    vec![
                        0xee10_0b10
                            | u << 23
                            | (opc >> 2) << 21
                            | v << 16
                            | dest(rng) << 12
                            | b << 7
                            | (opc & 3) << 5,
                    ]
                }
                1 => {
                    let opc = [
                        0b1000 | rng.below(8),
                        0b0001 | rng.below(4) << 1,
                        rng.below(2) << 2,
                    ][rng.below(3) as usize];
                    vec![
                        0xee00_0b10
                            | (opc >> 2) << 21
                            | v << 16
                            | rng.below(15) << 12
                            | b << 7
                            | (opc & 3) << 5,
                    ]
                }
                _ => {
                    let be = rng.below(3);
                    let q = rng.below(2);
                    let dn = if q == 1 { dn & !1 } else { dn };
                    let (v, b) = split(dn, true);
                    vec![
                        0xee80_0b10
                            | (be >> 1) << 22
                            | q << 21
                            | v << 16
                            | rng.below(15) << 12
                            | b << 7
                            | (be & 1) << 5,
                    ]
                }
            }
        }
        16 | 17 => {
            // VLDR/VSTR [r11, #+/-imm] (r11 is 256 bytes into the D image here).
            let u = rng.below(2);
            let l = rng.below(2);
            let imm = rng.below(200);
            let w = 0xed00_0a00 | sz | u << 23 | l << 20 | 11 << 16 | imm;
            vec![with_d(w, r(rng), dp)]
        }
        18 => {
            // VSTMDB r11!, {list}; VLDMIA r11!, {list'} of the same size.
            let n = 1 + rng.below(if dp { 8 } else { 16 });
            let lim = 32 - n;
            let imm = if dp { 2 * n } else { n };
            let st = with_d(0xed20_0a00 | sz | 11 << 16 | imm, rng.below(lim + 1), dp);
            let ld = with_d(0xecb0_0a00 | sz | 11 << 16 | imm, rng.below(lim + 1), dp);
            vec![st, ld]
        }
        _ => {
            // VPUSH {list}; VPOP {list'} of the same size.
            let n = 1 + rng.below(if dp { 8 } else { 16 });
            let lim = 32 - n;
            let imm = if dp { 2 * n } else { n };
            let push = with_d(0xed2d_0a00 | sz | imm, rng.below(lim + 1), dp);
            let pop = with_d(0xecbd_0a00 | sz | imm, rng.below(lim + 1), dp);
            vec![push, pop]
        }
    }
}

/// `MOV r9, r11` (A32; the Thumb sequence builder emits its 16-bit form): the base of the
/// Advanced SIMD loads and stores, which may write it back.
const MOV_R9_R11: u32 = 0xe1a0_900b;

/// A D register number in the `D:Vd`-style fields of an Advanced SIMD word.
fn nd(w: u32, d: u32) -> u32 {
    w | (d & 15) << 12 | (d >> 4) << 22
}
fn nn(w: u32, n: u32) -> u32 {
    w | (n & 15) << 16 | (n >> 4) << 7
}
fn nm(w: u32, m: u32) -> u32 {
    w | (m & 15) | (m >> 4) << 5
}

/// A register for a `q`-sized operand (even for a Q register).
fn vreg(rng: &mut Rng, q: bool) -> u32 {
    if q {
        rng.below(16) * 2
    } else {
        rng.below(32)
    }
}

/// One Advanced SIMD instruction (A32 layout), or `MOV r9, r11` and a VLDn/VSTn.
pub fn neon_insn(rng: &mut Rng) -> Vec<u32> {
    let q = rng.below(2) == 1;
    let qb = (q as u32) << 6;
    let u = rng.below(2);
    match rng.below(22) {
        0..=4 => {
            // Three registers of the same length, integer.
            let (op, b) = (rng.below(12), rng.below(2));
            let mut size = rng.below(4);
            let mut u = u;
            let mut q = q;
            let ok64 = matches!((op, b), (0, 1) | (2, 1) | (4, _) | (5, _) | (8, 0));
            if size == 3 && !ok64 {
                size = rng.below(3);
            }
            if op == 9 && b == 1 && u == 1 {
                size = 0;
            }
            if op == 11 && b == 0 {
                size = 1 + rng.below(2);
            }
            if op == 10 || (op == 11 && b == 1) {
                q = false;
                size = size.min(2);
                if op == 11 {
                    u = 0;
                }
            }
            let w = 0xf200_0000 | u << 24 | size << 20 | op << 8 | (q as u32) << 6 | b << 4;
            vec![nm(nn(nd(w, vreg(rng, q)), vreg(rng, q)), vreg(rng, q))]
        }
        5 | 6 => {
            // Three registers of the same length, single precision.
            let forms: [(u32, u32, u32, u32); 20] = [
                (12, 1, 0, 0),
                (12, 1, 0, 1),
                (13, 0, 0, 0),
                (13, 0, 0, 1),
                (13, 0, 1, 0),
                (13, 0, 1, 1),
                (13, 1, 0, 0),
                (13, 1, 0, 1),
                (13, 1, 1, 0),
                (14, 0, 0, 0),
                (14, 0, 1, 0),
                (14, 0, 1, 1),
                (14, 1, 1, 0),
                (14, 1, 1, 1),
                (15, 0, 0, 0),
                (15, 0, 0, 1),
                (15, 0, 1, 0),
                (15, 0, 1, 1),
                (15, 1, 0, 0),
                (15, 1, 0, 1),
            ];
            let (op, b, u, hi) = forms[rng.below(20) as usize];
            let pairwise = u == 1 && ((op == 13 && b == 0 && hi == 0) || (op == 15 && b == 0));
            let q = q && !pairwise;
            let w = 0xf200_0000 | u << 24 | hi << 21 | op << 8 | (q as u32) << 6 | b << 4;
            vec![nm(nn(nd(w, vreg(rng, q)), vreg(rng, q)), vreg(rng, q))]
        }
        7 => {
            // One register and a modified immediate.
            let cmode = rng.below(16);
            let op = if cmode == 15 { 0 } else { rng.below(2) };
            let imm = rng.below(256);
            let w = 0xf280_0010
                | (imm >> 7) << 24
                | (imm >> 4 & 7) << 16
                | cmode << 8
                | qb
                | op << 5
                | imm & 15;
            vec![nd(w, vreg(rng, q))]
        }
        8 | 9 if rng.below(5) == 0 => {
            // VCVT between single precision and 32-bit fixed point (1-32 fraction bits).
            let op = 14 + rng.below(2);
            let imm6 = 32 | rng.below(32);
            let w = 0xf280_0010 | u << 24 | imm6 << 16 | op << 8 | qb;
            vec![nm(nd(w, vreg(rng, q)), vreg(rng, q))]
        }
        8 | 9 => {
            // Shifts by an immediate, same length.
            let op = [0, 1, 2, 3, 4, 5, 6, 7][rng.below(8) as usize];
            let u = if op == 4 || op == 6 { 1 } else { u };
            let l = rng.below(4) == 0;
            let imm6 = if l {
                rng.below(64)
            } else {
                match rng.below(3) {
                    0 => 8 | rng.below(8),
                    1 => 16 | rng.below(16),
                    _ => 32 | rng.below(32),
                }
            };
            let w = 0xf280_0010 | u << 24 | imm6 << 16 | op << 8 | (l as u32) << 7 | qb;
            vec![nm(nd(w, vreg(rng, q)), vreg(rng, q))]
        }
        10 => {
            // Narrowing shifts (Qm to Dd) and VSHLL/VMOVL (Dm to Qd).
            let imm6 = match rng.below(3) {
                0 => 8 | rng.below(8),
                1 => 16 | rng.below(16),
                _ => 32 | rng.below(32),
            };
            if rng.below(2) == 0 {
                let op = 8 + rng.below(2);
                let w = 0xf280_0010 | u << 24 | imm6 << 16 | op << 8 | rng.below(2) << 6;
                vec![nm(nd(w, rng.below(32)), vreg(rng, true))]
            } else {
                let w = 0xf280_0010 | u << 24 | imm6 << 16 | 0b1010 << 8;
                vec![nm(nd(w, vreg(rng, true)), rng.below(32))]
            }
        }
        11 | 12 => {
            // Two registers, miscellaneous.
            let forms: [(u32, u32, u32); 21] = [
                // (A, B without Q, allowed sizes mask)
                (0, 0b0000, 0b0111),
                (0, 0b0001, 0b0011),
                (0, 0b0010, 0b0001),
                (0, 0b0100, 0b0111),
                (0, 0b0101, 0b0111),
                (0, 0b1100, 0b0111),
                (0, 0b1101, 0b0111),
                (0, 0b1000, 0b0111),
                (0, 0b1001, 0b0111),
                (0, 0b1010, 0b0001),
                (0, 0b1011, 0b0001),
                (0, 0b1110, 0b0111),
                (0, 0b1111, 0b0111),
                (1, rng.below(5), 0b0111),
                (1, 0b0110 | rng.below(2), 0b0111),
                (1, 0b1000 | rng.below(5), 0b0100),
                (1, 0b1110 | rng.below(2), 0b0100),
                (2, 0b0000, 0b0001),
                (2, 0b0001 | rng.below(3), 0b0111),
                (3, 0b1100 | rng.below(4), 0b0100),
                (3, 0b1000 | rng.below(4), 0b0100),
            ];
            let (a, b, sizes) = forms[rng.below(21) as usize];
            let size = loop {
                let s = rng.below(3);
                if sizes >> s & 1 == 1 {
                    break s;
                }
            };
            // VUZP/VZIP of 32-bit elements exist only for Q registers.
            let q = if a == 2 && (b == 2 || b == 3) && size == 2 {
                true
            } else {
                q
            };
            let w = 0xf3b0_0000 | size << 18 | a << 16 | b << 7 | (q as u32) << 6;
            vec![nm(nd(w, vreg(rng, q)), vreg(rng, q))]
        }
        13 => {
            // VMOVN/VQMOVN/VQMOVUN and VSHLL (maximum shift).
            let size = rng.below(3);
            if rng.below(3) > 0 {
                let w = 0xf3b2_0200 | size << 18 | rng.below(4) << 6;
                vec![nm(nd(w, rng.below(32)), vreg(rng, true))]
            } else {
                let w = 0xf3b2_0300 | size << 18;
                vec![nm(nd(w, vreg(rng, true)), rng.below(32))]
            }
        }
        14 | 15 => {
            // Three registers of different lengths.
            let op = rng.below(14);
            let (u, size) = match op {
                9 | 11 | 13 => (0, 1 + rng.below(2)),
                _ => (u, rng.below(3)),
            };
            let wide_n = op == 1 || op == 3;
            let narrow = op == 4 || op == 6;
            let d = if narrow {
                rng.below(32)
            } else {
                vreg(rng, true)
            };
            let n = if narrow || wide_n {
                vreg(rng, true)
            } else {
                rng.below(32)
            };
            let m = if narrow {
                vreg(rng, true)
            } else {
                rng.below(32)
            };
            let op = if op == 12 && rng.below(3) == 0 {
                14
            } else {
                op
            };
            let (u, size) = if op == 14 { (0, 0) } else { (u, size) };
            let w = 0xf280_0000 | u << 24 | size << 20 | op << 8;
            vec![nm(nn(nd(w, d), n), m)]
        }
        16 => {
            // Two registers and a scalar.
            let op = [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11][rng.below(14) as usize];
            let long = matches!(op, 2 | 3 | 6 | 7 | 10 | 11);
            let float = matches!(op, 1 | 5 | 9);
            let size = if float { 2 } else { 1 + rng.below(2) };
            let bit24 = if long {
                if op & 1 == 1 {
                    0
                } else {
                    u
                }
            } else {
                q as u32
            };
            let qq = !long && q;
            let d = if long { vreg(rng, true) } else { vreg(rng, qq) };
            let n = if long { rng.below(32) } else { vreg(rng, qq) };
            let m = if size == 1 {
                rng.below(8) | rng.below(4) << 3
            } else {
                rng.below(32)
            };
            let w = 0xf280_0040 | bit24 << 24 | size << 20 | op << 8;
            vec![nm(nn(nd(w, d), n), m)]
        }
        17 => {
            // VEXT.
            let imm4 = if q { rng.below(16) } else { rng.below(8) };
            let w = 0xf2b0_0000 | imm4 << 8 | qb;
            vec![nm(nn(nd(w, vreg(rng, q)), vreg(rng, q)), vreg(rng, q))]
        }
        18 => {
            // VTBL/VTBX and VDUP (scalar).
            if rng.below(2) == 0 {
                let len = rng.below(4);
                let w = 0xf3b0_0800 | len << 8 | rng.below(2) << 6;
                vec![nm(
                    nn(nd(w, rng.below(32)), rng.below(32 - len)),
                    rng.below(32),
                )]
            } else {
                let imm4 = [
                    1 | rng.below(8) << 1,
                    2 | rng.below(4) << 2,
                    4 | rng.below(2) << 3,
                ][rng.below(3) as usize];
                let w = 0xf3b0_0c00 | imm4 << 16 | qb;
                vec![nm(nd(w, vreg(rng, q)), rng.below(32))]
            }
        }
        _ => {
            // VLDn/VSTn through r9 (= r11), with or without writeback.
            let l = rng.below(2);
            let rm = [15, 13, 10][rng.below(3) as usize];
            let w = if rng.below(2) == 0 {
                // Multiple structures.
                let (t, n, inc, regs) = [
                    (7, 1, 1, 1),
                    (10, 1, 1, 2),
                    (6, 1, 1, 3),
                    (2, 1, 1, 4),
                    (8, 2, 1, 1),
                    (9, 2, 2, 1),
                    (3, 2, 2, 2),
                    (4, 3, 1, 1),
                    (5, 3, 2, 1),
                    (0, 4, 1, 1),
                    (1, 4, 2, 1),
                ][rng.below(11) as usize];
                let size = if n == 1 { rng.below(4) } else { rng.below(3) };
                let span = (n - 1) * inc + regs;
                let d = rng.below(33 - span);
                let align = match t {
                    4..=7 => rng.below(2),
                    8..=10 => rng.below(3),
                    _ => rng.below(4),
                };
                nd(
                    0xf400_0000 | l << 21 | 9 << 16 | t << 8 | size << 6 | align << 4 | rm,
                    d,
                )
            } else if l == 1 && rng.below(3) == 0 {
                // To all lanes.
                let n = 1 + rng.below(4);
                let t = rng.below(2);
                let inc = if n == 1 { 1 } else { 1 + t };
                let regs = if n == 1 { 1 + t } else { 1 };
                let size = rng.below(3);
                let a = if n == 3 || (n == 1 && size == 0) {
                    0
                } else {
                    rng.below(2)
                };
                let d = rng.below(33 - ((n - 1) * inc + regs));
                nd(
                    0xf4a0_0c00 | 9 << 16 | (n - 1) << 8 | size << 6 | t << 5 | a << 4 | rm,
                    d,
                )
            } else {
                // A single lane.
                let n = 1 + rng.below(4);
                let size = rng.below(3);
                let lanes_bits = 3 - size; // index bits
                let index = rng.below(1 << lanes_bits);
                let spaced = if size > 0 && n > 1 { rng.below(2) } else { 0 };
                let inc = 1 + spaced;
                let low = match (n, size) {
                    (1, 0) | (3, _) => 0,
                    (1, 1) => rng.below(2),
                    (1, 2) => [0, 3][rng.below(2) as usize],
                    (2, 0) | (4, 0) => rng.below(2),
                    (2, 1) | (4, 1) => rng.below(2),
                    (2, 2) => rng.below(2),
                    _ => rng.below(3),
                };
                let ia = match size {
                    0 => index << 1 | low,
                    1 => index << 2 | spaced << 1 | low,
                    _ => index << 3 | spaced << 2 | low,
                };
                let d = rng.below(33 - (n - 1) * inc);
                nd(
                    0xf480_0000 | l << 21 | 9 << 16 | size << 10 | (n - 1) << 8 | ia << 4 | rm,
                    d,
                )
            };
            vec![MOV_R9_R11, w]
        }
    }
}

/// The T32 form of an A32 Advanced SIMD word (`1111 001U` -> `111U 1111`, `1111 0100` ->
/// `1111 1001`); VFP words are the same in both.
fn to_t32(w: u32) -> u32 {
    match w >> 24 {
        0xf2 | 0xf3 => 0xef00_0000 | (w >> 24 & 1) << 28 | w & 0xff_ffff,
        0xf4 => 0xf900_0000 | w & 0xff_ffff,
        _ => w,
    }
}

/// The prologue: `VLDMIA r11!, {d0-d15}`, `VLDMIA r11!, {d16-d31}`, `VMSR FPSCR, r12`.
const PROLOGUE: [u32; 3] = [0xecbb_0b20, 0xecfb_0b20, 0xeee1_ca10];
/// The epilogue: `VSTMDB r11!, {d16-d31}`, `VSTMDB r11!, {d0-d15}`, `VMRS r12, FPSCR`.
const EPILOGUE: [u32; 3] = [0xed6b_0b20, 0xed2b_0b20, 0xeef1_ca10];

/// A random VFP case (with `neon`, half of its instructions Advanced SIMD), A32 or
/// Thumb-2; the scratch window must hold an FP image ([`fill_fp_area`]).
pub fn sequence(rng: &mut Rng, thumb: bool, neon: bool) -> Case {
    let mut regs = random_regs(rng, thumb);
    // The sequence uses r11 as its base in both states.
    regs[11] = super::harness::DST + SCR / 2;
    if thumb {
        regs[7] = rng.u32();
        regs[6] = rng.u32();
    }
    regs[12] = fpscr(rng);
    let n = 1 + rng.below(8);
    let mut words: Vec<(u32, Option<u32>)> = PROLOGUE.iter().map(|&w| (w, None)).collect();
    for _ in 0..n {
        let group = if neon && rng.below(2) == 0 {
            neon_insn(rng)
        } else {
            insn(rng)
        };
        // Advanced SIMD data processing is unconditional in A32.
        let single = group.len() == 1 && group[0] >> 28 != 0xf;
        for w in group {
            let cond = if single && rng.below(4) == 0 {
                Some(rng.below(14))
            } else {
                None
            };
            words.push((w, cond));
        }
    }
    words.extend(EPILOGUE.iter().map(|&w| (w, None)));
    let mut code = Vec::new();
    for (w, cond) in words {
        if thumb {
            if let Some(c) = cond {
                code.push(0xbf08 | c << 4); // IT <c>
            }
            if w == MOV_R9_R11 {
                code.push(0x46d9);
                continue;
            }
            let w = to_t32(w);
            code.push(w >> 16);
            code.push(w & 0xffff);
        } else {
            let c = cond.unwrap_or(14);
            // Advanced SIMD words (`1111 ...`) are unconditional: kept as they are.
            code.push(if w >> 28 == 0xf {
                w
            } else {
                w & 0x0fff_ffff | c << 28
            });
        }
    }
    let mut case = Case::new(thumb, code, regs);
    case.note = if neon { "vfp+neon" } else { "vfp" }.into();
    case
}

/// A case running the given A32 words between the prologue and the epilogue (for
/// reproducing a failure: `DBT_VFP_WORDS`).
pub fn fixed(rng: &mut Rng, words: &[u32]) -> Case {
    let mut regs = random_regs(rng, false);
    regs[11] = super::harness::DST + SCR / 2;
    regs[12] = 0;
    let mut code: Vec<u32> = PROLOGUE.to_vec();
    code.extend_from_slice(words);
    code.extend_from_slice(&EPILOGUE);
    Case::new(false, code, regs)
}

/// A case whose VLDR/VSTR/VLDM base is `r11 + delta` (A32): a misaligned base must raise
/// the alignment fault in all three runs, also after an aligned access through the same
/// register earlier in the block (which the translator may use to skip later checks).
pub fn alignment_case(rng: &mut Rng, delta: u32) -> Case {
    let mut regs = random_regs(rng, false);
    regs[11] = super::harness::DST + SCR / 2;
    regs[12] = 0;
    let d = rng.below(16);
    let access = match rng.below(3) {
        0 => with_d(0xed99_0b00 | rng.below(8), d, true), // VLDR Dd, [r9, #imm]
        1 => with_d(0xed89_0a00 | rng.below(8), d * 2 + 1, false), // VSTR Sd, [r9, #imm]
        _ => with_d(0xec99_0b04, d.min(14), true),        // VLDMIA r9, {Dd, Dd+1}
    };
    let mut code: Vec<u32> = PROLOGUE.to_vec();
    code.extend_from_slice(&[
        MOV_R9_R11,
        0xed99_2b00,         // VLDR d2, [r9]: an aligned access through r9 first
        0xe289_9000 | delta, // ADD r9, r9, #delta
        access,
    ]);
    code.extend_from_slice(&EPILOGUE);
    let mut c = Case::new(false, code, regs);
    c.note = format!("alignment, base + {delta}");
    c
}
