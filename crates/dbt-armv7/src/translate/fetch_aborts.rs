//! Guest pages whose instruction fetch takes a Prefetch Abort from a *valid* translation
//! (a Permission fault: execute-never, no access; or a Domain fault), remembered so that
//! the dispatcher raises the abort for a branch there without searching the block map,
//! walking the guest's tables and running the interpreter (issue 17's `pabt` row: about
//! 1,100 host instructions each).
//!
//! Exactness: a TLB may hold a valid entry, permissions and all, until TLB maintenance
//! names it, and only under the translation regime it was made in (ARM ARM B3.10); so a
//! verdict is kept per page, privilege and regime, and all are forgotten at any TLB
//! maintenance. The regime is the interpreter TLB's [`stamp`](crate::mmu::tlb::Tlb::stamp),
//! which every write of a register that shapes it (`SCTLR`, `TTBCR`, `TTBR0`, `TTBR1`,
//! `DACR`, `CONTEXTIDR`; in the interpreter and in translated code) changes, even a write
//! of the value the register holds: one compare instead of six registers. Translation and Access flag faults are never kept:
//! an invalid entry is not cached by a TLB, so the guest may fill it and branch again
//! without maintenance.
//!
//! Forgetting is O(1) ([`Generation`]): TLB maintenance only advances the table's
//! generation, and an entry holds only in the generation it was learnt in (Linux issues
//! about a million TLB operations on its way to userland under the DBT; clearing the
//! entries at each one cost about 100 host instructions).
//!
//! Translated code raises the abort itself where it can ([`FetchAborts::raise_from_code`]):
//! an indirect branch that misses the target cache goes through the runtime's miss path
//! (`a64::fetch_abort_call`), which compares the target's page with its entry here and,
//! if it matches, calls in; the abort is the interpreter's own entry, and translated code
//! goes on at the vector's block through the target cache, without the dispatcher.

use crate::bus::Bus;
use crate::cpu::{psr, Cpu, Mode};
use crate::mmu::{Access, FaultKind};
use crate::translate::state::GuestState;

/// Entries (direct-mapped by guest page: [`ENTRY_INDEX_BITS`] bits of the page number).
const ENTRIES: usize = 1 << ENTRY_INDEX_BITS;
/// log2 of [`ENTRIES`] (translated code indexes the table by page number bits
/// `12..12 + ENTRY_INDEX_BITS`).
pub(crate) const ENTRY_INDEX_BITS: u8 = 4;
/// log2 of an entry's size in bytes (translated code's index scale).
pub(crate) const ENTRY_SIZE_LOG2: u8 = 6;
/// `SCTLR.EE`: exceptions set `CPSR.E` (big-endian data, which translated code does not
/// run).
const SCTLR_EE: u32 = 1 << 25;
/// NZCV in the CPSR and in [`GuestState::nzcv`].
const NZCV: u32 = 0xf000_0000;

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

/// One remembered verdict. Translated code reads `page` (at offset 0) from the table's
/// `entries` (at offset 0 of [`FetchAborts`]), indexed by page bits scaled by
/// [`ENTRY_SIZE_LOG2`].
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Guest page number + 1 (0: free).
    page: u32,
    /// The generation it was learnt in.
    generation: Generation,
    user: bool,
    /// The interpreter TLB's [`stamp`](crate::mmu::tlb::Tlb::stamp) when it was learnt:
    /// no translation register was written since while it is the same.
    regime: u64,
    /// The `IFSR` value.
    ifsr: u32,
}

impl Default for Entry {
    fn default() -> Entry {
        Entry {
            page: 0,
            generation: Generation::NONE,
            user: false,
            regime: u64::MAX,
            ifsr: 0,
        }
    }
}

const _: () = {
    assert!(core::mem::size_of::<Entry>() == 1 << ENTRY_SIZE_LOG2);
    assert!(core::mem::offset_of!(Entry, page) == 0);
    assert!(core::mem::offset_of!(FetchAborts, entries) == 0);
};

/// What [`FetchAborts::raise_remembered`] did (its value is the miss path's return
/// register: `a64::fetch_abort_call`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Raised {
    /// Declined: the dispatcher takes the branch, state unchanged.
    Declined = 0,
    /// The abort was taken; the vector is in the state's `r[15]`.
    Taken = 1,
    /// The interrupt lines must be sampled first: [`FetchAborts::raise_from_code`]
    /// decides; state unchanged.
    Sample = 2,
}

/// The remembered verdicts.
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct FetchAborts {
    entries: [Entry; ENTRIES],
    /// The current generation (entries of older ones do not hold).
    generation: Generation,
    /// Prefetch Aborts that translated code raised itself ([`FetchAborts::raise_from_code`]).
    pub delivered: u64,
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
            && e.regime == cpu.tlb.stamp())
        .then_some(e.ifsr)
    }

    /// The fetch at `pc` faulted (the block could not be made): walks the guest's tables
    /// as the interpreter's fetch does and remembers a Permission or Domain fault.
    pub fn learn(&mut self, cpu: &mut Cpu, bus: &mut dyn Bus, pc: u32) {
        if cpu.cp15.sctlr & 1 == 0 {
            return;
        }
        let user = cpu.mode == Mode::Usr;
        let regime = cpu.tlb.stamp();
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
                regime,
                ifsr: f.fsr(cpu.cp15.lpae(), false),
            };
        }
    }

    /// Translated code's indirect branch to the guest address `state.r[15]` (with the
    /// instruction-set bit, as the branch writes it) missed the target cache, with the
    /// guest's r0-r14 and NZCV in `state` and every other register in `cpu`: if the fetch
    /// there has a remembered verdict in the current regime and privilege, takes the
    /// Prefetch Abort exactly as [`Cpu::step`] would at the target (interrupts sampled
    /// first, `IFSR`, `IFAR`, `LR_abt` = target + 4, `SPSR_abt`, `CPSR`; see
    /// [`Cpu::take_fetch_abort`]) but leaves the instruction to translated code's budget
    /// to count, writes the new r0-r14 back to `state` and the vector (with the
    /// instruction-set bit) to `state.r[15]`, and returns true. Otherwise returns false
    /// with `state` unchanged (the dispatcher takes over, as before).
    ///
    /// Declined: User mode (the abort changes the privilege, and with it the target
    /// cache), FIQ mode (its banked R8-R12 stay in translated code), per-class counting, `SCTLR.EE` (the vector runs big-endian: interpreted),
    /// and whatever `take_fetch_abort` declines (a pending unmasked interrupt, an
    /// exception reported to the host).
    pub fn raise_from_code(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> bool {
        self.raise::<false>(cpu, state) == Raised::Taken
    }

    /// [`FetchAborts::raise_from_code`] without calls (a leaf: no stack frame, for the
    /// miss path's first call): [`Raised::Sample`], with `state` and `cpu` unchanged,
    /// where `raise_from_code` would sample the interrupt lines (`CPSR.I` or `CPSR.F`
    /// clear, as [`Cpu::step`] samples them); the caller then calls `raise_from_code`.
    #[inline(always)]
    pub fn raise_remembered(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> Raised {
        self.raise::<true>(cpu, state)
    }

    /// [`FetchAborts::raise_from_code`] (`LEAF`: [`FetchAborts::raise_remembered`]).
    #[inline(always)]
    fn raise<const LEAF: bool>(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> Raised {
        if matches!(cpu.mode, Mode::Usr | Mode::Fiq)
            || cpu.class_hits.is_some()
            || cpu.cp15.sctlr & SCTLR_EE != 0
        {
            return Raised::Declined;
        }
        // The PC and instruction set the branch writes (interworking), as the
        // dispatcher's `EXIT_BX` sets them.
        let target = state.r[15];
        let (pc, t) = if target & 1 != 0 {
            (target & !1, psr::T)
        } else {
            (target & !3, 0)
        };
        let Some(ifsr) = self.verdict(cpu, pc) else {
            return Raised::Declined;
        };
        if LEAF {
            // `Cpu::fetch_may_abort` without sampling: with `CPSR.I` and `CPSR.F` set,
            // `step` samples nothing and takes no interrupt.
            if !cpu.flag(psr::I) || !cpu.flag(psr::F) {
                return Raised::Sample;
            }
            if cpu.exit_on_exception || cpu.it != 0 {
                return Raised::Declined;
            }
        } else if !cpu.fetch_may_abort() {
            return Raised::Declined;
        }
        // r0-r12 stay in translated code (not FIQ mode: none is banked).
        let [sp, lr] = cpu.enter_prefetch_abort(
            [state.r[13], state.r[14]],
            (state.nzcv & NZCV) | t,
            pc,
            ifsr,
        );
        (state.r[13], state.r[14]) = (sp, lr);
        state.r[15] = cpu.r[15] | cpu.thumb() as u32;
        self.delivered += 1;
        Raised::Taken
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
        write_cp15(&mut cpu, DACR, 3);
        assert_eq!(fa.verdict(&cpu, XN), None);
        // Written back: still forgotten (the stamp never comes back), learnt again.
        write_cp15(&mut cpu, DACR, 1);
        assert_eq!(fa.verdict(&cpu, XN), None);
        fa.learn(&mut cpu, &mut ram, XN);
        assert_eq!(fa.verdict(&cpu, XN), Some(ifsr));
        fa.clear();
        assert_eq!(fa.verdict(&cpu, XN), None);
        // Nor does translated code raise it.
        let mut st = code_state(&mut cpu, XN);
        assert!(!fa.raise_from_code(&mut cpu, &mut st));
    }

    /// `DACR`'s `[opc1, CRn, CRm, opc2]`.
    const DACR: [u32; 4] = [0, 3, 0, 0];
    /// `CONTEXTIDR`'s `[opc1, CRn, CRm, opc2]`.
    const CONTEXTIDR: [u32; 4] = [0, 13, 0, 1];

    /// [`write_cp15`](crate::translate::fault_sites::tests::write_cp15) of `v` (`MCRR`
    /// with `mcrr`) executed by the interpreter, as a guest writes the register.
    fn write_cp15_as(cpu: &mut Cpu, mcrr: bool, reg: [u32; 4], v: u64) {
        let mut ram = FlatRam::new(0, 0x1000);
        crate::translate::fault_sites::tests::write_cp15(cpu, &mut ram, mcrr, reg, v);
    }

    /// [`write_cp15_as`] with `MCR`.
    fn write_cp15(cpu: &mut Cpu, reg: [u32; 4], v: u32) {
        write_cp15_as(cpu, false, reg, v as u64);
    }

    /// A write of any register that shapes the translation regime (`MCR` and `MCRR`, even
    /// of the value it holds) between two aborts forgets the verdict: the second branch is
    /// the dispatcher's again until the fetch is walked anew. Other CP15 writes keep it.
    #[test]
    fn a_translation_register_write_between_two_aborts_forgets_the_verdict() {
        let regs: [(&str, bool, [u32; 4]); 8] = [
            ("SCTLR", false, [0, 1, 0, 0]),
            ("TTBR0", false, [0, 2, 0, 0]),
            ("TTBR1", false, [0, 2, 0, 1]),
            ("TTBCR", false, [0, 2, 0, 2]),
            ("DACR", false, DACR),
            ("CONTEXTIDR", false, CONTEXTIDR),
            ("MCRR TTBR0", true, [0, 0, 2, 0]),
            ("MCRR TTBR1", true, [1, 0, 2, 0]),
        ];
        for (name, mcrr, reg) in regs {
            let (mut cpu, mut ram) = machine();
            let mut fa = FetchAborts::default();
            fa.learn(&mut cpu, &mut ram, XN);
            let mut st = code_state(&mut cpu, XN);
            assert!(fa.raise_from_code(&mut cpu, &mut st), "{name}: first abort");
            // Back in Supervisor mode (the handler's return), a TPIDRURW write: kept.
            cpu.set_cpsr(cpu.cpsr() & !psr::M | Mode::Svc as u32);
            write_cp15(&mut cpu, [0, 13, 0, 2], 7);
            let mut st = code_state(&mut cpu, XN);
            assert!(fa.raise_from_code(&mut cpu, &mut st), "{name}: kept");
            cpu.set_cpsr(cpu.cpsr() & !psr::M | Mode::Svc as u32);
            let c = &cpu.cp15;
            let now = match (mcrr, reg) {
                (false, [0, 1, 0, 0]) => c.sctlr as u64,
                (false, [0, 2, 0, 0]) => c.ttbr0 & 0xffff_ffff,
                (false, [0, 2, 0, 1]) => c.ttbr1 & 0xffff_ffff,
                (false, [0, 2, 0, 2]) => c.ttbcr as u64,
                (false, [0, 3, 0, 0]) => c.dacr as u64,
                (false, _) => c.contextidr as u64,
                (true, [0, ..]) => c.ttbr0,
                (true, _) => c.ttbr1,
            };
            write_cp15_as(&mut cpu, mcrr, reg, now);
            let mut st = code_state(&mut cpu, XN);
            let before = (st.r, st.nzcv, cpu.mode);
            assert!(!fa.raise_from_code(&mut cpu, &mut st), "{name}: forgotten");
            assert_eq!((st.r, st.nzcv, cpu.mode), before, "{name}");
            assert_eq!(fa.delivered, 2, "{name}");
        }
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

    /// A host whose interrupt inputs are the IRQ line `.0` and the FIQ line low (as the
    /// in-VM runtime's `ISR_EL1` would report them).
    struct IrqLine(bool);

    impl crate::cpu::CoprocHost for IrqLine {
        fn read(&mut self, _: u8, _: u8, _: u8, _: u8, _: u8) -> Option<u32> {
            None
        }
        fn write(&mut self, _: u8, _: u8, _: u8, _: u8, _: u8, _: u32) -> bool {
            false
        }
        fn read64(&mut self, _: u8, _: u8, _: u8) -> Option<u64> {
            None
        }
        fn write64(&mut self, _: u8, _: u8, _: u8, _: u64) -> bool {
            false
        }
        fn interrupt_lines(&mut self) -> Option<(bool, bool)> {
            Some((self.0, false))
        }
    }

    /// Translated code's state at an indirect branch to `target` from `cpu`'s mode:
    /// r0-r14 with distinct values, NZCV = 0b1010, the target in r15.
    fn code_state(cpu: &mut Cpu, target: u32) -> GuestState {
        let mut st = GuestState::default();
        for n in 0..15 {
            st.r[n] = 0x1111_0000 + n as u32;
        }
        st.r[15] = target;
        st.nzcv = 0xa000_0000;
        // The CPU's own copy is stale while translated code runs.
        cpu.r[..15].fill(0xdead_beef);
        cpu.cpsr &= !0xf000_0000;
        st
    }

    #[test]
    fn raise_from_code_is_the_interpreters_prefetch_abort_at_the_target() {
        // A32 and Thumb targets, from Supervisor and from System mode (the IRQ unmasked:
        // sampled, not pending; or IRQ and FIQ masked: the leaf takes it), Thumb
        // exception entry (SCTLR.TE) or not.
        for (target, mode, te, masked) in [
            (XN + 0x40, Mode::Svc, false, false),
            (XN + 0x43, Mode::Svc, false, false),
            ((XN + 0x7fe) | 1, Mode::Sys, true, false),
            (XN + 0x800, Mode::Sys, true, false),
            (XN + 0x40, Mode::Svc, false, true),
            ((XN + 0x7fe) | 1, Mode::Sys, true, true),
            (XN + 0x802, Mode::Svc, true, true),
        ] {
            let (mut cpu, mut ram) = machine();
            cpu.cp15.sctlr |= (te as u32) << 30;
            cpu.cp15.vbar = 0x8000;
            let masks = if masked { psr::I | psr::F } else { 0 };
            cpu.set_cpsr(cpu.cpsr() & !psr::I & !psr::M | mode as u32 | masks);
            cpu.set_coproc_host(alloc::boxed::Box::new(IrqLine(false)));
            let mut fa = FetchAborts::default();
            fa.learn(&mut cpu, &mut ram, XN);
            let mut st = code_state(&mut cpu, target);
            // The interpreter at the same point: the branch wrote the PC (interworking).
            let mut interp = Cpu::new();
            interp.cp15 = cpu.cp15.clone();
            interp.set_cpsr(cpu.cpsr() | st.nzcv);
            interp.r[..15].copy_from_slice(&st.r[..15]);
            interp.bx_write_pc(target);
            interp.r[15] = interp.next_pc;
            assert_eq!(interp.step(&mut ram), None);
            assert_eq!(interp.mode, Mode::Abt, "{target:#x}");
            let icount = cpu.icount;
            if masked {
                let raised = fa.raise_remembered(&mut cpu, &mut st);
                assert_eq!(raised, Raised::Taken, "{target:#x}: the leaf");
            } else {
                let before = (st.r, st.nzcv, cpu.cpsr());
                let raised = fa.raise_remembered(&mut cpu, &mut st);
                assert_eq!(raised, Raised::Sample, "{target:#x}: the leaf");
                assert_eq!((st.r, st.nzcv, cpu.cpsr()), before, "{target:#x}");
                assert!(fa.raise_from_code(&mut cpu, &mut st), "{target:#x}");
            }
            let mut want = interp.r;
            want[15] |= interp.thumb() as u32;
            assert_eq!(st.r, want, "{target:#x}: r0-r14 and the vector");
            // The PC the branch wrote: Thumb (bit 0) halfword-aligned, A32 word-aligned.
            let pc = if target & 1 != 0 {
                target & !1
            } else {
                target & !3
            };
            assert_eq!(st.r[14], pc + 4, "LR_abt");
            assert_eq!(
                (
                    cpu.cpsr(),
                    cpu.spsr(),
                    cpu.cp15.ifsr,
                    cpu.cp15.ifar,
                    cpu.mode
                ),
                (
                    interp.cpsr(),
                    interp.spsr(),
                    interp.cp15.ifsr,
                    interp.cp15.ifar,
                    interp.mode
                ),
                "{target:#x}"
            );
            // The budget register counts the instruction, not `icount`.
            assert_eq!(cpu.icount, icount);
            assert_eq!(fa.delivered, 1);
        }
    }

    #[test]
    fn raise_from_code_declines_what_the_dispatcher_must_do() {
        let check = |what: &str, change: &dyn Fn(&mut Cpu), target: u32| {
            let (mut cpu, mut ram) = machine();
            let mut fa = FetchAborts::default();
            fa.learn(&mut cpu, &mut ram, XN);
            change(&mut cpu);
            let mut st = code_state(&mut cpu, target);
            let before = (st.r, st.nzcv);
            let mode = cpu.mode;
            let raised = fa.raise_remembered(&mut cpu, &mut st);
            assert_ne!(raised, Raised::Taken, "{what}: the leaf");
            assert_eq!(
                (st.r, st.nzcv, cpu.mode),
                (before.0, before.1, mode),
                "{what}"
            );
            assert!(!fa.raise_from_code(&mut cpu, &mut st), "{what}");
            assert_eq!((st.r, st.nzcv), before, "{what}: state unchanged");
            assert_eq!((cpu.mode, fa.delivered), (mode, 0), "{what}");
        };
        check("no verdict for the page", &|_| {}, XN + 0x1000);
        check("an executable page", &|_| {}, 0x100);
        check("another regime (DACR)", &|c| write_cp15(c, DACR, 3), XN);
        check(
            "another regime (CONTEXTIDR)",
            &|c| write_cp15(c, CONTEXTIDR, 5),
            XN,
        );
        check(
            "User mode",
            &|c| c.set_cpsr(c.cpsr() & !psr::M | Mode::Usr as u32),
            XN,
        );
        check("SCTLR.EE", &|c| c.cp15.sctlr |= 1 << 25, XN);
        check(
            "FIQ mode",
            &|c| c.set_cpsr(c.cpsr() & !psr::M | Mode::Fiq as u32),
            XN,
        );
        check(
            "an unmasked IRQ the host raised since (sampled as step does)",
            &|c| {
                c.set_cpsr(c.cpsr() & !psr::I);
                c.set_coproc_host(alloc::boxed::Box::new(IrqLine(true)));
            },
            XN,
        );
        check(
            "an unmasked pending IRQ",
            &|c| {
                c.set_cpsr(c.cpsr() & !psr::I);
                c.irq_line = true;
            },
            XN,
        );
        check(
            "exceptions reported to the host",
            &|c| c.set_exit_on_exception(true),
            XN,
        );
        check("an IT block", &|c| c.it = 0x08, XN);
    }
}
