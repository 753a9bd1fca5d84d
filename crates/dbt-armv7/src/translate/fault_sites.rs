//! Host code addresses of translated guest loads and stores that took a guest Data Abort,
//! with what a host fault handler needs to deliver the next one itself
//! ([`a64::deliver_guest_abort`](super::a64::deliver_guest_abort)): the guest PC and
//! instruction set, the instruction's index in its block (instructions the block has not
//! charged yet), its length, and whether it reads or writes.
//!
//! The engine records a site when the interpreter took the guest's Data Abort on an
//! instruction that a host fault sent back to it, and only for single loads and stores
//! (`LDR`/`STR`/`LDRB`/`STRH`/... of one register, privileged forms, outside an IT
//! block): one access, whose fault leaves no partial effect. A site is valid while its
//! host code is: code is allocated upwards until a flush, which clears the table.

use crate::decode::{Insn, Op};

/// Entries of [`FaultSites`] (direct-mapped by host address).
pub const FAULT_SITES: usize = 64;

/// One recorded site.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultSite {
    /// Host address of the faulting host instruction (0: free).
    pub host: u64,
    /// Guest PC, bit 0 set for Thumb.
    pub pc: u32,
    /// Index of the instruction in its block (its predecessors are not charged yet).
    pub index: u8,
    /// Length of the guest instruction in bytes (2 or 4).
    pub len: u8,
    /// Access size in bytes (1, 2 or 4).
    pub size: u8,
    /// The access writes.
    pub write: bool,
}

/// The table a host fault handler looks host addresses up in (its address is in
/// [`GuestState::fault_sites`](super::state::GuestState::fault_sites) while translated
/// code runs).
#[derive(Clone, Debug)]
pub struct FaultSites {
    /// The sites, at `(host >> 2) % FAULT_SITES`.
    pub entries: [FaultSite; FAULT_SITES],
    /// Guest Data Aborts delivered from the table (a statistic).
    pub delivered: u64,
}

impl Default for FaultSites {
    fn default() -> FaultSites {
        FaultSites {
            entries: [FaultSite::default(); FAULT_SITES],
            delivered: 0,
        }
    }
}

impl FaultSites {
    /// The slot of host address `host`.
    fn slot(host: u64) -> usize {
        (host >> 2) as usize % FAULT_SITES
    }

    /// The site recorded for host address `host`, if any.
    pub fn get(&self, host: u64) -> Option<&FaultSite> {
        let e = &self.entries[Self::slot(host)];
        (e.host == host && host != 0).then_some(e)
    }

    /// Records `insn` (at guest `pc`, bit 0 Thumb, index `index` in its block, ITSTATE
    /// `it`) as the guest instruction whose host code faults at `host`, if it is a single
    /// load or store outside an IT block (see the module documentation).
    pub fn record(&mut self, host: u64, pc: u32, index: u64, it: u8, insn: &Insn) {
        let Op::Mem {
            load,
            size,
            unpriv: false,
            ..
        } = insn.op
        else {
            return;
        };
        if it != 0 || insn.unpredictable || index > u8::MAX as u64 {
            return;
        }
        self.entries[Self::slot(host)] = FaultSite {
            host,
            pc,
            index: index as u8,
            len: insn.len,
            size: size.bytes() as u8,
            write: !load,
        };
    }

    /// Forgets every site (the code cache is reused).
    pub fn clear(&mut self) {
        self.entries = [FaultSite::default(); FAULT_SITES];
    }
}
