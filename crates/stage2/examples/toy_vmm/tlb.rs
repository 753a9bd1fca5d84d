//! A simulated stage-2 TLB and the `TlbMaintenance` that keeps it coherent.
//!
//! The toy MMU caches every leaf it walks (also ones that then fault: the architecture allows
//! caching entries that caused permission faults). If the table code forgot an invalidation,
//! the MMU would keep using a stale entry: a write would slip past dirty logging or hit an
//! unmapped page, and the example's checks would catch it.

use std::cell::{Cell, RefCell};

use stage2::{vttbr_vmid, TlbMaintenance};

/// One cached leaf: a VMID's translation of `[ipa, ipa + size)`.
#[derive(Debug, Clone, Copy)]
pub struct TlbEntry {
    /// VMID the entry belongs to.
    pub vmid: u16,
    /// First IPA the leaf translates.
    pub ipa: u64,
    /// Bytes the leaf translates (4 KiB page, 2 MiB or 1 GiB block).
    pub size: u64,
    /// The leaf descriptor as the walker read it.
    pub desc: u64,
}

impl TlbEntry {
    fn covers(&self, vmid: u16, ipa: u64) -> bool {
        self.vmid == vmid && (self.ipa..self.ipa + self.size).contains(&ipa)
    }
}

/// How often each maintenance operation was requested.
#[derive(Debug, Default, Clone, Copy)]
pub struct TlbCounts {
    /// `DSB ISHST` after publishing descriptors.
    pub publish: u64,
    /// `TLBI IPAS2E1IS`.
    pub ipa: u64,
    /// `DSB ISH; TLBI VMALLE1IS; DSB ISH; ISB`.
    pub sync: u64,
    /// `TLBI VMALLS12E1IS`.
    pub vmid: u64,
    /// `TLBI ALLE1IS`.
    pub all: u64,
}

/// The toy CPU's stage-2 TLB.
#[derive(Default)]
pub struct ToyTlb {
    entries: RefCell<Vec<TlbEntry>>,
    counts: Cell<TlbCounts>,
}

impl ToyTlb {
    /// The cached leaf translating `ipa` for `vmid`, if any.
    pub fn lookup(&self, vmid: u16, ipa: u64) -> Option<TlbEntry> {
        self.entries
            .borrow()
            .iter()
            .find(|e| e.covers(vmid, ipa))
            .copied()
    }

    /// Caches a leaf the MMU walked.
    pub fn fill(&self, entry: TlbEntry) {
        self.entries.borrow_mut().push(entry);
    }

    /// Entries currently cached.
    pub fn len(&self) -> usize {
        self.entries.borrow().len()
    }

    /// Maintenance operations so far.
    pub fn counts(&self) -> TlbCounts {
        self.counts.get()
    }

    fn count(&self, bump: impl FnOnce(&mut TlbCounts)) {
        let mut c = self.counts.get();
        bump(&mut c);
        self.counts.set(c);
    }

    fn drop_where(&self, pred: impl Fn(&TlbEntry) -> bool) {
        self.entries.borrow_mut().retain(|e| !pred(e));
    }
}

impl TlbMaintenance for ToyTlb {
    fn publish(&self) {
        self.count(|c| c.publish += 1);
    }

    fn invalidate_ipa(&self, vttbr: u64, ipa: u64, _level: u32) {
        self.count(|c| c.ipa += 1);
        let vmid = vttbr_vmid(vttbr);
        self.drop_where(|e| e.covers(vmid, ipa));
    }

    fn sync_after_ipa_invalidation(&self, _vttbr: u64) {
        // The toy caches no combined stage-1+2 entries: nothing more to drop.
        self.count(|c| c.sync += 1);
    }

    fn invalidate_vmid(&self, vttbr: u64) {
        self.count(|c| c.vmid += 1);
        let vmid = vttbr_vmid(vttbr);
        self.drop_where(|e| e.vmid == vmid);
    }

    fn invalidate_all(&self) {
        self.count(|c| c.all += 1);
        self.drop_where(|_| true);
    }
}
