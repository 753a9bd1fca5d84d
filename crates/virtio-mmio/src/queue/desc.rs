//! Split-virtqueue descriptors (VIRTIO 1.1 §2.6.5).

use crate::error::MemError;
use crate::mem::GuestMemory;

/// This descriptor continues via the `next` field.
pub const VIRTQ_DESC_F_NEXT: u16 = 1;
/// The buffer is device write-only (otherwise device read-only).
pub const VIRTQ_DESC_F_WRITE: u16 = 2;
/// The buffer holds a table of indirect descriptors.
pub const VIRTQ_DESC_F_INDIRECT: u16 = 4;

/// Size of one descriptor in guest memory.
pub const DESC_SIZE: u64 = 16;

/// One descriptor as it lies in a descriptor table: `le64 addr; le32 len; le16 flags; le16 next`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Descriptor {
    /// Guest-physical address of the buffer.
    pub addr: u64,
    /// Length of the buffer in bytes.
    pub len: u32,
    /// `VIRTQ_DESC_F_*` flags.
    pub flags: u16,
    /// Index of the next descriptor if `flags` has [`VIRTQ_DESC_F_NEXT`].
    pub next: u16,
}

impl Descriptor {
    /// Decodes the 16 little-endian bytes of a descriptor.
    pub fn from_bytes(b: &[u8; 16]) -> Self {
        Self {
            addr: u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            len: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            flags: u16::from_le_bytes([b[12], b[13]]),
            next: u16::from_le_bytes([b[14], b[15]]),
        }
    }

    /// Encodes the descriptor as it lies in guest memory.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..12].copy_from_slice(&self.len.to_le_bytes());
        b[12..14].copy_from_slice(&self.flags.to_le_bytes());
        b[14..16].copy_from_slice(&self.next.to_le_bytes());
        b
    }

    /// Reads descriptor `index` of the table at `table`. The caller has bounds-checked `index`.
    pub fn read<M: GuestMemory + ?Sized>(
        mem: &M,
        table: u64,
        index: u16,
    ) -> Result<Self, MemError> {
        let gpa = table
            .checked_add(u64::from(index) * DESC_SIZE)
            .ok_or(MemError {
                gpa: table,
                len: DESC_SIZE,
            })?;
        let mut b = [0u8; 16];
        mem.read(gpa, &mut b)?;
        Ok(Self::from_bytes(&b))
    }

    /// The chain continues.
    pub fn has_next(&self) -> bool {
        self.flags & VIRTQ_DESC_F_NEXT != 0
    }

    /// The buffer is device write-only.
    pub fn is_write(&self) -> bool {
        self.flags & VIRTQ_DESC_F_WRITE != 0
    }

    /// The buffer is an indirect descriptor table.
    pub fn is_indirect(&self) -> bool {
        self.flags & VIRTQ_DESC_F_INDIRECT != 0
    }
}
