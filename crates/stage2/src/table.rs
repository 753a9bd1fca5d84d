//! [`Stage2Table`]: one VM's stage-2 translation tables and the public mapping API.

use core::sync::atomic::{AtomicU64, Ordering};

use aarch64_cpu::registers::VTTBR_EL2;

use crate::attrs::S2Attrs;
use crate::config::Stage2Config;
use crate::dirty::DirtyLog;
use crate::traits::{TableAllocator, TlbMaintenance, PAGE_SIZE};
use crate::visitors::{CheckUnmapped, Lookup, MapVisitor, ProtectVisitor, UnmapVisitor};
use crate::walker::{walk, Mm, Visitor};
use crate::{Error, Result};

/// A TLB "maintenance" that does nothing, for hosts without a stage-2 TLB (host builds,
/// tests that do not look at TLB maintenance).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTlb;

impl TlbMaintenance for NoTlb {
    fn publish(&self) {}
    fn invalidate_ipa(&self, _vttbr: u64, _ipa: u64, _level: u32) {}
    fn sync_after_ipa_invalidation(&self, _vttbr: u64) {}
    fn invalidate_vmid(&self, _vttbr: u64) {}
    fn invalidate_all(&self) {}
}

/// The TLB maintenance [`Stage2Table::new`] uses: the real `TLBI` instructions
/// ([`crate::hw::HwTlb`]) on bare-metal AArch64, [`NoTlb`] elsewhere.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub type DefaultTlb = crate::hw::HwTlb;
/// The TLB maintenance [`Stage2Table::new`] uses: the real `TLBI` instructions on bare-metal
/// AArch64, [`NoTlb`] elsewhere.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub type DefaultTlb = NoTlb;

/// A leaf found by [`Stage2Table::lookup`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// Physical address the looked-up IPA translates to.
    pub pa: u64,
    /// Attributes of the leaf.
    pub attrs: S2Attrs,
    /// Lookup level of the leaf: 3 = 4 KiB page, 2 = 2 MiB block, 1 = 1 GiB block.
    pub level: u32,
    /// Bytes translated by the leaf.
    pub size: u64,
}

/// Sentinel in `Stage2Table::vttbr`: no VMID handed out yet (never a valid value: CnP = 1).
const NO_VTTBR: u64 = u64::MAX;

/// One VM's stage-2 translation tables.
///
/// Mutations keep the tables valid for a concurrently running guest: live blocks are split
/// and leaves replaced with break-before-make, and TLB maintenance is issued for the VMID last
/// passed to [`Stage2Table::vttbr`] (none before that: no TLB can hold the entries yet).
///
/// Dropping the table invalidates that VMID and frees every table page; it must no longer be
/// installed in any CPU's `VTTBR_EL2`.
pub struct Stage2Table<A: TableAllocator, T: TlbMaintenance = DefaultTlb> {
    cfg: Stage2Config,
    alloc: A,
    tlb: T,
    root: u64,
    vttbr: AtomicU64,
    /// The active dirty log, if any (see [`crate::dirty`]).
    pub(crate) dirty: Option<DirtyLog>,
}

impl<A: TableAllocator> Stage2Table<A, DefaultTlb> {
    /// Creates empty tables (allocating the root, concatenated if the config says so) with
    /// the default TLB maintenance.
    pub fn new(cfg: Stage2Config, alloc: A) -> Result<Self> {
        Self::with_tlb(cfg, alloc, DefaultTlb::default())
    }
}

impl<A: TableAllocator, T: TlbMaintenance> Stage2Table<A, T> {
    /// Creates empty tables with the given TLB maintenance.
    pub fn with_tlb(cfg: Stage2Config, mut alloc: A, tlb: T) -> Result<Self> {
        let root = alloc
            .alloc_pages(cfg.root_tables() as usize)
            .ok_or(Error::OutOfMemory)?;
        Ok(Self {
            cfg,
            alloc,
            tlb,
            root,
            vttbr: AtomicU64::new(NO_VTTBR),
            dirty: None,
        })
    }

    /// The configuration the tables were built for.
    pub fn config(&self) -> &Stage2Config {
        &self.cfg
    }

    /// Physical address of the root table (first of the concatenated tables).
    pub fn root_pa(&self) -> u64 {
        self.root
    }

    /// The table allocator.
    pub fn allocator(&self) -> &A {
        &self.alloc
    }

    /// The TLB maintenance implementation.
    pub fn tlb(&self) -> &T {
        &self.tlb
    }

    /// The `VTTBR_EL2` value for running this VM with `vmid`: `VTTBR_EL2.BADDR` = root,
    /// `VTTBR_EL2.VMID` = `vmid` (only the low 8 bits with 8-bit VMIDs), CnP = 0.
    ///
    /// Also records `vmid` as the VMID whose TLB entries later changes invalidate; call it
    /// whenever the VM's VMID may have changed (on every vCPU load).
    pub fn vttbr(&self, vmid: u16) -> u64 {
        let vmid = if self.cfg.vmid_bits() == 8 {
            vmid & 0xff
        } else {
            vmid
        };
        let v = (VTTBR_EL2::VMID.val(u64::from(vmid)) + VTTBR_EL2::BADDR.val(self.root >> 1)).value;
        self.vttbr.store(v, Ordering::Relaxed);
        v
    }

    /// The value last returned by [`Stage2Table::vttbr`], if any.
    pub fn current_vttbr(&self) -> Option<u64> {
        match self.vttbr.load(Ordering::Relaxed) {
            NO_VTTBR => None,
            v => Some(v),
        }
    }

    /// The VMID last passed to [`Stage2Table::vttbr`].
    pub fn vmid(&self) -> Option<u16> {
        self.current_vttbr().map(crate::traits::vttbr_vmid)
    }

    /// Maps `[ipa, ipa + len)` to `[pa, pa + len)` with `attrs`, using 1 GiB and 2 MiB blocks
    /// where IPA and PA alignment allow. Fails with [`Error::AlreadyMapped`], changing
    /// nothing, if any page of the range is mapped; on [`Error::OutOfMemory`] the partial
    /// mapping is rolled back. `len == 0` does nothing.
    pub fn map(&mut self, ipa: u64, pa: u64, len: u64, attrs: S2Attrs) -> Result<()> {
        let Some((start, end)) = self.check_map(ipa, pa, len, attrs)? else {
            return Ok(());
        };
        self.run(start, end, &mut CheckUnmapped)?;
        let mut v = MapVisitor {
            start,
            end,
            pa_start: pa,
            attr_bits: attrs.descriptor_bits(),
        };
        let r = self.run(start, end, &mut v);
        if r.is_err() {
            // The range held nothing before, so undoing cannot split blocks or allocate.
            let _ = self.run(start, end, &mut UnmapVisitor { start, end });
            return r;
        }
        self.write_protect(start, end)
    }

    /// Like [`Stage2Table::map`], but replaces whatever the range mapped before (splitting
    /// blocks at the edges and merging tables into blocks inside, with break-before-make).
    /// On [`Error::OutOfMemory`] part of the range may already be remapped.
    pub fn map_replace(&mut self, ipa: u64, pa: u64, len: u64, attrs: S2Attrs) -> Result<()> {
        let Some((start, end)) = self.check_map(ipa, pa, len, attrs)? else {
            return Ok(());
        };
        let mut v = MapVisitor {
            start,
            end,
            pa_start: pa,
            attr_bits: attrs.descriptor_bits(),
        };
        self.run(start, end, &mut v)?;
        self.write_protect(start, end)
    }

    /// Unmaps `[ipa, ipa + len)` (holes are fine), splitting blocks that straddle the edges
    /// and freeing tables that became empty. Fails only on bad input or when splitting a
    /// block needs a table page the allocator cannot supply (then part of the range may
    /// already be unmapped).
    pub fn unmap(&mut self, ipa: u64, len: u64) -> Result<()> {
        let Some((start, end)) = self.check_ipa(ipa, len)? else {
            return Ok(());
        };
        self.run(start, end, &mut UnmapVisitor { start, end })
    }

    /// Sets the attributes of every mapped page in `[ipa, ipa + len)` to `attrs`, keeping
    /// output addresses; unmapped holes stay unmapped. Blocks straddling the edges are split.
    pub fn protect(&mut self, ipa: u64, len: u64, attrs: S2Attrs) -> Result<()> {
        if !attrs.is_valid() {
            return Err(Error::InvalidAttrs);
        }
        let Some((start, end)) = self.check_ipa(ipa, len)? else {
            return Ok(());
        };
        let mut v = ProtectVisitor {
            start,
            end,
            attr_bits: attrs.descriptor_bits(),
        };
        self.run(start, end, &mut v)?;
        self.write_protect(start, end)
    }

    /// The physical address and attributes `ipa` translates to, if mapped.
    pub fn translate(&self, ipa: u64) -> Option<(u64, S2Attrs)> {
        self.lookup(ipa).map(|m| (m.pa, m.attrs))
    }

    /// The leaf translating `ipa` (with its level and size), if mapped.
    pub fn lookup(&self, ipa: u64) -> Option<Mapping> {
        if ipa >= self.cfg.ipa_size() {
            return None;
        }
        let start = ipa & !(PAGE_SIZE - 1);
        let mut v = Lookup { ipa, found: None };
        // Lookup never writes or allocates, but the walker wants the allocator mutably;
        // walk with a throw-away reference to a read-only view.
        let mut ro = ReadOnly(&self.alloc);
        let mut mm = Mm::new(&mut ro, &NoTlb, None, self.cfg.granule());
        let _ = walk(
            &mut mm,
            self.root,
            self.cfg.start_level(),
            self.root_entries(),
            start,
            start + PAGE_SIZE,
            &mut v,
        );
        v.found
    }

    fn root_entries(&self) -> usize {
        self.cfg.granule().entries_per_table() * self.cfg.root_tables() as usize
    }

    pub(crate) fn run<V: Visitor<A, T>>(&mut self, start: u64, end: u64, v: &mut V) -> Result<()> {
        let vttbr = self.current_vttbr();
        let (root, level, entries) = (self.root, self.cfg.start_level(), self.root_entries());
        let mut mm = Mm::new(&mut self.alloc, &self.tlb, vttbr, self.cfg.granule());
        let r = walk(&mut mm, root, level, entries, start, end, v);
        mm.finish();
        r
    }

    /// Validates an IPA range; `None` for an empty one.
    pub(crate) fn check_ipa(&self, ipa: u64, len: u64) -> Result<Option<(u64, u64)>> {
        if !ipa.is_multiple_of(PAGE_SIZE) || !len.is_multiple_of(PAGE_SIZE) {
            return Err(Error::Misaligned);
        }
        if len == 0 {
            return Ok(None);
        }
        let end = ipa.checked_add(len).ok_or(Error::OutOfIpaRange)?;
        if end > self.cfg.ipa_size() {
            return Err(Error::OutOfIpaRange);
        }
        Ok(Some((ipa, end)))
    }

    fn check_map(&self, ipa: u64, pa: u64, len: u64, attrs: S2Attrs) -> Result<Option<(u64, u64)>> {
        if !pa.is_multiple_of(PAGE_SIZE) {
            return Err(Error::Misaligned);
        }
        let range = self.check_ipa(ipa, len)?;
        let pa_end = pa.checked_add(len).ok_or(Error::OutOfPaRange)?;
        if pa_end > 1u64 << self.cfg.pa_bits() {
            return Err(Error::OutOfPaRange);
        }
        if !attrs.is_valid() {
            return Err(Error::InvalidAttrs);
        }
        Ok(range)
    }
}

impl<A: TableAllocator, T: TlbMaintenance> Drop for Stage2Table<A, T> {
    fn drop(&mut self) {
        if let Some(vttbr) = self.current_vttbr() {
            self.tlb.invalidate_vmid(vttbr);
        }
        let g = self.cfg.granule();
        let level = self.cfg.start_level();
        let mut mm = Mm::new(&mut self.alloc, &self.tlb, None, g);
        for i in 0..self.cfg.root_tables() as u64 {
            mm.free_children(self.root + i * PAGE_SIZE, level);
        }
        self.alloc
            .free_pages(self.root, self.cfg.root_tables() as usize);
    }
}

/// Read-only view of an allocator for lookups: never allocates or frees.
struct ReadOnly<'a, A: TableAllocator>(&'a A);

// SAFETY: forwards `phys_to_virt` to `A`, which upholds the contract; never hands out pages.
unsafe impl<A: TableAllocator> TableAllocator for ReadOnly<'_, A> {
    fn alloc_pages(&mut self, _count: usize) -> Option<u64> {
        None
    }
    fn free_pages(&mut self, _pa: u64, _count: usize) {}
    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        self.0.phys_to_virt(pa)
    }
}
