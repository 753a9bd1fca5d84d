//! What a guest translation table walk read, kept so that a later fault at the same
//! address can tell, by reading the same 1-3 descriptor words again, that the same walk
//! would give the same verdict ([`FaultSites`](super::FaultSites)). A walk is a pure
//! function of the translation registers (the verdict's regime key) and the descriptors
//! it reads; equal descriptors therefore mean an equal result, whatever the guest wrote
//! elsewhere and with or without TLB maintenance. This is exact where remembering only
//! the verdict is not: the guest may turn an invalid entry valid without maintenance
//! (Linux demand paging), and the next walk must see it.
//!
//! Only descriptors in guest RAM are kept ([`Bus::ram`]), at the host address of the word
//! in the bus's mapping of RAM: re-reading it is one load, with no device side effect. A
//! walk that read anything else (a device, a bus fault, more than [`MAX_READS`] words) is
//! not kept.
//!
//! Several vCPUs: the re-read is a single-copy-atomic load of the word (relaxed), the
//! same kind of read the walk makes through the bus, made at the same point of this
//! vCPU's execution (the faulting access); it sees every table write of another vCPU that
//! the walk would see there, so ordering is the walk's own (ARM ARM B3.10.1: a table
//! write is visible to a walk only once the guest's barriers make it so).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::bus::{Bus, BusFault};

/// Descriptor reads a walk makes at most (LPAE: levels 1 to 3; short descriptors: 2).
pub(crate) const MAX_READS: usize = 3;

/// One descriptor read: the word's host address in the bus's RAM, its width and value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Read {
    /// Host address of the descriptor (0: none).
    host: usize,
    /// A 64-bit (LPAE) descriptor, else 32-bit.
    wide: bool,
    /// The value the walk read.
    value: u64,
}

impl Read {
    /// The descriptor's value now.
    ///
    /// # Safety
    ///
    /// `host` is still the address of the word in the bus's RAM (see
    /// [`WalkSnapshot::holds`]).
    #[inline(always)]
    unsafe fn current(&self) -> u64 {
        // SAFETY: an aligned word of guest RAM (the caller's contract; `Recorder` keeps
        // only aligned addresses); another vCPU may write it, hence the atomic load.
        unsafe {
            if self.wide {
                (*(self.host as *const AtomicU64)).load(Ordering::Relaxed)
            } else {
                (*(self.host as *const AtomicU32)).load(Ordering::Relaxed) as u64
            }
        }
    }
}

/// The descriptor reads of one walk, all of guest RAM, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WalkSnapshot {
    reads: [Read; MAX_READS],
    len: u8,
}

impl WalkSnapshot {
    /// Whether every descriptor the walk read still holds the value it read.
    ///
    /// # Safety
    ///
    /// The bus the snapshot was recorded through still maps guest RAM at the host
    /// addresses [`Bus::ram`] gave then (the caller forgets snapshots when it gets
    /// another bus: [`FaultSites::new_run`](super::FaultSites::new_run)).
    #[inline(always)]
    pub(crate) unsafe fn holds(&self) -> bool {
        // (`min`: no length check at the index; `len` <= MAX_READS anyway.)
        let len = (self.len as usize).min(MAX_READS);
        let mut i = 0;
        while i < len {
            let r = &self.reads[i];
            // SAFETY: the caller's contract.
            if unsafe { r.current() } != r.value {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Descriptor reads kept (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }
}

/// A [`Bus`] for one walk: passes its reads to `bus` and keeps a [`WalkSnapshot`] of
/// them; `complete` turns false at a read that cannot be kept (not plain aligned RAM,
/// a bus fault, more than [`MAX_READS`]) and at any write.
pub(crate) struct Recorder<'a> {
    bus: &'a mut dyn Bus,
    /// The reads so far.
    pub(crate) snapshot: WalkSnapshot,
    /// Every read so far is in `snapshot`.
    pub(crate) complete: bool,
}

impl<'a> Recorder<'a> {
    /// A recorder of the reads made through `bus`.
    pub(crate) fn new(bus: &'a mut dyn Bus) -> Recorder<'a> {
        Recorder {
            bus,
            snapshot: WalkSnapshot::default(),
            complete: true,
        }
    }
}

impl Bus for Recorder<'_> {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        let value = self
            .bus
            .read(pa, size)
            .inspect_err(|_| self.complete = false)?;
        let host = self
            .bus
            .ram(pa)
            .filter(|s| s.len() >= size as usize)
            .map(|s| s.as_ptr() as usize);
        let s = &mut self.snapshot;
        match host {
            Some(h)
                if (size == 4 || size == 8)
                    && h != 0
                    && h % size as usize == 0
                    && (s.len as usize) < MAX_READS =>
            {
                s.reads[s.len as usize] = Read {
                    host: h,
                    wide: size == 8,
                    value,
                };
                s.len += 1;
            }
            _ => self.complete = false,
        }
        Ok(value)
    }

    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault> {
        self.complete = false;
        self.bus.write(pa, size, value)
    }
}
