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
//! The table also remembers the guest's verdicts for data accesses per page, access and
//! regime: Translation, Access flag, Permission and Domain faults, each with a snapshot of
//! the descriptors its walk read ([`walk_snapshot`]). The regime is the interpreter TLB's
//! [`stamp`](crate::mmu::tlb::Tlb::stamp), which every write of `SCTLR`, `TTBR0/1`,
//! `TTBCR`, `DACR` or `CONTEXTIDR` changes (they all flush that TLB, in the interpreter and
//! in translated code): one compare instead of six registers. A verdict holds while the
//! stamp is the same and every descriptor still holds what the walk read: then a walk now
//! would read the same and give the same fault, so the verdict is exact even when the guest
//! fills an invalid entry without TLB maintenance (Linux demand paging: the snapshot
//! differs, the walk runs again). The interpreter's own TLB is looked at first, as
//! [`Cpu::translate`] does: an entry that permits the access wins over the verdict; a
//! Permission verdict puts back the TLB entry its walk made. Verdicts are also forgotten
//! at any TLB maintenance, in O(1) (a new [`Generation`]), and at every run of the
//! engine (their host addresses are the run's bus's: [`FaultSites::new_run`]).

pub(crate) mod walk_snapshot;

use super::fetch_aborts::Generation;
use crate::bus::Bus;
use crate::cpu::Cpu;
use crate::decode::{Insn, Op};
use crate::mmu::{Access, Fault, FaultKind};
use walk_snapshot::{Recorder, WalkSnapshot};

/// Entries of [`FaultSites`] (direct-mapped by host address).
pub const FAULT_SITES: usize = 64;

/// One recorded site (`repr(C)`, 16 bytes, `host` first: the runtime's vector finds a
/// site in assembly).
#[repr(C)]
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

/// Entries of [`FaultSites`]' remembered verdicts (direct-mapped by a hash of the guest
/// page: [`verdict_slot`]).
const VERDICTS: usize = 64;

/// The verdict slot of guest address `va`: its page number folded onto 6 bits, so that
/// the same pages of different sections (a guest's aborting regions are often
/// section-aligned) do not share slots.
fn verdict_slot(va: u32) -> usize {
    let page = va >> 12;
    (page ^ (page >> 6) ^ (page >> 12)) as usize % VERDICTS
}

/// A remembered Data Abort verdict of a PL1 access.
#[derive(Clone, Copy, Debug)]
struct Verdict {
    /// Guest page number + 1 (0: free).
    page: u32,
    /// The generation it was learnt in.
    generation: Generation,
    write: bool,
    /// The interpreter TLB's [`stamp`](crate::mmu::tlb::Tlb::stamp) when it was learnt:
    /// no translation register was written since while it is the same.
    regime: u64,
    /// The `DFSR` value.
    dfsr: u32,
    /// What the walk read.
    snapshot: WalkSnapshot,
    /// A Permission fault's TLB entry (`Cpu::translate` caches the walk before checking
    /// the permission): the 4 KiB frame and its permissions.
    tlb: Option<(u64, u8)>,
}

impl Default for Verdict {
    fn default() -> Verdict {
        Verdict {
            page: 0,
            generation: Generation::NONE,
            write: false,
            regime: u64::MAX,
            dfsr: 0,
            snapshot: WalkSnapshot::default(),
            tlb: None,
        }
    }
}

/// The table a host fault handler looks host addresses up in (its address is in
/// [`GuestState::fault_sites`](super::state::GuestState::fault_sites) while translated
/// code runs). `repr(C)` with `entries` first: the runtime's vector looks sites up in
/// assembly.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct FaultSites {
    /// The sites, at `(host >> 2) % FAULT_SITES`.
    pub entries: [FaultSite; FAULT_SITES],
    /// Guest Data Aborts delivered from the table (a statistic).
    pub delivered: u64,
    /// Remembered verdicts (PL1 accesses).
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

    /// The `DFSR` of the Data Abort that a PL1 access (a write if `write`) to `va` takes
    /// in `cpu`'s current regime, if a verdict is remembered for it and still holds: the
    /// interpreter's TLB does not permit the access and the descriptors the verdict's
    /// walk read are unchanged. A Permission verdict puts its walk's TLB entry back, as
    /// the walk would.
    ///
    /// # Safety
    ///
    /// The bus of the current run is the one the verdict was learnt through (the engine
    /// calls [`FaultSites::new_run`] at the start of every run).
    #[inline(always)]
    pub unsafe fn verdict(&self, cpu: &mut Cpu, va: u32, write: bool) -> Option<u32> {
        let v = &self.verdicts[verdict_slot(va)];
        if v.page != (va >> 12) + 1
            || v.generation != self.generation
            || v.write != write
            || v.regime != cpu.tlb.stamp()
        {
            return None;
        }
        let need = pl1_access(write).needed();
        if cpu.tlb.lookup(va).is_some_and(|(_, p)| p & need == need) {
            return None;
        }
        // SAFETY: the caller's contract (the run's bus).
        if !unsafe { v.snapshot.holds() } {
            return None;
        }
        if let Some((pa_page, perms)) = v.tlb {
            cpu.tlb.insert(va, pa_page, perms);
        }
        Some(v.dfsr)
    }

    /// Translates a PL1 access (a write if `write`) to `va` as [`Cpu::translate`] does
    /// and returns the `DFSR` of the Data Abort it takes, if any; `unbacked`: a
    /// translation to a physical address where `bus` has no RAM is the guest's
    /// synchronous external abort. Remembers a Translation, Access flag, Permission or
    /// Domain fault with the MMU on, with a snapshot of the descriptors the walk read, if
    /// they are all in guest RAM.
    pub fn learn(
        &mut self,
        cpu: &mut Cpu,
        bus: &mut dyn Bus,
        va: u32,
        write: bool,
        unbacked: bool,
    ) -> Option<u32> {
        let regime = cpu.tlb.stamp();
        let mut rec = Recorder::new(bus);
        let result = cpu.translate(&mut rec, va, pl1_access(write));
        let (snapshot, complete) = (rec.snapshot, rec.complete);
        let fault = match result {
            Err(f) => f,
            Ok(pa) if unbacked && bus.ram(pa).is_none() => Fault::new(FaultKind::External),
            Ok(_) => return None,
        };
        let dfsr = fault.fsr(cpu.cp15.lpae(), write);
        let kept = matches!(
            fault.kind,
            FaultKind::Translation
                | FaultKind::AccessFlag
                | FaultKind::Permission
                | FaultKind::Domain
        );
        if cpu.cp15.sctlr & 1 != 0 && kept && complete {
            let tlb = (fault.kind == FaultKind::Permission)
                .then(|| cpu.tlb.lookup(va))
                .flatten();
            self.verdicts[verdict_slot(va)] = Verdict {
                page: (va >> 12) + 1,
                generation: self.generation,
                write,
                regime,
                dfsr,
                snapshot,
                tlb,
            };
        }
        Some(dfsr)
    }

    /// Forgets the remembered verdicts (TLB maintenance): O(1), a new [`Generation`].
    pub fn forget_verdicts(&mut self) {
        if self.generation.advance() {
            self.verdicts = [Verdict::default(); VERDICTS];
        }
    }

    /// Forgets the remembered verdicts at the start of a run of the engine: their
    /// snapshots hold host addresses of the previous run's bus.
    pub fn new_run(&mut self) {
        self.forget_verdicts();
    }
}

/// A PL1 data access.
fn pl1_access(write: bool) -> Access {
    Access {
        write,
        fetch: false,
        user: false,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::bus::{BusFault, FlatRam};

    /// Guest RAM: the short-descriptor level-1 table at its base, level-2 tables after it.
    const RAM: u64 = 0x8000_0000;
    const L2: u64 = RAM + 0x4000;
    const L2_OTHER: u64 = RAM + 0x4400;
    /// A section the level-1 table leaves invalid at first.
    const VA: u32 = 0x5000_0040;

    fn l1_slot(va: u32) -> u64 {
        RAM + 4 * (va >> 20) as u64
    }

    /// A CPU with the MMU on (short descriptors, domain 0 Client) and its RAM.
    fn machine() -> (Cpu, FlatRam) {
        let mut cpu = Cpu::new();
        cpu.cp15.ttbr0 = RAM;
        cpu.cp15.dacr = 1;
        cpu.cp15.sctlr |= 1;
        (cpu, FlatRam::new(RAM, 0x10_0000))
    }

    fn put(ram: &mut FlatRam, pa: u64, size: u8, v: u64) {
        ram.write(pa, size, v).unwrap();
    }

    /// What the interpreter's own translation says of a PL1 access (`DFSR` of its fault).
    fn interpreter(cpu: &mut Cpu, ram: &mut FlatRam, va: u32, write: bool) -> Option<u32> {
        let lpae = cpu.cp15.lpae();
        cpu.translate(ram, va, pl1_access(write))
            .err()
            .map(|f| f.fsr(lpae, write))
    }

    /// The remembered verdict, which must be the interpreter's answer whenever it is one.
    fn verdict(s: &FaultSites, cpu: &mut Cpu, ram: &mut FlatRam, va: u32, w: bool) -> Option<u32> {
        // SAFETY: `ram` is the bus every verdict was learnt through.
        let v = unsafe { s.verdict(cpu, va, w) };
        if v.is_some() {
            assert_eq!(v, interpreter(cpu, ram, va, w), "verdict vs interpreter");
        }
        v
    }

    #[test]
    fn a_translation_fault_holds_until_the_guest_writes_a_descriptor_without_maintenance() {
        let (mut cpu, mut ram) = machine();
        let mut s = FaultSites::default();
        let dfsr = s.learn(&mut cpu, &mut ram, VA, false, false);
        assert_eq!(dfsr, Some(0x005), "section Translation fault");
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA + 0x100, false), dfsr);
        // A valid section (AP = 0b011), no TLB maintenance: the access maps now.
        put(&mut ram, l1_slot(VA), 4, RAM | 0b11 << 10 | 0b10);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None);
        assert_eq!(s.learn(&mut cpu, &mut ram, VA, false, false), None);
        assert_eq!(interpreter(&mut cpu, &mut ram, VA, false), None);
    }

    #[test]
    fn a_page_fault_compares_both_levels() {
        let (mut cpu, mut ram) = machine();
        let mut s = FaultSites::default();
        // Level 1 -> a level-2 table (domain 0) whose entry is invalid.
        put(&mut ram, l1_slot(VA), 4, L2 | 0b01);
        let dfsr = s.learn(&mut cpu, &mut ram, VA, true, false);
        assert_eq!(dfsr, Some(1 << 11 | 0x007), "page Translation fault, write");
        assert_eq!(s.verdicts[verdict_slot(VA)].snapshot.len(), 2);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), dfsr);
        // The level-1 entry now names another (also invalid) table: walked again.
        put(&mut ram, l1_slot(VA), 4, L2_OTHER | 0b01);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), None);
        assert_eq!(s.learn(&mut cpu, &mut ram, VA, true, false), dfsr);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), dfsr);
        // The level-2 entry becomes a valid small page: maps, without maintenance.
        let l2e = L2_OTHER + 4 * ((VA >> 12) & 0xff) as u64;
        put(&mut ram, l2e, 4, RAM | 0b11 << 4 | 0b10);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), None);
        assert_eq!(interpreter(&mut cpu, &mut ram, VA, true), None);
    }

    #[test]
    fn a_permission_fault_puts_its_tlb_entry_back_and_a_permitting_tlb_entry_wins() {
        let (mut cpu, mut ram) = machine();
        let mut s = FaultSites::default();
        // A read-only section (APX = 1, AP = 0b01: PL1 read).
        put(&mut ram, l1_slot(VA), 4, RAM | 1 << 15 | 0b01 << 10 | 0b10);
        let dfsr = s.learn(&mut cpu, &mut ram, VA, true, false);
        assert_eq!(dfsr, Some(1 << 11 | 0x00d), "section Permission fault");
        let entry = cpu.tlb.lookup(VA);
        assert!(entry.is_some());
        // Evicted by another page of the same TLB slot (a flush would forget the verdict).
        cpu.tlb.insert(VA + (4 << 20), RAM, 0);
        assert_eq!(cpu.tlb.lookup(VA), None);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), dfsr);
        assert_eq!(cpu.tlb.lookup(VA), entry, "the walk's TLB entry");
        // A stale TLB entry that permits the write (the interpreter uses it).
        let rw = crate::mmu::perm::PR | crate::mmu::perm::PW;
        cpu.tlb.insert(VA, RAM, rw);
        // SAFETY: `ram` is the bus the verdict was learnt through.
        assert_eq!(unsafe { s.verdict(&mut cpu, VA, true) }, None);
    }

    #[test]
    fn a_verdict_is_per_page_access_and_regime_and_forgotten_at_maintenance_and_runs() {
        let (mut cpu, mut ram) = machine();
        let mut s = FaultSites::default();
        let dfsr = s.learn(&mut cpu, &mut ram, VA, false, false);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA + 0xf00, false), dfsr);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA + 0x1000, false), None);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), None);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), dfsr);
        s.forget_verdicts();
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None);
        s.learn(&mut cpu, &mut ram, VA, false, false);
        s.new_run();
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None);
    }

    /// `MCR p15, opc1, r1, crn, crm, opc2` (`mcrr`: `MCRR p15, opc1, r1, r2, crm`) executed
    /// by the interpreter, as a guest writes the register.
    pub(in crate::translate) fn write_cp15(
        cpu: &mut Cpu,
        ram: &mut FlatRam,
        mcrr: bool,
        f: [u32; 4],
        v: u64,
    ) {
        let [opc1, crn, crm, opc2] = f;
        let word = if mcrr {
            0xec40_0f00 | 2 << 16 | 1 << 12 | opc1 << 4 | crm
        } else {
            0xee00_0f10 | opc1 << 21 | crn << 16 | 1 << 12 | opc2 << 5 | crm
        };
        cpu.r[1] = v as u32;
        cpu.r[2] = (v >> 32) as u32;
        let insn = crate::decode::decode_a32(word);
        assert!(cpu.exec_system(ram, &insn).is_ok(), "{word:#x}");
    }

    /// Every write of a register the walk depends on (even of the value it holds) forgets
    /// the verdicts, through the TLB stamp: a writer that did not flush the interpreter's
    /// TLB would leave them standing. Other CP15 writes keep them.
    #[test]
    fn every_translation_register_write_forgets_the_verdicts() {
        let regs: [(&str, bool, [u32; 4]); 8] = [
            ("SCTLR", false, [0, 1, 0, 0]),
            ("TTBR0", false, [0, 2, 0, 0]),
            ("TTBR1", false, [0, 2, 0, 1]),
            ("TTBCR", false, [0, 2, 0, 2]),
            ("DACR", false, [0, 3, 0, 0]),
            ("CONTEXTIDR", false, [0, 13, 0, 1]),
            ("MCRR TTBR0", true, [0, 0, 2, 0]),
            ("MCRR TTBR1", true, [1, 0, 2, 0]),
        ];
        for (name, mcrr, f) in regs {
            let (mut cpu, mut ram) = machine();
            let mut s = FaultSites::default();
            let dfsr = s.learn(&mut cpu, &mut ram, VA, false, false);
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), dfsr, "{name}");
            // TPIDRURW: no translation register.
            write_cp15(&mut cpu, &mut ram, false, [0, 13, 0, 2], 7);
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), dfsr, "{name}");
            let c = &cpu.cp15;
            let now = match f {
                [0, 1, 0, 0] => c.sctlr as u64,
                [0, 2, 0, 1] | [1, 0, 2, 0] => c.ttbr1,
                [0, 2, 0, 2] => c.ttbcr as u64,
                [0, 3, 0, 0] => c.dacr as u64,
                [0, 13, 0, 1] => c.contextidr as u64,
                _ => c.ttbr0,
            };
            write_cp15(&mut cpu, &mut ram, mcrr, f, now);
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None, "{name}");
            assert_eq!(
                s.learn(&mut cpu, &mut ram, VA, false, false),
                dfsr,
                "{name}"
            );
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), dfsr, "{name}");
        }
    }

    #[test]
    fn forgets_verdicts_at_every_maintenance_even_when_the_generation_wraps() {
        let (mut cpu, mut ram) = machine();
        let mut s = FaultSites::default();
        for _ in 0..3 {
            let dfsr = s.learn(&mut cpu, &mut ram, VA, true, false);
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), dfsr);
            s.forget_verdicts();
            assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), None);
        }
        // Learnt in generation 1; the counter wraps back to 1.
        s.generation = Generation::default();
        s.learn(&mut cpu, &mut ram, VA, true, false);
        s.generation.set(u32::MAX);
        s.forget_verdicts();
        assert_eq!(s.generation, Generation::default());
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, true), None);
    }

    #[test]
    fn lpae_verdicts_compare_the_64_bit_descriptors() {
        let (mut cpu, mut ram) = machine();
        cpu.cp15.ttbcr = 1 << 31; // EAE, T0SZ = 0: the walk starts at level 1
        let l2 = RAM + 0x1000;
        put(&mut ram, RAM + 8 * (VA >> 30) as u64, 8, l2 | 0b11);
        let mut s = FaultSites::default();
        let dfsr = s.learn(&mut cpu, &mut ram, VA, false, false);
        assert_eq!(dfsr, Some(1 << 9 | 0b000110), "level 2 Translation fault");
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), dfsr);
        // The high word of the level-2 entry changes (still invalid): walked again.
        let l2e = l2 + 8 * ((VA >> 21) & 0x1ff) as u64;
        put(&mut ram, l2e, 8, 1 << 40);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None);
        assert_eq!(s.learn(&mut cpu, &mut ram, VA, false, false), dfsr);
        // A valid 2 MiB block (AF set): maps without maintenance.
        put(&mut ram, l2e, 8, RAM | 1 << 10 | 0b01);
        assert_eq!(verdict(&s, &mut cpu, &mut ram, VA, false), None);
        assert_eq!(interpreter(&mut cpu, &mut ram, VA, false), None);
    }

    /// RAM that the bus does not show as RAM (`Bus::ram`: `None`), like a device.
    struct NoRam(FlatRam);

    impl Bus for NoRam {
        fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
            self.0.read(pa, size)
        }
        fn write(&mut self, pa: u64, size: u8, v: u64) -> Result<(), BusFault> {
            self.0.write(pa, size, v)
        }
    }

    #[test]
    fn a_walk_that_read_outside_ram_is_not_remembered() {
        let (mut cpu, ram) = machine();
        let mut bus = NoRam(ram);
        let mut s = FaultSites::default();
        assert_eq!(s.learn(&mut cpu, &mut bus, VA, false, false), Some(0x005));
        // SAFETY: nothing is remembered, no host address to read.
        assert_eq!(unsafe { s.verdict(&mut cpu, VA, false) }, None);
    }
}
