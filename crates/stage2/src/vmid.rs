//! VMID allocation with generation rollover, after Linux's arm64 ASID/VMID allocator
//! (`arch/arm64/kvm/vmid.c`).
//!
//! Each VM holds a [`VmVmid`]: `generation | vmid`. On every vCPU load the VM's generation is
//! compared with the global one; a stale VM gets a fresh VMID. When the VMID space of the
//! current generation is used up, the generation is bumped, the bitmap is cleared except for
//! the VMIDs running on some CPU right now (which stay "reserved" for their VMs), and all
//! CPUs' TLBs are flushed (`TLBI ALLE1IS`, via [`TlbMaintenance::invalidate_all`]) before any
//! VMID is handed out again. So a VMID is never given to a second VM without a flush, and
//! VMs running across the rollover keep theirs.

use core::sync::atomic::{AtomicU64, Ordering::SeqCst};

use crate::traits::TlbMaintenance;
use crate::{Error, Result};

/// Words in the VMID bitmap (65536 bits, enough for 16-bit VMIDs).
const MAP_WORDS: usize = (1 << 16) / 64;

/// A VM's VMID together with the generation it was allocated in (0 = none yet).
#[derive(Debug, Default)]
pub struct VmVmid {
    id: AtomicU64,
}

impl VmVmid {
    /// A VM that has no VMID yet.
    pub const fn new() -> Self {
        Self {
            id: AtomicU64::new(0),
        }
    }

    /// The raw `generation | vmid` value (0 before the first allocation).
    pub fn raw(&self) -> u64 {
        self.id.load(SeqCst)
    }
}

struct Inner<const CPUS: usize> {
    /// VMIDs taken in the current generation.
    map: [u64; MAP_WORDS],
    /// Per CPU: the VMID it ran at the last rollover, kept for its VM in the new generation.
    reserved: [u64; CPUS],
    /// Where the next search for a free VMID starts.
    cur_idx: usize,
}

/// Allocates VMIDs for up to `CPUS` physical CPUs. Thread-safe: the fast path (VM's VMID is
/// current) is lock-free; allocation and rollover take a spin lock.
pub struct VmidAllocator<const CPUS: usize> {
    bits: u32,
    generation: AtomicU64,
    /// Per CPU: VMID (with generation) running there; 0 after a rollover until the next load;
    /// `first_version` (index 0) while the CPU runs no VM.
    active: [AtomicU64; CPUS],
    inner: spin::Mutex<Inner<CPUS>>,
}

impl<const CPUS: usize> VmidAllocator<CPUS> {
    /// An allocator for 16-bit VMIDs when `vmid16` (`ID_AA64MMFR1_EL1.VMIDBits` = 0b0010 and
    /// `VTCR_EL2.VS` set), else 8-bit. VMID 0 is never handed out (left for the host).
    pub const fn new(vmid16: bool) -> Self {
        const { assert!(CPUS > 0 && CPUS < 255, "need more VMIDs than CPUs") };
        let bits = if vmid16 { 16 } else { 8 };
        Self {
            bits,
            generation: AtomicU64::new(1 << bits),
            active: [const { AtomicU64::new(0) }; CPUS],
            inner: spin::Mutex::new(Inner {
                map: [0; MAP_WORDS],
                reserved: [0; CPUS],
                cur_idx: 1,
            }),
        }
    }

    /// VMID width in bits.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    fn num(&self) -> usize {
        1 << self.bits
    }

    fn first_version(&self) -> u64 {
        1 << self.bits
    }

    fn idx(&self, vmid: u64) -> usize {
        (vmid & (self.first_version() - 1)) as usize
    }

    fn gen_match(&self, vmid: u64) -> bool {
        (vmid ^ self.generation.load(SeqCst)) >> self.bits == 0
    }

    /// Current generation counter (increments by `2^bits` per rollover).
    pub fn generation(&self) -> u64 {
        self.generation.load(SeqCst) >> self.bits
    }

    /// Called when a vCPU of `vm` is loaded on physical CPU `cpu` (interrupts off): returns the
    /// VMID to put in `VTTBR_EL2.VMID`, allocating a new one if the VM's generation is stale.
    /// A rollover flushes all TLBs through `tlb` first.
    pub fn vcpu_load<T: TlbMaintenance + ?Sized>(
        &self,
        cpu: usize,
        vm: &VmVmid,
        tlb: &T,
    ) -> Result<u16> {
        let active = self.active.get(cpu).ok_or(Error::InvalidCpu)?;
        let vmid = vm.id.load(SeqCst);
        let old_active = active.load(SeqCst);
        // Fast path. A concurrent rollover zeroes `active`, which makes the exchange fail,
        // or sees our VMID in `active` and reserves it.
        if old_active != 0
            && self.gen_match(vmid)
            && active
                .compare_exchange(old_active, vmid, SeqCst, SeqCst)
                .is_ok()
        {
            return Ok(self.idx(vmid) as u16);
        }
        let mut inner = self.inner.lock();
        let mut vmid = vm.id.load(SeqCst);
        if !self.gen_match(vmid) {
            vmid = self.new_vmid(&mut inner, vm, tlb);
        }
        active.store(vmid, SeqCst);
        Ok(self.idx(vmid) as u16)
    }

    /// Called when a vCPU is put on `cpu`: the CPU runs no VM, so its VMID need not survive
    /// a rollover.
    pub fn vcpu_put(&self, cpu: usize) {
        if let Some(a) = self.active.get(cpu) {
            a.store(self.first_version(), SeqCst);
        }
    }

    fn new_vmid<T: TlbMaintenance + ?Sized>(
        &self,
        inner: &mut Inner<CPUS>,
        vm: &VmVmid,
        tlb: &T,
    ) -> u64 {
        let vmid = vm.id.load(SeqCst);
        let mut generation = self.generation.load(SeqCst);
        if vmid != 0 {
            // Try to keep the old VMID in the new generation.
            let newvmid = generation | (vmid & (self.first_version() - 1));
            let mut hit = false;
            for r in inner.reserved.iter_mut() {
                if *r == vmid {
                    *r = newvmid;
                    hit = true;
                }
            }
            if hit || !test_and_set(&mut inner.map, self.idx(vmid)) {
                vm.id.store(newvmid, SeqCst);
                return newvmid;
            }
        }
        let mut idx = find_next_zero(&inner.map, self.num(), inner.cur_idx);
        if idx.is_none() {
            generation =
                self.generation.fetch_add(self.first_version(), SeqCst) + self.first_version();
            self.flush_context(inner, tlb);
            // At most CPUS + 1 VMIDs are reserved, fewer than `num`, so this finds one.
            idx = find_next_zero(&inner.map, self.num(), 1);
        }
        let idx = idx.unwrap_or(1);
        set_bit(&mut inner.map, idx);
        inner.cur_idx = idx;
        let vmid = generation | idx as u64;
        vm.id.store(vmid, SeqCst);
        vmid
    }

    fn flush_context<T: TlbMaintenance + ?Sized>(&self, inner: &mut Inner<CPUS>, tlb: &T) {
        inner.map.fill(0);
        for (cpu, active) in self.active.iter().enumerate() {
            let mut vmid = active.swap(0, SeqCst);
            // 0: no vCPU load on this CPU since the last rollover; keep what it reserved.
            if vmid == 0 {
                vmid = inner.reserved[cpu];
            }
            set_bit(&mut inner.map, self.idx(vmid));
            inner.reserved[cpu] = vmid;
        }
        // Broadcast: every CPU's TLB loses all old-generation entries before reuse.
        tlb.invalidate_all();
    }
}

fn set_bit(map: &mut [u64], i: usize) {
    map[i / 64] |= 1 << (i % 64);
}

fn test_and_set(map: &mut [u64], i: usize) -> bool {
    let was = map[i / 64] & (1 << (i % 64)) != 0;
    set_bit(map, i);
    was
}

/// First clear bit at or after `from` and below `num`; skips full words.
fn find_next_zero(map: &[u64], num: usize, from: usize) -> Option<usize> {
    let mut i = from;
    while i < num {
        let word = map[i / 64] | ((1u64 << (i % 64)) - 1);
        if word != u64::MAX {
            let found = (i / 64) * 64 + word.trailing_ones() as usize;
            return (found < num).then_some(found);
        }
        i = (i / 64 + 1) * 64;
    }
    None
}
