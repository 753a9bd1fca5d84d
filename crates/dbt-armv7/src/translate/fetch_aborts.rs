//! Guest pages whose instruction fetch takes a Prefetch Abort from a *valid* translation
//! (a Permission fault: execute-never, no access; or a Domain fault), remembered so that
//! the dispatcher raises the abort for a branch there without searching the block map,
//! walking the guest's tables and running the interpreter (issue 17's `pabt` row: about
//! 1,100 host instructions each).
//!
//! Exactness: a TLB may hold a valid entry, permissions and all, until TLB maintenance
//! names it, and only under the translation regime it was made in (ARM ARM B3.10); so a
//! verdict is kept per page, privilege and the registers that shape the regime (`SCTLR`,
//! `TTBCR`, `TTBR0`, `TTBR1`, `DACR`, `CONTEXTIDR`: any difference misses), and all are
//! forgotten at any TLB maintenance. Translation and Access flag faults are never kept:
//! an invalid entry is not cached by a TLB, so the guest may fill it and branch again
//! without maintenance.
//!
//! Forgetting is O(1) ([`Generation`]): TLB maintenance only advances the table's
//! generation, and an entry holds only in the generation it was learnt in (Linux issues
//! about a million TLB operations on its way to userland under the DBT; clearing the
//! entries at each one cost about 100 host instructions).

use crate::bus::Bus;
use crate::cpu::{Cpu, Mode};
use crate::mmu::{Access, FaultKind};

/// Entries (direct-mapped by guest page).
const ENTRIES: usize = 16;

/// The generation of remembered verdicts (here and in
/// [`FaultSites`](super::fault_sites::FaultSites)): a verdict holds only while the
/// generation it was learnt in is current, so [`Generation::advance`] forgets all of them
/// at once. Generation 0 is never current: a default (free) entry never holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Generation(u32);

impl Default for Generation {
    fn default() -> Generation {
        Generation(1)
    }
}

impl Generation {
    /// The generation a free entry carries (never current).
    pub(crate) const NONE: Generation = Generation(0);

    /// Starts a new generation; returns `true` when the counter wrapped (back to 1), when
    /// the caller must free its entries, since an entry of the generation that was current
    /// 2^32 - 1 advances ago would hold again.
    pub(crate) fn advance(&mut self) -> bool {
        self.0 = self.0.wrapping_add(1);
        if self.0 == 0 {
            self.0 = 1;
            return true;
        }
        false
    }

    /// Sets the counter (tests: to reach the wrap).
    #[cfg(test)]
    pub(crate) fn set(&mut self, value: u32) {
        self.0 = value;
    }
}

/// The translation regime a verdict holds in (also for Data Aborts: `fault_sites`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Regime {
    sctlr: u32,
    ttbcr: u32,
    ttbr0: u64,
    ttbr1: u64,
    dacr: u32,
    contextidr: u32,
}

impl Regime {
    /// `cpu`'s current regime.
    pub(crate) fn of(cpu: &Cpu) -> Regime {
        let c = &cpu.cp15;
        Regime {
            sctlr: c.sctlr,
            ttbcr: c.ttbcr,
            ttbr0: c.ttbr0,
            ttbr1: c.ttbr1,
            dacr: c.dacr,
            contextidr: c.contextidr,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Guest page number + 1 (0: free).
    page: u32,
    /// The generation it was learnt in.
    generation: Generation,
    user: bool,
    regime: Regime,
    /// The `IFSR` value.
    ifsr: u32,
}

impl Default for Entry {
    fn default() -> Entry {
        Entry {
            page: 0,
            generation: Generation::NONE,
            user: false,
            regime: Regime::default(),
            ifsr: 0,
        }
    }
}

/// The remembered verdicts.
#[derive(Clone, Debug, Default)]
pub struct FetchAborts {
    entries: [Entry; ENTRIES],
    /// The current generation (entries of older ones do not hold).
    generation: Generation,
}

impl FetchAborts {
    fn slot(pc: u32) -> usize {
        (pc >> 12) as usize % ENTRIES
    }

    /// The `IFSR` of the Prefetch Abort that a fetch at `pc` takes in `cpu`'s current
    /// regime and privilege, if remembered.
    pub fn verdict(&self, cpu: &Cpu, pc: u32) -> Option<u32> {
        let e = &self.entries[Self::slot(pc)];
        (e.page == (pc >> 12) + 1
            && e.generation == self.generation
            && e.user == (cpu.mode == Mode::Usr)
            && e.regime == Regime::of(cpu))
        .then_some(e.ifsr)
    }

    /// The fetch at `pc` faulted (the block could not be made): walks the guest's tables
    /// as the interpreter's fetch does and remembers a Permission or Domain fault.
    pub fn learn(&mut self, cpu: &mut Cpu, bus: &mut dyn Bus, pc: u32) {
        if cpu.cp15.sctlr & 1 == 0 {
            return;
        }
        let user = cpu.mode == Mode::Usr;
        let acc = Access {
            write: false,
            fetch: true,
            user,
        };
        let Err(f) = cpu.translate(bus, pc, acc) else {
            return;
        };
        if matches!(f.kind, FaultKind::Permission | FaultKind::Domain) {
            self.entries[Self::slot(pc)] = Entry {
                page: (pc >> 12) + 1,
                generation: self.generation,
                user,
                regime: Regime::of(cpu),
                ifsr: f.fsr(cpu.cp15.lpae(), false),
            };
        }
    }

    /// Forgets every verdict (TLB maintenance): O(1), a new [`Generation`].
    pub fn clear(&mut self) {
        if self.generation.advance() {
            self.entries = [Entry::default(); ENTRIES];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::FlatRam;
    use crate::cpu::psr;

    /// Where the level-1 table lives (16 KiB aligned, in the first section).
    const TABLE: u32 = 0x4000;
    /// An execute-never section (full access otherwise), domain 0.
    const XN: u32 = 0x0010_0000;
    /// A section the table leaves invalid.
    const INVALID: u32 = 0x0020_0000;

    /// A CPU in Supervisor mode with its MMU on: section 0 maps the RAM (executable),
    /// [`XN`] maps it again execute-never, [`INVALID`] is not mapped; domain 0 client.
    fn machine() -> (Cpu, FlatRam) {
        let mut ram = FlatRam::new(0, 0x1_0000);
        // Section descriptors: base, AP[1:0] = 0b11 (bits 11:10), domain 0, type 0b10.
        let section = |base: u32, xn: bool| base | 3 << 10 | (xn as u32) << 4 | 0b10;
        ram.load(TABLE as u64, &section(0, false).to_le_bytes());
        ram.load(
            (TABLE + 4 * (XN >> 20)) as u64,
            &section(0, true).to_le_bytes(),
        );
        let mut cpu = Cpu::new();
        cpu.cp15.ttbr0 = TABLE as u64;
        cpu.cp15.ttbcr = 0;
        cpu.cp15.dacr = 1;
        cpu.cp15.sctlr |= 1;
        (cpu, ram)
    }

    #[test]
    fn remembers_a_valid_entrys_refusal_in_its_regime_until_maintenance() {
        let (mut cpu, mut ram) = machine();
        let mut fa = FetchAborts::default();
        fa.learn(&mut cpu, &mut ram, XN + 0x40);
        let ifsr = fa
            .verdict(&cpu, XN + 0xabc)
            .expect("an XN section's refusal");
        // The interpreter's own fetch raises that abort.
        let mut interp = Cpu::new();
        interp.cp15 = cpu.cp15.clone();
        interp.set_pc(XN + 0xabc);
        assert_eq!(interp.step(&mut ram), None);
        assert_eq!((interp.cp15.ifsr, interp.cp15.ifar), (ifsr, XN + 0xabc));
        // Another page, privilege or regime: no verdict.
        assert_eq!(fa.verdict(&cpu, XN + 0x1000), None);
        let mut user = Cpu::new_user(false);
        user.cp15 = cpu.cp15.clone();
        assert_eq!(fa.verdict(&user, XN), None);
        cpu.cp15.dacr = 3;
        assert_eq!(fa.verdict(&cpu, XN), None);
        cpu.cp15.dacr = 1;
        assert_eq!(fa.verdict(&cpu, XN), Some(ifsr));
        fa.clear();
        assert_eq!(fa.verdict(&cpu, XN), None);
    }

    #[test]
    fn a_verdict_never_outlives_maintenance_even_when_the_generation_wraps() {
        let (mut cpu, mut ram) = machine();
        let mut fa = FetchAborts::default();
        fa.learn(&mut cpu, &mut ram, XN);
        assert!(fa.verdict(&cpu, XN).is_some());
        // Every maintenance forgets it, and a verdict learnt after one holds.
        for _ in 0..3 {
            fa.clear();
            assert_eq!(fa.verdict(&cpu, XN), None);
            fa.learn(&mut cpu, &mut ram, XN);
            assert!(fa.verdict(&cpu, XN).is_some());
        }
        // An entry of generation 1; 2^32 - 1 advances later the counter is 1 again.
        fa.generation = Generation::default();
        fa.learn(&mut cpu, &mut ram, XN);
        fa.generation.set(u32::MAX);
        fa.clear();
        assert_eq!(fa.generation, Generation::default());
        assert_eq!(fa.verdict(&cpu, XN), None, "a verdict from before the wrap");
    }

    #[test]
    fn never_remembers_a_translation_fault() {
        let (mut cpu, mut ram) = machine();
        let mut fa = FetchAborts::default();
        fa.learn(&mut cpu, &mut ram, INVALID);
        assert_eq!(fa.verdict(&cpu, INVALID), None);
        // Nor an executable page.
        fa.learn(&mut cpu, &mut ram, 0x100);
        assert_eq!(fa.verdict(&cpu, 0x100), None);
    }

    #[test]
    fn take_fetch_abort_is_the_interpreters_prefetch_abort() {
        for thumb in [false, true] {
            let (mut cpu, mut ram) = machine();
            cpu.set_cpsr(cpu.cpsr() & !(psr::I | psr::F) | (thumb as u32) << 5);
            cpu.set_pc(XN + 0x22);
            let mut interp = Cpu::new();
            interp.set_cpsr(cpu.cpsr());
            interp.cp15 = cpu.cp15.clone();
            interp.set_pc(XN + 0x22);
            assert_eq!(interp.step(&mut ram), None);
            let ifsr = interp.cp15.ifsr;
            assert!(cpu.take_fetch_abort(ifsr));
            assert_eq!(
                (cpu.reg(15), cpu.reg(14), cpu.cpsr(), cpu.spsr(), cpu.icount),
                (
                    interp.reg(15),
                    interp.reg(14),
                    interp.cpsr(),
                    interp.spsr(),
                    interp.icount
                ),
                "thumb {thumb}"
            );
            assert_eq!((cpu.cp15.ifsr, cpu.cp15.ifar), (ifsr, XN + 0x22));
            // A pending unmasked IRQ comes first: nothing is done.
            let (mut cpu, _) = machine();
            cpu.set_cpsr(cpu.cpsr() & !psr::I);
            cpu.irq_line = true;
            assert!(!cpu.take_fetch_abort(ifsr));
            assert_eq!(cpu.icount, 0);
        }
    }
}
