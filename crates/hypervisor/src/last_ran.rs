//! Which vCPU of each VM last ran on one physical CPU, and so when loading a vCPU must
//! first invalidate the CPU's local TLB and instruction cache for its VM (host-tested;
//! `arch::sched::last_ran` keeps one per CPU and does the invalidation).
//!
//! A guest believes each of its CPUs has private TLBs: it may use the same ASID with
//! different translations on two vCPUs, or change a CPU-private mapping and invalidate only
//! the entries of one vCPU. On one physical CPU, though, all vCPUs of a VM share the TLB
//! entries tagged with the VM's VMID, so a vCPU loaded after a sibling could hit the
//! sibling's translations. As KVM's `kvm_arch_vcpu_load` (`last_vcpu_ran`, then
//! `__kvm_flush_cpu_context`): when the vCPU being loaded is not the one of its VM that ran
//! last on this CPU, the CPU's EL1&0 entries of that VMID and its I-cache are invalidated.
//! A vCPU's own maintenance on another CPU needs nothing here: `HCR_EL2.FB` broadcasts a
//! guest's `TLBI` and `IC IALLU` to every CPU.

use alloc::vec::Vec;

/// The last vCPU of each VM that ran on one physical CPU.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LastRan {
    /// `(VM index, vCPU index)` of every VM that has run on this CPU.
    entries: Vec<(usize, usize)>,
}

impl LastRan {
    /// No VM has run on this CPU yet.
    pub const fn new() -> Self {
        LastRan {
            entries: Vec::new(),
        }
    }

    /// Records that vCPU `vcpu` of VM `vm` is being loaded on this CPU; returns whether the
    /// CPU's TLB and I-cache entries of that VM must be invalidated first: another vCPU of
    /// the VM ran here last, or none of it ever ran here (its VMID may carry entries left
    /// by an earlier run of the same VM, as KVM's initial `last_vcpu_ran` = -1 assumes).
    pub fn load(&mut self, vm: usize, vcpu: usize) -> bool {
        match self.entries.iter_mut().find(|(v, _)| *v == vm) {
            Some((_, last)) if *last == vcpu => false,
            Some((_, last)) => {
                *last = vcpu;
                true
            }
            None => {
                self.entries.push((vm, vcpu));
                true
            }
        }
    }

    /// The vCPU of VM `vm` that last ran on this CPU, if any did.
    pub fn last(&self, vm: usize) -> Option<usize> {
        self.entries.iter().find(|(v, _)| *v == vm).map(|&(_, c)| c)
    }

    /// Forgets VM `vm` (it restarts: its next load on this CPU invalidates again).
    pub fn forget(&mut self, vm: usize) {
        self.entries.retain(|(v, _)| *v != vm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn first_load_of_a_vm_invalidates() {
        let mut l = LastRan::new();
        assert!(l.load(0, 0));
        assert_eq!(l.last(0), Some(0));
    }

    #[test]
    fn same_vcpu_again_does_not_invalidate() {
        let mut l = LastRan::new();
        l.load(0, 1);
        assert!(!l.load(0, 1));
        assert!(!l.load(0, 1));
    }

    #[test]
    fn sibling_of_the_same_vm_invalidates() {
        let mut l = LastRan::new();
        l.load(0, 0);
        assert!(l.load(0, 1));
        assert!(l.load(0, 0));
        assert_eq!(l.last(0), Some(0));
    }

    #[test]
    fn another_vm_in_between_does_not_invalidate() {
        // Different VMs have different VMIDs: VM 1's entries cannot be hit by VM 0.
        let mut l = LastRan::new();
        l.load(0, 2);
        assert!(l.load(1, 0));
        assert!(!l.load(0, 2));
        assert!(!l.load(1, 0));
    }

    #[test]
    fn forget_makes_the_next_load_invalidate() {
        let mut l = LastRan::new();
        l.load(3, 1);
        l.forget(3);
        assert_eq!(l.last(3), None);
        assert!(l.load(3, 1));
    }

    proptest! {
        /// Against a model: a load invalidates exactly when the previous load of the same
        /// VM on this CPU was a different vCPU or there was none.
        #[test]
        fn matches_the_model(loads in proptest::collection::vec((0usize..3, 0usize..4), 0..64)) {
            let mut l = LastRan::new();
            let mut seen: Vec<(usize, usize)> = Vec::new();
            for (vm, vcpu) in loads {
                let previous = seen.iter().rev().find(|(v, _)| *v == vm).map(|&(_, c)| c);
                prop_assert_eq!(l.load(vm, vcpu), previous != Some(vcpu));
                seen.push((vm, vcpu));
                prop_assert_eq!(l.last(vm), Some(vcpu));
            }
        }
    }
}
