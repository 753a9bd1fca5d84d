//! Local TLB and I-cache invalidation when a physical CPU switches between vCPUs of one VM
//! (the decision: [`crate::last_ran::LastRan`], one per CPU in `PerCpu::last_ran`).

use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

use super::percpu;

/// Local invalidations so far (reported when the machine stops).
static FLUSHES: AtomicU64 = AtomicU64::new(0);

/// How many times a vCPU load invalidated its CPU's TLB and I-cache entries of its VM.
pub fn flushes() -> u64 {
    FLUSHES.load(Ordering::Relaxed)
}

/// Called right after `WorldSwitch::vcpu_load` of vCPU `vcpu` of VM `vm` (their indices)
/// on this CPU, with the guest's `VTTBR_EL2` and `HCR_EL2` installed: when another vCPU of
/// the VM (or none of it) ran here last, invalidates this CPU's EL1&0 TLB entries of the
/// VM's VMID and its instruction cache, as KVM's `__kvm_flush_cpu_context`.
pub fn after_vcpu_load(vm: usize, vcpu: usize) {
    if !percpu::current().last_ran.lock().load(vm, vcpu) {
        return;
    }
    FLUSHES.fetch_add(1, Ordering::Relaxed);
    // SAFETY: at EL2 after vcpu_load, so HCR_EL2.TGE = 0 (the VHE host's TGE = 1 would make
    // TLBI VMALLE1 target the EL2&0 regime) and VTTBR_EL2.VMID is the guest's: TLBI VMALLE1
    // invalidates the EL1&0 stage-1 (and combined stage-1+2) entries of that VMID on this
    // CPU only; IC IALLU the local I-cache to PoU. DSB NSH completes both, ISB orders the
    // guest's entry after them. No memory is written; EL2's own translations are untouched.
    unsafe {
        asm!(
            "tlbi vmalle1",
            "ic iallu",
            "dsb nsh",
            "isb",
            options(nostack, preserves_flags)
        );
    }
}
