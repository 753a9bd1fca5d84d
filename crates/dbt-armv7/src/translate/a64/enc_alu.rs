//! A64 encodings of the integer forms the later lowerings use: variable shifts,
//! conditional select, long multiplies, extended-register add and 64-bit helpers
//! (ARM ARM for A-profile, C4). Re-exported by [`super::enc`].

use super::enc::Cond;

/// Variable shifts (`op2` of the two-source data processing class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftV {
    /// `LSLV`.
    Lsl = 0,
    /// `LSRV`.
    Lsr = 1,
    /// `ASRV`.
    Asr = 2,
    /// `RORV`.
    Ror = 3,
}

const SHIFTV: u32 = 0x1ac0_2000;
const SF: u32 = 1 << 31;

/// `LSLV/LSRV/ASRV/RORV Wd, Wn, Wm` (amount `Wm` mod 32).
pub fn w_shiftv(op: ShiftV, rd: u8, rn: u8, rm: u8) -> u32 {
    SHIFTV | (rm as u32) << 16 | (op as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `LSLV/LSRV/ASRV/RORV Xd, Xn, Xm` (amount `Xm` mod 64).
pub fn x_shiftv(op: ShiftV, rd: u8, rn: u8, rm: u8) -> u32 {
    SF | w_shiftv(op, rd, rn, rm)
}

/// `LSL Xd, Xn, #s` (`UBFM Xd, Xn, #(64 - s) % 64, #(63 - s)`), `s` 0..=63.
pub fn x_lsl_imm(rd: u8, rn: u8, s: u8) -> u32 {
    let (immr, imms) = ((64 - s as u32) % 64, 63 - s as u32);
    0xd340_0000 | immr << 16 | imms << 10 | (rn as u32) << 5 | rd as u32
}

/// `SXTW Xd, Wn`.
pub fn x_sxtw(rd: u8, rn: u8) -> u32 {
    0x9340_7c00 | (rn as u32) << 5 | rd as u32
}

/// `CSEL Wd, Wn, Wm, cond`.
pub fn w_csel(rd: u8, rn: u8, rm: u8, cond: Cond) -> u32 {
    0x1a80_0000 | (rm as u32) << 16 | (cond as u32) << 12 | (rn as u32) << 5 | rd as u32
}

/// `UMADDL Xd, Wn, Wm, Xa` (`signed`: `SMADDL`); `ra = 31` gives `UMULL`/`SMULL`.
pub fn x_maddl(signed: bool, rd: u8, rn: u8, rm: u8, ra: u8) -> u32 {
    let base = if signed { 0x9b20_0000 } else { 0x9ba0_0000 };
    base | (rm as u32) << 16 | (ra as u32) << 10 | (rn as u32) << 5 | rd as u32
}

/// `ADD Xd, Xn, Xm`.
pub fn x_add_reg(rd: u8, rn: u8, rm: u8) -> u32 {
    0x8b00_0000 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}

/// `SUB Xd, Xn, Xm`.
pub fn x_sub_reg(rd: u8, rn: u8, rm: u8) -> u32 {
    0xcb00_0000 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}

/// `ANDS Xd, Xn, Xm` (`TST Xn, Xm` with `rd = 31`).
pub fn x_ands_reg(rd: u8, rn: u8, rm: u8) -> u32 {
    0xea00_0000 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}

/// Extensions of the extended-register `ADD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ext {
    /// `UXTB`.
    Uxtb = 0,
    /// `UXTH`.
    Uxth = 1,
    /// `SXTB`.
    Sxtb = 4,
    /// `SXTH`.
    Sxth = 5,
}

/// `ADD Wd, Wn, Wm, <ext>` (extended register, no shift).
pub fn w_add_ext(rd: u8, rn: u8, rm: u8, ext: Ext) -> u32 {
    0x0b20_0000 | (rm as u32) << 16 | (ext as u32) << 13 | (rn as u32) << 5 | rd as u32
}

/// `CBNZ Wt, off` (`nonzero = false`: `CBZ`).
pub fn w_cbz(nonzero: bool, rt: u8, off: i64) -> u32 {
    debug_assert!(off % 4 == 0 && (-(1 << 20)..(1 << 20)).contains(&off));
    0x3400_0000 | (nonzero as u32) << 24 | ((off >> 2) as u32 & 0x7_ffff) << 5 | rt as u32
}

/// `CBNZ Xt, off` (`nonzero = false`: `CBZ`).
pub fn x_cbz(nonzero: bool, rt: u8, off: i64) -> u32 {
    SF | w_cbz(nonzero, rt, off)
}

/// `ADD Xd, Xn, Xm, LSL #amount`.
pub fn x_add_lsl(rd: u8, rn: u8, rm: u8, amount: u8) -> u32 {
    x_add_reg(rd, rn, rm) | (amount as u32) << 10
}

/// `EOR Xd, Xn, Xm`.
pub fn x_eor_reg(rd: u8, rn: u8, rm: u8) -> u32 {
    0xca00_0000 | (rm as u32) << 16 | (rn as u32) << 5 | rd as u32
}
