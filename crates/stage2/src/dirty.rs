//! Dirty logging: which guest pages were written since the last look — the building block for
//! live migration and incremental snapshots.
//!
//! ```text
//! s2.start_dirty_log(ram_ipa, ram_len)?;   // split writable blocks, write-protect pages
//! // guest write -> stage-2 permission fault (WnR = 1) on a logged page:
//! if s2.handle_write_fault(ipa)? { retry_guest() } else { /* not logged: classify as usual */ }
//! let dirty = s2.take_dirty();             // pages written since start / last take;
//!                                          // they are write-protected again on return
//! copy_pages(dirty.iter());                // read contents only AFTER take_dirty returned
//! s2.stop_dirty_log();                     // give write permission back
//! ```
//!
//! How it works. When logging starts, every writable leaf in the range is write-protected
//! and marked with a software bit of the descriptor (bit 55, "writable, write-protected for
//! logging"); read-only mappings stay as they are and are not tracked. A write to a marked
//! page faults; [`Stage2Table::handle_write_fault`] sets the page's bit in the bitmap and
//! gives write permission back, so each page faults at most once per round.
//! [`Stage2Table::take_dirty`] hands out the bitmap, clears it and write-protects exactly the
//! pages it reported. Mappings created or re-protected inside the logged range while logging
//! runs (`map`, `map_replace`, `protect`) are write-protected and marked the same way.
//!
//! Blocks are split. Writable 1 GiB and 2 MiB blocks in the range are split down to 4 KiB
//! pages when logging starts (like KVM without "eager split" tuning), so the bitmap has page
//! granularity and the fault handler never needs to allocate. The price: table pages
//! (about 2 MiB of tables per GiB of guest RAM) and TLB reach — blocks are not merged back by
//! [`Stage2Table::stop_dirty_log`] (a later `map_replace` of the range rebuilds them). The
//! alternative, write-protecting blocks and splitting only the written ones at fault time,
//! uses less memory for sparsely written guests but makes the fault path allocate table pages
//! and break live blocks.
//!
//! TLB maintenance. Write-protecting and giving back write permission are permission-only
//! changes: the descriptor is rewritten in place (no break-before-make) and its IPA is
//! invalidated afterwards (`TLBI IPAS2E1IS`, completed with `DSB; TLBI VMALLE1IS; DSB; ISB`).
//! When more than [`PER_PAGE_TLBI_LIMIT`] pages change in one operation, one
//! `TLBI VMALLS12E1IS` for the VMID replaces the per-page invalidations. Splitting a block is
//! break-before-make, as everywhere in this crate. Giving write permission back is also
//! followed by an invalidation: the faulting CPU may hold the read-only entry in its TLB
//! (entries that caused permission faults may be cached) and would fault again.
//!
//! Only one range is logged at a time (one contiguous RAM region; log the VM's RAM as one
//! range or stop and restart per region).

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use crate::desc::{self, S2_DESC};
use crate::table::Stage2Table;
use crate::traits::{TableAllocator, TlbMaintenance, PAGE_SIZE};
use crate::walker::{Entry, Mm, Visit, Visitor};
use crate::{Error, Result};

/// Above this many changed pages in one operation, one VMID-wide invalidation replaces the
/// per-page `TLBI IPAS2E1IS`.
pub const PER_PAGE_TLBI_LIMIT: usize = 64;

/// `S2AP[1]`: the write permission bit of a leaf.
fn s2ap_write() -> u64 {
    S2_DESC::S2AP::WriteOnly.value
}

/// The software bit marking a writable leaf that is write-protected for dirty logging.
pub(crate) fn sw_logged() -> u64 {
    S2_DESC::SW_LOGGED::SET.value
}

/// A bitmap of dirty 4 KiB pages: bit `i` of the bitmap stands for the page at
/// `base + i * 4 KiB`; bit `i` is bit `i % 64` of word `i / 64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirtyBitmap {
    base: u64,
    pages: u64,
    words: Vec<u64>,
}

impl DirtyBitmap {
    fn new(base: u64, pages: u64) -> Self {
        DirtyBitmap {
            base,
            pages,
            words: vec![0; pages.div_ceil(64) as usize],
        }
    }

    /// IPA of the first page the bitmap covers.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Number of pages covered.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// The raw bitmap words.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Consumes the bitmap, returning its words.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// Whether the page containing `ipa` is dirty (false outside the covered range).
    pub fn is_dirty(&self, ipa: u64) -> bool {
        self.index(ipa)
            .is_some_and(|i| self.words[(i / 64) as usize] & (1 << (i % 64)) != 0)
    }

    /// Number of dirty pages.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Whether no page is dirty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// IPAs of the dirty pages, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(move |(wi, &w)| {
            (0..64u64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| self.base + (wi as u64 * 64 + b) * PAGE_SIZE)
        })
    }

    fn index(&self, ipa: u64) -> Option<u64> {
        let i = ipa.checked_sub(self.base)? / PAGE_SIZE;
        (i < self.pages).then_some(i)
    }

    fn set(&mut self, ipa: u64) {
        if let Some(i) = self.index(ipa) {
            self.words[(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// Maximal runs of dirty pages as `(ipa, len)`.
    fn runs(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for ipa in self.iter() {
            match out.last_mut() {
                Some((s, l)) if *s + *l == ipa => *l += PAGE_SIZE,
                _ => out.push((ipa, PAGE_SIZE)),
            }
        }
        out
    }
}

/// State of an active dirty log.
pub(crate) struct DirtyLog {
    start: u64,
    end: u64,
    bitmap: DirtyBitmap,
}

impl<A: TableAllocator, T: TlbMaintenance> Stage2Table<A, T> {
    /// Starts dirty logging of `[ipa, ipa + len)`: splits writable blocks in the range down to
    /// 4 KiB pages and write-protects every writable page (read-only mappings and holes are
    /// left alone and not tracked). Fails with [`Error::DirtyLogActive`] while another log
    /// runs; on [`Error::OutOfMemory`] (splitting needs table pages) the log is not started
    /// and write permission is restored (blocks split so far stay split).
    pub fn start_dirty_log(&mut self, ipa: u64, len: u64) -> Result<()> {
        if self.dirty.is_some() {
            return Err(Error::DirtyLogActive);
        }
        let Some((start, end)) = self.check_ipa(ipa, len)? else {
            return Ok(());
        };
        self.dirty = Some(DirtyLog {
            start,
            end,
            bitmap: DirtyBitmap::new(start, (end - start) / PAGE_SIZE),
        });
        if let Err(e) = self.write_protect(start, end) {
            self.stop_dirty_log();
            return Err(e);
        }
        Ok(())
    }

    /// The logged range `(ipa, len)`, if logging is active.
    pub fn dirty_log_range(&self) -> Option<(u64, u64)> {
        self.dirty.as_ref().map(|d| (d.start, d.end - d.start))
    }

    /// Whether `ipa` lies in the range being dirty-logged.
    pub fn is_dirty_logged(&self, ipa: u64) -> bool {
        self.dirty
            .as_ref()
            .is_some_and(|d| (d.start..d.end).contains(&ipa))
    }

    /// Handles a stage-2 write permission fault at `ipa`. If the page is dirty-logged (a
    /// writable mapping write-protected for logging), marks it dirty, gives write permission
    /// back (and invalidates the stale TLB entry) and returns `Ok(true)`: resume the guest
    /// at the same instruction. `Ok(false)`: not a logged page — a genuine permission fault
    /// (or no log running); classify it as usual. Also `Ok(true)` when another vCPU already
    /// handled the same page.
    pub fn handle_write_fault(&mut self, ipa: u64) -> Result<bool> {
        if !self.is_dirty_logged(ipa) {
            return Ok(false);
        }
        let page = ipa & !(PAGE_SIZE - 1);
        let mut v = MakeWritable {
            changed: Vec::new(),
        };
        self.run(page, page + PAGE_SIZE, &mut v)?;
        let Some(log) = self.dirty.as_mut() else {
            return Ok(false);
        };
        for &(addr, size) in &v.changed {
            let from = addr.max(log.start);
            let to = (addr + size).min(log.end);
            let mut p = from;
            while p < to {
                log.bitmap.set(p);
                p += PAGE_SIZE;
            }
        }
        Ok(!v.changed.is_empty())
    }

    /// Returns the pages written since logging started or since the previous call, clears
    /// the bitmap and write-protects those pages again before returning (so read their
    /// contents only after this returns). `None` when no log is running.
    pub fn take_dirty(&mut self) -> Option<DirtyBitmap> {
        let log = self.dirty.as_mut()?;
        let fresh = DirtyBitmap::new(log.start, log.bitmap.pages());
        let taken = core::mem::replace(&mut log.bitmap, fresh);
        let runs = taken.runs();
        let mut wp = WriteProtect::default();
        for (ipa, len) in runs {
            // Pages are already split: re-protecting never allocates, so this cannot fail.
            let _ = self.run(ipa, ipa + len, &mut wp);
        }
        self.flush_if_many(&wp);
        Some(taken)
    }

    /// Stops dirty logging: gives write permission back to every page write-protected for
    /// logging and returns the pages dirtied since the last [`Stage2Table::take_dirty`].
    /// Split blocks stay split. `None` when no log was running.
    pub fn stop_dirty_log(&mut self) -> Option<DirtyBitmap> {
        let log = self.dirty.take()?;
        let mut v = Restore::default();
        // Restoring permissions never splits or allocates.
        let _ = self.run(log.start, log.end, &mut v);
        if v.changed > PER_PAGE_TLBI_LIMIT {
            if let Some(vttbr) = self.current_vttbr() {
                self.tlb().invalidate_vmid(vttbr);
            }
        }
        Some(log.bitmap)
    }

    /// Write-protects (and marks) the writable leaves of `[start, end)` ∩ the logged range,
    /// splitting blocks. Called when logging starts and after `map`/`map_replace`/`protect`.
    pub(crate) fn write_protect(&mut self, start: u64, end: u64) -> Result<()> {
        let Some(log) = self.dirty.as_ref() else {
            return Ok(());
        };
        let (s, e) = (start.max(log.start), end.min(log.end));
        if s >= e {
            return Ok(());
        }
        let mut wp = WriteProtect::default();
        let r = self.run(s, e, &mut wp);
        self.flush_if_many(&wp);
        r
    }

    fn flush_if_many(&self, wp: &WriteProtect) {
        if wp.changed > PER_PAGE_TLBI_LIMIT {
            if let Some(vttbr) = self.current_vttbr() {
                self.tlb().invalidate_vmid(vttbr);
            }
        }
    }
}

/// Splits writable blocks and write-protects writable pages, marking them logged.
#[derive(Default)]
struct WriteProtect {
    changed: usize,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for WriteProtect {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        if kind != Visit::Leaf || !desc::is_valid(e.old) || e.old & s2ap_write() == 0 {
            return Ok(());
        }
        if e.level < crate::granule::LAST_LEVEL {
            // The walker descends into the new table and visits its leaves.
            return mm.split_block(e);
        }
        e.write((e.old & !s2ap_write()) | sw_logged());
        self.changed += 1;
        if self.changed <= PER_PAGE_TLBI_LIMIT {
            mm.invalidate_deferred(e);
        }
        Ok(())
    }
}

/// Gives write permission back to the logged leaf of one page.
struct MakeWritable {
    /// `(addr, size)` of the leaves found logged.
    changed: Vec<(u64, u64)>,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for MakeWritable {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        if kind != Visit::Leaf || !desc::is_valid(e.old) || e.old & sw_logged() == 0 {
            return Ok(());
        }
        if e.old & s2ap_write() == 0 {
            e.write(e.old | s2ap_write());
        }
        // Also when another vCPU already made it writable: this CPU's TLB may hold the
        // read-only entry that faulted.
        mm.invalidate_deferred(e);
        self.changed.push((e.addr, e.size));
        Ok(())
    }
}

/// Gives write permission back to every logged leaf and clears the mark.
#[derive(Default)]
struct Restore {
    changed: usize,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for Restore {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        if kind != Visit::Leaf || !desc::is_valid(e.old) || e.old & sw_logged() == 0 {
            return Ok(());
        }
        let was_ro = e.old & s2ap_write() == 0;
        e.write((e.old | s2ap_write()) & !sw_logged());
        if was_ro {
            self.changed += 1;
            if self.changed <= PER_PAGE_TLBI_LIMIT {
                mm.invalidate_deferred(e);
            }
        }
        Ok(())
    }
}
