//! The one generic table walker. `map`, `unmap`, `protect`, `translate` and the overlap check
//! are visitors over it, in the style of Linux's `kvm_pgtable_walk`.
//!
//! For each descriptor that overlaps `[start, end)` the walker calls the visitor with
//! [`Visit::Leaf`] (invalid, block or page descriptor) or [`Visit::TablePre`] (table
//! descriptor). If the descriptor is a table after that call — it was one, or the visitor
//! just installed or split into one — the walker descends into it and afterwards calls
//! [`Visit::TablePost`]. The walker itself never changes a descriptor.

use core::sync::atomic::{fence, Ordering};

use crate::desc;
use crate::granule::{Granule, LAST_LEVEL};
use crate::traits::{TableAllocator, TlbMaintenance, PAGE_SIZE};
use crate::{Error, Result};

/// Why the visitor is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Visit {
    /// A non-table descriptor (invalid, block or page).
    Leaf,
    /// A table descriptor, before its children.
    TablePre,
    /// A table descriptor, after its children.
    TablePost,
}

/// One descriptor being visited.
pub(crate) struct Entry {
    ptep: *mut u64,
    /// Current value of the descriptor (kept up to date by [`Entry::write`]).
    pub old: u64,
    /// First IPA translated by this descriptor.
    pub addr: u64,
    /// Lookup level of the descriptor.
    pub level: u32,
    /// Bytes of IPA space this descriptor translates.
    pub size: u64,
}

impl Entry {
    /// Writes the descriptor as one 64-bit single-copy-atomic store.
    pub fn write(&mut self, new: u64) {
        // SAFETY: `ptep` came from `TableAllocator::phys_to_virt` for a live table page and an
        // index below 512 (see `Mm::entry_ptr`); the allocator contract makes it valid and
        // aligned. A volatile store keeps the compiler from tearing or eliding it, since the
        // hardware walker reads it concurrently.
        unsafe { core::ptr::write_volatile(self.ptep, new) };
        self.old = new;
    }

    /// Whether `[addr, addr + size)` lies inside `[start, end)`.
    pub fn covered_by(&self, start: u64, end: u64) -> bool {
        self.addr >= start && self.addr + self.size <= end
    }

    /// Whether the descriptor currently points to a table.
    pub fn is_table(&self) -> bool {
        desc::is_table(self.old, self.level, LAST_LEVEL)
    }
}

/// Memory-management context handed to visitors: allocator, TLB maintenance and the
/// `VTTBR_EL2` value whose TLB entries must be maintained (`None` while the table was never
/// given a VMID, so no TLB can hold its entries).
pub(crate) struct Mm<'a, A: TableAllocator, T: TlbMaintenance> {
    pub alloc: &'a mut A,
    pub tlb: &'a T,
    pub vttbr: Option<u64>,
    pub granule: Granule,
    /// `invalidate_ipa` calls not yet completed by `sync_after_ipa_invalidation`.
    pending_sync: bool,
    /// Descriptors were made valid or changed and must be published.
    pending_publish: bool,
}

impl<'a, A: TableAllocator, T: TlbMaintenance> Mm<'a, A, T> {
    pub fn new(alloc: &'a mut A, tlb: &'a T, vttbr: Option<u64>, granule: Granule) -> Self {
        Self {
            alloc,
            tlb,
            vttbr,
            granule,
            pending_sync: false,
            pending_publish: false,
        }
    }

    /// Pointer to descriptor `idx` of the table (or concatenated tables) at `table_pa`.
    fn entry_ptr(&self, table_pa: u64, idx: usize) -> *mut u64 {
        let per_page = self.granule.entries_per_table();
        let page = table_pa + (idx / per_page) as u64 * PAGE_SIZE;
        // `wrapping_add` keeps this safe; the index is < 512 so it stays inside the page.
        self.alloc.phys_to_virt(page).wrapping_add(idx % per_page)
    }

    fn read(&self, ptep: *mut u64) -> u64 {
        // SAFETY: as in `Entry::write`: `ptep` points into a live table page.
        unsafe { core::ptr::read_volatile(ptep) }
    }

    /// Allocates a zeroed table page.
    pub fn alloc_table(&mut self) -> Result<u64> {
        self.alloc.alloc_pages(1).ok_or(Error::OutOfMemory)
    }

    /// Whether every descriptor of the table page at `table_pa` is invalid.
    pub fn table_is_empty(&self, table_pa: u64) -> bool {
        (0..self.granule.entries_per_table()).all(|i| {
            let d = self.read(self.entry_ptr(table_pa, i));
            !desc::is_valid(d)
        })
    }

    /// Writes descriptor `idx` of the table page at `table_pa` (used to fill a new table
    /// before it is published).
    pub fn write_new(&mut self, table_pa: u64, idx: usize, d: u64) {
        let ptep = self.entry_ptr(table_pa, idx);
        // SAFETY: `ptep` points into a live, still unpublished table page (see `entry_ptr`).
        unsafe { core::ptr::write_volatile(ptep, d) };
    }

    /// Links a freshly filled table at `table_pa` into the invalid descriptor `e`.
    pub fn install_table(&mut self, e: &mut Entry, table_pa: u64) {
        // The zeroed/filled table contents must be observable before the descriptor that
        // points to them (DMB ISH on AArch64).
        fence(Ordering::Release);
        e.write(desc::table(table_pa));
        self.pending_publish = true;
    }

    /// Writes a new valid leaf into an invalid descriptor (the "make" step).
    pub fn make(&mut self, e: &mut Entry, new: u64) {
        e.write(new);
        self.pending_publish = true;
    }

    /// Break step of break-before-make for one descriptor: write invalid, invalidate the IPA
    /// and complete the invalidation so no TLB holds the old entry.
    pub fn break_entry(&mut self, e: &mut Entry) {
        e.write(0);
        if let Some(vttbr) = self.vttbr {
            self.tlb.invalidate_ipa(vttbr, e.addr, e.level);
            self.tlb.sync_after_ipa_invalidation(vttbr);
        }
        self.pending_sync = false;
    }

    /// Invalidates the IPA of `e` (whose descriptor was just changed) without waiting; the
    /// invalidation is completed by `sync` or at the end of the operation.
    pub fn invalidate_deferred(&mut self, e: &Entry) {
        if let Some(vttbr) = self.vttbr {
            self.tlb.invalidate_ipa(vttbr, e.addr, e.level);
            self.pending_sync = true;
        }
    }

    /// Completes deferred invalidations.
    pub fn sync(&mut self) {
        if self.pending_sync {
            if let Some(vttbr) = self.vttbr {
                self.tlb.sync_after_ipa_invalidation(vttbr);
            }
            self.pending_sync = false;
        }
    }

    /// Removes the table descriptor `e` and frees the whole subtree below it. Leaves below
    /// may be live, so all entries of the VMID are invalidated before memory is freed.
    pub fn drop_table(&mut self, e: &mut Entry) {
        let child = desc::addr(e.old);
        let level = e.level + 1;
        e.write(0);
        if let Some(vttbr) = self.vttbr {
            self.tlb.invalidate_vmid(vttbr);
        }
        self.pending_sync = false;
        self.free_subtree(child, level);
    }

    /// Frees the table page at `table_pa` (at `level`) and every table below it. The caller
    /// has made the subtree unreachable and invalidated the TLBs.
    pub fn free_subtree(&mut self, table_pa: u64, level: u32) {
        self.free_children(table_pa, level);
        self.alloc.free_pages(table_pa, 1);
    }

    /// Frees every table below the table page at `table_pa` (at `level`), not the page itself.
    pub fn free_children(&mut self, table_pa: u64, level: u32) {
        if level < LAST_LEVEL {
            for i in 0..self.granule.entries_per_table() {
                let d = self.read(self.entry_ptr(table_pa, i));
                if desc::is_table(d, level, LAST_LEVEL) {
                    self.free_subtree(desc::addr(d), level + 1);
                }
            }
        }
    }

    /// Replaces the valid block `e` by a table of next-level leaves that translate the same
    /// range with the same attributes (break-before-make on `e`).
    pub fn split_block(&mut self, e: &mut Entry) -> Result<()> {
        let table_pa = self.alloc_table()?;
        let child_level = e.level + 1;
        let child_size = self.granule.level_size(child_level);
        let base = desc::addr(e.old);
        let attrs = e.old & desc::leaf_attr_mask();
        for i in 0..self.granule.entries_per_table() {
            let pa = base + i as u64 * child_size;
            let d = desc::leaf(pa, attrs, child_level, LAST_LEVEL);
            self.write_new(table_pa, i, d);
        }
        self.break_entry(e);
        self.install_table(e, table_pa);
        Ok(())
    }

    /// Completes everything still outstanding at the end of an operation.
    pub fn finish(&mut self) {
        self.sync();
        if self.pending_publish {
            self.tlb.publish();
            self.pending_publish = false;
        }
    }
}

/// A walk callback.
pub(crate) trait Visitor<A: TableAllocator, T: TlbMaintenance> {
    /// Called for every descriptor overlapping the walked range.
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()>;
}

/// Walks `[start, end)` of the tables rooted at `root_pa` (`root_entries` descriptors at
/// `start_level`, concatenated tables included). Requires `start < end <= IPA size`.
pub(crate) fn walk<A, T, V>(
    mm: &mut Mm<'_, A, T>,
    root_pa: u64,
    start_level: u32,
    root_entries: usize,
    start: u64,
    end: u64,
    v: &mut V,
) -> Result<()>
where
    A: TableAllocator,
    T: TlbMaintenance,
    V: Visitor<A, T>,
{
    walk_table(mm, v, root_pa, root_entries, start_level, 0, start, end)
}

#[allow(clippy::too_many_arguments)]
fn walk_table<A, T, V>(
    mm: &mut Mm<'_, A, T>,
    v: &mut V,
    table_pa: u64,
    entries: usize,
    level: u32,
    base: u64,
    start: u64,
    end: u64,
) -> Result<()>
where
    A: TableAllocator,
    T: TlbMaintenance,
    V: Visitor<A, T>,
{
    let shift = mm.granule.level_shift(level);
    let size = 1u64 << shift;
    let mut idx = ((start - base) >> shift) as usize;
    while idx < entries {
        let addr = base + ((idx as u64) << shift);
        if addr >= end {
            break;
        }
        let ptep = mm.entry_ptr(table_pa, idx);
        let mut e = Entry {
            ptep,
            old: mm.read(ptep),
            addr,
            level,
            size,
        };
        let kind = if e.is_table() {
            Visit::TablePre
        } else {
            Visit::Leaf
        };
        v.visit(kind, &mut e, mm)?;
        if e.is_table() {
            let child = desc::addr(e.old);
            let per_table = mm.granule.entries_per_table();
            walk_table(
                mm,
                v,
                child,
                per_table,
                level + 1,
                addr,
                start.max(addr),
                end.min(addr + size),
            )?;
            e.old = mm.read(ptep);
            v.visit(Visit::TablePost, &mut e, mm)?;
        }
        idx += 1;
    }
    Ok(())
}
