//! What the device models need from their host: guest memory and an interrupt line.

use alloc::vec;
use alloc::vec::Vec;

use crate::error::MemError;

/// Guest-physical memory as the host lets a device see it.
///
/// The hypervisor implements this on the VM's Stage-2-checked RAM: every access must lie
/// entirely inside RAM that belongs to the VM, otherwise it fails with [`MemError`] and nothing
/// is read or written. Device models touch guest memory *only* through this trait (never
/// through raw pointers), so a hostile address cannot reach hypervisor memory.
///
/// Ordering: the device models issue `core::sync::atomic::fence` where VIRTIO requires an
/// order between accesses (see [`Queue`](crate::queue::Queue)); an implementation must make
/// each access an ordinary load/store of coherent memory that those fences order (plain
/// `copy` of normal cacheable memory on the same inner-shareable domain as the guest's CPUs
/// is enough on AArch64).
pub trait GuestMemory {
    /// Copies `buf.len()` bytes from guest-physical address `gpa` into `buf`.
    fn read(&self, gpa: u64, buf: &mut [u8]) -> Result<(), MemError>;
    /// Copies `buf` to guest-physical address `gpa`.
    fn write(&mut self, gpa: u64, buf: &[u8]) -> Result<(), MemError>;
    /// Checks that `len` bytes from `gpa` are guest RAM, without touching them.
    ///
    /// The chain parser calls this for every buffer before a device uses it, so that a chain
    /// that is accepted is known to stay inside guest RAM.
    fn check_range(&self, gpa: u64, len: u64) -> Result<(), MemError>;
}

/// Little-endian scalar accessors on top of [`GuestMemory`] (virtio 1.x is little endian).
pub(crate) trait GuestMemoryExt: GuestMemory {
    fn read_u16(&self, gpa: u64) -> Result<u16, MemError> {
        let mut b = [0u8; 2];
        self.read(gpa, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }
    fn write_u16(&mut self, gpa: u64, v: u16) -> Result<(), MemError> {
        self.write(gpa, &v.to_le_bytes())
    }
}

impl<T: GuestMemory + ?Sized> GuestMemoryExt for T {}

/// The interrupt a virtio-mmio device raises (on the hypervisor: a virtual SPI in the vgic).
///
/// virtio-mmio interrupts are level-sensitive: the transport asserts the line while
/// `InterruptStatus != 0` and deasserts it when the driver has acknowledged every bit.
/// An implementation that only has edge delivery injects on `false -> true`.
pub trait InterruptLine {
    /// Drives the line to `level`. Called only when the level changes.
    fn set_level(&mut self, level: bool);
}

/// An interrupt line that goes nowhere (devices polled by the guest, tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoInterrupt;

impl InterruptLine for NoInterrupt {
    fn set_level(&mut self, _level: bool) {}
}

/// Guest memory kept in a byte vector: `len` bytes starting at guest-physical `base`.
///
/// Used by the host tests, and usable by an embedder that keeps guest RAM in a buffer.
#[derive(Debug, Clone)]
pub struct VecMemory {
    base: u64,
    bytes: Vec<u8>,
}

impl VecMemory {
    /// Zeroed memory of `len` bytes at guest-physical address `base`.
    pub fn new(base: u64, len: usize) -> Self {
        Self {
            base,
            bytes: vec![0; len],
        }
    }

    /// Guest-physical address of the first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The whole memory as bytes (index 0 is `base`).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The whole memory as mutable bytes (index 0 is `base`).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    fn span(&self, gpa: u64, len: u64) -> Result<core::ops::Range<usize>, MemError> {
        let err = MemError { gpa, len };
        let start = gpa.checked_sub(self.base).ok_or(err)?;
        let end = start.checked_add(len).ok_or(err)?;
        if end > self.bytes.len() as u64 {
            return Err(err);
        }
        Ok(start as usize..end as usize)
    }
}

impl GuestMemory for VecMemory {
    fn read(&self, gpa: u64, buf: &mut [u8]) -> Result<(), MemError> {
        let r = self.span(gpa, buf.len() as u64)?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }

    fn write(&mut self, gpa: u64, buf: &[u8]) -> Result<(), MemError> {
        let r = self.span(gpa, buf.len() as u64)?;
        self.bytes[r].copy_from_slice(buf);
        Ok(())
    }

    fn check_range(&self, gpa: u64, len: u64) -> Result<(), MemError> {
        self.span(gpa, len).map(|_| ())
    }
}
