//! Classifying stage-2 faults: what the hypervisor should do with a guest abort that
//! reached EL2 with a faulting IPA.
//!
//! Pure and independent of any exit decoder: the host turns its syndrome (`ESR_EL2.DFSC` /
//! `IFSC`, `WnR`, `S1PTW`) and what it knows about the IPA (its VM memory map, the dirty log,
//! the current tables) into a [`FaultInput`], and [`classify`] returns a [`FaultAction`].
//!
//! ```text
//! let input = FaultInput {
//!     kind: S2FaultKind::from_fsc(dfsc).0, level, write: wnr, instruction_fetch: false,
//!     s1ptw, region: vm.region_of(ipa), dirty_logged: s2.is_dirty_logged(ipa),
//!     lazy_populate: vm.lazy, mapped_now: s2.translate(ipa).is_some(),
//! };
//! match classify(&input) {
//!     FaultAction::Mmio => emulate (ISV=1: syndrome; ISV=0: fetch + decode the instruction),
//!     FaultAction::PopulateRam => map the page (or block) of RAM, retry the guest,
//!     FaultAction::DirtyLogWrite => if s2.handle_write_fault(ipa)? { retry } else { abort },
//!     FaultAction::Retry => resume the guest at the same instruction,
//!     FaultAction::InjectAbort(reason) => log reason, inject a synchronous external abort,
//! }
//! ```

use core::fmt;

/// The kind of a stage-2 fault, from the fault status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum S2FaultKind {
    /// Translation fault: no valid stage-2 mapping.
    Translation,
    /// Permission fault: the mapping forbids the access (e.g. a write to a write-protected
    /// page).
    Permission,
    /// Access flag fault (this crate always sets `AF`, so only tables built elsewhere give
    /// these).
    AccessFlag,
    /// Address size fault: the IPA is beyond the configured IPA size.
    AddressSize,
    /// Anything else (external aborts, parity errors, alignment, TLB conflict, ...).
    Other,
}

impl S2FaultKind {
    /// Classifies a 6-bit `DFSC`/`IFSC`, returning the kind and the table level (0..=3;
    /// -1 for the FEAT_LPA2 level; 0 for [`S2FaultKind::Other`]).
    pub const fn from_fsc(fsc: u8) -> (S2FaultKind, i8) {
        let level = (fsc & 0b11) as i8;
        match fsc & 0x3f {
            0x00..=0x03 => (S2FaultKind::AddressSize, level),
            0x04..=0x07 => (S2FaultKind::Translation, level),
            0x08..=0x0b => (S2FaultKind::AccessFlag, level),
            0x0c..=0x0f => (S2FaultKind::Permission, level),
            0x29 => (S2FaultKind::AddressSize, -1),
            0x2b => (S2FaultKind::Translation, -1),
            _ => (S2FaultKind::Other, 0),
        }
    }
}

/// What the VM's memory map says about the faulting IPA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpaRegion {
    /// Guest RAM. `writable` = false for ROM-like regions (firmware, read-only images).
    Ram {
        /// The guest may write the region.
        writable: bool,
    },
    /// An emulated device region (routed to the MMIO bus).
    Mmio,
    /// Nothing: outside every region of the VM (the hypervisor's and other VMs' memory
    /// included).
    Unbacked,
}

/// Everything [`classify`] needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultInput {
    /// The fault kind (from `DFSC`/`IFSC`).
    pub kind: S2FaultKind,
    /// Table level the fault was reported at.
    pub level: i8,
    /// The access was a write (`WnR`; cache maintenance reports as a write).
    pub write: bool,
    /// The fault came from an instruction fetch (instruction abort).
    pub instruction_fetch: bool,
    /// The fault happened on the guest's stage-1 table walk (`S1PTW`): the guest's page
    /// tables live at this IPA.
    pub s1ptw: bool,
    /// What the VM's memory map says about the IPA.
    pub region: IpaRegion,
    /// The IPA lies in a range being dirty-logged.
    pub dirty_logged: bool,
    /// RAM is populated lazily (on first touch) for this VM.
    pub lazy_populate: bool,
    /// The IPA is mapped now, re-checked under the table lock: another vCPU populated it or a
    /// break-before-make finished since the fault.
    pub mapped_now: bool,
}

/// Why an abort is injected into the guest (for the log line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortReason {
    /// The IPA is outside the VM's memory map.
    Unbacked,
    /// The IPA is beyond the configured IPA size.
    AddressSize,
    /// A write to read-only RAM.
    WriteToReadOnly,
    /// An instruction fetch from a device region.
    ExecuteFromMmio,
    /// An instruction fetch from RAM mapped execute-never, or another permission fault the
    /// VM's configuration does not explain.
    Permission,
    /// The guest's stage-1 page tables are in a device region.
    PageTableInMmio,
    /// RAM that is not mapped and not populated lazily.
    RamNotMapped,
    /// An external abort, parity error or other fault the hypervisor does not handle.
    Unhandled,
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AbortReason::Unbacked => "IPA outside the VM's memory map",
            AbortReason::AddressSize => "IPA beyond the IPA size",
            AbortReason::WriteToReadOnly => "write to read-only memory",
            AbortReason::ExecuteFromMmio => "instruction fetch from a device region",
            AbortReason::Permission => "stage-2 permission fault",
            AbortReason::PageTableInMmio => "stage-1 page table in a device region",
            AbortReason::RamNotMapped => "RAM not mapped",
            AbortReason::Unhandled => "unhandled fault status",
        })
    }
}

/// What to do with a stage-2 fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    /// Emulate the access on the MMIO bus.
    Mmio,
    /// Map the RAM page (lazy population; also for access-flag faults on RAM), then retry.
    /// If the page is dirty-logged and the access is a write, also mark it dirty.
    PopulateRam,
    /// A write to a page write-protected for dirty logging: call
    /// [`crate::Stage2Table::handle_write_fault`] and retry.
    DirtyLogWrite,
    /// Nothing to do: resume the guest at the same instruction.
    Retry,
    /// Inject a synchronous external abort into the guest and log the reason.
    InjectAbort(AbortReason),
}

/// Decides what to do with a stage-2 fault.
pub const fn classify(f: &FaultInput) -> FaultAction {
    use FaultAction::*;
    match (f.kind, f.region) {
        (S2FaultKind::Other, _) => InjectAbort(AbortReason::Unhandled),
        (S2FaultKind::AddressSize, _) => InjectAbort(AbortReason::AddressSize),
        (_, IpaRegion::Unbacked) => InjectAbort(AbortReason::Unbacked),
        (_, IpaRegion::Mmio) => {
            if f.s1ptw {
                InjectAbort(AbortReason::PageTableInMmio)
            } else if f.instruction_fetch {
                InjectAbort(AbortReason::ExecuteFromMmio)
            } else if matches!(f.kind, S2FaultKind::Translation) {
                Mmio
            } else {
                // A passed-through device mapped with restricted permissions.
                InjectAbort(AbortReason::Permission)
            }
        }
        (S2FaultKind::Translation, IpaRegion::Ram { .. }) => {
            if f.mapped_now {
                Retry
            } else if f.lazy_populate {
                PopulateRam
            } else {
                InjectAbort(AbortReason::RamNotMapped)
            }
        }
        (S2FaultKind::AccessFlag, IpaRegion::Ram { .. }) => PopulateRam,
        (S2FaultKind::Permission, IpaRegion::Ram { writable }) => {
            if f.instruction_fetch {
                InjectAbort(AbortReason::Permission)
            } else if f.write && !writable {
                InjectAbort(AbortReason::WriteToReadOnly)
            } else if f.write && f.dirty_logged {
                DirtyLogWrite
            } else if f.write {
                // Writable RAM, not logged, yet a write permission fault: a racing change of
                // the tables (e.g. logging just stopped) — the retry sees the new mapping.
                Retry
            } else {
                InjectAbort(AbortReason::Permission)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(kind: S2FaultKind, region: IpaRegion) -> FaultInput {
        FaultInput {
            kind,
            level: 3,
            write: false,
            instruction_fetch: false,
            s1ptw: false,
            region,
            dirty_logged: false,
            lazy_populate: false,
            mapped_now: false,
        }
    }

    const RAM: IpaRegion = IpaRegion::Ram { writable: true };
    const ROM: IpaRegion = IpaRegion::Ram { writable: false };

    #[test]
    fn fault_status_codes() {
        assert_eq!(S2FaultKind::from_fsc(0x07), (S2FaultKind::Translation, 3));
        assert_eq!(S2FaultKind::from_fsc(0x0f), (S2FaultKind::Permission, 3));
        assert_eq!(S2FaultKind::from_fsc(0x0a), (S2FaultKind::AccessFlag, 2));
        assert_eq!(S2FaultKind::from_fsc(0x01), (S2FaultKind::AddressSize, 1));
        assert_eq!(S2FaultKind::from_fsc(0x2b), (S2FaultKind::Translation, -1));
        assert_eq!(S2FaultKind::from_fsc(0x10).0, S2FaultKind::Other);
        assert_eq!(S2FaultKind::from_fsc(0xff).0, S2FaultKind::Other);
    }

    #[test]
    fn mmio() {
        let f = input(S2FaultKind::Translation, IpaRegion::Mmio);
        assert_eq!(classify(&f), FaultAction::Mmio);
        assert_eq!(
            classify(&FaultInput { write: true, ..f }),
            FaultAction::Mmio
        );
        assert_eq!(
            classify(&FaultInput { s1ptw: true, ..f }),
            FaultAction::InjectAbort(AbortReason::PageTableInMmio)
        );
        assert_eq!(
            classify(&FaultInput {
                instruction_fetch: true,
                ..f
            }),
            FaultAction::InjectAbort(AbortReason::ExecuteFromMmio)
        );
        let p = input(S2FaultKind::Permission, IpaRegion::Mmio);
        assert_eq!(
            classify(&p),
            FaultAction::InjectAbort(AbortReason::Permission)
        );
    }

    #[test]
    fn ram() {
        let t = input(S2FaultKind::Translation, RAM);
        assert_eq!(
            classify(&t),
            FaultAction::InjectAbort(AbortReason::RamNotMapped)
        );
        assert_eq!(
            classify(&FaultInput {
                lazy_populate: true,
                ..t
            }),
            FaultAction::PopulateRam
        );
        assert_eq!(
            classify(&FaultInput {
                mapped_now: true,
                ..t
            }),
            FaultAction::Retry
        );
        let af = input(S2FaultKind::AccessFlag, RAM);
        assert_eq!(classify(&af), FaultAction::PopulateRam);
        let p = FaultInput {
            write: true,
            dirty_logged: true,
            ..input(S2FaultKind::Permission, RAM)
        };
        assert_eq!(classify(&p), FaultAction::DirtyLogWrite);
        assert_eq!(
            classify(&FaultInput { region: ROM, ..p }),
            FaultAction::InjectAbort(AbortReason::WriteToReadOnly)
        );
        assert_eq!(
            classify(&FaultInput {
                dirty_logged: false,
                ..p
            }),
            FaultAction::Retry
        );
        assert_eq!(
            classify(&FaultInput { write: false, ..p }),
            FaultAction::InjectAbort(AbortReason::Permission)
        );
        assert_eq!(
            classify(&FaultInput {
                instruction_fetch: true,
                write: false,
                ..p
            }),
            FaultAction::InjectAbort(AbortReason::Permission)
        );
    }

    #[test]
    fn unbacked_and_address_size_and_other() {
        for kind in [
            S2FaultKind::Translation,
            S2FaultKind::Permission,
            S2FaultKind::AccessFlag,
        ] {
            assert_eq!(
                classify(&input(kind, IpaRegion::Unbacked)),
                FaultAction::InjectAbort(AbortReason::Unbacked)
            );
        }
        for region in [RAM, ROM, IpaRegion::Mmio, IpaRegion::Unbacked] {
            assert_eq!(
                classify(&input(S2FaultKind::AddressSize, region)),
                FaultAction::InjectAbort(AbortReason::AddressSize)
            );
            assert_eq!(
                classify(&input(S2FaultKind::Other, region)),
                FaultAction::InjectAbort(AbortReason::Unhandled)
            );
        }
    }
}
