//! VMID allocation: rollover, reservation of running VMIDs, flush before reuse, threads.

mod common;

use std::collections::HashMap;

use common::{Ev, RecTlb};
use proptest::prelude::*;
use stage2::{Error, VmVmid, VmidAllocator};

#[test]
fn hands_out_distinct_vmids_and_never_zero() {
    let a = VmidAllocator::<4>::new(false);
    let tlb = RecTlb::default();
    let vms: Vec<VmVmid> = (0..255).map(|_| VmVmid::new()).collect();
    let mut seen = std::collections::HashSet::new();
    for vm in &vms {
        let id = a.vcpu_load(0, vm, &tlb).unwrap();
        a.vcpu_put(0);
        assert_ne!(id, 0);
        assert!(
            seen.insert(id),
            "VMID {id} handed out twice in one generation"
        );
    }
    assert!(tlb.take().is_empty(), "255 VMIDs fit in one generation");
    // A VM reloading keeps its VMID.
    assert_eq!(
        a.vcpu_load(1, &vms[7], &tlb).unwrap(),
        a.vcpu_load(2, &vms[7], &tlb).unwrap()
    );
    assert_eq!(a.vcpu_load(4, &vms[0], &tlb), Err(Error::InvalidCpu));
}

#[test]
fn rollover_flushes_and_keeps_running_vmids() {
    const CPUS: usize = 4;
    let a = VmidAllocator::<CPUS>::new(false);
    let tlb = RecTlb::default();
    // Three VMs stay running on CPUs 0..3 the whole time.
    let live: Vec<VmVmid> = (0..3).map(|_| VmVmid::new()).collect();
    let live_ids: Vec<u16> = live
        .iter()
        .enumerate()
        .map(|(cpu, vm)| a.vcpu_load(cpu, vm, &tlb).unwrap())
        .collect();
    // Many more VMs come and go on CPU 3: several rollovers.
    let others: Vec<VmVmid> = (0..1000).map(|_| VmVmid::new()).collect();
    for vm in &others {
        let id = a.vcpu_load(3, vm, &tlb).unwrap();
        assert!(!live_ids.contains(&id), "VMID {id} of a running VM reused");
        a.vcpu_put(3);
    }
    let flushes = tlb.take().iter().filter(|e| **e == Ev::All).count();
    assert!(
        flushes >= 3,
        "1000 VMs over 255 VMIDs need rollovers, got {flushes}"
    );
    assert!(a.generation() > 1);
    // The running VMs keep their VMIDs across rollovers.
    for (cpu, vm) in live.iter().enumerate() {
        assert_eq!(a.vcpu_load(cpu, vm, &tlb).unwrap(), live_ids[cpu]);
    }
}

/// Simulation: random loads/puts of many VMs on a few CPUs. Checks that (1) VMs running at
/// the same time never share a VMID and (2) a VMID moves to a different VM only after a
/// flush that followed its previous assignment.
fn simulate(bits16: bool, steps: &[(usize, usize)], nvms: usize) {
    const CPUS: usize = 3;
    let a = VmidAllocator::<CPUS>::new(bits16);
    let tlb = RecTlb::default();
    let vms: Vec<VmVmid> = (0..nvms).map(|_| VmVmid::new()).collect();
    let mut running: [Option<(usize, u16)>; CPUS] = [None; CPUS];
    // VMID -> (VM, number of flushes when it was handed to that VM).
    let mut owner: HashMap<u16, (usize, usize)> = HashMap::new();
    let mut flushes = 0;
    for &(cpu, vm) in steps {
        let cpu = cpu % CPUS;
        let vm = vm % nvms;
        a.vcpu_put(cpu);
        running[cpu] = None;
        let id = a.vcpu_load(cpu, &vms[vm], &tlb).unwrap();
        flushes += tlb.take().iter().filter(|e| **e == Ev::All).count();
        for (other_vm, other_id) in running.iter().flatten() {
            assert!(
                *other_id != id || *other_vm == vm,
                "running VMs {vm} and {other_vm} share VMID {id}"
            );
        }
        running[cpu] = Some((vm, id));
        match owner.get(&id) {
            Some(&(prev, at)) if prev != vm => {
                assert!(
                    flushes > at,
                    "VMID {id} moved from VM {prev} to {vm} without a flush"
                );
                owner.insert(id, (vm, flushes));
            }
            Some(_) => {}
            None => {
                owner.insert(id, (vm, flushes));
            }
        }
    }
}

#[test]
fn many_vms_8bit_simulation() {
    let steps: Vec<(usize, usize)> = (0..20_000usize)
        .map(|i| (i * 7 % 5, (i * 2_654_435_761usize) % 1500))
        .collect();
    simulate(false, &steps, 1500);
}

#[test]
fn rollover_16bit() {
    let a = VmidAllocator::<2>::new(true);
    let tlb = RecTlb::default();
    let keep = VmVmid::new();
    let kept = a.vcpu_load(0, &keep, &tlb).unwrap();
    let vm = VmVmid::new();
    for _ in 0..70_000 {
        // Fresh VM each time (reset by recreating).
        let fresh = VmVmid::new();
        let id = a.vcpu_load(1, &fresh, &tlb).unwrap();
        assert_ne!(id, kept);
        a.vcpu_put(1);
    }
    assert_eq!(tlb.take().iter().filter(|e| **e == Ev::All).count(), 1);
    assert_eq!(a.vcpu_load(0, &keep, &tlb).unwrap(), kept);
    assert_ne!(a.vcpu_load(1, &vm, &tlb).unwrap(), kept);
}

#[test]
fn threads_never_run_duplicate_vmids() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const CPUS: usize = 2;
    struct Flush(AtomicU64);
    impl stage2::TlbMaintenance for Flush {
        fn publish(&self) {}
        fn invalidate_ipa(&self, _: u64, _: u64, _: u32) {}
        fn sync_after_ipa_invalidation(&self, _: u64) {}
        fn invalidate_vmid(&self, _: u64) {}
        fn invalidate_all(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let a = Arc::new(VmidAllocator::<CPUS>::new(false));
    let vms: Arc<Vec<VmVmid>> = Arc::new((0..600).map(|_| VmVmid::new()).collect());
    let tlb = Arc::new(Flush(AtomicU64::new(0)));
    // running[cpu] = vm << 16 | vmid, or u64::MAX.
    let running: Arc<[AtomicU64; CPUS]> = Arc::new([const { AtomicU64::new(u64::MAX) }; CPUS]);
    let handles: Vec<_> = (0..CPUS)
        .map(|cpu| {
            let (a, vms, tlb, running) = (a.clone(), vms.clone(), tlb.clone(), running.clone());
            std::thread::spawn(move || {
                for i in 0..20_000usize {
                    let vm = (i * 31 + cpu * 17) % vms.len();
                    running[cpu].store(u64::MAX, Ordering::SeqCst);
                    a.vcpu_put(cpu);
                    let id = a.vcpu_load(cpu, &vms[vm], &*tlb).unwrap();
                    running[cpu].store(((vm as u64) << 16) | u64::from(id), Ordering::SeqCst);
                    for (other, r) in running.iter().enumerate() {
                        let r = r.load(Ordering::SeqCst);
                        if other != cpu && r != u64::MAX {
                            assert!(
                                (r & 0xffff) as u16 != id || (r >> 16) as usize == vm,
                                "CPUs {cpu} and {other} run different VMs with VMID {id}"
                            );
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert!(tlb.0.load(Ordering::SeqCst) > 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn vmid_simulation_prop(steps in proptest::collection::vec((0usize..3, 0usize..400), 1..2000)) {
        simulate(false, &steps, 400);
    }
}
