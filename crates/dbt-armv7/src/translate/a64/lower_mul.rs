//! Multiplies: flag-setting `MULS/MLAS`, the long multiplies (`UMULL`, `SMULL`, `UMLAL`,
//! `SMLAL` with their S forms, `UMAAL`) and the halfword multiplies that do not touch Q
//! (`SMULxy`, `SMULWy`, `SMLALxy`). `SMLAxy`/`SMLAWy` (Q) and the dual multiplies stay
//! in the interpreter.

use super::asm::Asm;
use super::enc::{self, Logic, Sh};
use super::lower::Lowered;
use super::{T_ADDR, T_FLAGS, T_OP2, T_TMP, ZR};
use crate::decode::{MulHalf, MulLong};

/// Sets N and Z from the 32-bit (or with `x`, 64-bit) value in `r`, keeping C and V.
pub fn set_nz(a: &mut Asm, r: u8, x: bool) {
    a.put(enc::mrs_nzcv(T_FLAGS));
    if x {
        a.put(enc::x_ands_reg(ZR, r, r));
    } else {
        a.put(enc::w_logic_reg(Logic::Ands, ZR, r, r, Sh::Lsl, 0));
    }
    a.put(enc::mrs_nzcv(T_ADDR));
    a.put(enc::x_bfxil(T_ADDR, T_FLAGS, 0, 30));
    a.put(enc::msr_nzcv(T_ADDR));
}

/// `MULS`/`MLAS` (the product is already in `rd`).
pub fn mul_s(a: &mut Asm, rd: u8) {
    set_nz(a, rd, false);
}

/// Writes the 64-bit result in [`T_ADDR`] to `rdlo`/`rdhi`.
fn split(a: &mut Asm, rdlo: u8, rdhi: u8) {
    a.put(enc::w_mov(rdlo, T_ADDR));
    a.put(enc::x_ubfx(rdhi, T_ADDR, 32, 32));
}

/// `rdhi:rdlo` as a 64-bit value into `dst`.
fn pair(a: &mut Asm, dst: u8, rdlo: u8, rdhi: u8) {
    a.put(enc::w_mov(dst, rdlo));
    a.put(enc::x_bfi(dst, rdhi, 32, 32));
}

/// The long multiplies.
pub fn mul_long(
    a: &mut Asm,
    kind: MulLong,
    s: bool,
    rdlo: u8,
    rdhi: u8,
    rn: u8,
    rm: u8,
) -> Lowered {
    if [rdlo, rdhi, rn, rm].contains(&15) || rdlo == rdhi {
        return Lowered::Unsupported;
    }
    match kind {
        MulLong::Umull | MulLong::Smull => {
            a.put(enc::x_maddl(kind == MulLong::Smull, T_ADDR, rn, rm, ZR));
        }
        MulLong::Umlal | MulLong::Smlal => {
            pair(a, T_OP2, rdlo, rdhi);
            a.put(enc::x_maddl(kind == MulLong::Smlal, T_ADDR, rn, rm, T_OP2));
        }
        MulLong::Umaal => {
            if s {
                return Lowered::Unsupported;
            }
            a.put(enc::x_maddl(false, T_ADDR, rn, rm, rdlo));
            a.put(enc::x_add_reg(T_ADDR, T_ADDR, rdhi));
        }
    }
    split(a, rdlo, rdhi);
    if s {
        set_nz(a, T_ADDR, true);
    }
    Lowered::Done
}

/// The selected signed halfword of `r` into `dst`.
fn half(a: &mut Asm, dst: u8, r: u8, high: bool) {
    if high {
        a.put(enc::w_asr_imm(dst, r, 16));
    } else {
        a.put(enc::w_sbfm(dst, r, 0, 15));
    }
}

/// The halfword multiplies without Q.
#[allow(clippy::too_many_arguments)]
pub fn mul_half(
    a: &mut Asm,
    kind: MulHalf,
    n_high: bool,
    m_high: bool,
    rd: u8,
    rn: u8,
    rm: u8,
    ra: u8,
) -> Lowered {
    if rd == 15 || rn == 15 || rm == 15 {
        return Lowered::Unsupported;
    }
    half(a, T_OP2, rm, m_high);
    match kind {
        MulHalf::Smul => {
            half(a, T_ADDR, rn, n_high);
            a.put(enc::w_madd(false, rd, T_ADDR, T_OP2, ZR));
        }
        MulHalf::Smulw => {
            // Bits 47:16 of the 48-bit product.
            a.put(enc::x_maddl(true, T_ADDR, rn, T_OP2, ZR));
            a.put(enc::x_ubfx(rd, T_ADDR, 16, 32));
        }
        MulHalf::Smlal if ra != 15 && ra != rd => {
            // rd = RdHi, ra = RdLo.
            half(a, T_ADDR, rn, n_high);
            pair(a, T_TMP, ra, rd);
            a.put(enc::x_maddl(true, T_ADDR, T_ADDR, T_OP2, T_TMP));
            split(a, ra, rd);
        }
        _ => return Lowered::Unsupported,
    }
    Lowered::Done
}
