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
//!
//! The table also remembers the guest's Permission and Domain faults (refusals by valid
//! entries) per page, access and regime, as [`fetch_aborts`](super::fetch_aborts) does
//! for fetches and for the same reason (a TLB may hold a valid entry until maintenance):
//! the engine forgets them at any TLB maintenance, in O(1) (a new
//! [`Generation`]). Translation faults are walked every time (the guest may fill an
//! invalid entry without maintenance: Linux demand paging).

use super::fetch_aborts::{Generation, Regime};
use crate::cpu::Cpu;
use crate::decode::{Insn, Op};
use crate::mmu::{Fault, FaultKind};

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

/// Entries of [`FaultSites`]' remembered refusals (direct-mapped by guest page).
const VERDICTS: usize = 16;

/// A remembered Data Abort of a valid entry.
#[derive(Clone, Copy, Debug)]
struct Verdict {
    /// Guest page number + 1 (0: free).
    page: u32,
    /// The generation it was learnt in.
    generation: Generation,
    write: bool,
    regime: Regime,
    /// The `DFSR` value.
    dfsr: u32,
}

impl Default for Verdict {
    fn default() -> Verdict {
        Verdict {
            page: 0,
            generation: Generation::NONE,
            write: false,
            regime: Regime::default(),
            dfsr: 0,
        }
    }
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
    /// Remembered refusals of valid entries (PL1 accesses).
    verdicts: [Verdict; VERDICTS],
    /// The current generation of `verdicts` (older ones do not hold).
    generation: Generation,
}

impl Default for FaultSites {
    fn default() -> FaultSites {
        FaultSites {
            entries: [FaultSite::default(); FAULT_SITES],
            delivered: 0,
            verdicts: [Verdict::default(); VERDICTS],
            generation: Generation::default(),
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

    /// The `DFSR` of the Permission or Domain fault remembered for a PL1 access (a write
    /// if `write`) to `va` in `cpu`'s current regime, if any.
    pub fn verdict(&self, cpu: &Cpu, va: u32, write: bool) -> Option<u32> {
        let v = &self.verdicts[(va >> 12) as usize % VERDICTS];
        (v.page == (va >> 12) + 1
            && v.generation == self.generation
            && v.write == write
            && v.regime == Regime::of(cpu))
        .then_some(v.dfsr)
    }

    /// Remembers `fault` of a PL1 access (a write if `write`) to `va` in `cpu`'s current
    /// regime if a valid entry refused it (Permission, Domain), and returns its `DFSR`.
    pub fn learn(&mut self, cpu: &Cpu, va: u32, write: bool, fault: Fault) -> u32 {
        let dfsr = fault.fsr(cpu.cp15.lpae(), write);
        if cpu.cp15.sctlr & 1 != 0
            && matches!(fault.kind, FaultKind::Permission | FaultKind::Domain)
        {
            self.verdicts[(va >> 12) as usize % VERDICTS] = Verdict {
                page: (va >> 12) + 1,
                generation: self.generation,
                write,
                regime: Regime::of(cpu),
                dfsr,
            };
        }
        dfsr
    }

    /// Forgets the remembered refusals (TLB maintenance): O(1), a new [`Generation`].
    pub fn forget_verdicts(&mut self) {
        if self.generation.advance() {
            self.verdicts = [Verdict::default(); VERDICTS];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_refusals_of_valid_entries_per_page_access_and_regime() {
        let mut cpu = Cpu::new();
        cpu.cp15.sctlr |= 1;
        cpu.cp15.dacr = 1;
        let mut s = FaultSites::default();
        let perm = Fault {
            kind: FaultKind::Permission,
            level: 1,
            domain: 0,
        };
        let dfsr = s.learn(&cpu, 0x5010_0040, false, perm);
        assert_eq!(dfsr, perm.fsr(false, false));
        assert_eq!(s.verdict(&cpu, 0x5010_0ffc, false), Some(dfsr));
        // Another page, a write, another regime: not this verdict.
        assert_eq!(s.verdict(&cpu, 0x5010_1000, false), None);
        assert_eq!(s.verdict(&cpu, 0x5010_0040, true), None);
        cpu.cp15.contextidr = 5;
        assert_eq!(s.verdict(&cpu, 0x5010_0040, false), None);
        cpu.cp15.contextidr = 0;
        assert_eq!(s.verdict(&cpu, 0x5010_0040, false), Some(dfsr));
        s.forget_verdicts();
        assert_eq!(s.verdict(&cpu, 0x5010_0040, false), None);
    }

    #[test]
    fn forgets_refusals_at_every_maintenance_even_when_the_generation_wraps() {
        let mut cpu = Cpu::new();
        cpu.cp15.sctlr |= 1;
        cpu.cp15.dacr = 1;
        let mut s = FaultSites::default();
        let perm = Fault {
            kind: FaultKind::Permission,
            level: 2,
            domain: 0,
        };
        for _ in 0..3 {
            let dfsr = s.learn(&cpu, 0x6000_0000, true, perm);
            assert_eq!(s.verdict(&cpu, 0x6000_0000, true), Some(dfsr));
            s.forget_verdicts();
            assert_eq!(s.verdict(&cpu, 0x6000_0000, true), None);
        }
        // Learnt in generation 1; the counter wraps back to 1.
        s.generation = Generation::default();
        s.learn(&cpu, 0x6000_0000, true, perm);
        s.generation.set(u32::MAX);
        s.forget_verdicts();
        assert_eq!(s.generation, Generation::default());
        assert_eq!(s.verdict(&cpu, 0x6000_0000, true), None);
    }

    #[test]
    fn never_remembers_a_translation_fault() {
        let mut cpu = Cpu::new();
        cpu.cp15.sctlr |= 1;
        let mut s = FaultSites::default();
        let f = Fault {
            kind: FaultKind::Translation,
            level: 1,
            domain: 0,
        };
        assert_eq!(s.learn(&cpu, 0x5000_0000, true, f), f.fsr(false, true));
        assert_eq!(s.verdict(&cpu, 0x5000_0000, true), None);
    }
}
