//! A minimal driver side for the host tests: writes real split-ring layouts (VIRTIO 1.1
//! §2.6) into a byte-buffer guest memory and drives the transport through its registers.
#![allow(dead_code)]

use std::cell::Cell;
use std::rc::Rc;

use virtio_mmio::features::{
    status, VIRTIO_F_EVENT_IDX, VIRTIO_F_INDIRECT_DESC, VIRTIO_F_VERSION_1,
};
use virtio_mmio::queue::{
    Descriptor, VIRTQ_DESC_F_INDIRECT, VIRTQ_DESC_F_NEXT, VIRTQ_DESC_F_WRITE,
};
use virtio_mmio::regs::offset as reg;
use virtio_mmio::{GuestMemory, InterruptLine, VecMemory, VirtioDevice, VirtioError, VirtioMmio};

pub const RAM_BASE: u64 = 0x4000_0000;
pub const RAM_SIZE: usize = 0x20_0000;
/// Where test data buffers go.
pub const DATA: u64 = RAM_BASE + 0x10_0000;

/// Interrupt line whose level the test can watch.
#[derive(Clone, Default)]
pub struct Irq(pub Rc<Cell<bool>>, pub Rc<Cell<u32>>);

impl InterruptLine for Irq {
    fn set_level(&mut self, level: bool) {
        if level && !self.0.get() {
            self.1.set(self.1.get() + 1);
        }
        self.0.set(level);
    }
}

pub type Dev<D> = VirtioMmio<D, VecMemory, Irq>;

pub fn new_dev<D: VirtioDevice>(d: D) -> (Dev<D>, Irq) {
    let irq = Irq::default();
    (
        VirtioMmio::new(d, VecMemory::new(RAM_BASE, RAM_SIZE), irq.clone()),
        irq,
    )
}

pub fn r32<D: VirtioDevice>(t: &mut Dev<D>, off: u64) -> u32 {
    t.read(off, 4).expect("register read") as u32
}

pub fn w32<D: VirtioDevice>(t: &mut Dev<D>, off: u64, v: u32) -> Result<(), VirtioError> {
    t.write(off, 4, u64::from(v))
}

/// Driver-side state of one queue.
#[derive(Clone, Debug)]
pub struct Ring {
    pub index: u16,
    pub size: u16,
    pub desc: u64,
    pub avail: u64,
    pub used: u64,
    pub next_desc: u16,
    pub avail_idx: u16,
    pub last_used: u16,
}

impl Ring {
    pub fn at(index: u16, size: u16) -> Self {
        let base = RAM_BASE + u64::from(index) * 0x1_0000;
        Ring {
            index,
            size,
            desc: base,
            avail: base + 0x4000,
            used: base + 0x8000,
            next_desc: 0,
            avail_idx: 0,
            last_used: 0,
        }
    }

    pub fn write_desc(&self, mem: &mut VecMemory, i: u16, d: Descriptor) {
        mem.write(self.desc + 16 * u64::from(i), &d.to_bytes())
            .unwrap();
    }

    /// Publishes `head` in the available ring.
    pub fn publish(&mut self, mem: &mut VecMemory, head: u16) {
        let slot = self.avail + 4 + 2 * u64::from(self.avail_idx % self.size);
        mem.write(slot, &head.to_le_bytes()).unwrap();
        self.avail_idx = self.avail_idx.wrapping_add(1);
        mem.write(self.avail + 2, &self.avail_idx.to_le_bytes())
            .unwrap();
    }

    /// Writes a direct chain of `(addr, len, device_writable)` buffers and publishes it.
    pub fn push(&mut self, mem: &mut VecMemory, bufs: &[(u64, u32, bool)]) -> u16 {
        let head = self.next_desc % self.size;
        for (k, &(addr, len, w)) in bufs.iter().enumerate() {
            let i = (self.next_desc + k as u16) % self.size;
            let last = k + 1 == bufs.len();
            let flags =
                if w { VIRTQ_DESC_F_WRITE } else { 0 } | if last { 0 } else { VIRTQ_DESC_F_NEXT };
            let next = (i + 1) % self.size;
            self.write_desc(
                mem,
                i,
                Descriptor {
                    addr,
                    len,
                    flags,
                    next,
                },
            );
        }
        self.next_desc = self.next_desc.wrapping_add(bufs.len() as u16);
        self.publish(mem, head);
        head
    }

    /// Writes an indirect table at `table` holding the buffers, one direct descriptor
    /// pointing at it, and publishes it.
    pub fn push_indirect(
        &mut self,
        mem: &mut VecMemory,
        table: u64,
        bufs: &[(u64, u32, bool)],
    ) -> u16 {
        for (k, &(addr, len, w)) in bufs.iter().enumerate() {
            let last = k + 1 == bufs.len();
            let flags =
                if w { VIRTQ_DESC_F_WRITE } else { 0 } | if last { 0 } else { VIRTQ_DESC_F_NEXT };
            let d = Descriptor {
                addr,
                len,
                flags,
                next: k as u16 + 1,
            };
            mem.write(table + 16 * k as u64, &d.to_bytes()).unwrap();
        }
        let head = self.next_desc % self.size;
        self.write_desc(
            mem,
            head,
            Descriptor {
                addr: table,
                len: 16 * bufs.len() as u32,
                flags: VIRTQ_DESC_F_INDIRECT,
                next: 0,
            },
        );
        self.next_desc = self.next_desc.wrapping_add(1);
        self.publish(mem, head);
        head
    }

    pub fn used_idx(&self, mem: &VecMemory) -> u16 {
        let mut b = [0u8; 2];
        mem.read(self.used + 2, &mut b).unwrap();
        u16::from_le_bytes(b)
    }

    /// Next used element `(id, len)`, if the device returned one.
    pub fn pop_used(&mut self, mem: &VecMemory) -> Option<(u32, u32)> {
        if self.used_idx(mem) == self.last_used {
            return None;
        }
        let mut b = [0u8; 8];
        mem.read(
            self.used + 4 + 8 * u64::from(self.last_used % self.size),
            &mut b,
        )
        .unwrap();
        self.last_used = self.last_used.wrapping_add(1);
        Some((
            u32::from_le_bytes(b[..4].try_into().unwrap()),
            u32::from_le_bytes(b[4..].try_into().unwrap()),
        ))
    }

    pub fn set_used_event(&self, mem: &mut VecMemory, v: u16) {
        mem.write(self.avail + 4 + 2 * u64::from(self.size), &v.to_le_bytes())
            .unwrap();
    }

    pub fn avail_event(&self, mem: &VecMemory) -> u16 {
        let mut b = [0u8; 2];
        mem.read(self.used + 4 + 8 * u64::from(self.size), &mut b)
            .unwrap();
        u16::from_le_bytes(b)
    }

    pub fn set_avail_flags(&self, mem: &mut VecMemory, v: u16) {
        mem.write(self.avail, &v.to_le_bytes()).unwrap();
    }

    pub fn notify<D: VirtioDevice>(&self, t: &mut Dev<D>) -> Result<(), VirtioError> {
        w32(t, reg::QUEUE_NOTIFY, u32::from(self.index))
    }
}

pub const DEFAULT_FEATURES: u64 = VIRTIO_F_VERSION_1 | VIRTIO_F_INDIRECT_DESC;

/// Status handshake + feature negotiation (accepting `extra` on top of VERSION_1) + queue
/// set-up of every queue (size 16) + DRIVER_OK. Returns the rings.
pub fn bring_up<D: VirtioDevice>(t: &mut Dev<D>, features: u64) -> Vec<Ring> {
    w32(t, reg::STATUS, 0).unwrap();
    w32(t, reg::STATUS, status::ACKNOWLEDGE).unwrap();
    w32(t, reg::STATUS, status::ACKNOWLEDGE | status::DRIVER).unwrap();
    let offered = t.device_features();
    let f = features & offered;
    w32(t, reg::DRIVER_FEATURES_SEL, 0).unwrap();
    w32(t, reg::DRIVER_FEATURES, f as u32).unwrap();
    w32(t, reg::DRIVER_FEATURES_SEL, 1).unwrap();
    w32(t, reg::DRIVER_FEATURES, (f >> 32) as u32).unwrap();
    w32(
        t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK,
    )
    .unwrap();
    assert_ne!(
        r32(t, reg::STATUS) & status::FEATURES_OK,
        0,
        "FEATURES_OK refused"
    );
    let n = t.device().num_queues();
    let mut rings = Vec::new();
    for q in 0..n {
        let ring = Ring::at(q, 16);
        setup_queue(t, &ring).unwrap();
        rings.push(ring);
    }
    w32(
        t,
        reg::STATUS,
        status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK | status::DRIVER_OK,
    )
    .unwrap();
    rings
}

pub fn setup_queue<D: VirtioDevice>(t: &mut Dev<D>, ring: &Ring) -> Result<(), VirtioError> {
    w32(t, reg::QUEUE_SEL, u32::from(ring.index))?;
    w32(t, reg::QUEUE_NUM, u32::from(ring.size))?;
    w32(t, reg::QUEUE_DESC_LOW, ring.desc as u32)?;
    w32(t, reg::QUEUE_DESC_HIGH, (ring.desc >> 32) as u32)?;
    w32(t, reg::QUEUE_DRIVER_LOW, ring.avail as u32)?;
    w32(t, reg::QUEUE_DRIVER_HIGH, (ring.avail >> 32) as u32)?;
    w32(t, reg::QUEUE_DEVICE_LOW, ring.used as u32)?;
    w32(t, reg::QUEUE_DEVICE_HIGH, (ring.used >> 32) as u32)?;
    w32(t, reg::QUEUE_READY, 1)
}

pub fn with_event_idx() -> u64 {
    DEFAULT_FEATURES | VIRTIO_F_EVENT_IDX
}

/// Acknowledges every pending interrupt.
pub fn ack<D: VirtioDevice>(t: &mut Dev<D>) -> u32 {
    let s = r32(t, reg::INTERRUPT_STATUS);
    w32(t, reg::INTERRUPT_ACK, s).unwrap();
    s
}
