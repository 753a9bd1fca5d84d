//! 2 MiB shadow blocks: where the guest maps a whole 2 MiB region of its virtual space to
//! one 2 MiB-aligned physical range with the same permissions and memory type (an LPAE 2 MiB or 1 GiB
//! block, a supersection, or two sections of consecutive frames), a fill installs one
//! level-2 block for the region instead of a page, so the other 511 pages need no fill
//! of their own (and the host TLB holds one entry for them).
//!
//! Not where a page of the range holds translated code (it must stay read-only: the
//! region is then filled page by page), nor over a level-3 table already there (pages
//! filled before stay). Write-protecting a page later ([`State::unmap_blocks_of`]) unmaps
//! every block over it (a reverse map by physical 2 MiB frame finds them); the region is
//! then filled page by page. Both sections of a pair must have the same memory type
//! (`TEX`/`C`/`B`), as a block's pages share the descriptor's.
//!
//! The guest's page-form TLB maintenance of any address in the region clears the block
//! (`TLBIMVA` of a section clears its neighbour too: more than the architecture asks,
//! which it allows); a block filled from a larger guest mapping (supersection, 1 GiB
//! block) is recorded with it, so that maintenance by any address in that mapping clears
//! every block of it.

use core::ptr::{read_volatile, write_volatile};

use dbt_armv7::mmu::{self, Walk};

use super::regions::region;
use super::{tlbi_va_asid, State, PROTECTED, SW_GUEST_WRITE};
use crate::mmu::{Table, OA_MASK};

/// 2 MiB, the size of a level-2 block.
const BLOCK_BYTES: u32 = 2 << 20;
/// Section (short descriptor) size.
const SECTION: u32 = 1 << 20;
/// Descriptor type field: block (levels 1-2).
const TYPE_BLOCK: u64 = 0b01;

impl State {
    /// Shadow `i`'s level-2 entry for `va`, allocating the level-2 table if `make`.
    pub(super) fn l2_entry(&mut self, i: usize, va: u32, make: bool) -> Option<*mut u64> {
        let root = self.shadows[i].as_ref()?.root;
        // SAFETY: `root` is one of our tables; `va >> 30` is below 4.
        let e1 = unsafe { &mut (*root).0[(va >> 30) as usize] };
        if *e1 & 3 != 3 {
            if !make {
                return None;
            }
            let t = self.alloc_table()?;
            *e1 = t as u64 | 3;
        }
        let l2 = (*e1 & OA_MASK) as *mut Table;
        // SAFETY: a level-2 table of ours; the index is below 512.
        Some(unsafe { &mut (*l2).0[((va >> 21) & 511) as usize] as *mut u64 })
    }

    /// The entry that translates `va` in shadow `i`: its level-2 block, or its level-3
    /// entry (valid or not), or `None` when neither table is there.
    pub(super) fn leaf(&mut self, i: usize, va: u32) -> Option<*mut u64> {
        let e2 = self.l2_entry(i, va, false)?;
        // SAFETY: a level-2 entry of one of our tables.
        let d = unsafe { read_volatile(e2) };
        match d & 3 {
            TYPE_BLOCK => Some(e2),
            3 => {
                let l3 = (d & OA_MASK) as *mut Table;
                // SAFETY: a level-3 table of ours; the index is below 512.
                Some(unsafe { &mut (*l3).0[((va >> 12) & 511) as usize] as *mut u64 })
            }
            _ => None,
        }
    }

    /// Fills shadow `i` (current) with a 2 MiB block for the fault at `va`, if the guest's
    /// translation `w` of it covers the whole 2 MiB region uniformly, no page of the
    /// physical range holds translated code and the region is unmapped in the shadow;
    /// `guest_write`: the guest permits writes at the shadow's privilege. False when it
    /// does not (the caller fills the page).
    pub(super) fn fill_block(&mut self, i: usize, va: u32, w: &Walk, guest_write: bool) -> bool {
        let Ok(pa) = u32::try_from(w.pa_page) else {
            return false;
        };
        if (va ^ pa) & (BLOCK_BYTES - 1) != 0 {
            return false;
        }
        match w.size_log2 {
            21 | 24 | 30 => {}
            20 => {
                // The region's other section: the neighbouring frame, the same permissions.
                let mut bus = crate::bus::GuestBus { ram: 0..0 };
                let Ok(o) = mmu::walk(&self.cp15, &mut bus, va ^ SECTION) else {
                    return false;
                };
                if o.size_log2 != 20
                    || o.perms != w.perms
                    || o.global != w.global
                    || o.mem != w.mem
                    || o.pa_page != u64::from(pa ^ SECTION)
                {
                    return false;
                }
            }
            _ => return false,
        }
        let base = pa & !(BLOCK_BYTES - 1);
        let first = base >> 12;
        if PROTECTED.lock().range(first..first + 512).next().is_some() {
            return false;
        }
        let Some(e) = self.l2_entry(i, va, true) else {
            return false;
        };
        // SAFETY: a level-2 entry of one of our tables.
        if unsafe { read_volatile(e) } & 1 != 0 {
            return false; // a level-3 table: the region's pages are filled one by one
        }
        let desc = crate::mmu::guest_block(base.into(), guest_write, w.mem)
            | if guest_write { SW_GUEST_WRITE } else { 0 };
        // SAFETY: as above; the entry was invalid, so no TLB entry needs dropping.
        unsafe {
            write_volatile(e, desc);
            core::arch::asm!("dsb ishst", "isb");
        }
        let va_block = va & !(BLOCK_BYTES - 1);
        self.regions.note_entry(i, region(va), w.global);
        let generation = self.shadows[i].as_ref().expect("live shadow").generation;
        let alias = (i as u8, generation, va_block);
        let list = self.block_aliases.entry(base >> 21).or_default();
        // The same block filled again (after TLB maintenance dropped it): one alias.
        if list.last() != Some(&alias) {
            list.push(alias);
        }
        if w.size_log2 > 21 && w.size_log2 < 32 {
            self.record_in_mapping(va, w.size_log2, va_block);
        }
        self.stats.fills += 1;
        self.stats.block_fills += 1;
        true
    }

    /// Unmaps every block of these shadows over guest physical page `page` (code is
    /// about to be translated from it: it must become read-only, a page of its own).
    pub(super) fn unmap_blocks_of(&mut self, page: u32) {
        let Some(list) = self.block_aliases.remove(&(page >> 9)) else {
            return;
        };
        for (i, generation, va) in list {
            let Some(asid) = self.live_asid(i, generation) else {
                continue;
            };
            let Some(e) = self.l2_entry(i as usize, va, false) else {
                continue;
            };
            // SAFETY: a level-2 entry of one of our tables.
            let d = unsafe { read_volatile(e) };
            if d & 3 != TYPE_BLOCK || (d & OA_MASK) >> 21 != u64::from(page >> 9) {
                continue; // stale: cleared, or another block now
            }
            // SAFETY: as above.
            unsafe { write_volatile(e, 0) };
            tlbi_va_asid(va, asid);
        }
    }
}
