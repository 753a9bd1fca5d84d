//! Split-virtqueue processing with real ring layouts: chains, indirect tables, EVENT_IDX,
//! and malformed chains that must end in DEVICE_NEEDS_RESET without touching memory.

mod common;

use common::*;
use virtio_mmio::devices::rng::{RngDevice, XorShiftEntropy};
use virtio_mmio::features::status;
use virtio_mmio::queue::{
    Descriptor, VIRTQ_DESC_F_INDIRECT, VIRTQ_DESC_F_NEXT, VIRTQ_DESC_F_WRITE,
};
use virtio_mmio::regs::offset as reg;
use virtio_mmio::{GuestMemory, QueueError, VirtioError};

type Rng = Dev<RngDevice<XorShiftEntropy>>;

fn rng(features: u64) -> (Rng, Irq, Ring) {
    let (mut t, irq) = new_dev(RngDevice::new(XorShiftEntropy::new(7)));
    let rings = bring_up(&mut t, features);
    (t, irq, rings[0].clone())
}

fn data(t: &Rng, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    t.memory().read(DATA, &mut b).unwrap();
    b
}

#[test]
fn multi_buffer_chain_and_wraparound() {
    let (mut t, _, mut ring) = rng(DEFAULT_FEATURES);
    for round in 0..40u32 {
        let head = ring.push(t.memory_mut(), &[(DATA, 3, true), (DATA + 64, 5, true)]);
        ring.notify(&mut t).unwrap();
        assert_eq!(
            ring.pop_used(t.memory()),
            Some((u32::from(head), 8)),
            "round {round}"
        );
        ack(&mut t);
    }
    assert_eq!(t.queue(0).unwrap().next_used(), 40);
}

#[test]
fn several_chains_per_notify() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    for _ in 0..5 {
        ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    }
    ring.notify(&mut t).unwrap();
    for _ in 0..5 {
        assert!(ring.pop_used(t.memory()).is_some());
    }
    assert_eq!(irq.1.get(), 1, "one interrupt for the batch");
}

#[test]
fn indirect_descriptors() {
    let (mut t, _, mut ring) = rng(DEFAULT_FEATURES);
    let table = RAM_BASE + 0xc000;
    let head = ring.push_indirect(
        t.memory_mut(),
        table,
        &[(DATA, 16, true), (DATA + 32, 16, true)],
    );
    ring.notify(&mut t).unwrap();
    assert_eq!(ring.pop_used(t.memory()), Some((u32::from(head), 32)));
    let d = data(&t, 48);
    assert!(d[..16].iter().any(|&b| b != 0));
    assert!(d[16..32].iter().all(|&b| b == 0), "gap untouched");
    assert!(d[32..].iter().any(|&b| b != 0));
}

#[test]
fn event_idx_suppresses_interrupts_and_publishes_avail_event() {
    let (mut t, irq, mut ring) = rng(with_event_idx());
    // Driver asks for an interrupt only once used.idx passes 3 (i.e. after the 4th buffer).
    ring.set_used_event(t.memory_mut(), 3);
    for i in 0..3 {
        ring.push(t.memory_mut(), &[(DATA, 4, true)]);
        ring.notify(&mut t).unwrap();
        assert!(!irq.0.get(), "buffer {i}: suppressed");
        assert_eq!(
            ring.avail_event(t.memory()),
            i + 1,
            "avail_event follows next_avail"
        );
    }
    ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    ring.notify(&mut t).unwrap();
    assert!(irq.0.get(), "crossing used_event interrupts");
    assert_eq!(ack(&mut t), 1);
    // used_event behind: no interrupt for the next one either until the driver moves it.
    ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    ring.notify(&mut t).unwrap();
    assert!(!irq.0.get());
    ring.set_used_event(t.memory_mut(), 5);
    ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    ring.notify(&mut t).unwrap();
    assert!(irq.0.get());
}

#[test]
fn no_interrupt_flag_without_event_idx() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.set_avail_flags(t.memory_mut(), 1);
    ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    ring.notify(&mut t).unwrap();
    assert!(ring.pop_used(t.memory()).is_some());
    assert!(!irq.0.get());
    ring.set_avail_flags(t.memory_mut(), 0);
    ring.push(t.memory_mut(), &[(DATA, 4, true)]);
    ring.notify(&mut t).unwrap();
    assert!(irq.0.get());
}

/// Publishes a chain whose descriptors the test wrote by hand, notifies, and checks the
/// device went to NEEDS_RESET with a config interrupt, returned nothing and wrote nothing
/// into the data area.
fn expect_needs_reset(t: &mut Rng, ring: &mut Ring, irq: &Irq, head: u16) -> QueueError {
    ring.publish(t.memory_mut(), head);
    let err = match ring.notify(t) {
        Err(VirtioError::NeedsReset { queue: 0, error }) => error,
        other => panic!("expected NeedsReset, got {other:?}"),
    };
    assert_ne!(r32(t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
    assert_eq!(
        r32(t, reg::INTERRUPT_STATUS) & 2,
        2,
        "config-change interrupt"
    );
    assert!(irq.0.get());
    assert_eq!(ring.pop_used(t.memory()), None);
    assert!(data(t, 4096).iter().all(|&b| b == 0), "nothing written");
    // Further notifies are ignored until reset; a reset recovers the device.
    ring.notify(t).unwrap();
    assert_eq!(ring.pop_used(t.memory()), None);
    let mut rings = bring_up(t, DEFAULT_FEATURES);
    rings[0].push(t.memory_mut(), &[(DATA, 4, true)]);
    rings[0].notify(t).unwrap();
    assert!(rings[0].pop_used(t.memory()).is_some());
    err
}

fn wdesc(addr: u64, len: u32, flags: u16, next: u16) -> Descriptor {
    Descriptor {
        addr,
        len,
        flags,
        next,
    }
}

const W: u16 = VIRTQ_DESC_F_WRITE;
const N: u16 = VIRTQ_DESC_F_NEXT;
const I: u16 = VIRTQ_DESC_F_INDIRECT;

#[test]
fn malformed_loop() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 0, wdesc(DATA, 4, W | N, 1));
    ring.write_desc(t.memory_mut(), 1, wdesc(DATA, 4, W | N, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::ChainTooLong
    );
}

#[test]
fn malformed_self_loop() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 3, wdesc(DATA, 4, W | N, 3));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 3),
        QueueError::ChainTooLong
    );
}

#[test]
fn malformed_address_outside_ram() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 0, wdesc(0x1000, 4, W, 0));
    assert!(matches!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::Memory(_)
    ));
}

#[test]
fn malformed_buffer_straddles_end_of_ram() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    let end = RAM_BASE + RAM_SIZE as u64;
    ring.write_desc(t.memory_mut(), 0, wdesc(end - 2, 4, W, 0));
    assert!(matches!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::Memory(_)
    ));
}

#[test]
fn malformed_address_overflow() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 0, wdesc(u64::MAX - 1, 4, W, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::AddressOverflow
    );
}

#[test]
fn malformed_next_index() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 0, wdesc(DATA, 4, W | N, 99));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::IndexOutOfRange {
            index: 99,
            size: 16
        }
    );
}

#[test]
fn malformed_head_index() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    assert!(matches!(
        expect_needs_reset(&mut t, &mut ring, &irq, 16),
        QueueError::IndexOutOfRange { index: 16, .. }
    ));
}

#[test]
fn malformed_too_big() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    // Nine buffers each covering all 2 MiB of RAM (each allowed alone) exceed the 16 MiB
    // chain limit.
    for i in 0..9 {
        let flags = if i < 8 { W | N } else { W };
        ring.write_desc(
            t.memory_mut(),
            i,
            wdesc(RAM_BASE, RAM_SIZE as u32, flags, i + 1),
        );
    }
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::ChainTooBig
    );
}

#[test]
fn malformed_write_before_read() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    ring.write_desc(t.memory_mut(), 0, wdesc(DATA, 4, W | N, 1));
    ring.write_desc(t.memory_mut(), 1, wdesc(DATA + 16, 4, 0, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::ReadAfterWrite
    );
}

#[test]
fn malformed_indirect_in_indirect() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    let table = RAM_BASE + 0xc000;
    let inner = RAM_BASE + 0xd000;
    t.memory_mut()
        .write(inner, &wdesc(DATA, 4, W, 0).to_bytes())
        .unwrap();
    t.memory_mut()
        .write(table, &wdesc(inner, 16, I, 0).to_bytes())
        .unwrap();
    ring.write_desc(t.memory_mut(), 0, wdesc(table, 16, I, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::NestedIndirect
    );
}

#[test]
fn malformed_indirect_with_next() {
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    let table = RAM_BASE + 0xc000;
    t.memory_mut()
        .write(table, &wdesc(DATA, 4, W, 0).to_bytes())
        .unwrap();
    ring.write_desc(t.memory_mut(), 0, wdesc(table, 16, I | N, 1));
    ring.write_desc(t.memory_mut(), 1, wdesc(DATA, 4, W, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::IndirectWithNext
    );
}

#[test]
fn malformed_indirect_loop_and_lengths() {
    let table = RAM_BASE + 0xc000;
    // A loop inside the indirect table.
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    t.memory_mut()
        .write(table, &wdesc(DATA, 4, W | N, 1).to_bytes())
        .unwrap();
    t.memory_mut()
        .write(table + 16, &wdesc(DATA, 4, W | N, 0).to_bytes())
        .unwrap();
    ring.write_desc(t.memory_mut(), 0, wdesc(table, 32, I, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::ChainTooLong
    );
    // next beyond the table.
    let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
    t.memory_mut()
        .write(table, &wdesc(DATA, 4, W | N, 2).to_bytes())
        .unwrap();
    ring.write_desc(t.memory_mut(), 0, wdesc(table, 32, I, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::IndexOutOfRange { index: 2, size: 2 }
    );
    // Table length not a multiple of 16, zero, huge.
    for len in [24, 0, 0x10_0000] {
        let (mut t, irq, mut ring) = rng(DEFAULT_FEATURES);
        ring.write_desc(t.memory_mut(), 0, wdesc(table, len, I, 0));
        assert_eq!(
            expect_needs_reset(&mut t, &mut ring, &irq, 0),
            QueueError::BadIndirectLength(len)
        );
    }
}

#[test]
fn indirect_requires_negotiation() {
    let (mut t, irq) = new_dev(RngDevice::new(XorShiftEntropy::new(7)));
    let mut ring = bring_up(&mut t, virtio_mmio::features::VIRTIO_F_VERSION_1)[0].clone();
    let table = RAM_BASE + 0xc000;
    t.memory_mut()
        .write(table, &wdesc(DATA, 4, W, 0).to_bytes())
        .unwrap();
    ring.write_desc(t.memory_mut(), 0, wdesc(table, 16, I, 0));
    assert_eq!(
        expect_needs_reset(&mut t, &mut ring, &irq, 0),
        QueueError::IndirectNotNegotiated
    );
}

#[test]
fn malformed_avail_index_jump() {
    let (mut t, _irq, ring) = rng(DEFAULT_FEATURES);
    t.memory_mut()
        .write(ring.avail + 2, &100u16.to_le_bytes())
        .unwrap();
    let r = ring.notify(&mut t);
    assert!(matches!(
        r,
        Err(VirtioError::NeedsReset {
            error: QueueError::AvailIndexJump {
                avail: 100,
                next: 0
            },
            ..
        })
    ));
    assert_ne!(r32(&mut t, reg::STATUS) & status::DEVICE_NEEDS_RESET, 0);
}
