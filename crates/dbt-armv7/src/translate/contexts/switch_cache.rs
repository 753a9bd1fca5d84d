//! The switch cache: a few translation contexts that translated code switches to by
//! itself, without a call into the engine, when the guest changes address space
//! (`CONTEXTIDR` at PL1, `a64::ttbr_inline`) or privilege (an exception entry from User
//! mode or a return to it, `a64::exception::privilege`). An entry holds what the engine
//! and the host would do for that context: the host's `TTBR0_EL1` value of its shadow (0:
//! none to load, the guest's MMU is off or the host mirrors nothing) and the context's
//! return stack and target cache. It lives in the [`GuestState`], direct-mapped by
//! [`slot`].
//!
//! Exactness: an entry is filled only for the context the engine has just made current
//! with the host's shadow of it loaded ([`Contexts::remember`](super::Contexts::remember)),
//! and is not used once stale: the engine forgets the entries of a context whose tables
//! it clears or recycles ([`forget_all`], [`forget_table`]), and the host advances the
//! epoch at [`GuestState::switch_epoch`] whenever a shadow (host root and ASID) goes, so
//! that translated code takes an entry only while its epoch is the current one. A block
//! is only ever entered through its own context's tables, and each context's tables are
//! found only through the entry of its exact key (privilege, address space, `DACR`, FP),
//! so User code never runs a PL1 block or on the PL1 shadow.

use core::sync::atomic::{AtomicU32, Ordering};

use super::Ctx;
use crate::translate::state::GuestState;

/// Entries of the switch cache.
pub const SWITCH_ENTRIES: usize = 8;
/// [`key`] bit: VFP/Advanced SIMD is translated in the context.
pub const KEY_FP: u64 = 1;
/// [`key`] bit: the context is PL1's.
pub const KEY_PRIVILEGED: u64 = 1 << 1;
/// [`key`] bit: set in every key (an empty entry, key 0, matches none).
pub const KEY_VALID: u64 = 1 << 2;
/// [`key`]'s address space (`SPACE_*` of the engine: `SPACE_ASID | asid` with the MMU
/// on) is in bits 31:16; bits 63:32 hold `DACR`.
pub const KEY_SPACE_LSB: u8 = 16;
/// log2 of an entry's size in bytes.
pub const ENTRY_SHIFT: u8 = 6;
/// Byte offset of [`SwitchEntry::ttbr`] in an entry.
pub const ENTRY_TTBR: u32 = 16;
/// Byte offset of [`SwitchEntry::ras`] in an entry ([`SwitchEntry::ibtc`] follows).
pub const ENTRY_RAS: u32 = 24;

/// One context translated code may switch to.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchEntry {
    /// The context's [`key`] (0: empty).
    pub key: u64,
    /// The host's epoch ([`GuestState::switch_epoch`]) when the entry was filled.
    pub epoch: u64,
    /// The host `TTBR0_EL1` value of the context's shadow; 0: nothing to load.
    pub ttbr: u64,
    /// The context's return stack ring ([`GuestState::ras_base`]).
    pub ras: u64,
    /// The context's target cache ([`GuestState::ibtc_base`]).
    pub ibtc: u64,
    /// Room to a power of two.
    pad: [u64; 3],
}

const _: () = {
    assert!(core::mem::size_of::<SwitchEntry>() == 1 << ENTRY_SHIFT);
    assert!(core::mem::offset_of!(SwitchEntry, ttbr) == ENTRY_TTBR as usize);
    assert!(core::mem::offset_of!(SwitchEntry, ras) == ENTRY_RAS as usize);
    assert!(core::mem::offset_of!(SwitchEntry, ibtc) == ENTRY_RAS as usize + 8);
};

impl SwitchEntry {
    /// No context.
    pub const EMPTY: SwitchEntry = SwitchEntry {
        key: 0,
        epoch: 0,
        ttbr: 0,
        ras: 0,
        ibtc: 0,
        pad: [0; 3],
    };
}

/// The epoch of a host without shadows: never advances.
pub static NO_EPOCH: AtomicU32 = AtomicU32::new(0);

/// The switch key of context `ctx`: its privilege, address space, `DACR` and FP bit in
/// one word (see the `KEY_*` constants), as translated code derives it from the current
/// one ([`GuestState::cur_key`]).
pub fn key((privileged, asid, dacr, fp): Ctx) -> u64 {
    (dacr as u64) << 32
        | (asid as u64) << KEY_SPACE_LSB
        | KEY_VALID
        | if privileged { KEY_PRIVILEGED } else { 0 }
        | fp as u64
}

/// The entry `key` may occupy: the address space's low 3 bits, the privilege and the
/// valid bit mixed in (the two privileges of one ASID take different entries), as the
/// emitted lookup computes it.
pub fn slot(key: u64) -> usize {
    (((key >> KEY_SPACE_LSB) ^ (key >> 1)) & (SWITCH_ENTRIES as u64 - 1)) as usize
}

/// The host's epoch now.
pub fn epoch_now(state: &GuestState) -> u64 {
    if state.switch_epoch == 0 {
        return 0;
    }
    // SAFETY: the engine sets `switch_epoch` to the host's counter or to `NO_EPOCH`,
    // both `'static`.
    unsafe { (*(state.switch_epoch as *const AtomicU32)).load(Ordering::Relaxed) as u64 }
}

/// Records context `key` (host `ttbr`, tables `ras` and `ibtc`) under the host's current
/// epoch.
pub fn remember(state: &mut GuestState, key: u64, ttbr: u64, ras: u64, ibtc: u64) {
    let entry = SwitchEntry {
        key,
        epoch: epoch_now(state),
        ttbr,
        ras,
        ibtc,
        pad: [0; 3],
    };
    state.switch_cache[slot(key)] = entry;
}

/// Forgets every entry.
pub fn forget_all(state: &mut GuestState) {
    state.switch_cache = [SwitchEntry::EMPTY; SWITCH_ENTRIES];
}

/// Forgets the entries of the context whose target cache is at `ibtc` (its tables are
/// recycled for another context).
pub fn forget_table(state: &mut GuestState, ibtc: u64) {
    for e in state.switch_cache.iter_mut().filter(|e| e.ibtc == ibtc) {
        *e = SwitchEntry::EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privileges_of_one_asid_take_different_slots() {
        for asid in 0..=255u16 {
            for dacr in [0, 0x55] {
                let user = key((false, 0x100 | asid, dacr, true));
                let pl1 = key((true, 0x100 | asid, dacr, true));
                assert_ne!(slot(user), slot(pl1));
                assert_eq!(user ^ pl1, KEY_PRIVILEGED);
            }
        }
        assert_ne!(key((false, 0, 0, false)), SwitchEntry::EMPTY.key);
    }
}
