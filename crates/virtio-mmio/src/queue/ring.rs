//! Layout of the available (driver) and used (device) rings (VIRTIO 1.1 §2.6.6, §2.6.8).
//!
//! ```text
//! avail: le16 flags; le16 idx; le16 ring[size]; le16 used_event;   (used_event: EVENT_IDX)
//! used:  le16 flags; le16 idx; {le32 id; le32 len} ring[size]; le16 avail_event;
//! ```

/// `avail.flags`: the driver does not want used-buffer interrupts (without EVENT_IDX).
pub const VIRTQ_AVAIL_F_NO_INTERRUPT: u16 = 1;
/// `used.flags`: the device does not want available-buffer notifications (without EVENT_IDX).
pub const VIRTQ_USED_F_NO_NOTIFY: u16 = 1;

/// Bytes of the descriptor table of a queue of `size` entries.
pub const fn desc_table_bytes(size: u16) -> u64 {
    16 * size as u64
}

/// Bytes of the available ring (driver area) of a queue of `size` entries, with `used_event`.
pub const fn avail_ring_bytes(size: u16) -> u64 {
    6 + 2 * size as u64
}

/// Bytes of the used ring (device area) of a queue of `size` entries, with `avail_event`.
pub const fn used_ring_bytes(size: u16) -> u64 {
    6 + 8 * size as u64
}

/// Addresses inside the available ring at `base` of a queue of `size` entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AvailRing {
    pub base: u64,
    pub size: u16,
}

impl AvailRing {
    pub fn flags(&self) -> u64 {
        self.base
    }
    pub fn idx(&self) -> u64 {
        self.base + 2
    }
    pub fn ring(&self, i: u16) -> u64 {
        self.base + 4 + 2 * u64::from(i % self.size)
    }
    pub fn used_event(&self) -> u64 {
        self.base + 4 + 2 * u64::from(self.size)
    }
}

/// Addresses inside the used ring at `base` of a queue of `size` entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UsedRing {
    pub base: u64,
    pub size: u16,
}

impl UsedRing {
    pub fn idx(&self) -> u64 {
        self.base + 2
    }
    pub fn elem(&self, i: u16) -> u64 {
        self.base + 4 + 8 * u64::from(i % self.size)
    }
    pub fn avail_event(&self) -> u64 {
        self.base + 4 + 8 * u64::from(self.size)
    }
}

/// `vring_need_event` (VIRTIO 1.1 §2.6.7.2): whether moving an index from `old` to `new`
/// crossed the other side's `event` index.
pub const fn need_event(event: u16, new: u16, old: u16) -> bool {
    new.wrapping_sub(event).wrapping_sub(1) < new.wrapping_sub(old)
}
