//! Error types reported to the host.

use core::fmt;

/// A guest-physical access that the host's [`GuestMemory`](crate::GuestMemory) refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemError {
    /// First guest-physical address of the refused access.
    pub gpa: u64,
    /// Length of the refused access in bytes.
    pub len: u64,
}

impl fmt::Display for MemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "guest memory access {:#x}+{:#x} outside RAM",
            self.gpa, self.len
        )
    }
}

/// Why a virtqueue (or a request on it) was rejected as malformed.
///
/// Any of these puts the device into `DEVICE_NEEDS_RESET` (VIRTIO 1.1 §2.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// A ring or buffer address is outside guest RAM.
    Memory(MemError),
    /// A descriptor index is not below the queue (or indirect table) size.
    IndexOutOfRange {
        /// The offending index.
        index: u16,
        /// The size of the table it indexes.
        size: u32,
    },
    /// A chain visits more descriptors than its table holds: it loops.
    ChainTooLong,
    /// The bytes described by a chain exceed [`MAX_CHAIN_BYTES`](crate::queue::MAX_CHAIN_BYTES).
    ChainTooBig,
    /// `addr + len` of a descriptor wraps around the address space.
    AddressOverflow,
    /// A device-readable descriptor follows a device-writable one.
    ReadAfterWrite,
    /// An indirect descriptor inside an indirect table.
    NestedIndirect,
    /// An indirect descriptor that also has `VIRTQ_DESC_F_NEXT`.
    IndirectWithNext,
    /// An indirect descriptor whose length is zero, not a multiple of 16 or too large.
    BadIndirectLength(u32),
    /// An indirect descriptor although `VIRTIO_RING_F_INDIRECT_DESC` was not negotiated.
    IndirectNotNegotiated,
    /// The driver's available index ran more than a queue size ahead of the device.
    AvailIndexJump {
        /// Available index read from the ring.
        avail: u16,
        /// The device's next available index.
        next: u16,
    },
    /// A request whose buffers do not have the layout its device type requires.
    BadRequest(&'static str),
}

impl From<MemError> for QueueError {
    fn from(e: MemError) -> Self {
        QueueError::Memory(e)
    }
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Memory(e) => write!(f, "{e}"),
            QueueError::IndexOutOfRange { index, size } => {
                write!(
                    f,
                    "descriptor index {index} out of range (table size {size})"
                )
            }
            QueueError::ChainTooLong => write!(f, "descriptor chain loops or is too long"),
            QueueError::ChainTooBig => write!(f, "descriptor chain describes too many bytes"),
            QueueError::AddressOverflow => write!(f, "descriptor address + length overflows"),
            QueueError::ReadAfterWrite => {
                write!(f, "device-readable descriptor after a device-writable one")
            }
            QueueError::NestedIndirect => write!(f, "indirect descriptor inside an indirect table"),
            QueueError::IndirectWithNext => write!(f, "indirect descriptor with NEXT flag"),
            QueueError::BadIndirectLength(l) => write!(f, "bad indirect table length {l:#x}"),
            QueueError::IndirectNotNegotiated => {
                write!(f, "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC")
            }
            QueueError::AvailIndexJump { avail, next } => {
                write!(
                    f,
                    "available index {avail} more than a queue ahead of {next}"
                )
            }
            QueueError::BadRequest(what) => write!(f, "malformed request: {what}"),
        }
    }
}

/// Why an MMIO access to the transport was not carried out as asked.
///
/// The transport has already completed the access the architectural way (reads as zero,
/// writes ignored) or has put the device into `DEVICE_NEEDS_RESET`; the caller only logs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtioError {
    /// An access whose width is not allowed at that offset (registers are 32-bit only).
    BadWidth {
        /// Offset into the MMIO window.
        offset: u64,
        /// Access size in bytes.
        size: u8,
    },
    /// An offset that is not aligned to the access size.
    Unaligned {
        /// Offset into the MMIO window.
        offset: u64,
        /// Access size in bytes.
        size: u8,
    },
    /// A write to a read-only register (or a read of a write-only one).
    ReadOnly(u64),
    /// A read of a write-only register.
    WriteOnly(u64),
    /// An offset with no register.
    NoRegister(u64),
    /// A write that the current device status does not allow (e.g. queue set-up while the
    /// queue is ready, features after `FEATURES_OK`, clearing status bits).
    NotNow {
        /// Offset of the register.
        offset: u64,
        /// Why it was refused.
        why: &'static str,
    },
    /// `QueueReady` was set on a queue whose size or addresses are invalid.
    BadQueueConfig {
        /// Queue index.
        queue: u16,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A queue held a malformed chain: the device now needs a reset.
    NeedsReset {
        /// Queue index.
        queue: u16,
        /// What was malformed.
        error: QueueError,
    },
}

impl fmt::Display for VirtioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VirtioError::BadWidth { offset, size } => {
                write!(f, "{size}-byte access at {offset:#x} not allowed")
            }
            VirtioError::Unaligned { offset, size } => {
                write!(f, "unaligned {size}-byte access at {offset:#x}")
            }
            VirtioError::ReadOnly(o) => write!(f, "write to read-only register {o:#x}"),
            VirtioError::WriteOnly(o) => write!(f, "read of write-only register {o:#x}"),
            VirtioError::NoRegister(o) => write!(f, "no register at {o:#x}"),
            VirtioError::NotNow { offset, why } => write!(f, "write to {offset:#x} refused: {why}"),
            VirtioError::BadQueueConfig { queue, why } => {
                write!(f, "queue {queue} not made ready: {why}")
            }
            VirtioError::NeedsReset { queue, error } => {
                write!(f, "queue {queue}: {error}; device needs reset")
            }
        }
    }
}
