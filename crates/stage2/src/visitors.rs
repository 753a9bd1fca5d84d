//! The operations of [`crate::Stage2Table`] as visitors of the generic walker.

use crate::attrs::S2Attrs;
use crate::desc::{self, S2_DESC};
use crate::granule::LAST_LEVEL;
use crate::table::Mapping;
use crate::traits::{TableAllocator, TlbMaintenance};
use crate::walker::{Entry, Mm, Visit, Visitor};
use crate::{Error, Result};

/// Fails with [`Error::AlreadyMapped`] on the first valid leaf in the range.
pub(crate) struct CheckUnmapped;

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for CheckUnmapped {
    fn visit(&mut self, kind: Visit, e: &mut Entry, _: &mut Mm<'_, A, T>) -> Result<()> {
        if kind == Visit::Leaf && desc::is_valid(e.old) {
            return Err(Error::AlreadyMapped);
        }
        Ok(())
    }
}

/// Finds the leaf translating one IPA.
pub(crate) struct Lookup {
    pub ipa: u64,
    pub found: Option<Mapping>,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for Lookup {
    fn visit(&mut self, kind: Visit, e: &mut Entry, _: &mut Mm<'_, A, T>) -> Result<()> {
        if kind == Visit::Leaf && desc::is_valid(e.old) {
            // A page write-protected for dirty logging is writable as far as the VM is
            // concerned: report the intended permission.
            let d = if e.old & crate::dirty::sw_logged() != 0 {
                e.old | S2_DESC::S2AP::WriteOnly.value
            } else {
                e.old
            };
            if let Some(attrs) = S2Attrs::from_descriptor(d) {
                self.found = Some(Mapping {
                    pa: desc::addr(d) + (self.ipa - e.addr),
                    attrs,
                    level: e.level,
                    size: e.size,
                });
            }
        }
        Ok(())
    }
}

/// Maps `[start, end)` to `pa_start..`, with the largest leaves alignment allows.
pub(crate) struct MapVisitor {
    pub start: u64,
    pub end: u64,
    pub pa_start: u64,
    pub attr_bits: u64,
}

impl MapVisitor {
    fn pa_for(&self, ipa: u64) -> u64 {
        self.pa_start + (ipa - self.start)
    }

    /// Whether `e` can become one leaf of this mapping.
    fn fits_leaf<A: TableAllocator, T: TlbMaintenance>(
        &self,
        e: &Entry,
        mm: &Mm<'_, A, T>,
    ) -> bool {
        mm.granule.leaf_allowed(e.level)
            && e.covered_by(self.start, self.end)
            && self.pa_for(e.addr).is_multiple_of(e.size)
    }

    fn new_leaf(&self, e: &Entry) -> u64 {
        desc::leaf(self.pa_for(e.addr), self.attr_bits, e.level, LAST_LEVEL)
    }
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for MapVisitor {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        match kind {
            Visit::TablePost => Ok(()),
            Visit::TablePre => {
                // A whole table's range becomes one block: drop the table (merge).
                if self.fits_leaf(e, mm) {
                    mm.drop_table(e);
                    let new = self.new_leaf(e);
                    mm.make(e, new);
                }
                Ok(())
            }
            Visit::Leaf => {
                if self.fits_leaf(e, mm) {
                    let new = self.new_leaf(e);
                    if e.old != new {
                        if desc::is_valid(e.old) {
                            mm.break_entry(e);
                        }
                        mm.make(e, new);
                    }
                    Ok(())
                } else if desc::is_valid(e.old) {
                    // Part of a live block changes: split it, then the walker descends.
                    mm.split_block(e)
                } else {
                    let table = mm.alloc_table()?;
                    mm.install_table(e, table);
                    Ok(())
                }
            }
        }
    }
}

/// Removes every mapping in `[start, end)` and frees tables that became empty.
pub(crate) struct UnmapVisitor {
    pub start: u64,
    pub end: u64,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for UnmapVisitor {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        match kind {
            Visit::TablePre => {
                if e.covered_by(self.start, self.end) {
                    mm.drop_table(e);
                }
                Ok(())
            }
            Visit::TablePost => {
                let child = desc::addr(e.old);
                if mm.table_is_empty(child) {
                    e.write(0);
                    mm.invalidate_deferred(e);
                    // Walkers may still hold the table until the invalidation completes.
                    mm.sync();
                    mm.alloc.free_pages(child, 1);
                }
                Ok(())
            }
            Visit::Leaf => {
                if !desc::is_valid(e.old) {
                    Ok(())
                } else if e.covered_by(self.start, self.end) {
                    e.write(0);
                    mm.invalidate_deferred(e);
                    Ok(())
                } else {
                    mm.split_block(e)
                }
            }
        }
    }
}

/// Changes the attributes of every mapping in `[start, end)`; holes are skipped.
pub(crate) struct ProtectVisitor {
    pub start: u64,
    pub end: u64,
    pub attr_bits: u64,
}

impl<A: TableAllocator, T: TlbMaintenance> Visitor<A, T> for ProtectVisitor {
    fn visit(&mut self, kind: Visit, e: &mut Entry, mm: &mut Mm<'_, A, T>) -> Result<()> {
        if kind != Visit::Leaf || !desc::is_valid(e.old) {
            return Ok(());
        }
        if !e.covered_by(self.start, self.end) {
            return mm.split_block(e);
        }
        // New attributes also end a dirty-logging write protection; the table re-protects
        // the range afterwards if it is still logged.
        let new = (e.old & !(desc::leaf_attr_mask() | crate::dirty::sw_logged())) | self.attr_bits;
        if new == e.old {
            return Ok(());
        }
        let memattr = S2_DESC::MEMATTR.mask << S2_DESC::MEMATTR.shift;
        if (new ^ e.old) & memattr != 0 {
            // A memory-type change needs break-before-make.
            mm.break_entry(e);
            mm.make(e, new);
        } else {
            // Permission-only changes may be written in place, then invalidated.
            e.write(new);
            mm.invalidate_deferred(e);
        }
        Ok(())
    }
}
