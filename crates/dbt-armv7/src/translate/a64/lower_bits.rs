//! Extends (`SXTB/UXTB/SXTH/UXTH` and their accumulating forms, with rotation),
//! bit fields (`SBFX/UBFX/BFI/BFC`) and `REVSH`. `SXTB16/UXTB16` stay in the interpreter.

use super::asm::Asm;
use super::enc::{self, Ext, Unary};
use super::lower::Lowered;
use super::{T_OP2, ZR};
use crate::decode::{BfOp, ExtSize};

/// `SXT*/UXT*` and `SXTA*/UXTA*` (`rn = 15`: no accumulate).
pub fn extend(
    a: &mut Asm,
    signed: bool,
    size: ExtSize,
    rd: u8,
    rn: u8,
    rm: u8,
    rot: u8,
) -> Lowered {
    if rd == 15 || rm == 15 || size == ExtSize::B16 {
        return Lowered::Unsupported;
    }
    let m = if rot == 0 {
        rm
    } else {
        a.put(enc::w_extr(T_OP2, rm, rm, rot));
        T_OP2
    };
    let top = if size == ExtSize::B { 7 } else { 15 };
    if rn == 15 {
        if signed {
            a.put(enc::w_sbfm(rd, m, 0, top));
        } else {
            a.put(enc::w_ubfm(rd, m, 0, top));
        }
    } else {
        let ext = match (signed, size) {
            (false, ExtSize::B) => Ext::Uxtb,
            (false, _) => Ext::Uxth,
            (true, ExtSize::B) => Ext::Sxtb,
            (true, _) => Ext::Sxth,
        };
        a.put(enc::w_add_ext(rd, rn, m, ext));
    }
    Lowered::Done
}

/// `SBFX/UBFX/BFI/BFC`.
pub fn bitfield(a: &mut Asm, op: BfOp, rd: u8, rn: u8, lsb: u8, width: u8) -> Lowered {
    if rd == 15 || width == 0 || lsb + width > 32 || (op != BfOp::Bfc && rn == 15) {
        return Lowered::Unsupported;
    }
    let top = lsb + width - 1;
    let rot = (32 - lsb) % 32;
    a.put(match op {
        BfOp::Sbfx => enc::w_sbfm(rd, rn, lsb, top),
        BfOp::Ubfx => enc::w_ubfm(rd, rn, lsb, top),
        BfOp::Bfi => enc::w_bfm(rd, rn, rot, width - 1),
        BfOp::Bfc => enc::w_bfm(rd, ZR, rot, width - 1),
    });
    Lowered::Done
}

/// `REVSH`.
pub fn revsh(a: &mut Asm, rd: u8, rm: u8) -> Lowered {
    a.put(enc::w_unary(Unary::Rev16, T_OP2, rm));
    a.put(enc::w_sbfm(rd, T_OP2, 0, 15));
    Lowered::Done
}
