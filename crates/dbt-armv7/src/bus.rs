//! Physical memory and devices as seen by the interpreter.

use alloc::vec;
use alloc::vec::Vec;

/// A failed bus access: becomes a synchronous external abort in the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusFault;

/// Physical address space (RAM and MMIO) of the guest. `size` is 1, 2, 4 or 8 bytes;
/// accesses are little-endian and naturally sized (the interpreter splits unaligned ones).
pub trait Bus {
    /// Reads `size` bytes at physical address `pa`.
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault>;
    /// Writes the low `size` bytes of `value` at `pa`.
    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault>;
    /// Fast path for instruction fetch and plain RAM: a slice of RAM starting at `pa`
    /// (at least up to the end of its 4 KiB page), or `None` to go through `read`.
    fn ram(&mut self, _pa: u64) -> Option<&[u8]> {
        None
    }
}

/// A flat little-endian RAM at `[base, base + len)`; anything else is a bus fault.
#[derive(Clone, Debug)]
pub struct FlatRam {
    /// Physical base address.
    pub base: u64,
    /// Contents.
    pub mem: Vec<u8>,
}

impl FlatRam {
    /// Zero-filled RAM of `len` bytes at `base`.
    pub fn new(base: u64, len: usize) -> FlatRam {
        FlatRam {
            base,
            mem: vec![0; len],
        }
    }

    /// Copies `data` to physical address `pa`.
    pub fn load(&mut self, pa: u64, data: &[u8]) {
        let o = (pa - self.base) as usize;
        self.mem[o..o + data.len()].copy_from_slice(data);
    }

    fn off(&self, pa: u64, size: u8) -> Result<usize, BusFault> {
        let o = pa.wrapping_sub(self.base);
        if o.checked_add(size as u64)
            .is_some_and(|e| e <= self.mem.len() as u64)
        {
            Ok(o as usize)
        } else {
            Err(BusFault)
        }
    }
}

impl Bus for FlatRam {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        let o = self.off(pa, size)?;
        let mut b = [0u8; 8];
        b[..size as usize].copy_from_slice(&self.mem[o..o + size as usize]);
        Ok(u64::from_le_bytes(b))
    }

    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault> {
        let o = self.off(pa, size)?;
        self.mem[o..o + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
        Ok(())
    }

    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        let o = self.off(pa, 1).ok()?;
        Some(&self.mem[o..])
    }
}
