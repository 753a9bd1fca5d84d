//! The seeded A32 sequence generator of the translator tests: each instruction is built
//! from an encoding family with random fields, constrained by construction only (it never
//! asks the decoder, the interpreter or the translator what to keep): destinations avoid
//! r10, r11, r13 and the PC; memory goes through the scratch base r11 and index r10;
//! forward branches stay inside the sequence. Families: data processing (immediate,
//! immediate-shifted and register-shifted operands), `MOVW/MOVT`, multiplies (S forms,
//! long, halfword), divides, bit operations, extends, bit fields, every single, dual and
//! multiple load/store form, exclusives, forward `B<c>`, the media/DSP families
//! (saturating, parallel, packing, dual multiplies...) with `SWP`, `LDRT`-style and `STM`
//! of the PC; conditions on a quarter.

use super::harness::{random_regs, Case};
use super::Rng;

/// The base (r11) and index (r10) registers of memory instructions.
pub const BASE_REG: u32 = 11;
pub const IDX_REG: u32 = 10;

/// A destination register: any but r10, r11 (addressing), r13 (the harness's stack) and
/// the PC.
pub fn dest(rng: &mut Rng) -> u32 {
    DESTS.with(|d| {
        let d = d.get();
        d[rng.below(d.len() as u32) as usize]
    })
}

/// The default destination set.
pub const DEFAULT_DESTS: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 14];

/// 1 for a load; in a sequence with exclusives, always (an ordinary store to the
/// monitored address between `LDREX` and `STREX` may or may not clear the monitor:
/// IMPLEMENTATION DEFINED, and QEMU and the interpreter differ).
fn load_only(rng: &mut Rng) -> u32 {
    if EX_SEQ.with(|e| e.get()) {
        1
    } else {
        rng.below(2)
    }
}

thread_local! {
    static EX_SEQ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static EX_ALLOWED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    static EX_SIZE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    static DESTS: std::cell::Cell<&'static [u32]> = const { std::cell::Cell::new(DEFAULT_DESTS) };
}

/// Whether sequences may hold exclusives (a test where aborts interrupt sequences turns
/// them off: whether an exception clears the monitor is IMPLEMENTATION DEFINED).
pub fn allow_exclusives(on: bool) {
    EX_ALLOWED.with(|c| c.set(on));
}

/// Restricts destinations to `d` (a test that keeps a register for itself).
pub fn set_dests(d: &'static [u32]) {
    DESTS.with(|c| c.set(d));
}

/// A source register (any but the PC).
pub fn source(rng: &mut Rng) -> u32 {
    rng.below(15)
}

/// The transfer register: a destination for loads; for stores any register but the PC,
/// and not the base when it is written back (UNPREDICTABLE).
pub fn store_rt(rng: &mut Rng, load: bool, wback: bool) -> u32 {
    if load {
        dest(rng)
    } else if wback {
        loop {
            let r = rng.below(15);
            if r != BASE_REG {
                return r;
            }
        }
    } else {
        rng.below(15)
    }
}

pub fn cond(rng: &mut Rng) -> u32 {
    if rng.below(4) == 0 {
        rng.below(14)
    } else {
        14
    }
}

/// One A32 instruction of a random family, `left` instructions before the sequence end.
pub fn insn(rng: &mut Rng, left: u32) -> u32 {
    let c = cond(rng) << 28;
    match rng.below(25) {
        // Data processing, immediate.
        0..=3 => {
            let op = rng.below(16);
            let test = (8..12).contains(&op);
            let s = if test { 1 } else { rng.below(2) };
            let rd = if test { 0 } else { dest(rng) };
            let rn = if op == 13 || op == 15 { 0 } else { source(rng) };
            c | 1 << 25 | op << 21 | s << 20 | rn << 16 | rd << 12 | rng.below(4096)
        }
        // Data processing, register shifted by an immediate.
        4..=7 => {
            let op = rng.below(16);
            let test = (8..12).contains(&op);
            let s = if test { 1 } else { rng.below(2) };
            let rd = if test { 0 } else { dest(rng) };
            let rn = if op == 13 || op == 15 { 0 } else { source(rng) };
            let rm = source(rng);
            c | op << 21
                | s << 20
                | rn << 16
                | rd << 12
                | rng.below(32) << 7
                | rng.below(4) << 5
                | rm
        }
        // Data processing, register shifted by a register (no PC operands).
        8 => {
            let op = rng.below(16);
            let test = (8..12).contains(&op);
            let s = if test { 1 } else { rng.below(2) };
            let rd = if test { 0 } else { dest(rng) };
            let rn = if op == 13 || op == 15 {
                0
            } else {
                rng.below(15)
            };
            let rs = rng.below(15);
            c | op << 21
                | s << 20
                | rn << 16
                | rd << 12
                | rs << 8
                | rng.below(4) << 5
                | 1 << 4
                | rng.below(15)
        }
        // MOVW / MOVT.
        9 => {
            let imm = rng.below(0x10000);
            let op = if rng.below(2) == 0 {
                0x0300_0000
            } else {
                0x0340_0000
            };
            c | op | (imm >> 12) << 16 | dest(rng) << 12 | (imm & 0xfff)
        }
        // Multiplies, divides, bit operations.
        10 => {
            let (rd, rn, rm, ra) = (dest(rng), rng.below(15), rng.below(15), rng.below(15));
            match rng.below(8) {
                0 => c | rng.below(2) << 20 | rd << 16 | rm << 8 | 0x90 | rn, // MUL{S}
                1 => c | 1 << 21 | rng.below(2) << 20 | rd << 16 | ra << 12 | rm << 8 | 0x90 | rn, // MLA{S}
                2 => c | 0x0060_0090 | rd << 16 | ra << 12 | rm << 8 | rn, // MLS
                3 => c | 0x0710_f010 | rng.below(2) << 21 | rd << 16 | rm << 8 | rn, // SDIV/UDIV
                4 => c | 0x016f_0f10 | rd << 12 | rm,                      // CLZ
                5 => c | 0x06bf_0f30 | rd << 12 | rm,                      // REV
                6 => c | 0x06bf_0fb0 | rd << 12 | rm,                      // REV16
                _ => c | 0x06ff_0f30 | rd << 12 | rm,                      // RBIT
            }
        }
        // LDR/STR/LDRB/STRB, immediate or register offset, every addressing mode.
        11..=12 => {
            let load = load_only(rng);
            let byte = rng.below(2);
            let u = rng.below(2);
            let (p, w) = match rng.below(3) {
                0 => (1, 0),
                1 => (1, 1),
                _ => (0, 0),
            };
            let rt = store_rt(rng, load == 1, p == 0 || w == 1);
            let small = p == 0 || w == 1;
            let reg = rng.below(3) == 0;
            let off = if reg {
                1 << 25 | rng.below(5) << 7 | IDX_REG
            } else if small {
                8 * rng.below(9) // writeback keeps r11 8-aligned (LDRD/LDM/LDREXD)
            } else {
                rng.below(4096)
            };
            c | 1 << 26
                | p << 24
                | u << 23
                | byte << 22
                | w << 21
                | load << 20
                | BASE_REG << 16
                | rt << 12
                | off
        }
        // LDRH/STRH/LDRSB/LDRSH, immediate or register offset.
        13 => {
            let (load, sh) = match if EX_SEQ.with(|e| e.get()) {
                1 + rng.below(3)
            } else {
                rng.below(4)
            } {
                0 => (0, 0b01),
                1 => (1, 0b01),
                2 => (1, 0b10),
                _ => (1, 0b11),
            };
            let (p, w) = match rng.below(3) {
                0 => (1, 0),
                1 => (1, 1),
                _ => (0, 0),
            };
            let rt = store_rt(rng, load == 1, p == 0 || w == 1);
            let u = rng.below(2);
            let imm_form = rng.below(2);
            let (hi, lo) = if imm_form == 1 {
                let v = if p == 0 || w == 1 {
                    8 * rng.below(9) // writeback keeps r11 8-aligned (LDRD/LDM/LDREXD)
                } else {
                    rng.below(256)
                };
                (v >> 4, v & 15)
            } else {
                (0, IDX_REG)
            };
            c | p << 24
                | u << 23
                | imm_form << 22
                | w << 21
                | load << 20
                | BASE_REG << 16
                | rt << 12
                | hi << 8
                | 1 << 7
                | sh << 5
                | 1 << 4
                | lo
        }
        // A forward branch inside the sequence (possibly to its end).
        14 if left > 0 => {
            let skip = rng.below(left.min(3) + 1); // 0..=min(left,3) instructions skipped
            c | 0x0a00_0000 | (skip.wrapping_sub(1) & 0xff_ffff)
        }
        f @ 16..=22 => more(rng, c, f - 16),
        23 => media(rng, c),
        _ => c | 0x0320_f000, // NOP
    }
}

/// Two different destinations (RdLo, RdHi of a long multiply).
fn dest_pair(rng: &mut Rng) -> (u32, u32) {
    loop {
        let (lo, hi) = (dest(rng), dest(rng));
        if lo != hi {
            return (lo, hi);
        }
    }
}

/// The media and DSP families: saturating (`QADD`.. and `SSAT`/`USAT`, the 16-bit ones),
/// parallel add/subtract (all eighteen), `SEL`, `PKHBT/PKHTB`, `USAD8/USADA8`,
/// `SXTB16/UXTB16` (+A), `SMLAxy/SMULxy/SMLAWy/SMULWy/SMLALxy`, the dual multiplies
/// (`SMLAD/SMUAD/SMLSD/SMUSD/SMLALD/SMLSLD`, `SMMUL/SMMLA/SMMLS`), and `SWP/SWPB`,
/// `LDRT/STRT` (B), `STM` with the PC in the list.
fn media(rng: &mut Rng, c: u32) -> u32 {
    let (rd, rn, rm, ra) = (dest(rng), source(rng), source(rng), source(rng));
    match rng.below(16) {
        0 => c | 0x0100_0050 | rng.below(4) << 21 | rn << 16 | rd << 12 | rm, // QADD..QDSUB
        1 | 2 => {
            // Parallel add/subtract: op1 S, Q, SH, U, UQ, UH; op2 ADD16 ASX SAX SUB16 ADD8 SUB8.
            let op1 = [1, 2, 3, 5, 6, 7][rng.below(6) as usize];
            let op2 = [0, 1, 2, 3, 4, 7][rng.below(6) as usize];
            c | 0x0600_0f10 | op1 << 20 | rn << 16 | rd << 12 | op2 << 5 | rm
        }
        3 => {
            // SSAT/USAT with a shift (ASR #0 is ASR #32).
            let u = rng.below(2);
            c | 0x06a0_0010
                | u << 22
                | rng.below(32) << 16
                | rd << 12
                | rng.below(32) << 7
                | rng.below(2) << 6
                | rn
        }
        4 => c | 0x06a0_0f30 | rng.below(2) << 22 | rng.below(16) << 16 | rd << 12 | rn, // SSAT16/USAT16
        5 => c | 0x0680_0fb0 | rn << 16 | rd << 12 | rm,                                 // SEL
        6 => c | 0x0680_0010 | rn << 16 | rd << 12 | rng.below(32) << 7 | rng.below(2) << 6 | rm, // PKH
        7 => {
            // USAD8 (ra = 15) / USADA8.
            let ra = if rng.below(2) == 0 { 15 } else { ra };
            c | 0x0780_0010 | rd << 16 | ra << 12 | rm << 8 | rn
        }
        8 => {
            // SXTAB16/UXTAB16 (rn = 15: SXTB16/UXTB16), rotated.
            let rn = if rng.below(2) == 0 { 15 } else { rn };
            c | 0x0680_0070 | rng.below(2) << 22 | rn << 16 | rd << 12 | rng.below(4) << 10 | rm
        }
        9 => {
            // SMLAxy / SMLAWy / SMULWy / SMULxy / SMLALxy.
            let (m, n) = (rng.below(2), rng.below(2));
            match rng.below(5) {
                0 => c | 0x0100_0080 | rd << 16 | ra << 12 | rm << 8 | m << 6 | n << 5 | rn,
                1 => c | 0x0120_0080 | rd << 16 | ra << 12 | rm << 8 | m << 6 | rn,
                2 => c | 0x0120_00a0 | rd << 16 | rm << 8 | m << 6 | rn,
                3 => c | 0x0160_0080 | rd << 16 | rm << 8 | m << 6 | n << 5 | rn,
                _ => {
                    let (lo, hi) = dest_pair(rng);
                    c | 0x0140_0080 | hi << 16 | lo << 12 | rm << 8 | m << 6 | n << 5 | rn
                }
            }
        }
        10 => {
            // SMLAD/SMUAD/SMLSD/SMUSD (X), SMMLA/SMMUL/SMMLS (R).
            let x = rng.below(2);
            match rng.below(3) {
                0 => {
                    let ra = if rng.below(2) == 0 { 15 } else { ra };
                    c | 0x0700_0010
                        | rng.below(2) << 6
                        | rd << 16
                        | ra << 12
                        | rm << 8
                        | x << 5
                        | rn
                }
                1 => {
                    let ra = if rng.below(2) == 0 { 15 } else { ra };
                    c | 0x0750_0010 | rd << 16 | ra << 12 | rm << 8 | x << 5 | rn
                }
                _ => c | 0x0750_00d0 | rd << 16 | ra << 12 | rm << 8 | x << 5 | rn,
            }
        }
        11 => {
            // SMLALD/SMLSLD (X).
            let (lo, hi) = dest_pair(rng);
            c | 0x0740_0010
                | rng.below(2) << 6
                | hi << 16
                | lo << 12
                | rm << 8
                | rng.below(2) << 5
                | rn
        }
        12 if !EX_SEQ.with(|e| e.get()) => {
            // SWP/SWPB through the scratch base (rt, rt2 not the base).
            let rt = loop {
                let r = dest(rng);
                if r != BASE_REG {
                    break r;
                }
            };
            let rt2 = loop {
                let r = source(rng);
                if r != BASE_REG {
                    break r;
                }
            };
            c | 0x0100_0090 | rng.below(2) << 22 | BASE_REG << 16 | rt << 12 | rt2
        }
        13 => {
            // LDRT/STRT/LDRBT/STRBT, post-indexed by a multiple of 8 (r11 stays aligned).
            let load = load_only(rng);
            let rt = store_rt(rng, load == 1, true);
            c | 0x0420_0000
                | rng.below(2) << 23
                | rng.below(2) << 22
                | load << 20
                | BASE_REG << 16
                | rt << 12
                | (8 * rng.below(9))
        }
        14 if !EX_SEQ.with(|e| e.get()) => {
            // STM{IA,IB,DA,DB} r11, {..., pc} (no writeback).
            let list = (rng.below(0x2000) & !(1 << BASE_REG)) | 1 << 15;
            c | 0x0800_0000 | rng.below(2) << 24 | rng.below(2) << 23 | BASE_REG << 16 | list
        }
        _ => c | 0x0100_0050 | rng.below(4) << 21 | rn << 16 | rd << 12 | rm,
    }
}

pub fn sequence(rng: &mut Rng) -> Case {
    let n = 1 + rng.below(8);
    EX_SIZE.with(|e| e.set(rng.below(4)));
    let ex = rng.below(4) == 0 && EX_ALLOWED.with(|e| e.get());
    EX_SEQ.with(|e| e.set(ex));
    let code = (0..n).map(|k| insn(rng, n - 1 - k)).collect();
    let mut regs = random_regs(rng, false);
    regs[15] = rng.u32() & 0xf000_0000;
    Case::new(false, code, regs)
}

/// An even destination whose pair register is a destination too (LDRD, LDREXD).
fn even_dest(rng: &mut Rng) -> u32 {
    loop {
        let r = dest(rng);
        if r.is_multiple_of(2) && r < 10 && DESTS.with(|d| d.get().contains(&(r + 1))) {
            return r;
        }
    }
}

/// Two different destinations.
fn two_dests(rng: &mut Rng) -> (u32, u32) {
    loop {
        let (a, b) = (dest(rng), dest(rng));
        if a != b {
            return (a, b);
        }
    }
}

/// The families added with the translator's second step: dual and multiple loads and
/// stores, extends and bit fields, long and halfword multiplies, exclusives.
fn more(rng: &mut Rng, c: u32, family: u32) -> u32 {
    match family {
        // LDRD/STRD, immediate (word-aligned but one time in 16) or register offset.
        0 => {
            let load = load_only(rng);
            let (p, w) = [(1, 0), (1, 1), (0, 0)][rng.below(3) as usize];
            let rt = even_dest(rng);
            let u = rng.below(2);
            let imm = if p == 0 || w == 1 {
                8 * rng.below(9)
            } else {
                4 * rng.below(64)
            };
            let (i, hi, lo) = if rng.below(3) == 0 {
                (0, 0, IDX_REG)
            } else {
                (1, imm >> 4, imm & 15)
            };
            let op = if load == 1 { 0b1101 } else { 0b1111 };
            c | p << 24
                | u << 23
                | i << 22
                | w << 21
                | BASE_REG << 16
                | rt << 12
                | hi << 8
                | op << 4
                | lo
        }
        // LDM/STM IA/IB/DA/DB, with or without writeback, on the scratch base.
        1 => {
            let load = load_only(rng);
            let w = rng.below(2);
            let allowed: u32 = if load == 1 {
                (0..16)
                    .filter(|r| DESTS.with(|d| d.get().contains(r)))
                    .map(|r| 1 << r)
                    .sum()
            } else {
                0x7fff & !(1 << BASE_REG)
            };
            let list = loop {
                let mut l = rng.u32() & rng.u32() & allowed;
                if w == 1 && !l.count_ones().is_multiple_of(2) {
                    l &= l - 1; // an even count keeps r11 8-aligned
                }
                if l != 0 {
                    break l;
                }
            };
            c | 0x0800_0000 | rng.below(4) << 23 | w << 21 | load << 20 | BASE_REG << 16 | list
        }
        // SXT*/UXT* (accumulating or not, rotated), REVSH.
        2 => {
            if rng.below(6) == 0 {
                return c | 0x06ff_0fb0 | dest(rng) << 12 | source(rng);
            }
            let op = [0x06a0_0070, 0x06b0_0070, 0x06e0_0070, 0x06f0_0070][rng.below(4) as usize];
            let rn = if rng.below(2) == 0 { 15 } else { source(rng) };
            c | op | rn << 16 | dest(rng) << 12 | rng.below(4) << 10 | source(rng)
        }
        // SBFX/UBFX/BFI/BFC.
        3 => {
            let lsb = rng.below(32);
            let width = 1 + rng.below(32 - lsb);
            let rd = dest(rng);
            match rng.below(4) {
                0 => c | 0x07a0_0050 | (width - 1) << 16 | rd << 12 | lsb << 7 | source(rng),
                1 => c | 0x07e0_0050 | (width - 1) << 16 | rd << 12 | lsb << 7 | source(rng),
                2 => c | 0x07c0_0010 | (lsb + width - 1) << 16 | rd << 12 | lsb << 7 | source(rng),
                _ => c | 0x07c0_001f | (lsb + width - 1) << 16 | rd << 12 | lsb << 7,
            }
        }
        // UMULL/UMLAL/SMULL/SMLAL (S or not), UMAAL.
        4 => {
            let (hi, lo) = two_dests(rng);
            let (rm, rn) = (source(rng), source(rng));
            let op = [
                0x0080_0090,
                0x00a0_0090,
                0x00c0_0090,
                0x00e0_0090,
                0x0040_0090,
            ][rng.below(5) as usize];
            let s = if op == 0x0040_0090 { 0 } else { rng.below(2) };
            c | op | s << 20 | hi << 16 | lo << 12 | rm << 8 | rn
        }
        // SMULxy, SMULWy, SMLALxy.
        5 => {
            let (rm, rn) = (source(rng), source(rng));
            let (y, x) = (rng.below(2), rng.below(2));
            match rng.below(3) {
                0 => c | 0x0160_0080 | dest(rng) << 16 | rm << 8 | y << 6 | x << 5 | rn,
                1 => c | 0x0120_00a0 | dest(rng) << 16 | rm << 8 | y << 6 | rn,
                _ => {
                    let (hi, lo) = two_dests(rng);
                    c | 0x0140_0080 | hi << 16 | lo << 12 | rm << 8 | y << 6 | x << 5 | rn
                }
            }
        }
        // LDREX{B,H,D}/STREX{B,H,D} at the scratch base (a store-exclusive after a
        // load-exclusive of the same size succeeds, otherwise it fails: both are checked).
        _ if !EX_SEQ.with(|e| e.get()) => c | 0x0320_f000, // NOP
        _ => {
            // One size per sequence: a store-exclusive of another size than the
            // load-exclusive is UNPREDICTABLE.
            let size = EX_SIZE.with(|e| e.get()); // W, D, B, H
            if rng.below(2) == 0 {
                let rt = if size == 1 { even_dest(rng) } else { dest(rng) };
                c | 0x0190_0f9f | size << 21 | BASE_REG << 16 | rt << 12
            } else {
                let rt = if size == 1 {
                    2 * rng.below(7)
                } else {
                    source(rng)
                };
                let rd = loop {
                    let r = dest(rng);
                    if r != rt && (size != 1 || r != rt + 1) {
                        break r;
                    }
                };
                c | 0x0180_0f90 | size << 21 | BASE_REG << 16 | rd << 12 | rt
            }
        }
    }
}
