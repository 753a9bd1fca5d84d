//! The VMM: one VM with its stage-2 tables, memory map and a toy CPU, and the stage-2 abort
//! handler built on [`stage2::classify`].

use std::rc::Rc;

use stage2::PAGE_SIZE;
use stage2::{classify, AbortReason, FaultAction, FaultInput, IpaRegion, S2Attrs, S2FaultKind};

use crate::memmap::{Backing, MemoryMap};
use crate::mmu::{Access, Stage2Abort, Table, ToyCpu};
use crate::phys::PhysMem;

/// A guest access that still faults after this many attempts means the handler is not
/// making progress: a bug, reported by a panic.
const MAX_ATTEMPTS: usize = 4;

/// Stage-2 aborts the VMM handled, by outcome.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Exits {
    /// Writes to pages write-protected for dirty logging.
    pub dirty_log: u64,
    /// RAM pages mapped on first touch.
    pub populate: u64,
    /// Accesses emulated on the MMIO bus.
    pub mmio: u64,
    /// Spurious faults: nothing to do but retry.
    pub retry: u64,
    /// Aborts injected into the guest.
    pub injected: u64,
}

/// What the handler did with one abort.
enum Handled {
    /// Resume the guest at the same instruction.
    Retry,
    /// The access was emulated; this is the loaded value (0 for a store).
    Emulated(u64),
}

/// One VM.
pub struct ToyVm {
    /// Its stage-2 tables.
    pub s2: Table,
    /// Its memory map.
    pub map: MemoryMap,
    /// Stage-2 aborts handled so far.
    pub exits: Exits,
    /// What the guest wrote to its UART.
    pub console: String,
    cpu: ToyCpu,
}

impl ToyVm {
    /// A VM running on `s2` over `mem`; nothing is mapped yet.
    pub fn new(s2: Table, mem: Rc<PhysMem>, map: MemoryMap) -> Self {
        Self {
            s2,
            map,
            exits: Exits::default(),
            console: String::new(),
            cpu: ToyCpu::new(mem),
        }
    }

    /// Maps every RAM region that is not populated lazily, writable or read-only as the map
    /// says. Block mappings are the table code's choice.
    pub fn map_eager_ram(&mut self) {
        for r in self.map.regions() {
            if let Backing::Ram {
                pa,
                writable,
                lazy: false,
            } = r.backing
            {
                let attrs = if writable {
                    S2Attrs::RAM
                } else {
                    S2Attrs::RAM_RO
                };
                self.s2
                    .map(r.ipa, pa, r.len, attrs)
                    .unwrap_or_else(|e| panic!("mapping {}: {e}", r.name));
            }
        }
    }

    /// The guest stores `value` at `ipa`; `Err` = the VMM injected an abort for this reason.
    pub fn guest_write(&mut self, ipa: u64, value: u64) -> Result<(), AbortReason> {
        self.run_access(ipa, Access::Write(value)).map(|_| ())
    }

    /// The guest loads from `ipa`; `Err` = the VMM injected an abort for this reason.
    pub fn guest_read(&mut self, ipa: u64) -> Result<u64, AbortReason> {
        self.run_access(ipa, Access::Read)
    }

    /// Runs one guest access to completion, handling the stage-2 aborts it takes.
    fn run_access(&mut self, ipa: u64, access: Access) -> Result<u64, AbortReason> {
        for _ in 0..MAX_ATTEMPTS {
            match self.cpu.access(&self.s2, ipa, access) {
                Ok(value) => return Ok(value),
                Err(abort) => match self.handle_abort(&abort)? {
                    Handled::Retry => {}
                    Handled::Emulated(value) => return Ok(value),
                },
            }
        }
        panic!("guest access {access:?} at {ipa:#x} still faults after {MAX_ATTEMPTS} attempts")
    }

    /// The stage-2 abort handler: describe the fault, classify it, act.
    fn handle_abort(&mut self, abort: &Stage2Abort) -> Result<Handled, AbortReason> {
        let (kind, level) = S2FaultKind::from_fsc(abort.fsc);
        let region = self.map.region_of(abort.ipa).copied();
        let input = FaultInput {
            kind,
            level,
            write: matches!(abort.access, Access::Write(_)),
            instruction_fetch: false,
            s1ptw: false,
            region: region.map_or(IpaRegion::Unbacked, |r| r.ipa_region()),
            dirty_logged: self.s2.is_dirty_logged(abort.ipa),
            lazy_populate: region.is_some_and(|r| r.lazy()),
            mapped_now: self.s2.translate(abort.ipa).is_some(),
        };
        match classify(&input) {
            FaultAction::Mmio => {
                self.exits.mmio += 1;
                Ok(Handled::Emulated(self.emulate_uart(abort.access)))
            }
            FaultAction::PopulateRam => {
                self.exits.populate += 1;
                let page = abort.ipa & !(PAGE_SIZE - 1);
                let pa = region
                    .and_then(|r| r.pa_of(page))
                    .expect("classify populates only RAM regions");
                self.s2
                    .map(page, pa, PAGE_SIZE, S2Attrs::RAM)
                    .unwrap_or_else(|e| panic!("populating {page:#x}: {e}"));
                Ok(Handled::Retry)
            }
            FaultAction::DirtyLogWrite => {
                self.exits.dirty_log += 1;
                let logged = self
                    .s2
                    .handle_write_fault(abort.ipa)
                    .unwrap_or_else(|e| panic!("dirty-log fault at {:#x}: {e}", abort.ipa));
                assert!(
                    logged,
                    "classify said dirty-log write but {:#x} is not logged",
                    abort.ipa
                );
                Ok(Handled::Retry)
            }
            FaultAction::Retry => {
                self.exits.retry += 1;
                Ok(Handled::Retry)
            }
            FaultAction::InjectAbort(reason) => {
                self.exits.injected += 1;
                Err(reason)
            }
        }
    }

    /// A write-only UART: stores print the low byte, loads read 0 (FIFO never full).
    fn emulate_uart(&mut self, access: Access) -> u64 {
        if let Access::Write(value) = access {
            self.console.push(char::from(value as u8));
        }
        0
    }
}
