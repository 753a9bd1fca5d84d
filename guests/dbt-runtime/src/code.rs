//! The code cache: the top of this runtime's region (Normal, EL1 read/write/execute, out of
//! reach of every address translated code can form), with the cache maintenance that makes
//! new code visible to instruction fetch, and write protection of guest code pages through
//! the runtime's stage 1, shared by the vCPUs (`smp::hold`, `smp::release`), and the
//! guest's stage 1 mirrored in shadow tables (`mmu::shadow`).

use aarch64_cpu::registers::{Readable, TTBR0_EL1};
use alloc::vec::Vec;
use core::sync::atomic::AtomicU32;
use dbt_armv7::mmu::TlbMaintenance;
use dbt_armv7::translate::host::{call_prologue, sync_code, CodeMemory, GuestMmu};
use dbt_armv7::translate::GuestState;

/// The code cache memory.
pub struct Code {
    base: *mut u8,
    len: usize,
    /// Other vCPUs' TLB maintenance taken from this vCPU's mailbox, not yet handed to the
    /// engine (in reverse order).
    remote: Vec<TlbMaintenance>,
}

impl Code {
    /// The cache at `[base, base + len)` of the runtime's own RAM.
    pub fn new(base: u64, len: u64) -> Code {
        Code {
            base: base as *mut u8,
            len: len as usize,
            remote: Vec::new(),
        }
    }

    /// Host address and end of the cache.
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, self.base as u64 + self.len as u64)
    }
}

/// The shadow loaded now (`CodeMemory::loaded_space`): `TTBR0_EL1`, which translated code
/// may load again itself (the shadow finds its current one there, `mmu::shadow`).
fn loaded_ttbr0() -> u64 {
    TTBR0_EL1.get()
}

impl CodeMemory for Code {
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the region is the runtime's, `len` bytes, used for nothing else, for the
        // life of the VM.
        unsafe { core::slice::from_raw_parts_mut(self.base, self.len) }
    }

    fn sync(&mut self, start: usize, len: usize) {
        sync_code(self.base as usize + start, len);
    }

    unsafe fn enter(&mut self, prologue: usize, state: *mut GuestState, entry: usize) {
        // SAFETY: the caller's contract: a valid state, whose `cpu` the engine set.
        crate::mmu::shadow::set_guest_cpu(unsafe { (*state).cpu });
        // SAFETY: as above. IRQ and FIQ unmasked in translated code (`irq.rs`).
        unsafe { (*state).daif = crate::irq::entry_daif() };
        // SAFETY: the caller's contract (code the engine generated, a valid state); `base`
        // is the executable cache.
        unsafe { call_prologue(self.base, prologue, state, entry) }
    }

    fn protect_guest_page(&mut self, page: u32) -> bool {
        crate::smp::hold(page)
    }

    fn unprotect_guest_page(&mut self, page: u32) {
        crate::smp::release(page);
    }

    fn mirrors_guest_mmu(&self) -> bool {
        crate::mmu::shadow::enabled()
    }

    fn guest_mmu(&mut self, mmu: &GuestMmu) {
        crate::mmu::shadow::switch(mmu);
    }

    fn in_code_switch(&self) -> Option<fn(&GuestMmu) -> bool> {
        Some(crate::mmu::shadow::switch_in_code)
    }

    fn loaded_space(&self) -> Option<fn() -> u64> {
        Some(loaded_ttbr0)
    }

    fn switch_epoch(&self) -> Option<&'static AtomicU32> {
        Some(crate::mmu::shadow::switch_epoch())
    }

    fn guest_tlb_maintenance(&mut self, op: TlbMaintenance) {
        crate::mmu::shadow::maintenance(op);
    }

    fn in_code_tlb_maintenance(&self) -> Option<fn(TlbMaintenance) -> bool> {
        Some(crate::mmu::shadow::maintenance_in_code)
    }

    fn remote_tlb_maintenance(&mut self) -> Option<TlbMaintenance> {
        if self.remote.is_empty() {
            crate::smp::take_tlb(&mut self.remote);
            self.remote.reverse();
        }
        self.remote.pop()
    }
}
