//! Register-shifted register operands (`<rm>, <shift> <rs>`): the amount is `rs<7:0>`, and
//! amounts of 32 and more have their A32 meaning (zeros, sign, or a rotation mod 32),
//! which A64's variable shifts (amount mod 32 or mod 64) do not have.
//!
//! Without the shifter carry (every operation but a flag-setting logical one) the value
//! takes three host instructions and leaves NZCV alone: the A64 variable shift, exact for
//! the amounts it covers (`LSLV`/`LSRV` of the zero-extended 64-bit register for
//! `rs<7:6>` = 0, `ASRV` of the word for `rs<7:5>` = 0, `RORV` always), and a `CBZ` on
//! `rs<7:6>` (`rs<7:5>`) past the one instruction that gives the result of a larger amount
//! (zero; the sign). With the carry, the amount is clamped with `CMP`/`CSEL` between a
//! save and a restore of the guest NZCV.

use super::asm::Asm;
use super::enc::{self, AddSub, Logic, ShiftV};
use super::{T_AMT, T_CARRY, T_FLAGS, T_OP2, T_TMP, ZR};
use crate::decode::Shift;

/// A64 condition `LO` (unsigned lower).
const LO: u8 = 3;
/// A64 condition `EQ`.
const EQ: u8 = 0;

/// Clamps the amount in [`T_AMT`] to at most `lim`.
fn clamp(a: &mut Asm, lim: u16) {
    a.put(enc::w_addsub_imm(
        AddSub::Subs,
        ZR,
        T_AMT,
        lim as u32,
        false,
    ));
    a.put(enc::w_movz(T_TMP, lim, 0));
    a.put(enc::w_csel(T_AMT, T_AMT, T_TMP, LO));
}

/// Computes `rm <shift> rs` into [`T_OP2`] without touching NZCV or the shifter carry:
/// three host instructions (one for `ROR`).
fn value_into(a: &mut Asm, rm: u8, shift: Shift, rs: u8) {
    let (mask, op) = match shift {
        Shift::Lsl => (0xc0, ShiftV::Lsl),
        Shift::Lsr => (0xc0, ShiftV::Lsr),
        Shift::Asr => (0xe0, ShiftV::Asr),
        Shift::Ror | Shift::Rrx => {
            // RORV takes the amount mod 32, as a rotation by rs<7:0> does.
            a.put(enc::w_shiftv(ShiftV::Ror, T_OP2, rm, rs));
            return;
        }
    };
    let (immr, imms) = enc::logic_imm32(mask).expect("0xc0 and 0xe0 are bitmask immediates");
    a.put(enc::w_logic_imm(Logic::And, T_AMT, rs, immr, imms));
    if shift == Shift::Asr {
        // Amount mod 32: exact below 32.
        a.put(enc::w_shiftv(op, T_OP2, rm, rs));
    } else {
        // Amount mod 64 of the zero-extended word: exact below 64 (32 to 63 give 0).
        a.put(enc::x_shiftv(op, T_OP2, rm, rs));
    }
    let done = a.label();
    a.cbz_to(false, T_AMT, done);
    if shift == Shift::Asr {
        // 32 and more: every bit a copy of the sign.
        a.put(enc::w_asr_imm(T_OP2, rm, 31));
    } else {
        // 64 and more: every bit shifted out.
        a.put(enc::w_movz(T_OP2, 0, 0));
    }
    a.bind(done);
}

/// Computes `rm <shift> rs` into [`T_OP2`] and, with `carry`, the shifter carry-out into
/// bit 0 of [`T_CARRY`] (the guest C when the amount is 0). Guest NZCV is unchanged.
pub fn shift_reg_into(a: &mut Asm, rm: u8, shift: Shift, rs: u8, carry: bool) {
    if !carry {
        value_into(a, rm, shift, rs);
        return;
    }
    a.put(enc::mrs_nzcv(T_FLAGS));
    let (immr, imms) = enc::logic_imm32(0xff).expect("0xff is a bitmask immediate");
    a.put(enc::w_logic_imm(Logic::And, T_AMT, rs, immr, imms));
    match shift {
        Shift::Lsl => {
            // rm << min(amt, 33) in 64 bits: the result is the low word, the carry bit 32.
            clamp(a, 33);
            a.put(enc::x_shiftv(ShiftV::Lsl, T_TMP, rm, T_AMT));
            a.put(enc::w_mov(T_OP2, T_TMP));
            if carry {
                a.put(enc::x_ubfx(T_CARRY, T_TMP, 32, 1));
            }
        }
        Shift::Lsr => {
            // rm >> min(amt, 33); the carry is bit 0 of (rm << 1) >> amt.
            clamp(a, 33);
            a.put(enc::x_shiftv(ShiftV::Lsr, T_OP2, rm, T_AMT));
            if carry {
                a.put(enc::x_lsl_imm(T_TMP, rm, 1));
                a.put(enc::x_shiftv(ShiftV::Lsr, T_TMP, T_TMP, T_AMT));
                a.put(enc::x_ubfx(T_CARRY, T_TMP, 0, 1));
            }
        }
        Shift::Asr => {
            // sxtw(rm) >> min(amt, 32); the carry likewise from (sxtw(rm) << 1).
            clamp(a, 32);
            a.put(enc::x_sxtw(T_CARRY, rm));
            a.put(enc::x_shiftv(ShiftV::Asr, T_OP2, T_CARRY, T_AMT));
            if carry {
                a.put(enc::x_lsl_imm(T_TMP, T_CARRY, 1));
                a.put(enc::x_shiftv(ShiftV::Asr, T_TMP, T_TMP, T_AMT));
                a.put(enc::x_ubfx(T_CARRY, T_TMP, 0, 1));
            }
        }
        Shift::Ror | Shift::Rrx => {
            // RORV takes the amount mod 32; the carry is bit 31 of the result.
            a.put(enc::w_shiftv(ShiftV::Ror, T_OP2, rm, T_AMT));
            if carry {
                a.put(enc::w_lsr_imm(T_CARRY, T_OP2, 31));
            }
        }
    }
    if carry {
        // Amount 0: C unchanged.
        a.put(enc::w_addsub_imm(AddSub::Subs, ZR, T_AMT, 0, false));
        a.put(enc::x_ubfx(T_TMP, T_FLAGS, 29, 1));
        a.put(enc::w_csel(T_CARRY, T_TMP, T_CARRY, EQ));
    }
    a.put(enc::msr_nzcv(T_FLAGS));
}
