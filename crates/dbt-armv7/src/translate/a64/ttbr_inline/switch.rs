//! The switch of translated code to a context of the switch cache
//! (`contexts::switch_cache`) by itself: the entry of the new context's key, if it holds
//! that key under the host's current epoch, gives the host's `TTBR0_EL1` value of the
//! context's shadow and its return stack and target cache; the code loads them and goes
//! on. Guest NZCV (the host's flags) is untouched: compares are `EOR` + `CBNZ`.

use super::super::asm::{Asm, Label};
use super::super::enc::{self, AddSub, Logic, Ls, Sh};
use super::super::enc_alu;
use super::super::{IBTC, RAS, RAS_TOP, STATE, T_ADDR, T_OP2, T_TMP};
use crate::translate::contexts::switch_cache::{
    ENTRY_RAS, ENTRY_SHIFT, ENTRY_TTBR, KEY_SPACE_LSB, SWITCH_ENTRIES,
};
use crate::translate::state::{OFF_CUR_KEY, OFF_RAS_BASE, OFF_SWITCH_CACHE, OFF_SWITCH_EPOCH};

/// `MSR TTBR0_EL1, Xt` (op0 3, op1 0, CRn 2, CRm 0, op2 0).
const MSR_TTBR0_EL1: u32 = 0xd518_2000;
/// `ISB`.
const ISB: u32 = 0xd503_3fdf;

/// Switches to the context whose switch key is in `key` (kept) if the switch cache holds
/// it: `TTBR0_EL1` (then an `ISB`: the next guest access and fetch use the new shadow;
/// translated code runs at the host's EL1, where it may write it), the return stack,
/// target cache and return stack top registers (the top kept as an offset into the
/// ring), their copies in the state and [`GuestState::cur_key`]. Otherwise branches to
/// `miss` with nothing changed. Uses `T_ADDR`, `T_OP2` and `T_TMP`.
///
/// [`GuestState::cur_key`]: crate::translate::state::GuestState::cur_key
pub fn to_cached(a: &mut Asm, key: u8, miss: Label) {
    debug_assert!(![T_ADDR, T_OP2, T_TMP].contains(&key));
    // The entry: `contexts::switch_cache::slot` of the key, `(key >> 16 ^ key >> 1) & 7`,
    // as bits 3:1 of `key ^ key >> 15` (two instructions).
    a.put(enc::w_logic_reg(
        Logic::Eor,
        T_TMP,
        key,
        key,
        Sh::Lsr,
        KEY_SPACE_LSB - 1,
    ));
    a.put(enc::x_ubfx(
        T_TMP,
        T_TMP,
        1,
        SWITCH_ENTRIES.trailing_zeros() as u8,
    ));
    a.put(enc_alu::x_add_lsl(T_TMP, STATE, T_TMP, ENTRY_SHIFT));
    a.put(enc::x_addsub_imm(
        AddSub::Add,
        T_TMP,
        T_TMP,
        OFF_SWITCH_CACHE,
    ));
    // Its key and epoch.
    a.put(enc::x_ldp(T_ADDR, T_OP2, T_TMP, 0));
    a.put(enc_alu::x_eor_reg(T_ADDR, T_ADDR, key));
    a.cbnz_to(T_ADDR, miss);
    a.put(enc::ls_uimm(Ls::LdrX, T_ADDR, STATE, OFF_SWITCH_EPOCH));
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, T_ADDR, 0));
    a.put(enc_alu::x_eor_reg(T_ADDR, T_ADDR, T_OP2));
    a.cbnz_to(T_ADDR, miss);
    // The shadow, if there is one to load.
    let same_shadow = a.label();
    a.put(enc::ls_uimm(Ls::LdrX, T_ADDR, T_TMP, ENTRY_TTBR));
    a.cbz_to(false, T_ADDR, same_shadow);
    a.put(MSR_TTBR0_EL1 | T_ADDR as u32);
    a.put(ISB);
    a.bind(same_shadow);
    // The tables.
    a.put(enc_alu::x_sub_reg(T_OP2, RAS_TOP, RAS));
    a.put(enc::x_ldp(RAS, IBTC, T_TMP, ENTRY_RAS as i32));
    a.put(enc_alu::x_add_reg(RAS_TOP, RAS, T_OP2));
    a.put(enc::x_stp(RAS, IBTC, STATE, OFF_RAS_BASE as i32));
    a.put(enc::ls_uimm(Ls::StrX, key, STATE, OFF_CUR_KEY));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::a64::T_RES;
    use crate::translate::contexts::switch_cache::{key, slot};

    #[test]
    fn encodings_are_the_assemblers() {
        // llvm-mc -triple=aarch64: msr ttbr0_el1, x16; isb.
        assert_eq!(MSR_TTBR0_EL1 | 16, 0xd518_2010);
        assert_eq!(ISB, 0xd503_3fdf);
        let mut a = Asm::new(0);
        let miss = a.label();
        to_cached(&mut a, T_RES, miss);
        a.bind(miss);
        let bytes = a.finish();
        let words: alloc::vec::Vec<u32> = bytes
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        // eor w22, w20, w20, lsr #15; ubfx x22, x22, #1, #3; add x22, x28, x22, lsl #6.
        assert_eq!(words[..3], [0x4a54_3e96, 0xd341_0ed6, 0x8b16_1b96]);
    }

    #[test]
    fn slot_is_the_emitted_one() {
        for (p, asid, dacr, fp) in [(true, 0x105, 0x55, true), (false, 0x1ff, 1, false)] {
            let k = key((p, asid, dacr, fp));
            let emitted = ((k as u32 ^ k as u32 >> 15) >> 1) & 7;
            assert_eq!(slot(k), emitted as usize);
        }
    }
}
