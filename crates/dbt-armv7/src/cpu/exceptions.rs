//! Exception entry and return (ARM ARM B1.8, without Security/Virtualization traps).

use super::modes::{psr, Mode};
use super::Cpu;

/// An exception raised by an instruction or an interrupt input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exception {
    /// Reset.
    Reset,
    /// Undefined instruction (also UNPREDICTABLE encodings and trapped accesses).
    Undefined,
    /// Supervisor call.
    Svc(u32),
    /// Prefetch abort with the IFSR value and the faulting address.
    PrefetchAbort {
        /// IFSR value.
        fsr: u32,
        /// IFAR value.
        far: u32,
    },
    /// Data abort with the DFSR value and the faulting address.
    DataAbort {
        /// DFSR value.
        fsr: u32,
        /// DFAR value.
        far: u32,
    },
    /// Interrupt request.
    Irq,
    /// Fast interrupt request.
    Fiq,
}

impl Exception {
    /// Whether this is a Data Abort.
    pub fn is_data_abort(&self) -> bool {
        matches!(self, Exception::DataAbort { .. })
    }
}

impl Cpu {
    /// Whether the CPU stands as right after the instruction at `pc` took a Data Abort:
    /// in Abort mode at the Data Abort vector with `LR_abt` = `pc` + 8 (A32 and Thumb).
    /// An instruction that ends there without aborting (in Abort mode, `LR` already
    /// that value) looks the same: callers may only use this to skip work that the abort
    /// made unnecessary.
    pub fn just_took_data_abort(&self, pc: u32) -> bool {
        self.mode == Mode::Abt
            && self.r[15] == self.vector_base().wrapping_add(0x10)
            && self.r[14] == (pc & !1).wrapping_add(8)
    }

    /// Takes the Prefetch Abort with `IFSR` value `ifsr` that fetching the instruction at
    /// the PC raises, as [`Cpu::step`] would, and returns true; returns false with nothing
    /// done when `step` would do something else first: take a pending unmasked interrupt,
    /// report the exception to the host ([`Cpu::set_exit_on_exception`]), or (in an IT
    /// block) not start at the instruction at all. For a translator that knows the fetch
    /// faults without fetching (`translate::fetch_aborts`).
    pub fn take_fetch_abort(&mut self, ifsr: u32) -> bool {
        if !self.enter_fetch_abort(ifsr) {
            return false;
        }
        self.icount += 1;
        true
    }

    /// [`Cpu::take_fetch_abort`] without counting the instruction in `icount`: for
    /// translated code, whose budget register counts it (`translate::fetch_aborts`'s
    /// abort from the target cache's miss path).
    pub(crate) fn enter_fetch_abort(&mut self, ifsr: u32) -> bool {
        if !self.fetch_may_abort() {
            return false;
        }
        let pc = self.r[15];
        self.take_exception(
            Exception::PrefetchAbort { fsr: ifsr, far: pc },
            if self.thumb() { 2 } else { 4 },
        );
        true
    }

    /// Whether [`Cpu::step`] would go on to fetch the instruction at the PC (and so take
    /// its Prefetch Abort): it samples the interrupt lines as `step` does and says no
    /// when it would take a pending unmasked interrupt first, when exceptions are
    /// reported to the host ([`Cpu::set_exit_on_exception`]), or in an IT block.
    pub(crate) fn fetch_may_abort(&mut self) -> bool {
        if !self.flag(psr::I) || !self.flag(psr::F) {
            self.sample_interrupt_lines();
        }
        !(self.exit_on_exception
            || self.it != 0
            || (self.fiq_line && !self.flag(psr::F))
            || (self.irq_line && !self.flag(psr::I)))
    }

    /// Takes the Prefetch Abort (`IFSR` `ifsr`) of a fetch at `pc` (with
    /// [`Cpu::fetch_may_abort`] true), under the contract of [`Cpu::enter_data_abort`]:
    /// `IFAR` = `pc`, `LR_abt` = `pc` + 4, the vector at offset `0x0c`.
    #[inline]
    pub(crate) fn enter_prefetch_abort(
        &mut self,
        sp_lr: [u32; 2],
        flags: u32,
        pc: u32,
        ifsr: u32,
    ) -> [u32; 2] {
        self.cp15.ifsr = ifsr;
        self.cp15.ifar = pc;
        self.enter_abort_mode(sp_lr, flags, pc.wrapping_add(4), 0x0c)
    }

    /// Takes the Data Abort (`DFSR` `fsr`, `DFAR` `far`) of the instruction at `pc`, for a
    /// translator whose code holds the current mode's R13 and R14 (`sp`, `lr`) and the
    /// CPSR's N, Z, C, V and T (`flags`), and returns Abort mode's R13 and R14. The same
    /// effect as setting those and calling [`Cpu::take_exception`], spelled out for one
    /// exception (ARM ARM B1.9.7 and B1.8.3): `SPSR_abt` = CPSR (IT bits 0), `LR_abt` =
    /// `pc` + 8, mode Abort with `CPSR.I` and `CPSR.A` set, `CPSR.T` = `SCTLR.TE`, `CPSR.E` =
    /// `SCTLR.EE`, J and IT cleared, the PC at the vector, the exclusive monitor cleared.
    /// For a CPU outside FIQ mode (whose banked R8-R12 it does not swap) and IT blocks.
    #[inline]
    pub(crate) fn enter_data_abort(
        &mut self,
        [sp, lr]: [u32; 2],
        flags: u32,
        pc: u32,
        fsr: u32,
        far: u32,
    ) -> [u32; 2] {
        self.cp15.dfsr = fsr;
        self.cp15.dfar = far;
        self.enter_abort_mode([sp, lr], flags, pc.wrapping_add(8), 0x10)
    }

    /// What [`Cpu::enter_data_abort`] and [`Cpu::enter_prefetch_abort`] share: the entry
    /// to Abort mode with `LR_abt` = `new_lr` at vector offset `offset`.
    #[inline]
    fn enter_abort_mode(
        &mut self,
        [sp, lr]: [u32; 2],
        flags: u32,
        new_lr: u32,
        offset: u32,
    ) -> [u32; 2] {
        const FLAGS: u32 = psr::N | psr::Z | psr::C | psr::V | psr::T;
        debug_assert!(self.mode != Mode::Fiq && self.it == 0);
        let cpsr = (self.cpsr & !FLAGS) | (flags & FLAGS);
        let saved = cpsr & !psr::IT_MASK;
        // `Mode::bank` by `CPSR.M[3:0]`, without its compare chain.
        const BANK: [u8; 16] = [0, 1, 2, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0];
        let (from, abt) = (BANK[self.mode as usize & 15] as usize, Mode::Abt.bank());
        let new_sp = if from == abt {
            sp
        } else {
            self.bank_sp_lr[from] = [sp, lr];
            self.bank_sp_lr[abt][0]
        };
        let sctlr = self.cp15.sctlr;
        let mut c = (cpsr & !(psr::M | psr::T | psr::J | psr::E)) | Mode::Abt as u32;
        c |= psr::I | psr::A;
        c |= (((sctlr >> 30) & 1) * psr::T) | (((sctlr >> 25) & 1) * psr::E);
        self.spsr[abt] = saved;
        self.mode = Mode::Abt;
        self.cpsr = c;
        self.it = 0;
        self.r[13] = new_sp;
        self.r[14] = new_lr;
        self.r[15] = self.vector_base().wrapping_add(offset);
        self.monitor = None;
        [new_sp, new_lr]
    }

    /// Vector base address (`SCTLR.V` hivecs or `VBAR`).
    pub fn vector_base(&self) -> u32 {
        if self.cp15.sctlr & (1 << 13) != 0 {
            0xffff_0000
        } else {
            self.cp15.vbar & !0x1f
        }
    }

    /// Takes `e` with `self.r[15]` the address of the instruction it concerns (for
    /// interrupts: the next instruction to execute) and `len` its length.
    pub fn take_exception(&mut self, e: Exception, len: u32) {
        let pc = self.r[15];
        let thumb = self.thumb();
        let (mode, off, lr, mask_a, mask_f) = match e {
            Exception::Reset => (Mode::Svc, 0x00, 0, true, true),
            Exception::Undefined => (
                Mode::Und,
                0x04,
                pc.wrapping_add(if thumb { 2 } else { 4 }),
                false,
                false,
            ),
            Exception::Svc(_) => (Mode::Svc, 0x08, pc.wrapping_add(len), false, false),
            Exception::PrefetchAbort { fsr, far } => {
                self.cp15.ifsr = fsr;
                self.cp15.ifar = far;
                (Mode::Abt, 0x0c, pc.wrapping_add(4), true, false)
            }
            Exception::DataAbort { fsr, far } => {
                self.cp15.dfsr = fsr;
                self.cp15.dfar = far;
                (Mode::Abt, 0x10, pc.wrapping_add(8), true, false)
            }
            Exception::Irq => (Mode::Irq, 0x18, pc.wrapping_add(4), true, false),
            Exception::Fiq => (Mode::Fiq, 0x1c, pc.wrapping_add(4), true, true),
        };
        let saved = self.cpsr();
        self.switch_mode(mode);
        self.spsr[mode.bank()] = saved;
        self.r[14] = lr;
        self.it = 0;
        let mut c = self.cpsr & !(psr::T | psr::J | psr::E);
        c |= psr::I;
        if mask_a {
            c |= psr::A;
        }
        if mask_f {
            c |= psr::F;
        }
        if self.cp15.sctlr & (1 << 30) != 0 {
            c |= psr::T;
        }
        if self.cp15.sctlr & (1 << 25) != 0 {
            c |= psr::E;
        }
        self.cpsr = c;
        self.r[15] = self.vector_base().wrapping_add(off);
        self.monitor = None;
    }

    /// Exception return: `CPSR = SPSR` then branch to `target` (`SUBS PC, LR`, `LDM ^`,
    /// `RFE`, `ERET`). In User/System mode (no SPSR) this is UNPREDICTABLE; we only branch.
    pub(crate) fn exception_return(&mut self, target: u32, new_cpsr: u32) {
        self.set_cpsr(new_cpsr);
        let t = if self.thumb() {
            target & !1
        } else {
            target & !3
        };
        self.next_pc = t;
    }

    /// `CPSRWriteByInstr` (MSR/CPS): writes the bytes selected by `mask` (f, s, x, c).
    pub(crate) fn write_cpsr_by_instr(&mut self, v: u32, mask: u8) {
        let privileged = self.mode.privileged();
        let mut keep = !0u32;
        if mask & 8 != 0 {
            keep &= !0xf800_0000;
        }
        if mask & 4 != 0 {
            keep &= !0x000f_0000;
        }
        if mask & 2 != 0 {
            keep &= !psr::E;
            if privileged {
                keep &= !psr::A;
            }
        }
        if mask & 1 != 0 && privileged {
            keep &= !(psr::I | psr::F);
        }
        let nv = (self.cpsr & keep) | (v & !keep);
        self.cpsr = (nv & !psr::M) | self.mode as u32;
        if mask & 1 != 0 && privileged {
            if let Some(m) = Mode::from_bits(v) {
                self.switch_mode(m);
            }
        }
    }
}
