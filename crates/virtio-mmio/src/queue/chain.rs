//! Descriptor-chain validation and the readers/writers devices use on accepted chains.

use alloc::vec::Vec;

use super::desc::{Descriptor, DESC_SIZE};
use crate::error::{MemError, QueueError};
use crate::mem::GuestMemory;

/// Largest number of bytes one chain may describe (readable + writable).
pub const MAX_CHAIN_BYTES: u64 = 16 << 20;

/// Largest indirect descriptor table accepted, in entries.
pub const MAX_INDIRECT_ENTRIES: u32 = 1024;

/// A guest buffer: `len` bytes at guest-physical `addr`, known to be inside guest RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Guest-physical address.
    pub addr: u64,
    /// Length in bytes (never zero).
    pub len: u32,
}

/// A validated descriptor chain: its head index and its buffers, device-readable ones first.
///
/// Validation (see [`parse_chain`]) guarantees: every index was in range, the chain did not
/// loop, every buffer lies inside guest RAM (as [`GuestMemory::check_range`] said), no
/// readable buffer follows a writable one, indirect tables are not nested and the total length
/// is at most [`MAX_CHAIN_BYTES`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescriptorChain {
    /// Index of the head descriptor: what goes into the used ring.
    pub head: u16,
    /// Device-readable buffers, in order.
    pub readable: Vec<Segment>,
    /// Device-writable buffers, in order.
    pub writable: Vec<Segment>,
}

impl DescriptorChain {
    /// Total bytes of the device-readable buffers.
    pub fn readable_len(&self) -> u64 {
        self.readable.iter().map(|s| u64::from(s.len)).sum()
    }

    /// Total bytes of the device-writable buffers.
    pub fn writable_len(&self) -> u64 {
        self.writable.iter().map(|s| u64::from(s.len)).sum()
    }

    /// A reader over the device-readable buffers.
    pub fn reader(&self) -> ChainReader<'_> {
        ChainReader::new(&self.readable)
    }

    /// A writer over the device-writable buffers.
    pub fn writer(&self) -> ChainWriter<'_> {
        ChainWriter::new(&self.writable)
    }
}

/// Where descriptors are read from while walking a chain.
struct Table {
    addr: u64,
    entries: u32,
    indirect: bool,
}

/// Walks and validates the chain starting at `head` of the descriptor table at `desc_table`
/// (`queue_size` entries). `indirect_ok` says whether `VIRTIO_RING_F_INDIRECT_DESC` was
/// negotiated.
pub fn parse_chain<M: GuestMemory + ?Sized>(
    mem: &M,
    desc_table: u64,
    queue_size: u16,
    head: u16,
    indirect_ok: bool,
) -> Result<DescriptorChain, QueueError> {
    let mut chain = DescriptorChain {
        head,
        ..DescriptorChain::default()
    };
    let mut table = Table {
        addr: desc_table,
        entries: u32::from(queue_size),
        indirect: false,
    };
    let mut index = head;
    // Descriptors visited in the current table: a chain longer than its table must loop.
    let mut visited: u32 = 0;
    let mut total: u64 = 0;
    let mut seen_write = false;
    loop {
        if u32::from(index) >= table.entries {
            return Err(QueueError::IndexOutOfRange {
                index,
                size: table.entries,
            });
        }
        visited += 1;
        if visited > table.entries {
            return Err(QueueError::ChainTooLong);
        }
        let d = Descriptor::read(mem, table.addr, index)?;
        if d.is_indirect() {
            if table.indirect {
                return Err(QueueError::NestedIndirect);
            }
            if !indirect_ok {
                return Err(QueueError::IndirectNotNegotiated);
            }
            if d.has_next() {
                return Err(QueueError::IndirectWithNext);
            }
            let entries = d.len / DESC_SIZE as u32;
            if d.len == 0
                || !u64::from(d.len).is_multiple_of(DESC_SIZE)
                || entries > MAX_INDIRECT_ENTRIES
            {
                return Err(QueueError::BadIndirectLength(d.len));
            }
            d.addr
                .checked_add(u64::from(d.len))
                .ok_or(QueueError::AddressOverflow)?;
            mem.check_range(d.addr, u64::from(d.len))?;
            table = Table {
                addr: d.addr,
                entries,
                indirect: true,
            };
            index = 0;
            visited = 0;
            continue;
        }
        d.addr
            .checked_add(u64::from(d.len))
            .ok_or(QueueError::AddressOverflow)?;
        total += u64::from(d.len);
        if total > MAX_CHAIN_BYTES {
            return Err(QueueError::ChainTooBig);
        }
        if d.is_write() {
            seen_write = true;
        } else if seen_write {
            return Err(QueueError::ReadAfterWrite);
        }
        if d.len != 0 {
            mem.check_range(d.addr, u64::from(d.len))?;
            let seg = Segment {
                addr: d.addr,
                len: d.len,
            };
            if d.is_write() {
                chain.writable.push(seg);
            } else {
                chain.readable.push(seg);
            }
        }
        if !d.has_next() {
            return Ok(chain);
        }
        index = d.next;
    }
}

/// Sequential reads across a chain's device-readable buffers.
#[derive(Clone, Debug)]
pub struct ChainReader<'a> {
    segs: &'a [Segment],
    seg: usize,
    off: u32,
}

impl<'a> ChainReader<'a> {
    /// A reader positioned at the first byte of `segs`.
    pub fn new(segs: &'a [Segment]) -> Self {
        Self {
            segs,
            seg: 0,
            off: 0,
        }
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> u64 {
        self.segs
            .iter()
            .skip(self.seg)
            .map(|s| u64::from(s.len))
            .sum::<u64>()
            - u64::from(self.off)
    }

    /// Reads up to `buf.len()` bytes; returns how many were read (less only at the end).
    pub fn read<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &M,
        buf: &mut [u8],
    ) -> Result<usize, MemError> {
        let mut done = 0;
        while done < buf.len() && self.seg < self.segs.len() {
            let s = self.segs[self.seg];
            let n = core::cmp::min((s.len - self.off) as usize, buf.len() - done);
            mem.read(s.addr + u64::from(self.off), &mut buf[done..done + n])?;
            done += n;
            self.advance(n as u32);
        }
        Ok(done)
    }

    /// Reads exactly `buf.len()` bytes, or returns `Ok(false)` (having consumed what there
    /// was) if the buffers are shorter.
    pub fn read_exact<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &M,
        buf: &mut [u8],
    ) -> Result<bool, MemError> {
        Ok(self.read(mem, buf)? == buf.len())
    }

    /// Skips up to `n` bytes; returns how many were skipped.
    pub fn skip(&mut self, n: u64) -> u64 {
        let mut left = n;
        while left > 0 && self.seg < self.segs.len() {
            let step = core::cmp::min(u64::from(self.segs[self.seg].len - self.off), left);
            self.advance(step as u32);
            left -= step;
        }
        n - left
    }

    fn advance(&mut self, n: u32) {
        self.off += n;
        if self.off == self.segs[self.seg].len {
            self.seg += 1;
            self.off = 0;
        }
    }
}

/// Sequential writes across a chain's device-writable buffers.
#[derive(Clone, Debug)]
pub struct ChainWriter<'a> {
    segs: &'a [Segment],
    seg: usize,
    off: u32,
    written: u32,
}

impl<'a> ChainWriter<'a> {
    /// A writer positioned at the first byte of `segs`.
    pub fn new(segs: &'a [Segment]) -> Self {
        Self {
            segs,
            seg: 0,
            off: 0,
            written: 0,
        }
    }

    /// Bytes written so far: the `len` to put into the used ring.
    pub fn written(&self) -> u32 {
        self.written
    }

    /// Room left.
    pub fn remaining(&self) -> u64 {
        self.segs
            .iter()
            .skip(self.seg)
            .map(|s| u64::from(s.len))
            .sum::<u64>()
            - u64::from(self.off)
    }

    /// Writes up to `buf.len()` bytes; returns how many fitted.
    pub fn write<M: GuestMemory + ?Sized>(
        &mut self,
        mem: &mut M,
        buf: &[u8],
    ) -> Result<usize, MemError> {
        let mut done = 0;
        while done < buf.len() && self.seg < self.segs.len() {
            let s = self.segs[self.seg];
            let n = core::cmp::min((s.len - self.off) as usize, buf.len() - done);
            mem.write(s.addr + u64::from(self.off), &buf[done..done + n])?;
            done += n;
            self.advance(n as u32);
        }
        Ok(done)
    }

    /// Skips `n` bytes (counted as written, as the device would leave them unchanged).
    pub fn skip(&mut self, n: u64) -> u64 {
        let mut left = n;
        while left > 0 && self.seg < self.segs.len() {
            let step = core::cmp::min(u64::from(self.segs[self.seg].len - self.off), left);
            self.advance(step as u32);
            left -= step;
        }
        n - left
    }

    fn advance(&mut self, n: u32) {
        self.off += n;
        self.written += n;
        if self.off == self.segs[self.seg].len {
            self.seg += 1;
            self.off = 0;
        }
    }
}
