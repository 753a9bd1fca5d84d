//! Split virtqueues (VIRTIO 1.1 §2.6), accessed only through [`GuestMemory`].
//!
//! # Memory ordering
//!
//! The guest's CPUs and the device model share coherent memory (the hypervisor runs on the
//! same inner-shareable domain). The model assumes [`GuestMemory`] accesses are ordinary
//! loads and stores and orders them with `core::sync::atomic::fence` where the spec requires:
//!
//! - after reading `avail.idx` and before reading ring entries and descriptors
//!   (`Acquire`: the driver wrote them before publishing the index);
//! - after writing a used element and before publishing `used.idx` (`Release`);
//! - between publishing `used.idx` and reading `used_event`/`avail.flags` to decide on an
//!   interrupt, and between writing `avail_event` and re-reading `avail.idx` (`SeqCst`, a
//!   full barrier, like the driver's own `virtio_mb`).

mod chain;
mod desc;
mod ring;

use core::sync::atomic::{fence, Ordering};

pub use chain::{
    parse_chain, ChainReader, ChainWriter, DescriptorChain, Segment, MAX_CHAIN_BYTES,
    MAX_INDIRECT_ENTRIES,
};
pub use desc::{
    Descriptor, DESC_SIZE, VIRTQ_DESC_F_INDIRECT, VIRTQ_DESC_F_NEXT, VIRTQ_DESC_F_WRITE,
};
pub use ring::{
    avail_ring_bytes, desc_table_bytes, need_event, used_ring_bytes, VIRTQ_AVAIL_F_NO_INTERRUPT,
    VIRTQ_USED_F_NO_NOTIFY,
};

use crate::error::QueueError;
use crate::features::{VIRTIO_F_EVENT_IDX, VIRTIO_F_INDIRECT_DESC};
use crate::mem::{GuestMemory, GuestMemoryExt};
use ring::{AvailRing, UsedRing};

/// Largest queue size virtio allows for split rings.
pub const MAX_QUEUE_SIZE: u16 = 32768;

/// One split virtqueue: the driver's configuration plus the device's ring indices.
#[derive(Clone, Debug)]
pub struct Queue {
    max_size: u16,
    size: u16,
    ready: bool,
    desc_table: u64,
    driver_area: u64,
    device_area: u64,
    event_idx: bool,
    indirect: bool,
    next_avail: u16,
    next_used: u16,
    /// `used.idx` when an interrupt was last considered.
    signalled_used: u16,
}

impl Queue {
    /// A queue offering at most `max_size` entries (a power of two, 1..=32768).
    pub fn new(max_size: u16) -> Self {
        let max_size = max_size.clamp(1, MAX_QUEUE_SIZE);
        Self {
            max_size,
            size: max_size,
            ready: false,
            desc_table: 0,
            driver_area: 0,
            device_area: 0,
            event_idx: false,
            indirect: false,
            next_avail: 0,
            next_used: 0,
            signalled_used: 0,
        }
    }

    /// Back to the state after device reset (size = maximum, not ready, addresses zero).
    pub fn reset(&mut self) {
        *self = Self::new(self.max_size);
    }

    /// `QueueNumMax`.
    pub fn max_size(&self) -> u16 {
        self.max_size
    }

    /// `QueueNum`: the size the driver chose.
    pub fn size(&self) -> u16 {
        self.size
    }

    /// `QueueReady`.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Guest-physical address of the descriptor table.
    pub fn desc_table(&self) -> u64 {
        self.desc_table
    }

    /// Guest-physical address of the available ring (driver area).
    pub fn driver_area(&self) -> u64 {
        self.driver_area
    }

    /// Guest-physical address of the used ring (device area).
    pub fn device_area(&self) -> u64 {
        self.device_area
    }

    /// The device's next available-ring index (how many chains it has taken, mod 2^16).
    pub fn next_avail(&self) -> u16 {
        self.next_avail
    }

    /// The device's used-ring index (how many chains it has returned, mod 2^16).
    pub fn next_used(&self) -> u16 {
        self.next_used
    }

    /// Sets `QueueNum` (checked when the queue is made ready).
    pub fn set_size(&mut self, size: u16) {
        self.size = size;
    }

    /// Sets the descriptor-table address.
    pub fn set_desc_table(&mut self, gpa: u64) {
        self.desc_table = gpa;
    }

    /// Sets the available-ring (driver area) address.
    pub fn set_driver_area(&mut self, gpa: u64) {
        self.driver_area = gpa;
    }

    /// Sets the used-ring (device area) address.
    pub fn set_device_area(&mut self, gpa: u64) {
        self.device_area = gpa;
    }

    /// Makes the queue ready after checking its configuration: size a power of two no larger
    /// than the maximum, areas aligned (16/2/4 bytes) and inside guest RAM. `features` are
    /// the negotiated features (EVENT_IDX and INDIRECT_DESC are taken from them).
    pub fn enable<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &M,
        features: u64,
    ) -> Result<(), &'static str> {
        let size = self.size;
        if size == 0 || !size.is_power_of_two() {
            return Err("queue size is not a power of two");
        }
        if size > self.max_size {
            return Err("queue size above QueueNumMax");
        }
        if !self.desc_table.is_multiple_of(16)
            || !self.driver_area.is_multiple_of(2)
            || !self.device_area.is_multiple_of(4)
        {
            return Err("queue area misaligned");
        }
        if mem
            .check_range(self.desc_table, desc_table_bytes(size))
            .is_err()
            || mem
                .check_range(self.driver_area, avail_ring_bytes(size))
                .is_err()
            || mem
                .check_range(self.device_area, used_ring_bytes(size))
                .is_err()
        {
            return Err("queue area outside guest RAM");
        }
        self.event_idx = features & VIRTIO_F_EVENT_IDX != 0;
        self.indirect = features & VIRTIO_F_INDIRECT_DESC != 0;
        self.next_avail = 0;
        self.next_used = 0;
        self.signalled_used = 0;
        self.ready = true;
        Ok(())
    }

    /// `QueueReady = 0`: the device stops using the queue.
    pub fn disable(&mut self) {
        self.ready = false;
    }

    fn avail(&self) -> AvailRing {
        AvailRing {
            base: self.driver_area,
            size: self.size,
        }
    }

    fn used(&self) -> UsedRing {
        UsedRing {
            base: self.device_area,
            size: self.size,
        }
    }

    /// Takes the next available chain, validated, or `None` if the driver has made none
    /// available (or the queue is not ready).
    ///
    /// With EVENT_IDX, when the ring is found empty the device publishes `avail_event` (asking
    /// to be notified of the next buffer) and looks again, closing the race with a driver that
    /// adds a buffer meanwhile.
    pub fn pop<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &mut M,
    ) -> Result<Option<DescriptorChain>, QueueError> {
        if !self.ready {
            return Ok(None);
        }
        let avail = self.avail();
        let mut avail_idx = mem.read_u16(avail.idx())?;
        if avail_idx == self.next_avail {
            if !self.event_idx {
                return Ok(None);
            }
            mem.write_u16(self.used().avail_event(), self.next_avail)?;
            fence(Ordering::SeqCst);
            avail_idx = mem.read_u16(avail.idx())?;
            if avail_idx == self.next_avail {
                return Ok(None);
            }
        }
        if avail_idx.wrapping_sub(self.next_avail) > self.size {
            return Err(QueueError::AvailIndexJump {
                avail: avail_idx,
                next: self.next_avail,
            });
        }
        // The ring entry and the descriptors were written before `avail.idx`.
        fence(Ordering::Acquire);
        let head = mem.read_u16(avail.ring(self.next_avail))?;
        let chain = parse_chain(mem, self.desc_table, self.size, head, self.indirect)?;
        self.next_avail = self.next_avail.wrapping_add(1);
        Ok(Some(chain))
    }

    /// Returns chain `head` to the driver with `len` bytes written into its writable buffers.
    pub fn add_used<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &mut M,
        head: u16,
        len: u32,
    ) -> Result<(), QueueError> {
        let used = self.used();
        let mut elem = [0u8; 8];
        elem[..4].copy_from_slice(&u32::from(head).to_le_bytes());
        elem[4..].copy_from_slice(&len.to_le_bytes());
        mem.write(used.elem(self.next_used), &elem)?;
        // The element must be visible before the index that publishes it.
        fence(Ordering::Release);
        self.next_used = self.next_used.wrapping_add(1);
        mem.write_u16(used.idx(), self.next_used)?;
        Ok(())
    }

    /// Whether the driver wants an interrupt for the used buffers added since the last call
    /// (VIRTIO 1.1 §2.6.7: `used_event` with EVENT_IDX, else `VIRTQ_AVAIL_F_NO_INTERRUPT`).
    pub fn should_notify<M: GuestMemory + ?Sized>(&mut self, mem: &M) -> Result<bool, QueueError> {
        if !self.ready {
            return Ok(false);
        }
        let new = self.next_used;
        let old = self.signalled_used;
        if old == new {
            return Ok(false);
        }
        // `used.idx` must be published before the driver's suppression state is read.
        fence(Ordering::SeqCst);
        self.signalled_used = new;
        let avail = self.avail();
        if self.event_idx {
            let event = mem.read_u16(avail.used_event())?;
            Ok(need_event(event, new, old))
        } else {
            Ok(mem.read_u16(avail.flags())? & VIRTQ_AVAIL_F_NO_INTERRUPT == 0)
        }
    }
}
