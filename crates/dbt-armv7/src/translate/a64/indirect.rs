//! Indirect control flow inside the code cache: the shadow return stack (calls push the
//! guest return address and the host address of a linkable continuation; returns pop and
//! compare) and the indirect branch target cache (a table of guest target -> host block,
//! filled by the dispatcher). Both are plain data that the engine owns and clears whenever
//! a translation they may point to goes away; neither makes translated code writable.
//!
//! Both check the budget before jumping, as a linked exit does, and neither touches the
//! guest NZCV (`EOR` + `CBNZ` compare).

use super::asm::{Asm, Label};
use super::enc::{self, AddSub, Logic};
use super::{BUDGET, IBTC, RAS, RAS_TOP, T_ADDR, T_AMT, T_PCV, T_TMP};

/// The ring mask of [`RAS_TOP`] (16 entries of 16 bytes).
const RING: u32 = 0xf0;

fn ring(a: &mut Asm) {
    let (immr, imms) = enc::logic_imm32(RING).expect("0xf0 is a bitmask immediate");
    a.put(enc::w_logic_imm(Logic::And, RAS_TOP, RAS_TOP, immr, imms));
}

/// A call: pushes (guest `lr`, host `cont`) on the shadow return stack (5 instructions).
pub fn push_return(a: &mut Asm, lr: u8, cont: Label) {
    a.put(enc::w_addsub_imm(AddSub::Add, RAS_TOP, RAS_TOP, 16, false));
    ring(a);
    a.put(enc::x_add_reg(T_TMP, RAS, RAS_TOP));
    a.adr_to(T_PCV, cont);
    a.put(enc::x_stp(lr, T_PCV, T_TMP, 0));
}

/// A return to the guest address in [`T_ADDR`]: pops the shadow return stack and, if the
/// top entry is for this address and the budget allows, jumps to its host address;
/// otherwise goes on to `miss` (7 instructions).
pub fn pop_return(a: &mut Asm, miss: Label) {
    a.put(enc::x_add_reg(T_TMP, RAS, RAS_TOP));
    a.put(enc::x_ldp(T_PCV, T_AMT, T_TMP, 0));
    a.put(enc::w_addsub_imm(AddSub::Sub, RAS_TOP, RAS_TOP, 16, false));
    ring(a);
    jump_if_match(a, miss);
}

/// An indirect branch to the guest address in [`T_ADDR`]: looks the target up in the
/// target cache and jumps to its block if present and the budget allows; otherwise goes
/// on to `miss` (7 instructions).
pub fn lookup(a: &mut Asm, miss: Label) {
    a.put(enc::x_ubfx(T_TMP, T_ADDR, 2, 10));
    a.put(enc::x_add_lsl(T_TMP, IBTC, T_TMP, 4));
    a.put(enc::x_ldp(T_PCV, T_AMT, T_TMP, 0));
    jump_if_match(a, miss);
}

/// With (guest, host) in ([`T_PCV`], [`T_AMT`]): `BR host` if guest is [`T_ADDR`] and the
/// budget is not spent.
fn jump_if_match(a: &mut Asm, miss: Label) {
    a.put(enc::x_eor_reg(T_PCV, T_PCV, T_ADDR));
    a.cbnz_to(T_PCV, miss);
    a.tbnz_to(BUDGET, 63, miss);
    a.put(enc::br(T_AMT));
}
