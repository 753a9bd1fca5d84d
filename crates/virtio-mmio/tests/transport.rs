//! Transport registers and the status / feature state machine.

mod common;

use common::*;
use virtio_mmio::devices::block::{BlockDevice, RamDisk};
use virtio_mmio::devices::rng::{RngDevice, XorShiftEntropy};
use virtio_mmio::features::{status, VIRTIO_F_VERSION_1};
use virtio_mmio::regs::{offset as reg, MAGIC_VALUE};
use virtio_mmio::VirtioError;

fn rng() -> (Dev<RngDevice<XorShiftEntropy>>, Irq) {
    new_dev(RngDevice::new(XorShiftEntropy::new(1)))
}

#[test]
fn identification_registers() {
    let (mut t, _) = rng();
    assert_eq!(r32(&mut t, reg::MAGIC_VALUE), MAGIC_VALUE);
    assert_eq!(r32(&mut t, reg::MAGIC_VALUE), 0x7472_6976);
    assert_eq!(r32(&mut t, reg::VERSION), 2);
    assert_eq!(r32(&mut t, reg::DEVICE_ID), 4);
    assert_ne!(r32(&mut t, reg::VENDOR_ID), 0);
    assert_eq!(r32(&mut t, reg::STATUS), 0);
    assert_eq!(r32(&mut t, reg::CONFIG_GENERATION), 0);
    assert_eq!(r32(&mut t, reg::SHM_LEN_LOW), u32::MAX);
}

#[test]
fn device_features_over_two_words() {
    let (mut t, _) = rng();
    w32(&mut t, reg::DEVICE_FEATURES_SEL, 0).unwrap();
    let lo = r32(&mut t, reg::DEVICE_FEATURES);
    w32(&mut t, reg::DEVICE_FEATURES_SEL, 1).unwrap();
    let hi = r32(&mut t, reg::DEVICE_FEATURES);
    assert_eq!(hi & 1, 1, "VERSION_1 (bit 32)");
    assert_ne!(lo & (1 << 28), 0, "INDIRECT_DESC");
    assert_ne!(lo & (1 << 29), 0, "EVENT_IDX");
    w32(&mut t, reg::DEVICE_FEATURES_SEL, 7).unwrap();
    assert_eq!(r32(&mut t, reg::DEVICE_FEATURES), 0);
}

#[test]
fn feature_negotiation_requires_version_1() {
    let (mut t, _) = rng();
    w32(&mut t, reg::STATUS, status::ACKNOWLEDGE).unwrap();
    w32(&mut t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 1).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES, 0).unwrap();
    let r = w32(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
    );
    assert!(matches!(r, Err(VirtioError::NotNow { .. })));
    assert_eq!(r32(&mut t, reg::STATUS) & status::FEATURES_OK, 0);
    // Accepting VERSION_1 then works.
    w32(&mut t, reg::DRIVER_FEATURES, 1).unwrap();
    w32(
        &mut t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
    )
    .unwrap();
    assert_ne!(r32(&mut t, reg::STATUS) & status::FEATURES_OK, 0);
    assert_eq!(t.driver_features(), VIRTIO_F_VERSION_1);
    // Features are frozen after FEATURES_OK.
    assert!(w32(&mut t, reg::DRIVER_FEATURES, 0).is_err());
    assert_eq!(t.driver_features(), VIRTIO_F_VERSION_1);
}

#[test]
fn features_not_offered_are_refused() {
    let (mut t, _) = rng();
    w32(&mut t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 1).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES, 1).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 0).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES, 1 << 5).unwrap(); // not offered by virtio-rng
    assert!(w32(&mut t, reg::STATUS, 0xb).is_err());
    assert_eq!(r32(&mut t, reg::STATUS), 3);
}

#[test]
fn status_order_is_enforced() {
    let (mut t, _) = rng();
    assert!(w32(&mut t, reg::STATUS, status::DRIVER).is_err());
    assert_eq!(r32(&mut t, reg::STATUS), 0);
    w32(&mut t, reg::STATUS, status::ACKNOWLEDGE).unwrap();
    assert!(w32(&mut t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER_OK).is_err());
    assert_eq!(r32(&mut t, reg::STATUS), status::ACKNOWLEDGE);
    // Features can't be written before DRIVER.
    assert!(w32(&mut t, reg::DRIVER_FEATURES, 1).is_err());
    w32(&mut t, reg::STATUS, 3).unwrap();
    // Bits are never cleared except by reset.
    assert!(w32(&mut t, reg::STATUS, status::ACKNOWLEDGE).is_err());
    assert_eq!(r32(&mut t, reg::STATUS), 3);
    w32(&mut t, reg::STATUS, 3 | status::FAILED).unwrap();
    assert_eq!(r32(&mut t, reg::STATUS), 3 | status::FAILED);
    // The driver cannot set DEVICE_NEEDS_RESET.
    w32(
        &mut t,
        reg::STATUS,
        3 | status::FAILED | status::DEVICE_NEEDS_RESET,
    )
    .unwrap();
    assert_eq!(r32(&mut t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
}

#[test]
fn reset_clears_queues_features_and_interrupts() {
    let (mut t, irq) = rng();
    let mut rings = bring_up(&mut t, DEFAULT_FEATURES);
    let mem = t.memory_mut();
    rings[0].push(mem, &[(DATA, 16, true)]);
    rings[0].notify(&mut t).unwrap();
    assert!(irq.0.get());
    w32(&mut t, reg::STATUS, 0).unwrap();
    assert_eq!(r32(&mut t, reg::STATUS), 0);
    assert_eq!(r32(&mut t, reg::INTERRUPT_STATUS), 0);
    assert!(!irq.0.get(), "line dropped on reset");
    assert_eq!(t.driver_features(), 0);
    w32(&mut t, reg::QUEUE_SEL, 0).unwrap();
    assert_eq!(r32(&mut t, reg::QUEUE_READY), 0);
    let q = t.queue(0).unwrap();
    assert_eq!(
        (q.desc_table(), q.driver_area(), q.device_area()),
        (0, 0, 0)
    );
    assert_eq!(q.next_avail(), 0);
    // And it comes back up.
    bring_up(&mut t, DEFAULT_FEATURES);
    assert_eq!(r32(&mut t, reg::QUEUE_READY), 1);
}

#[test]
fn queue_setup_rules() {
    let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(8), "x"));
    w32(&mut t, reg::STATUS, 3).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 1).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES, 1).unwrap();
    // QueueReady before FEATURES_OK is refused.
    let ring = Ring::at(0, 16);
    assert!(setup_queue(&mut t, &ring).is_err());
    w32(&mut t, reg::STATUS, 0xb).unwrap();
    w32(&mut t, reg::QUEUE_SEL, 0).unwrap();
    assert_eq!(r32(&mut t, reg::QUEUE_NUM_MAX), 128);
    // Not a power of two / above max / misaligned / outside RAM: stays not ready.
    for (num, desc) in [
        (12, ring.desc),
        (256, ring.desc),
        (16, ring.desc + 8),
        (16, 0x1000),
    ] {
        w32(&mut t, reg::QUEUE_NUM, num).unwrap();
        w32(&mut t, reg::QUEUE_DESC_LOW, desc as u32).unwrap();
        w32(&mut t, reg::QUEUE_DRIVER_LOW, ring.avail as u32).unwrap();
        w32(&mut t, reg::QUEUE_DEVICE_LOW, ring.used as u32).unwrap();
        assert!(matches!(
            w32(&mut t, reg::QUEUE_READY, 1),
            Err(VirtioError::BadQueueConfig { .. })
        ));
        assert_eq!(r32(&mut t, reg::QUEUE_READY), 0);
    }
    setup_queue(&mut t, &ring).unwrap();
    assert_eq!(r32(&mut t, reg::QUEUE_READY), 1);
    // Addresses and size are frozen while ready.
    assert!(w32(&mut t, reg::QUEUE_DESC_LOW, 0).is_err());
    assert!(w32(&mut t, reg::QUEUE_NUM, 8).is_err());
    assert_eq!(t.queue(0).unwrap().desc_table(), ring.desc);
    // High halves compose 64-bit addresses.
    w32(&mut t, reg::QUEUE_READY, 0).unwrap();
    w32(&mut t, reg::QUEUE_DESC_HIGH, 1).unwrap();
    assert_eq!(t.queue(0).unwrap().desc_table(), ring.desc | 1 << 32);
    // A queue index the device does not have.
    w32(&mut t, reg::QUEUE_SEL, 5).unwrap();
    assert_eq!(r32(&mut t, reg::QUEUE_NUM_MAX), 0);
    assert!(w32(&mut t, reg::QUEUE_NUM, 8).is_err());
}

#[test]
fn illegal_accesses_are_raz_wi_and_reported() {
    let (mut t, _) = rng();
    assert!(matches!(
        t.read(reg::MAGIC_VALUE, 2),
        Err(VirtioError::BadWidth { .. })
    ));
    assert!(matches!(
        t.read(reg::MAGIC_VALUE, 8),
        Err(VirtioError::BadWidth { .. })
    ));
    assert!(matches!(t.read(0x2, 4), Err(VirtioError::Unaligned { .. })));
    assert!(matches!(
        t.write(reg::MAGIC_VALUE, 4, 0),
        Err(VirtioError::ReadOnly(_))
    ));
    assert!(matches!(
        t.write(reg::DEVICE_ID, 4, 9),
        Err(VirtioError::ReadOnly(_))
    ));
    assert_eq!(r32(&mut t, reg::DEVICE_ID), 4);
    assert!(matches!(
        t.read(reg::QUEUE_NOTIFY, 4),
        Err(VirtioError::WriteOnly(_))
    ));
    assert!(matches!(t.read(0x0f0, 4), Err(VirtioError::NoRegister(_))));
    assert!(matches!(
        t.write(reg::STATUS, 1, 1),
        Err(VirtioError::BadWidth { .. })
    ));
    assert_eq!(r32(&mut t, reg::STATUS), 0);
    assert!(t.read(0x200, 4).is_err());
    assert!(matches!(
        t.read(0x101, 2),
        Err(VirtioError::Unaligned { .. })
    ));
}

#[test]
fn config_space_and_generation() {
    let disk = RamDisk::new(0x1_0000_0001 / 512 + 3);
    let cap = 0x1_0000_0001 / 512 + 3;
    let (mut t, irq) = new_dev(BlockDevice::new(disk, "id"));
    assert_eq!(t.read(0x100, 8).unwrap(), cap);
    assert_eq!(t.read(0x100, 4).unwrap(), cap & 0xffff_ffff);
    assert_eq!(t.read(0x104, 4).unwrap(), cap >> 32);
    assert_eq!(t.read(0x100, 1).unwrap(), cap & 0xff);
    assert_eq!(t.read(0x114, 4).unwrap(), 512, "blk_size");
    assert_eq!(t.read(0x10c, 4).unwrap(), 126, "seg_max");
    assert_eq!(t.read(0x1f0, 4).unwrap(), 0, "past the config reads zero");
    bring_up(&mut t, DEFAULT_FEATURES);
    t.config_changed();
    assert_eq!(r32(&mut t, reg::CONFIG_GENERATION), 1);
    assert_eq!(r32(&mut t, reg::INTERRUPT_STATUS), 2);
    assert!(irq.0.get());
    w32(&mut t, reg::INTERRUPT_ACK, 2).unwrap();
    assert!(!irq.0.get());
}

#[test]
fn interrupt_status_and_ack() {
    let (mut t, irq) = rng();
    let mut rings = bring_up(&mut t, DEFAULT_FEATURES);
    rings[0].push(t.memory_mut(), &[(DATA, 8, true)]);
    rings[0].notify(&mut t).unwrap();
    assert_eq!(r32(&mut t, reg::INTERRUPT_STATUS), 1);
    assert!(irq.0.get());
    w32(&mut t, reg::INTERRUPT_ACK, 2).unwrap();
    assert!(irq.0.get(), "acking another bit keeps the line up");
    w32(&mut t, reg::INTERRUPT_ACK, 1).unwrap();
    assert!(!irq.0.get());
    assert_eq!(irq.1.get(), 1);
}

#[test]
fn notify_before_driver_ok_is_ignored() {
    let (mut t, _) = rng();
    w32(&mut t, reg::STATUS, 3).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 1).unwrap();
    w32(&mut t, reg::DRIVER_FEATURES, 1).unwrap();
    w32(&mut t, reg::STATUS, 0xb).unwrap();
    let mut ring = Ring::at(0, 16);
    setup_queue(&mut t, &ring).unwrap();
    ring.push(t.memory_mut(), &[(DATA, 8, true)]);
    ring.notify(&mut t).unwrap();
    assert_eq!(ring.pop_used(t.memory()), None);
    // DRIVER_OK: the pending buffer is now served by the next notify.
    w32(&mut t, reg::STATUS, 0xf).unwrap();
    ring.notify(&mut t).unwrap();
    assert_eq!(ring.pop_used(t.memory()), Some((0, 8)));
}
