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
use super::{BUDGET, IBTC, RAS_TOP, T_AMT, T_PCV, T_RES, T_TMP};
use crate::translate::state::RAS_ENTRIES;

/// The ring's size in bytes ([`RAS_ENTRIES`] entries of 16 bytes); the engine aligns
/// it to twice its size, so that [`RAS_TOP`], a pointer into it, wraps by clearing this
/// bit after a push and by keeping its low bits after a pop.
pub const RING_BYTES: u64 = (RAS_ENTRIES * 16) as u64;

/// A call: pushes (guest `lr`, host `cont`) on the shadow return stack (3 instructions).
/// The pre-indexed store past the ring's last entry lands in a spare entry after it and
/// is lost (the ring is a predictor: a lost or stale entry only makes a return miss).
pub fn push_return(a: &mut Asm, lr: u8, cont: Label) {
    a.adr_to(T_PCV, cont);
    a.put(enc::x_stp_pre(lr, T_PCV, RAS_TOP, 16));
    // AND X26, X26, #~RING_BYTES (N = 1, 63 ones rotated so that the zero is bit 12).
    const _: () = assert!(RING_BYTES == 1 << 12);
    a.put(enc::x_logic_imm(Logic::And, RAS_TOP, RAS_TOP, true, 51, 62));
}

/// A return to the guest address (with the instruction-set bit, as the branch writes
/// it) in `src`: pops the shadow return stack and, if the top entry is for this address
/// and the budget allows, jumps to its host address; otherwise goes on to `miss` (7
/// instructions). An entry's address has the instruction-set bit of the code that pushed
/// it, so a match also means the same instruction set.
pub fn pop_return(a: &mut Asm, src: u8, miss: Label) {
    debug_assert!(![T_RES, T_AMT, T_TMP].contains(&src));
    a.put(enc::x_ldp(T_RES, T_AMT, RAS_TOP, 0));
    a.put(enc::x_addsub_imm(AddSub::Sub, T_TMP, RAS_TOP, 16));
    a.put(enc::x_bfxil(RAS_TOP, T_TMP, 0, 12));
    jump_if_match(a, src, miss);
}

/// An indirect branch to the guest address in `src`: looks the target up in the target
/// cache (entries hold the target with the instruction-set bit, see
/// [`Dbt`](crate::translate::Dbt)) and jumps to its block if present and the budget
/// allows; otherwise goes on to `miss` (7 instructions).
pub fn lookup(a: &mut Asm, src: u8, miss: Label) {
    debug_assert!(![T_RES, T_AMT, T_TMP].contains(&src));
    a.put(enc::x_ubfx(T_TMP, src, 2, 10));
    a.put(enc::x_add_lsl(T_TMP, IBTC, T_TMP, 4));
    a.put(enc::x_ldp(T_RES, T_AMT, T_TMP, 0));
    jump_if_match(a, src, miss);
}

/// With (guest, host) in ([`T_RES`], [`T_AMT`]): `BR host` if guest is `src` and the
/// budget is not spent.
fn jump_if_match(a: &mut Asm, src: u8, miss: Label) {
    a.put(enc::x_eor_reg(T_RES, T_RES, src));
    a.cbnz_to(T_RES, miss);
    a.tbnz_to(BUDGET, 63, miss);
    a.put(enc::br(T_AMT));
}
