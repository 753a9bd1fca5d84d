//! The seeded Thumb-2 sequence generator of the translator tests: 16- and 32-bit
//! instructions built from encoding families with random fields, constrained by
//! construction only (it never asks the decoder, the interpreter or the translator what
//! to keep): destinations avoid r6/r7 (the harness's index and base), r13 and the PC;
//! memory goes through r7 and r6; IT blocks hold 1-4 instructions; `CBZ/CBNZ` and `B<c>`
//! branch forward to an instruction boundary inside the sequence. Families: 16-bit shifts,
//! add/subtract, immediate moves and compares, register data processing, high-register
//! ADD/MOV, loads and stores (immediate and register offset), extends and byte reversal;
//! 32-bit data processing with modified immediates, shifted registers and register
//! shifts, MOVW/MOVT, multiplies (long included) and divides, loads and stores (12-bit,
//! 8-bit with pre/post-indexing, register offset), LDRD/STRD and LDM/STM, the media and
//! DSP families (saturating, parallel add/subtract, packing, dual multiplies); IT blocks;
//! CBZ/CBNZ; B<c>.

use super::harness::{random_regs, Case};
use super::Rng;

/// Low destinations (16-bit encodings).
const LOW: [u32; 6] = [0, 1, 2, 3, 4, 5];
/// Destinations of 32-bit encodings.
const DESTS: [u32; 12] = [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 14];
const BASE: u32 = 7;
const IDX: u32 = 6;

/// One instruction: one or two halfwords; `branch` marks a forward branch to patch.
#[derive(Clone)]
struct Unit {
    hw: Vec<u32>,
    branch: Option<Branch>,
    /// Inside an IT block: not a branch target.
    in_it: bool,
}

#[derive(Clone, Copy)]
enum Branch {
    Cbz(u32),
    BCond(u32),
}

fn low(rng: &mut Rng) -> u32 {
    LOW[rng.below(6) as usize]
}
fn lowsrc(rng: &mut Rng) -> u32 {
    rng.below(8)
}
fn dest(rng: &mut Rng) -> u32 {
    DESTS[rng.below(12) as usize]
}
/// A 32-bit source: any but r13 and the PC.
fn src(rng: &mut Rng) -> u32 {
    loop {
        let r = rng.below(15);
        if r != 13 {
            return r;
        }
    }
}

fn one(h: u32) -> Unit {
    Unit {
        hw: vec![h],
        branch: None,
        in_it: false,
    }
}
fn two(h1: u32, h2: u32) -> Unit {
    Unit {
        hw: vec![h1, h2],
        branch: None,
        in_it: false,
    }
}
/// A store's source: any but r13, the PC and the base r7 (written back by some forms).
fn store_src(rng: &mut Rng) -> u32 {
    loop {
        let r = src(rng);
        if r != BASE {
            return r;
        }
    }
}

/// A 16-bit instruction (not a branch); `in_it`: inside an IT block.
fn t16(rng: &mut Rng, in_it: bool) -> Unit {
    match rng.below(8) {
        0 => {
            let op = rng.below(3);
            let imm = if in_it && op == 0 {
                1 + rng.below(31) // MOVS rd, rm (LSL #0) is UNPREDICTABLE in IT
            } else {
                rng.below(32)
            };
            one(op << 11 | imm << 6 | lowsrc(rng) << 3 | low(rng))
        }
        1 => one(0x1800 | rng.below(4) << 9 | lowsrc(rng) << 6 | lowsrc(rng) << 3 | low(rng)),
        2 => {
            let op = rng.below(4);
            let rd = if op == 1 { lowsrc(rng) } else { low(rng) };
            one(0x2000 | op << 11 | rd << 8 | rng.below(256))
        }
        3 => one(0x4000 | rng.below(16) << 6 | lowsrc(rng) << 3 | low(rng)),
        4 => {
            // ADD/MOV rdn, rm with high registers.
            let rd = dest(rng);
            let rm = src(rng);
            let op = if rng.below(2) == 0 { 0x4400 } else { 0x4600 };
            one(op | (rd >> 3) << 7 | rm << 3 | (rd & 7))
        }
        5 => {
            let op = rng.below(8);
            let load = matches!(op, 3..=7);
            let rt = if load { low(rng) } else { lowsrc(rng) };
            one(0x5000 | op << 9 | IDX << 6 | BASE << 3 | rt)
        }
        6 => {
            let load = rng.below(2);
            let rt = if load == 1 { low(rng) } else { lowsrc(rng) };
            let op = [0x6000, 0x7000, 0x8000][rng.below(3) as usize];
            one(op | load << 11 | rng.below(32) << 6 | BASE << 3 | rt)
        }
        _ => {
            if rng.below(2) == 0 {
                one(0xb200 | rng.below(4) << 6 | lowsrc(rng) << 3 | low(rng))
            } else {
                one(0xba00 | [0, 1, 3][rng.below(3) as usize] << 6 | lowsrc(rng) << 3 | low(rng))
            }
        }
    }
}

/// A modified immediate (i:imm3:imm8) that is not UNPREDICTABLE.
fn modimm(rng: &mut Rng) -> (u32, u32, u32) {
    let v = rng.below(4096);
    let (i, imm3, mut imm8) = (v >> 11, (v >> 8) & 7, v & 0xff);
    if v >> 8 != 0 && v >> 10 == 0 && imm8 == 0 {
        imm8 = 1;
    }
    (i, imm3, imm8)
}

/// A 32-bit data-processing op (not PKH) with its rd/rn: (op, rd, rn, s).
fn dp_fields(rng: &mut Rng) -> (u32, u32, u32, u32) {
    let op = [0, 1, 2, 3, 4, 8, 10, 11, 13, 14][rng.below(10) as usize];
    let s = rng.below(2);
    let rn = src(rng);
    match op {
        // TST/TEQ/CMN/CMP one time in four.
        0 | 4 | 8 | 13 if rng.below(4) == 0 => (op, 15, rn, 1),
        // MOV/MVN one time in three.
        2 | 3 if rng.below(3) == 0 => (op, dest(rng), 15, s),
        _ => (op, dest(rng), rn, s),
    }
}

/// Two different destinations (RdLo, RdHi).
fn dest_pair(rng: &mut Rng) -> (u32, u32) {
    loop {
        let (lo, hi) = (dest(rng), dest(rng));
        if lo != hi {
            return (lo, hi);
        }
    }
}

/// The 32-bit media and DSP families: `QADD`..`QDSUB`, the eighteen parallel add/subtract
/// instructions, `SSAT/USAT` (shifted) and their 16-bit forms, `SEL`, `PKHBT/PKHTB`,
/// `USAD8/USADA8`, `SXTAB16/UXTAB16` (and without accumulate), `SMLAxy/SMULxy/SMLAWy/
/// SMULWy/SMLALxy`, `SMLAD/SMUAD/SMLSD/SMUSD/SMLALD/SMLSLD`, `SMMLA/SMMUL/SMMLS`.
fn t32_media(rng: &mut Rng) -> Unit {
    let (rd, rn, rm, ra) = (dest(rng), src(rng), src(rng), src(rng));
    match rng.below(12) {
        0 => two(0xfa80 | rn, 0xf080 | rd << 8 | rng.below(4) << 4 | rm),
        1 | 2 => {
            let op1 = [0, 1, 2, 4, 5, 6][rng.below(6) as usize];
            let (u, kind) = (rng.below(2), rng.below(3));
            two(
                0xfa80 | op1 << 4 | rn,
                0xf000 | rd << 8 | u << 6 | kind << 4 | rm,
            )
        }
        3 => {
            // SSAT/USAT, LSL or ASR (ASR by a non-zero amount: ASR #0 is the 16-bit form).
            let sh = rng.below(2);
            let amt = if sh == 1 {
                1 + rng.below(31)
            } else {
                rng.below(32)
            };
            two(
                0xf300 | rng.below(2) << 7 | sh << 5 | rn,
                (amt >> 2) << 12 | rd << 8 | (amt & 3) << 6 | rng.below(32),
            )
        }
        4 => two(0xf320 | rng.below(2) << 7 | rn, rd << 8 | rng.below(16)),
        5 => two(0xfaa0 | rn, 0xf080 | rd << 8 | rm),
        6 => {
            let imm = rng.below(32);
            two(
                0xeac0 | rn,
                (imm >> 2) << 12 | rd << 8 | (imm & 3) << 6 | rng.below(2) << 5 | rm,
            )
        }
        7 => {
            let ra = if rng.below(2) == 0 { 15 } else { ra };
            two(0xfb70 | rn, ra << 12 | rd << 8 | rm)
        }
        8 => {
            let rn = if rng.below(2) == 0 { 15 } else { rn };
            two(
                0xfa20 | rng.below(2) << 4 | rn,
                0xf080 | rd << 8 | rng.below(4) << 4 | rm,
            )
        }
        9 => {
            let (m, n) = (rng.below(2), rng.below(2));
            match rng.below(5) {
                0 => two(0xfb10 | rn, ra << 12 | rd << 8 | n << 5 | m << 4 | rm),
                1 => two(0xfb10 | rn, 0xf000 | rd << 8 | n << 5 | m << 4 | rm),
                2 => two(0xfb30 | rn, ra << 12 | rd << 8 | m << 4 | rm),
                3 => two(0xfb30 | rn, 0xf000 | rd << 8 | m << 4 | rm),
                _ => {
                    let (lo, hi) = dest_pair(rng);
                    two(
                        0xfbc0 | rn,
                        lo << 12 | hi << 8 | 0x80 | n << 5 | m << 4 | rm,
                    )
                }
            }
        }
        10 => {
            let x = rng.below(2);
            let ra15 = if rng.below(2) == 0 { 15 } else { ra };
            match rng.below(4) {
                0 => two(0xfb20 | rn, ra15 << 12 | rd << 8 | x << 4 | rm), // SMLAD/SMUAD
                1 => two(0xfb40 | rn, ra15 << 12 | rd << 8 | x << 4 | rm), // SMLSD/SMUSD
                2 => two(0xfb50 | rn, ra15 << 12 | rd << 8 | x << 4 | rm), // SMMLA/SMMUL
                _ => two(0xfb60 | rn, ra << 12 | rd << 8 | x << 4 | rm),   // SMMLS
            }
        }
        _ => {
            let (lo, hi) = dest_pair(rng);
            two(
                0xfbc0 | rng.below(2) << 4 | rn,
                lo << 12 | hi << 8 | 0xc0 | rng.below(2) << 4 | rm,
            )
        }
    }
}

/// A 32-bit instruction (not a branch).
fn t32(rng: &mut Rng) -> Unit {
    match rng.below(12) {
        10 | 11 => t32_media(rng),
        0 => {
            let (op, rd, rn, s) = dp_fields(rng);
            let (i, imm3, imm8) = modimm(rng);
            two(
                0xf000 | i << 10 | op << 5 | s << 4 | rn,
                imm3 << 12 | rd << 8 | imm8,
            )
        }
        1 => {
            let (op, rd, rn, s) = dp_fields(rng);
            let imm5 = rng.below(32);
            two(
                0xea00 | op << 5 | s << 4 | rn,
                (imm5 >> 2) << 12 | rd << 8 | (imm5 & 3) << 6 | rng.below(4) << 4 | src(rng),
            )
        }
        2 => two(
            0xfa00 | rng.below(4) << 5 | rng.below(2) << 4 | src(rng),
            0xf000 | dest(rng) << 8 | src(rng),
        ),
        3 => {
            let imm = rng.below(0x10000);
            let op = if rng.below(2) == 0 { 0xf240 } else { 0xf2c0 };
            two(
                op | (imm >> 11 & 1) << 10 | imm >> 12,
                (imm >> 8 & 7) << 12 | dest(rng) << 8 | (imm & 0xff),
            )
        }
        4 => match rng.below(4) {
            0 => two(0xfb00 | src(rng), 0xf000 | dest(rng) << 8 | src(rng)), // MUL
            1 => two(
                0xfb00 | src(rng),
                src(rng) << 12 | dest(rng) << 8 | 0x10 | src(rng),
            ), // MLS
            2 => {
                let (lo, hi) = loop {
                    let (a, b) = (dest(rng), dest(rng));
                    if a != b {
                        break (a, b);
                    }
                };
                let (op1, op2) = [(0, 0), (2, 0), (4, 0), (6, 0), (6, 6)][rng.below(5) as usize];
                two(
                    0xfb80 | op1 << 4 | src(rng),
                    lo << 12 | hi << 8 | op2 << 4 | src(rng),
                )
            }
            _ => two(
                [0xfb90, 0xfbb0][rng.below(2) as usize] | src(rng),
                0xf0f0 | dest(rng) << 8 | src(rng),
            ),
        },
        5 | 6 => {
            let load = rng.below(2);
            let size = rng.below(3);
            let signed = load == 1 && size < 2 && rng.below(3) == 0;
            let h1 = if signed {
                0xf910 | size << 5 | BASE
            } else {
                0xf800 | size << 5 | load << 4 | BASE
            };
            let rt = if load == 1 { dest(rng) } else { store_src(rng) };
            match rng.below(3) {
                0 => two(h1 | 0x80, rt << 12 | rng.below(4096)),
                1 => {
                    // Negative offset, pre-indexed or post-indexed (not the T forms).
                    let (p, u, w, imm) = match rng.below(3) {
                        0 => (1, 0, 0, rng.below(256)),
                        1 => (1, rng.below(2), 1, 8 * rng.below(9)),
                        _ => (0, rng.below(2), 1, 8 * rng.below(9)),
                    };
                    two(h1, rt << 12 | 0x800 | p << 10 | u << 9 | w << 8 | imm)
                }
                _ => two(h1, rt << 12 | rng.below(4) << 4 | IDX),
            }
        }
        7 => {
            // LDRD/STRD, offset or pre-indexed.
            let load = rng.below(2);
            let (rt, rt2) = loop {
                let (a, b) = if load == 1 {
                    (dest(rng), dest(rng))
                } else {
                    (store_src(rng), store_src(rng))
                };
                if a != b {
                    break (a, b);
                }
            };
            let (u, w, imm) = if rng.below(2) == 0 {
                (rng.below(2), 0, rng.below(256))
            } else {
                (rng.below(2), 1, 2 * rng.below(9))
            };
            two(
                0xe940 | u << 7 | w << 5 | load << 4 | BASE,
                rt << 12 | rt2 << 8 | imm,
            )
        }
        8 => {
            // LDM/STM IA/DB, even register counts with writeback (keeps r7 8-aligned).
            let load = rng.below(2);
            let w = rng.below(2);
            let allowed: u32 = DESTS.iter().map(|r| 1 << r).sum::<u32>() & 0x1fff | (1 << 14);
            let list = loop {
                let mut l = rng.u32() & rng.u32() & allowed;
                if load == 1 && l & (1 << 14) != 0 && l.count_ones() < 2 {
                    l |= 1;
                }
                if w == 1 && !l.count_ones().is_multiple_of(2) {
                    l &= l - 1;
                }
                if l.count_ones() >= 2 {
                    break l;
                }
            };
            let h1 = [0xe880, 0xe900][rng.below(2) as usize] | w << 5 | load << 4 | BASE;
            two(h1, list)
        }
        _ => {
            // SXTAH/UXTAH/SXTAB/UXTAB (rn = 15: no accumulate), rotated.
            let op = [0, 1, 4, 5][rng.below(4) as usize];
            let rn = if rng.below(2) == 0 { 15 } else { src(rng) };
            two(
                0xfa00 | op << 4 | rn,
                0xf080 | dest(rng) << 8 | rng.below(4) << 4 | src(rng),
            )
        }
    }
}

/// Any non-branch instruction.
fn plain(rng: &mut Rng, in_it: bool) -> Unit {
    if rng.below(2) == 0 {
        t16(rng, in_it)
    } else {
        t32(rng)
    }
}

/// The units of one sequence (IT blocks expanded).
fn units(rng: &mut Rng, n: u32) -> Vec<Unit> {
    let mut out = Vec::new();
    while (out.len() as u32) < n {
        match rng.below(10) {
            0 => {
                // IT with 1-4 instructions.
                let len = 1 + rng.below(4);
                let firstcond = rng.below(14);
                let mut mask = 1 << (4 - len);
                for k in 0..len - 1 {
                    let t = rng.below(2);
                    mask |= (if t == 1 {
                        firstcond & 1
                    } else {
                        !firstcond & 1
                    }) << (3 - k);
                }
                out.push(one(0xbf00 | firstcond << 4 | mask));
                for _ in 0..len {
                    let mut u = plain(rng, true);
                    u.in_it = true;
                    out.push(u);
                }
            }
            1 => out.push(Unit {
                in_it: false,
                hw: vec![0],
                branch: Some(if rng.below(2) == 0 {
                    Branch::Cbz(rng.below(2) << 11 | lowsrc(rng))
                } else {
                    Branch::BCond(rng.below(14))
                }),
            }),
            _ => out.push(plain(rng, false)),
        }
    }
    out
}

/// A Thumb case: 1-8 instructions (IT blocks counting their instructions).
pub fn sequence(rng: &mut Rng) -> Case {
    let n = 1 + rng.below(8);
    let mut us = units(rng, n);
    // Patch the forward branches to an instruction boundary (or the end).
    let offs: Vec<u32> = us
        .iter()
        .scan(0, |o, u| {
            let at = *o;
            *o += 2 * u.hw.len() as u32;
            Some(at)
        })
        .collect();
    let end = offs
        .last()
        .map_or(0, |o| o + 2 * us.last().unwrap().hw.len() as u32);
    for k in 0..us.len() {
        let Some(b) = us[k].branch else { continue };
        let from = offs[k] + 4;
        let targets: Vec<u32> = offs[k + 1..]
            .iter()
            .zip(&us[k + 1..])
            .filter(|(_, u)| !u.in_it)
            .map(|(&o, _)| o)
            .chain(std::iter::once(end))
            .filter(|&t| t >= from && t - from <= 126)
            .collect();
        us[k].hw = vec![match (targets.is_empty(), b) {
            (true, _) => 0xbf00, // NOP
            (false, Branch::Cbz(f)) => {
                let d = (targets[rng.below(targets.len() as u32) as usize] - from) / 2;
                0xb100 | f & 0x800 | (d >> 5) << 9 | (d & 31) << 3 | (f & 7)
            }
            (false, Branch::BCond(c)) => {
                let d = (targets[rng.below(targets.len() as u32) as usize] - from) / 2;
                0xd000 | c << 8 | d
            }
        }];
    }
    let code = us.into_iter().flat_map(|u| u.hw).collect();
    let mut regs = random_regs(rng, true);
    regs[15] = rng.u32() & 0xf000_0000;
    Case::new(true, code, regs)
}
