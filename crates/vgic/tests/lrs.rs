//! List-register scheduling: flush/sync, state machine, priorities, underflow, HW mapping,
//! fast path, kicks, has_pending.

mod common;
use common::*;
use vgic::backends::mem::MemLrs;
use vgic::{ListRegisters, LrState, Vgic};

fn setup_v2(n_lrs: usize) -> (Vgic, MemLrs) {
    let mut v = v2(2);
    let mut lrs = MemLrs::new(n_lrs);
    v.vcpu_load(0, &mut lrs).unwrap();
    (v, lrs)
}

fn state_of(lrs: &MemLrs, intid: u32) -> Option<LrState> {
    lrs.valid().find(|e| e.vintid == intid).map(|e| e.state)
}

#[test]
fn fast_path_touches_nothing() {
    let (mut v, mut lrs) = setup_v2(4);
    lrs.reset_counters();
    for _ in 0..10 {
        v.flush(0, &mut lrs).unwrap();
        v.sync(0, &mut lrs).unwrap();
    }
    assert_eq!(lrs.accesses(), 0);
    let s = v.stats();
    assert_eq!((s.flush_fast, s.sync_fast), (10, 10));
    // Pending but disabled: still nothing to do.
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    v.sync(0, &mut lrs).unwrap();
    assert_eq!(lrs.accesses(), 0);
}

#[test]
fn edge_pending_active_inactive() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    edge(&mut v, 40);
    v.take_kicks();
    v.pulse_spi(40).unwrap();
    assert_eq!(v.take_kicks().low_bits(), 1, "target kicked");
    v.flush(0, &mut lrs).unwrap();
    let e = lrs.valid().next().copied().unwrap();
    assert_eq!(
        (e.vintid, e.state, e.priority, e.group1),
        (40, LrState::Pending, 0x80, false)
    );
    assert_eq!((e.pintid, e.eoi_maint), (None, false));
    assert_eq!(lrs.guest_ack(), Some(40));
    v.sync(0, &mut lrs).unwrap();
    assert!(v.is_active(0, 40) && !v.is_pending(0, 40));
    // Stays loaded as active; unchanged LR is not rewritten.
    let w = lrs.lr_writes();
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.lr_writes(), w);
    assert_eq!(state_of(&lrs, 40), Some(LrState::Active));
    assert!(lrs.guest_eoi(40));
    v.sync(0, &mut lrs).unwrap();
    assert!(!v.is_active(0, 40) && !v.is_pending(0, 40));
    assert_eq!(v.used_lrs(0), 0, "empty LR reported by ELRSR frees it");
    v.flush(0, &mut lrs).unwrap();
    lrs.reset_counters();
    v.sync(0, &mut lrs).unwrap();
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.accesses(), 0, "back on the fast path");
}

#[test]
fn edge_pulse_while_active_becomes_pending_active() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    edge(&mut v, 40);
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    lrs.guest_ack();
    v.take_kicks();
    v.pulse_spi(40).unwrap(); // while in the LR, guest running
    assert_eq!(v.take_kicks().low_bits(), 1, "vCPU holding it is kicked");
    v.sync(0, &mut lrs).unwrap();
    assert!(v.is_active(0, 40) && v.is_pending(0, 40));
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 40), Some(LrState::PendingActive));
    lrs.guest_eoi(40);
    assert_eq!(lrs.guest_ack(), Some(40));
    lrs.guest_eoi(40);
    v.sync(0, &mut lrs).unwrap();
    assert!(!v.is_active(0, 40) && !v.is_pending(0, 40));
}

#[test]
fn pending_edge_survives_exit_before_ack() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    edge(&mut v, 40);
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    v.sync(0, &mut lrs).unwrap();
    assert!(v.is_pending(0, 40));
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 40), Some(LrState::Pending));
}

#[test]
fn level_reasserts_after_eoi() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 41, 0x80);
    target_v2(&mut v, 41, 1);
    v.set_spi_level(41, true).unwrap();
    v.flush(0, &mut lrs).unwrap();
    let e = lrs.valid().next().copied().unwrap();
    assert!(e.eoi_maint, "level interrupts ask for EOI maintenance");
    lrs.guest_ack();
    lrs.guest_eoi(41);
    assert_ne!(lrs.misr() & 1, 0, "EOI maintenance raised");
    v.sync(0, &mut lrs).unwrap();
    assert!(v.is_pending(0, 41), "line still high");
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 41), Some(LrState::Pending));
    assert_eq!(
        lrs.misr() & 1,
        0,
        "maintenance condition cleared by the rewrite"
    );
    // Device lowers the line while the guest handles it: no re-delivery.
    lrs.guest_ack();
    v.set_spi_level(41, false).unwrap();
    lrs.guest_eoi(41);
    v.sync(0, &mut lrs).unwrap();
    assert!(!v.is_pending(0, 41) && !v.is_active(0, 41));
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.valid().count(), 0);
    assert_eq!(lrs.misr() & 1, 0);
    assert_eq!(v.used_lrs(0), 0);
}

#[test]
fn level_active_and_still_high_is_pending_active() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 41, 0x80);
    target_v2(&mut v, 41, 1);
    v.set_spi_level(41, true).unwrap();
    v.flush(0, &mut lrs).unwrap();
    lrs.guest_ack();
    v.sync(0, &mut lrs).unwrap();
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 41), Some(LrState::PendingActive));
}

#[test]
fn priorities_order_lrs_and_underflow_refills() {
    let (mut v, mut lrs) = setup_v2(2);
    let prios = [(40, 0xa0), (41, 0x20), (42, 0x60), (43, 0x40), (44, 0x60)];
    for (id, p) in prios {
        enable(&mut v, 0, id, p);
        target_v2(&mut v, id, 1);
        v.pulse_spi(id).unwrap();
    }
    v.flush(0, &mut lrs).unwrap();
    let mut got: Vec<u32> = lrs.valid().map(|e| e.vintid).collect();
    got.sort();
    assert_eq!(got, [41, 43], "two best priorities");
    assert!(lrs.uie, "underflow maintenance armed");
    assert_eq!(v.stats().underflows, 1);
    let mut order = vec![];
    for _ in 0..10 {
        while let Some(id) = lrs.guest_ack() {
            order.push(id);
            lrs.guest_eoi(id);
        }
        v.sync(0, &mut lrs).unwrap();
        v.flush(0, &mut lrs).unwrap();
    }
    assert_eq!(order, [41, 43, 42, 44, 40], "priority, then INTID order");
    assert!(!lrs.uie, "underflow disarmed once everything fits");
    assert_eq!(lrs.valid().count(), 0);
}

#[test]
fn active_ones_keep_their_lrs() {
    let (mut v, mut lrs) = setup_v2(1);
    enable(&mut v, 0, 40, 0x80);
    enable(&mut v, 0, 41, 0x10);
    target_v2(&mut v, 40, 1);
    target_v2(&mut v, 41, 1);
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    lrs.guest_ack();
    v.sync(0, &mut lrs).unwrap();
    v.pulse_spi(41).unwrap();
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 40), Some(LrState::Active));
    assert!(lrs.uie);
}

#[test]
fn disabled_or_group_off_not_loaded() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    wr(&mut v, 0, 0, 0); // distributor off
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.valid().count(), 0);
    v.take_kicks();
    wr(&mut v, 0, 0, 1);
    assert_eq!(v.take_kicks().low_bits(), 1, "enabling the group kicks");
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.valid().count(), 1);
}

#[test]
fn v2_targets_route_spis() {
    let mut v = v2(2);
    let mut l0 = MemLrs::new(4);
    let mut l1 = MemLrs::new(4);
    enable(&mut v, 0, 50, 0x80);
    target_v2(&mut v, 50, 0b10);
    v.take_kicks();
    v.pulse_spi(50).unwrap();
    assert_eq!(v.take_kicks().low_bits(), 0b10);
    v.flush(0, &mut l0).unwrap();
    v.flush(1, &mut l1).unwrap();
    assert_eq!(l0.valid().count(), 0);
    assert_eq!(l1.valid().count(), 1);
    // While in vCPU 1's LR (active), retargeting does not move it.
    l1.guest_ack();
    v.sync(1, &mut l1).unwrap();
    target_v2(&mut v, 50, 0b01);
    v.flush(0, &mut l0).unwrap();
    assert_eq!(l0.valid().count(), 0);
    v.flush(1, &mut l1).unwrap();
    l1.guest_eoi(50);
    v.sync(1, &mut l1).unwrap();
    v.pulse_spi(50).unwrap();
    v.flush(0, &mut l0).unwrap();
    assert_eq!(l0.valid().count(), 1, "new target after deactivation");
}

#[test]
fn v2_sgi_sources_and_cpuid() {
    let mut v = v2(3);
    let mut l2 = MemLrs::new(4);
    wr(&mut v, 0, 0, 1);
    wr(&mut v, 0, 0xf00, (0b100 << 16) | 1);
    wr(&mut v, 1, 0xf00, (0b100 << 16) | 1);
    v.flush(2, &mut l2).unwrap();
    let mut srcs: Vec<(u32, u8)> = l2.valid().map(|e| (e.vintid, e.source_cpu)).collect();
    srcs.sort();
    assert_eq!(srcs, [(1, 0), (1, 1)]);
    assert_eq!(
        v.gicd_read(2, 0xf21, 1).unwrap(),
        0b11,
        "LR-held sources still visible"
    );
    assert_eq!(l2.guest_ack(), Some(1));
    l2.guest_eoi(1);
    v.sync(2, &mut l2).unwrap();
    assert_eq!(
        v.gicd_read(2, 0xf21, 1).unwrap(),
        0b10,
        "one source consumed"
    );
    v.flush(2, &mut l2).unwrap();
    assert_eq!(l2.valid().count(), 1);
    assert_eq!(l2.valid().next().unwrap().source_cpu, 1);
}

#[test]
fn hw_mapped_lr() {
    let mut v = v2(1);
    let mut lrs = MemLrs::new(4);
    enable(&mut v, 0, 27, 0xa0);
    v.set_hw_mapping(0, 27, Some(27)).unwrap();
    assert_eq!(v.hw_mapping(0, 27), Some(27));
    assert!(
        v.set_hw_mapping(0, 3, Some(27)).is_err(),
        "SGIs cannot be mapped"
    );
    v.set_ppi_level(0, 27, true).unwrap();
    v.flush(0, &mut lrs).unwrap();
    let e = lrs.valid().next().copied().unwrap();
    assert_eq!((e.vintid, e.pintid, e.eoi_maint), (27, Some(27), false));
    lrs.guest_ack();
    v.sync(0, &mut lrs).unwrap();
    // Pending state now lives in the physical GIC: never pending+active on a HW LR.
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 27), Some(LrState::Active));
    lrs.guest_eoi(27); // deactivates the physical interrupt too (hardware)
    assert_eq!(lrs.misr() & 1, 0, "no maintenance for HW deactivation");
    v.sync(0, &mut lrs).unwrap();
    assert!(!v.is_pending(0, 27) && !v.is_active(0, 27));
    v.set_hw_mapping(0, 27, None).unwrap();
    assert_eq!(v.hw_mapping(0, 27), None);
}

#[test]
fn has_pending_respects_pmr_groups_and_running_priority() {
    let mut v = v2(1);
    let mut lrs = MemLrs::new(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    v.pulse_spi(40).unwrap();
    assert!(!v.vcpu_has_pending(0), "VMCR reset: group disabled, PMR 0");
    // GICv2 VMCR: VMGrp0En bit 0, VMPriMask [31:27].
    lrs.vmcr = 1 | (0x1f << 27);
    v.save_vmcr(0, &lrs).unwrap();
    assert!(v.vcpu_has_pending(0));
    lrs.vmcr = 1 | ((0x80 >> 3) << 27); // PMR = 0x80 masks priority 0x80
    v.save_vmcr(0, &lrs).unwrap();
    assert!(!v.vcpu_has_pending(0));
    lrs.vmcr = 2 | (0x1f << 27); // only group 1 enabled
    v.save_vmcr(0, &lrs).unwrap();
    assert!(!v.vcpu_has_pending(0));
    lrs.vmcr = 1 | (0x1f << 27);
    lrs.apr[0] = 1 << (0x40 >> 3); // an active interrupt at priority 0x40
    v.vcpu_put(0, &mut lrs).unwrap();
    assert!(
        !v.vcpu_has_pending(0),
        "cannot preempt the running priority"
    );
    v.vcpu_if_mut(0).unwrap().apr[0] = 0;
    assert!(v.vcpu_has_pending(0));
    wr(&mut v, 0, 0x184, 1 << 8);
    assert!(!v.vcpu_has_pending(0), "disabled");
}

#[test]
fn put_and_load_clear_and_restore() {
    let mut v = v2(2);
    let mut lrs = MemLrs::new(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    v.vcpu_load(0, &mut lrs).unwrap();
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    lrs.guest_ack();
    lrs.vmcr = 0x1234;
    lrs.apr[0] = 0x10;
    v.vcpu_put(0, &mut lrs).unwrap(); // syncs itself
    assert_eq!(lrs.valid().count(), 0, "LRs emptied for the next vCPU");
    assert!(!lrs.enabled);
    assert_eq!(v.vcpu_if(0).unwrap().vmcr, 0x1234);
    assert!(v.is_active(0, 40));
    // Another vCPU uses the interface.
    lrs.vmcr = 0;
    lrs.apr[0] = 0;
    v.vcpu_load(1, &mut lrs).unwrap();
    v.vcpu_put(1, &mut lrs).unwrap();
    v.vcpu_load(0, &mut lrs).unwrap();
    assert_eq!((lrs.vmcr, lrs.apr[0]), (0x1234, 0x10));
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(state_of(&lrs, 40), Some(LrState::Active));
}

#[test]
fn cpend_while_in_lr_wins() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 40, 0x80);
    target_v2(&mut v, 40, 1);
    v.pulse_spi(40).unwrap();
    v.flush(0, &mut lrs).unwrap();
    wr(&mut v, 1, 0x284, 1 << 8); // another vCPU clears it while vCPU 0 runs
    v.sync(0, &mut lrs).unwrap();
    assert!(!v.is_pending(0, 40));
    v.flush(0, &mut lrs).unwrap();
    assert_eq!(lrs.valid().count(), 0);
}

#[test]
fn injection_api_checks() {
    let mut v = v2(1);
    assert!(v.set_spi_level(31, true).is_err());
    assert!(v.set_spi_level(32 + 256, true).is_err());
    assert!(v.pulse_ppi(0, 15).is_err());
    assert!(v.pulse_ppi(1, 16).is_err());
    assert!(v.set_ppi_level(0, 32, true).is_err());
    assert!(v.raise_sgi(0, 0, 16).is_err());
    assert!(v.flush(5, &mut MemLrs::new(4)).is_err());
    assert_eq!(vgic::maintenance_intid(), 25);
}

#[test]
fn ppi_edge_and_level() {
    let (mut v, mut lrs) = setup_v2(4);
    enable(&mut v, 0, 20, 0x10);
    wr(&mut v, 0, 0xc04, 2 << 8); // PPI 20 edge
    v.set_ppi_level(0, 20, true).unwrap();
    v.set_ppi_level(0, 20, true).unwrap(); // no new edge
    v.flush(0, &mut lrs).unwrap();
    lrs.guest_ack();
    lrs.guest_eoi(20);
    v.sync(0, &mut lrs).unwrap();
    assert!(
        !v.is_pending(0, 20),
        "edge consumed although the line stays high"
    );
    v.set_ppi_level(0, 20, false).unwrap();
    v.set_ppi_level(0, 20, true).unwrap();
    assert!(v.is_pending(0, 20), "new rising edge");
}
