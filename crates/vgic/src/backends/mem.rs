//! An in-memory virtual CPU interface for host tests, with a tiny guest simulator
//! (acknowledge / EOI) and access counters.

use core::cell::Cell;

use crate::lr::{v3, ListRegisters, LrEntry, LrState, VcpuIfState, MAX_LRS};

/// List registers in memory. `ELRSR`, `EISR` and `MISR` are computed from the contents like
/// the hardware does.
#[derive(Debug, Clone)]
pub struct MemLrs {
    /// The list registers.
    pub lrs: [LrEntry; MAX_LRS],
    n: usize,
    /// `HCR.En`.
    pub enabled: bool,
    /// `HCR.UIE`.
    pub uie: bool,
    /// `HCR.NPIE`.
    pub npie: bool,
    /// `VMCR` (raw, in the layout of the GIC version under test).
    pub vmcr: u64,
    /// Group-1 active priorities.
    pub apr: [u32; 4],
    /// Group-0 active priorities.
    pub ap0r: [u32; 4],
    lr_reads: Cell<u64>,
    lr_writes: u64,
    other: Cell<u64>,
}

impl MemLrs {
    /// `n` list registers (at most [`MAX_LRS`]), all empty.
    pub fn new(n: usize) -> Self {
        Self {
            lrs: [LrEntry::EMPTY; MAX_LRS],
            n: n.min(MAX_LRS),
            enabled: false,
            uie: false,
            npie: false,
            vmcr: 0,
            apr: [0; 4],
            ap0r: [0; 4],
            lr_reads: Cell::new(0),
            lr_writes: 0,
            other: Cell::new(0),
        }
    }

    /// List-register reads so far.
    pub fn lr_reads(&self) -> u64 {
        self.lr_reads.get()
    }
    /// List-register writes so far.
    pub fn lr_writes(&self) -> u64 {
        self.lr_writes
    }
    /// All register accesses so far (LRs, ELRSR, EISR, MISR, HCR, VMCR, APRs).
    pub fn accesses(&self) -> u64 {
        self.lr_reads.get() + self.lr_writes + self.other.get()
    }
    /// Resets the counters.
    pub fn reset_counters(&mut self) {
        self.lr_reads.set(0);
        self.lr_writes = 0;
        self.other.set(0);
    }

    fn running_priority(&self) -> u16 {
        self.lrs[..self.n]
            .iter()
            .filter(|e| e.state.is_active())
            .map(|e| u16::from(e.priority))
            .min()
            .unwrap_or(0x100)
    }

    /// Simulates the guest acknowledging the highest-priority pending interrupt (reading
    /// `GICC_IAR`/`ICC_IAR1_EL1`): it becomes active. Priorities must beat the running
    /// priority (the best active entry); `VMCR` is not consulted. Returns the INTID.
    pub fn guest_ack(&mut self) -> Option<u32> {
        let rp = self.running_priority();
        let i = (0..self.n)
            .filter(|i| self.lrs[*i].state == LrState::Pending)
            .filter(|i| u16::from(self.lrs[*i].priority) < rp)
            .min_by_key(|i| (self.lrs[*i].priority, *i))?;
        self.lrs[i].state = LrState::Active;
        Some(self.lrs[i].vintid)
    }

    /// Simulates the guest's EOI + deactivation of `vintid`: the active entry loses its active
    /// state. Returns false if no list register holds it active.
    pub fn guest_eoi(&mut self, vintid: u32) -> bool {
        let Some(i) = (0..self.n).find(|i| {
            let e = &self.lrs[*i];
            e.vintid == vintid && e.state.is_active()
        }) else {
            return false;
        };
        let e = &mut self.lrs[i];
        e.state = LrState::from_bits(e.state.is_pending(), false);
        true
    }

    /// The list registers holding a valid state.
    pub fn valid(&self) -> impl Iterator<Item = &LrEntry> + '_ {
        self.lrs[..self.n]
            .iter()
            .filter(|e| e.state != LrState::Invalid)
    }

    fn emask(&self) -> u64 {
        (0..self.n)
            .filter(|i| {
                let e = &self.lrs[*i];
                e.state == LrState::Invalid && (e.pintid.is_some() || !e.eoi_maint)
            })
            .fold(0, |m, i| m | 1 << i)
    }

    fn eisr(&self) -> u64 {
        (0..self.n)
            .filter(|i| {
                let e = &self.lrs[*i];
                e.state == LrState::Invalid && e.pintid.is_none() && e.eoi_maint
            })
            .fold(0, |m, i| m | 1 << i)
    }
}

impl ListRegisters for MemLrs {
    fn num_lrs(&self) -> usize {
        self.n
    }
    fn read_lr(&self, i: usize) -> LrEntry {
        self.lr_reads.set(self.lr_reads.get() + 1);
        self.lrs.get(i).copied().unwrap_or(LrEntry::EMPTY)
    }
    fn write_lr(&mut self, i: usize, e: LrEntry) {
        self.lr_writes += 1;
        if let Some(l) = self.lrs.get_mut(i) {
            *l = e;
        }
    }
    fn empty_mask(&self) -> u64 {
        self.other.set(self.other.get() + 1);
        self.emask()
    }
    fn eoi_mask(&self) -> u64 {
        self.other.set(self.other.get() + 1);
        self.eisr()
    }
    fn set_maintenance(&mut self, underflow: bool, no_pending: bool) {
        self.other.set(self.other.get() + 1);
        self.uie = underflow;
        self.npie = no_pending;
    }
    fn misr(&self) -> u32 {
        self.other.set(self.other.get() + 1);
        let valid = self.valid().count();
        let pending = self.valid().any(|e| e.state.is_pending());
        u32::from(self.eisr() != 0)
            | u32::from(self.uie && valid <= 1) << 1
            | u32::from(self.npie && !pending) << 3
    }
    fn set_enabled(&mut self, en: bool) {
        self.other.set(self.other.get() + 1);
        self.enabled = en;
    }
    fn read_vmcr(&self) -> u64 {
        self.other.set(self.other.get() + 1);
        self.vmcr
    }
    fn save(&mut self, st: &mut VcpuIfState) {
        self.other.set(self.other.get() + 3);
        st.vmcr = self.vmcr;
        st.apr = self.apr;
        st.ap0r = self.ap0r;
        let n = st.used_lrs.min(self.n);
        for i in 0..n {
            st.lrs[i] = v3::encode(&self.read_lr(i));
        }
    }
    fn restore(&mut self, st: &VcpuIfState) {
        self.other.set(self.other.get() + 3);
        self.vmcr = st.vmcr;
        self.apr = st.apr;
        self.ap0r = st.ap0r;
        let n = st.used_lrs.min(self.n);
        for i in 0..n {
            self.write_lr(i, v3::decode(st.lrs[i]));
        }
    }
}
