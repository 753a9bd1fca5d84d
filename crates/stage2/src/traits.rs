//! What the crate needs from its host: table memory and TLB maintenance.

/// Size of one translation table page (4 KiB granule).
pub const PAGE_SIZE: u64 = 4096;

/// Supplies memory for translation tables.
///
/// Physical addresses are what the hardware table walker sees; [`TableAllocator::phys_to_virt`]
/// gives the hypervisor's pointer to the same memory. Host tests back this with heap pages.
///
/// # Safety
///
/// The table code reads and writes through the pointers this trait returns. An implementation
/// must guarantee that [`TableAllocator::alloc_pages`] returns pages nobody else uses, and that
/// [`TableAllocator::phys_to_virt`] of an allocated page returns a pointer, aligned to 8 bytes,
/// valid for reads and writes of the 512 descriptors of that 4 KiB page until it is freed.
pub unsafe trait TableAllocator {
    /// Allocates `count` physically contiguous, zeroed table pages (4 KiB each), aligned to
    /// `count * 4 KiB`, and returns the physical address of the first. `count` is 1 except
    /// for a concatenated root table (2, 4, 8 or 16). `None` when exhausted.
    fn alloc_pages(&mut self, count: usize) -> Option<u64>;

    /// Returns `count` pages starting at `pa`, previously obtained from
    /// [`TableAllocator::alloc_pages`] with the same `count`.
    fn free_pages(&mut self, pa: u64, count: usize);

    /// Pointer through which the hypervisor reads and writes the 4 KiB table page at `pa`
    /// (512 64-bit descriptors). Pages of a concatenated root are looked up one by one, so
    /// they need not be contiguous in the hypervisor's address space.
    fn phys_to_virt(&self, pa: u64) -> *mut u64;
}

/// Stage-2 TLB maintenance, in the broadcast (inner shareable) form.
///
/// Implementations issue the barriers the architecture requires; the table code calls these
/// in break-before-make order: it writes an invalid descriptor, calls
/// [`TlbMaintenance::invalidate_ipa`] for each broken entry, then
/// [`TlbMaintenance::sync_after_ipa_invalidation`] before writing any new valid descriptor or
/// freeing memory.
pub trait TlbMaintenance {
    /// Makes descriptor writes visible to table walkers (`DSB ISHST`). Called after a new
    /// mapping or table is published.
    fn publish(&self);

    /// Invalidates stage-2 TLB and walk-cache entries for the IPA `ipa`:
    /// `DSB ISHST; TLBI IPAS2E1IS, ipa >> 12`. `level` is the lookup level of the broken
    /// descriptor (a hint, e.g. for FEAT_TTL). Completed by
    /// [`TlbMaintenance::sync_after_ipa_invalidation`].
    ///
    /// `vttbr` is the `VTTBR_EL2` value the guest runs with (VMID in bits 63:48, see
    /// [`vttbr_vmid`]): `TLBI` acts on the VMID in the current `VTTBR_EL2`, so hardware
    /// implementations load exactly this value around the `TLBI`.
    fn invalidate_ipa(&self, vttbr: u64, ipa: u64, level: u32);

    /// Completes preceding [`TlbMaintenance::invalidate_ipa`] calls and removes combined
    /// stage-1+2 entries of the VMID: `DSB ISH; TLBI VMALLE1IS; DSB ISH; ISB`.
    fn sync_after_ipa_invalidation(&self, vttbr: u64);

    /// Invalidates all stage-1 and stage-2 entries of the VMID in `vttbr`:
    /// `DSB ISHST; TLBI VMALLS12E1IS; DSB ISH; ISB`.
    fn invalidate_vmid(&self, vttbr: u64);

    /// Invalidates all EL1&0 entries of every VMID, on every CPU: `DSB ISHST; TLBI ALLE1IS;
    /// DSB ISH; ISB` (VMID generation rollover).
    fn invalidate_all(&self);
}

/// The VMID field (`VTTBR_EL2.VMID`, bits 63:48) of a `VTTBR_EL2` value.
pub fn vttbr_vmid(vttbr: u64) -> u16 {
    aarch64_cpu::registers::VTTBR_EL2::VMID.read(vttbr) as u16
}

impl<T: TlbMaintenance + ?Sized> TlbMaintenance for &T {
    fn publish(&self) {
        (**self).publish()
    }
    fn invalidate_ipa(&self, vttbr: u64, ipa: u64, level: u32) {
        (**self).invalidate_ipa(vttbr, ipa, level)
    }
    fn sync_after_ipa_invalidation(&self, vttbr: u64) {
        (**self).sync_after_ipa_invalidation(vttbr)
    }
    fn invalidate_vmid(&self, vttbr: u64) {
        (**self).invalidate_vmid(vttbr)
    }
    fn invalidate_all(&self) {
        (**self).invalidate_all()
    }
}

// SAFETY: forwards to `A`, which upholds the contract.
unsafe impl<A: TableAllocator + ?Sized> TableAllocator for &mut A {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        (**self).alloc_pages(count)
    }
    fn free_pages(&mut self, pa: u64, count: usize) {
        (**self).free_pages(pa, count)
    }
    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        (**self).phys_to_virt(pa)
    }
}
