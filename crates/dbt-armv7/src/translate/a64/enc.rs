//! A64 instruction encodings, one named function per form (ARM ARM for A-profile, C4).
//!
//! Registers are numbers 0..=31; `31` means `WZR`/`XZR` or `SP` as the form defines. `w*`
//! functions are the 32-bit (`sf = 0`) forms, `x*` the 64-bit ones. Every function returns
//! the instruction word; callers guarantee that immediates are in range (checked by
//! `debug_assert!`, and by the `a64_encodings` test against `llvm-objdump`).

pub use super::enc_alu::*;
pub use super::enc_excl::*;

/// A64 condition codes. Their numbers equal the A32 ones (`EQ` = 0 .. `AL` = 14), and both
/// architectures define them on the same NZCV flags.
pub type Cond = u8;

/// Shift kinds of the shifted-register forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sh {
    /// Logical shift left.
    Lsl = 0,
    /// Logical shift right.
    Lsr = 1,
    /// Arithmetic shift right.
    Asr = 2,
    /// Rotate right (logical instructions only).
    Ror = 3,
}

/// Add/subtract operations of the `ADD`/`ADDS`/`SUB`/`SUBS` families (`op:S` bits 30:29).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddSub {
    /// `ADD`.
    Add = 0,
    /// `ADDS`.
    Adds = 1,
    /// `SUB`.
    Sub = 2,
    /// `SUBS`.
    Subs = 3,
}

/// Logical operations (`opc:N`, bits 30:29 and 21).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    /// `AND`.
    And,
    /// `BIC` (register form only).
    Bic,
    /// `ORR`.
    Orr,
    /// `ORN` (register form only).
    Orn,
    /// `EOR`.
    Eor,
    /// `ANDS`.
    Ands,
}

impl Logic {
    fn opc_n(self) -> (u32, u32) {
        match self {
            Logic::And => (0, 0),
            Logic::Bic => (0, 1),
            Logic::Orr => (1, 0),
            Logic::Orn => (1, 1),
            Logic::Eor => (2, 0),
            Logic::Ands => (3, 0),
        }
    }
}

const ADDSUB_SHIFTED: u32 = 0x0b00_0000;
const ADDSUB_IMM: u32 = 0x1100_0000;
const ADC: u32 = 0x1a00_0000;
const LOGIC_SHIFTED: u32 = 0x0a00_0000;
const LOGIC_IMM: u32 = 0x1200_0000;
const MOVN: u32 = 0x1280_0000;
const MOVZ: u32 = 0x5280_0000;
const MOVK: u32 = 0x7280_0000;
const SBFM: u32 = 0x1300_0000;
const BFM: u32 = 0x3300_0000;
const UBFM: u32 = 0x5300_0000;
const EXTR: u32 = 0x1380_0000;
const SF: u32 = 1 << 31;
const N64: u32 = 1 << 22;

/// `ADD/ADDS/SUB/SUBS Wd, Wn, Wm, <sh> #amount` (shifted register; `sh` is not `Ror`).
pub fn w_addsub_reg(op: AddSub, rd: u8, rn: u8, rm: u8, sh: Sh, amount: u8) -> u32 {
    debug_assert!(amount < 32 && sh != Sh::Ror);
    ADDSUB_SHIFTED
        | (op as u32) << 29
        | (sh as u32) << 22
        | (rm as u32) << 16
        | (amount as u32) << 10
        | (rn as u32) << 5
        | rd as u32
}

/// `ADD/ADDS/SUB/SUBS Wd|WSP, Wn|WSP, #imm12 {, LSL #12}`.
pub fn w_addsub_imm(op: AddSub, rd: u8, rn: u8, imm12: u32, lsl12: bool) -> u32 {
    debug_assert!(imm12 < 4096);
    ADDSUB_IMM
        | (op as u32) << 29
        | (lsl12 as u32) << 22
        | imm12 << 10
        | (rn as u32) << 5
        | rd as u32
}

/// `ADD/SUB Xd|SP, Xn|SP, #imm12` (64-bit).
pub fn x_addsub_imm(op: AddSub, rd: u8, rn: u8, imm12: u32) -> u32 {
    SF | w_addsub_imm(op, rd, rn, imm12, false)
}

/// `ADC/ADCS/SBC/SBCS Wd, Wn, Wm`: `sub` selects SBC, `s` the flag-setting form.
pub fn w_adc(sub: bool, s: bool, rd: u8, rn: u8, rm: u8) -> u32 {
    ADC | (sub as u32) << 30 | (s as u32) << 29 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}

/// Logical (shifted register) `Wd = Wn <op> (Wm <sh> #amount)`.
pub fn w_logic_reg(op: Logic, rd: u8, rn: u8, rm: u8, sh: Sh, amount: u8) -> u32 {
    debug_assert!(amount < 32);
    let (opc, n) = op.opc_n();
    LOGIC_SHIFTED
        | opc << 29
        | (sh as u32) << 22
        | n << 21
        | (rm as u32) << 16
        | (amount as u32) << 10
        | (rn as u32) << 5
        | rd as u32
}

/// Logical immediate `Wd = Wn <op> #bitmask`, with `(immr, imms)` from [`logic_imm32`].
pub fn w_logic_imm(op: Logic, rd: u8, rn: u8, immr: u8, imms: u8) -> u32 {
    let (opc, n) = op.opc_n();
    debug_assert!(n == 0);
    LOGIC_IMM | opc << 29 | (immr as u32) << 16 | (imms as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// Logical immediate on X registers with a 64-bit `(N, immr, imms)` encoding.
pub fn x_logic_imm(op: Logic, rd: u8, rn: u8, n: bool, immr: u8, imms: u8) -> u32 {
    let (opc, _) = op.opc_n();
    SF | LOGIC_IMM
        | opc << 29
        | (n as u32) << 22
        | (immr as u32) << 16
        | (imms as u32) << 10
        | (rn as u32) << 5
        | rd as u32
}

/// The `(immr, imms)` of a 32-bit bitmask immediate, or `None` when `v` is not one.
pub fn logic_imm32(v: u32) -> Option<(u8, u8)> {
    if v == 0 || v == u32::MAX {
        return None;
    }
    // Smallest element size whose replication gives v.
    let mut size = 32u32;
    while size > 2 {
        let half = size / 2;
        let mask = (1u32 << half) - 1;
        if (v & mask) != ((v >> half) & mask) {
            break;
        }
        size = half;
    }
    let emask = if size == 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    let elt = v & emask;
    // elt must be a rotated run of ones: rotate so that it starts at bit 0.
    let ones = elt.count_ones();
    let rot_elt = |x: u32, r: u32| -> u32 {
        if r == 0 {
            x
        } else {
            ((x >> r) | (x << (size - r))) & emask
        }
    };
    let run = if ones == 32 {
        u32::MAX
    } else {
        (1u32 << ones) - 1
    };
    for r in 0..size {
        // The element is ROR(run, immr).
        if rot_elt(run, r) == elt {
            let imms = ((!(size * 2 - 1)) & 0x3f) | (ones - 1);
            return Some((r as u8, imms as u8));
        }
    }
    None
}

/// `MOVZ Wd, #imm16, LSL #(16*hw)`.
pub fn w_movz(rd: u8, imm16: u16, hw: u8) -> u32 {
    MOVZ | (hw as u32) << 21 | (imm16 as u32) << 5 | rd as u32
}

/// `MOVK Wd, #imm16, LSL #(16*hw)`.
pub fn w_movk(rd: u8, imm16: u16, hw: u8) -> u32 {
    MOVK | (hw as u32) << 21 | (imm16 as u32) << 5 | rd as u32
}

/// `MOVN Wd, #imm16, LSL #(16*hw)`.
pub fn w_movn(rd: u8, imm16: u16, hw: u8) -> u32 {
    MOVN | (hw as u32) << 21 | (imm16 as u32) << 5 | rd as u32
}

/// `MOVZ Xd, #imm16, LSL #(16*hw)`.
pub fn x_movz(rd: u8, imm16: u16, hw: u8) -> u32 {
    SF | w_movz(rd, imm16, hw)
}

/// `MOVN Xd, #imm16, LSL #(16*hw)` (`MOVN Xd, #0` is all ones).
pub fn x_movn(rd: u8, imm16: u16, hw: u8) -> u32 {
    SF | w_movn(rd, imm16, hw)
}

/// `MOVK Xd, #imm16, LSL #(16*hw)`.
pub fn x_movk(rd: u8, imm16: u16, hw: u8) -> u32 {
    SF | w_movk(rd, imm16, hw)
}

/// `MOV Wd, Wm` (`ORR Wd, WZR, Wm`).
pub fn w_mov(rd: u8, rm: u8) -> u32 {
    w_logic_reg(Logic::Orr, rd, 31, rm, Sh::Lsl, 0)
}

/// `MOV Xd, Xm` (`ORR Xd, XZR, Xm`).
pub fn x_mov(rd: u8, rm: u8) -> u32 {
    SF | w_mov(rd, rm)
}

/// `MOV Xd|SP, Xn|SP` (`ADD Xd, Xn, #0`).
pub fn x_mov_sp(rd: u8, rn: u8) -> u32 {
    x_addsub_imm(AddSub::Add, rd, rn, 0)
}

/// `UBFM Wd, Wn, #immr, #imms` (`LSR`, `LSL`, `UBFX`, `UXTB`, `UXTH` are aliases).
pub fn w_ubfm(rd: u8, rn: u8, immr: u8, imms: u8) -> u32 {
    UBFM | (immr as u32) << 16 | (imms as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `SBFM Wd, Wn, #immr, #imms` (`ASR`, `SBFX`, `SXTB`, `SXTH` are aliases).
pub fn w_sbfm(rd: u8, rn: u8, immr: u8, imms: u8) -> u32 {
    SBFM | (immr as u32) << 16 | (imms as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `BFM Wd, Wn, #immr, #imms` (`BFI`, `BFXIL` are aliases).
pub fn w_bfm(rd: u8, rn: u8, immr: u8, imms: u8) -> u32 {
    BFM | (immr as u32) << 16 | (imms as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `BFXIL Xd, Xn, #lsb, #width`.
pub fn x_bfxil(rd: u8, rn: u8, lsb: u8, width: u8) -> u32 {
    SF | N64 | w_bfm(rd, rn, lsb, lsb + width - 1)
}

/// `BFI Xd, Xn, #lsb, #width`.
pub fn x_bfi(rd: u8, rn: u8, lsb: u8, width: u8) -> u32 {
    SF | N64 | w_bfm(rd, rn, (64 - lsb as u32) as u8 & 63, width - 1)
}

/// `LSR Wd, Wn, #s` (s in 0..=31).
pub fn w_lsr_imm(rd: u8, rn: u8, s: u8) -> u32 {
    w_ubfm(rd, rn, s, 31)
}

/// `LSL Wd, Wn, #s` (s in 0..=31).
pub fn w_lsl_imm(rd: u8, rn: u8, s: u8) -> u32 {
    w_ubfm(rd, rn, (32 - s as u32) as u8 & 31, 31 - s)
}

/// `ASR Wd, Wn, #s` (s in 0..=31).
pub fn w_asr_imm(rd: u8, rn: u8, s: u8) -> u32 {
    w_sbfm(rd, rn, s, 31)
}

/// `EXTR Wd, Wn, Wm, #lsb`: `(Wn:Wm) >> lsb`; `ROR Wd, Ws, #lsb` is `EXTR Wd, Ws, Ws, #lsb`.
pub fn w_extr(rd: u8, rn: u8, rm: u8, lsb: u8) -> u32 {
    EXTR | (rm as u32) << 16 | (lsb as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `UBFX Xd, Xn, #lsb, #width`.
pub fn x_ubfx(rd: u8, rn: u8, lsb: u8, width: u8) -> u32 {
    SF | N64 | w_ubfm(rd, rn, lsb, lsb + width - 1)
}

/// `CSINC Wd, WZR, WZR, invert(cond)`, i.e. `CSET Wd, cond`.
pub fn w_cset(rd: u8, cond: Cond) -> u32 {
    0x1a9f_07e0 | ((cond ^ 1) as u32) << 12 | rd as u32
}

/// `MADD Wd, Wn, Wm, Wa` (`MUL` with `ra = 31`); `sub` gives `MSUB`.
pub fn w_madd(sub: bool, rd: u8, rn: u8, rm: u8, ra: u8) -> u32 {
    0x1b00_0000
        | (rm as u32) << 16
        | (sub as u32) << 15
        | (ra as u32) << 10
        | (rn as u32) << 5
        | rd as u32
}

/// `UDIV Wd, Wn, Wm` or `SDIV` (both give 0 for a zero divisor, as A32's do).
pub fn w_div(signed: bool, rd: u8, rn: u8, rm: u8) -> u32 {
    0x1ac0_0800 | (signed as u32) << 10 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}

/// One-source data processing on W registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `RBIT`.
    Rbit = 0,
    /// `REV16`.
    Rev16 = 1,
    /// `REV`.
    Rev = 2,
    /// `CLZ`.
    Clz = 4,
}

/// `RBIT/REV16/REV/CLZ Wd, Wn`.
pub fn w_unary(op: Unary, rd: u8, rn: u8) -> u32 {
    0x5ac0_0000 | (op as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// Load/store sizes and kinds of the integer forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ls {
    /// `STRB`.
    Strb,
    /// `LDRB`.
    Ldrb,
    /// `LDRSB Wt`.
    Ldrsb,
    /// `STRH`.
    Strh,
    /// `LDRH`.
    Ldrh,
    /// `LDRSH Wt`.
    Ldrsh,
    /// `STR Wt`.
    Str,
    /// `LDR Wt`.
    Ldr,
    /// `STR Xt`.
    StrX,
    /// `LDR Xt`.
    LdrX,
}

impl Ls {
    /// (size, opc) fields.
    fn size_opc(self) -> (u32, u32) {
        match self {
            Ls::Strb => (0, 0),
            Ls::Ldrb => (0, 1),
            Ls::Ldrsb => (0, 3),
            Ls::Strh => (1, 0),
            Ls::Ldrh => (1, 1),
            Ls::Ldrsh => (1, 3),
            Ls::Str => (2, 0),
            Ls::Ldr => (2, 1),
            Ls::StrX => (3, 0),
            Ls::LdrX => (3, 1),
        }
    }
    /// log2 of the access size.
    pub fn scale(self) -> u32 {
        self.size_opc().0
    }
}

/// `LDR*/STR* Rt, [Xn|SP, #imm]` (unsigned offset, `imm` a multiple of the size).
pub fn ls_uimm(op: Ls, rt: u8, rn: u8, imm: u32) -> u32 {
    let (size, opc) = op.size_opc();
    debug_assert!(imm.is_multiple_of(1 << size) && imm >> size < 4096);
    0x3900_0000 | size << 30 | opc << 22 | (imm >> size) << 10 | (rn as u32) << 5 | rt as u32
}

/// `LDUR*/STUR* Rt, [Xn|SP, #simm9]` (unscaled).
pub fn ls_unscaled(op: Ls, rt: u8, rn: u8, simm9: i32) -> u32 {
    let (size, opc) = op.size_opc();
    debug_assert!((-256..256).contains(&simm9));
    0x3800_0000
        | size << 30
        | opc << 22
        | ((simm9 as u32) & 0x1ff) << 12
        | (rn as u32) << 5
        | rt as u32
}

/// `LDTR*/STTR* Rt, [Xn|SP, #simm9]` (unprivileged: EL0's permissions at EL1).
pub fn ls_unpriv(op: Ls, rt: u8, rn: u8, simm9: i32) -> u32 {
    const UNPRIVILEGED: u32 = 0b10 << 10;
    ls_unscaled(op, rt, rn, simm9) | UNPRIVILEGED
}

/// `LDR*/STR* Rt, [Xn|SP, #simm9]!` (pre-index: the base is written back).
pub fn ls_pre(op: Ls, rt: u8, rn: u8, simm9: i32) -> u32 {
    const PRE_INDEX: u32 = 0b11 << 10;
    ls_unscaled(op, rt, rn, simm9) | PRE_INDEX
}

/// `LDR*/STR* Rt, [Xn|SP, Xm]` (register offset, no shift).
pub fn ls_reg(op: Ls, rt: u8, rn: u8, rm: u8) -> u32 {
    let (size, opc) = op.size_opc();
    const OPTION_LSL: u32 = 0b011;
    0x3820_0800
        | size << 30
        | opc << 22
        | (rm as u32) << 16
        | OPTION_LSL << 13
        | (rn as u32) << 5
        | rt as u32
}

/// `LDR*/STR* Rt, [Xn|SP, Xm, LSL #scale]` (`scaled`) or `[Xn|SP, Xm]`.
pub fn ls_reg_lsl(op: Ls, rt: u8, rn: u8, rm: u8, scaled: bool) -> u32 {
    ls_reg(op, rt, rn, rm) | (scaled as u32) << 12
}

/// `STP Xt1, Xt2, [Xn|SP, #imm]!` (pre-index, `imm` a multiple of 8).
pub fn x_stp_pre(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0xa980_0000
        | (((imm / 8) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `LDP Xt1, Xt2, [Xn|SP], #imm` (post-index).
pub fn x_ldp_post(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0xa8c0_0000
        | (((imm / 8) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `STP Xt1, Xt2, [Xn|SP, #imm]` (signed offset).
pub fn x_stp(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0xa900_0000
        | (((imm / 8) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `LDP Xt1, Xt2, [Xn|SP, #imm]` (signed offset).
pub fn x_ldp(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0xa940_0000
        | (((imm / 8) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `STP Wt1, Wt2, [Xn|SP, #imm]` (signed offset, `imm` a multiple of 4).
pub fn w_stp(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0x2900_0000
        | (((imm / 4) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `STP Wt1, Wt2, [Xn|SP, #imm]!` (pre-index, `imm` a multiple of 4).
pub fn w_stp_pre(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    w_stp(rt, rt2, rn, imm) | 1 << 24 | 1 << 23
}

/// `LDP Wt1, Wt2, [Xn|SP, #imm]` (signed offset; zero-extends into the X registers).
pub fn w_ldp(rt: u8, rt2: u8, rn: u8, imm: i32) -> u32 {
    0x2940_0000
        | (((imm / 4) as u32) & 0x7f) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `B` to `off` bytes from this instruction.
pub fn b(off: i64) -> u32 {
    debug_assert!(off % 4 == 0 && (-(1 << 27)..(1 << 27)).contains(&off));
    0x1400_0000 | ((off >> 2) as u32 & 0x03ff_ffff)
}

/// `B.cond` to `off` bytes from this instruction.
pub fn b_cond(cond: Cond, off: i64) -> u32 {
    debug_assert!(off % 4 == 0 && (-(1 << 20)..(1 << 20)).contains(&off));
    0x5400_0000 | ((off >> 2) as u32 & 0x7_ffff) << 5 | cond as u32
}

/// `TBNZ Xt, #bit, off` (`bit` 0..=63).
pub fn tbnz(rt: u8, bit: u8, off: i64) -> u32 {
    debug_assert!(off % 4 == 0 && (-(1 << 15)..(1 << 15)).contains(&off));
    0x3700_0000
        | ((bit as u32) >> 5) << 31
        | ((bit as u32) & 31) << 19
        | ((off >> 2) as u32 & 0x3fff) << 5
        | rt as u32
}

/// `BR Xn`.
pub fn br(rn: u8) -> u32 {
    0xd61f_0000 | (rn as u32) << 5
}

/// `BLR Xn`.
pub fn blr(rn: u8) -> u32 {
    0xd63f_0000 | (rn as u32) << 5
}

/// `RET` (to X30).
pub const RET: u32 = 0xd65f_03c0;

/// `ADR Xd, off` (off within +-1 MiB of this instruction).
pub fn adr(rd: u8, off: i64) -> u32 {
    debug_assert!((-(1 << 20)..(1 << 20)).contains(&off));
    let v = off as u32;
    0x1000_0000 | (v & 3) << 29 | ((v >> 2) & 0x7_ffff) << 5 | rd as u32
}

/// `LDR Wt, label` (literal, `off` bytes from this instruction, within 1 MiB).
pub fn ldr_lit32(rt: u8, off: i64) -> u32 {
    debug_assert!((-(1 << 20)..(1 << 20)).contains(&off) && off % 4 == 0);
    0x1800_0000 | (((off >> 2) as u32) & 0x7_ffff) << 5 | rt as u32
}

/// `MRS Xt, NZCV`.
pub fn mrs_nzcv(rt: u8) -> u32 {
    0xd53b_4200 | rt as u32
}

/// `MSR NZCV, Xt`.
pub fn msr_nzcv(rt: u8) -> u32 {
    0xd51b_4200 | rt as u32
}

/// `MSR DAIF, Xt`.
pub fn msr_daif(rt: u8) -> u32 {
    0xd51b_4220 | rt as u32
}

/// `MSR DAIFSet, #0b0011`: IRQ and FIQ masked.
pub const MSR_DAIFSET_IF: u32 = 0xd503_43df;

/// `NOP`.
pub const NOP: u32 = 0xd503_201f;
/// `DMB ISH`.
pub const DMB_ISH: u32 = 0xd503_3bbf;
/// `DSB ISH`.
pub const DSB_ISH: u32 = 0xd503_3b9f;
/// `ISB`.
pub const ISB: u32 = 0xd503_3fdf;
