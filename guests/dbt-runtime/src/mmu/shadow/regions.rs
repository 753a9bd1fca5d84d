//! Which of a vCPU's shadows can hold a translation of a guest virtual address: per 2 MiB
//! region of the 32-bit guest space, a mask of the shadows with an entry (a level-3 table
//! or a block) there, a mask of those holding a global one there, and per guest ASID a
//! mask of its shadows. A page-form TLB operation (`TLBIMVA`, `TLBIMVAA`) then visits only
//! the shadows that can hold the page, instead of walking every shadow: Linux userland
//! under the DBT performs about a million of them, each of which walked up to 64 shadows.
//!
//! The masks over-approximate (a bit may stay set after the entries it stood for were
//! cleared one by one): a stale bit costs one walk that finds nothing. A bit is cleared
//! only when the shadow's entries in the region go with it (the shadow is dropped or
//! emptied).

use alloc::boxed::Box;

/// 2 MiB regions of the guest's 4 GiB virtual space.
const REGIONS: usize = 1 << 11;

/// The region of guest virtual address `va`.
pub fn region(va: u32) -> usize {
    (va >> 21) as usize
}

/// The masks of one vCPU's shadows (bit `i`: shadow `i`; at most 64 shadows).
pub struct Regions {
    /// Shadows with an entry in the region.
    mapped: Box<[u64; REGIONS]>,
    /// Shadows with an entry filled from a global guest translation in the region.
    global: Box<[u64; REGIONS]>,
    /// Shadows of each guest ASID.
    by_asid: [u64; 256],
}

impl Regions {
    /// No shadow maps anything.
    pub fn new() -> Regions {
        Regions {
            mapped: Box::new([0; REGIONS]),
            global: Box::new([0; REGIONS]),
            by_asid: [0; 256],
        }
    }

    /// Shadow `i` has an entry in region `r` (filled from a global translation if
    /// `global`).
    pub fn note_entry(&mut self, i: usize, r: usize, global: bool) {
        self.mapped[r] |= 1 << i;
        if global {
            self.global[r] |= 1 << i;
        }
    }

    /// Shadow `i` has no entries in region `r` any more.
    pub fn forget_entries(&mut self, i: usize, r: usize) {
        self.mapped[r] &= !(1 << i);
        self.global[r] &= !(1 << i);
    }

    /// Shadow `i` now mirrors guest ASID `asid`.
    pub fn note_shadow(&mut self, i: usize, asid: u8) {
        self.by_asid[asid as usize] |= 1 << i;
    }

    /// Shadow `i` (of guest ASID `asid`) is gone; its region bits are cleared by
    /// [`forget_entries`](Self::forget_entries) as its tables are freed.
    pub fn forget_shadow(&mut self, i: usize, asid: u8) {
        self.by_asid[asid as usize] &= !(1 << i);
    }

    /// The shadows that can hold a translation of `va` that a page-form TLB operation
    /// removes: of guest ASID `asid` or global (`TLBIMVA`), or any (`TLBIMVAA`: `None`).
    pub fn holders(&self, va: u32, asid: Option<u8>) -> u64 {
        let r = region(va);
        match asid {
            Some(a) => self.mapped[r] & (self.by_asid[a as usize] | self.global[r]),
            None => self.mapped[r],
        }
    }
}

/// The indices of the set bits of `mask`, lowest first.
pub fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(i)
    })
}
