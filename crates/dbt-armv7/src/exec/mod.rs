//! The interpreter: fetch (through the MMU), decode (cached), condition/IT handling,
//! execution ([`alu`], [`mem`], [`system`]) and exception delivery.

pub mod alu;
pub mod mem;
pub mod system;
pub mod vfp;

use crate::bus::Bus;
use crate::cpu::{psr, Cpu, Exception, Exit, Mode, DCACHE_SIZE};
use crate::decode::{self, Insn, Op};
use crate::mmu::{self, Access, Fault, FaultKind};

/// Result of executing one instruction: `Ok(None)` to continue, `Ok(Some(exit))` to return
/// to the embedder after the instruction, `Err(e)` to take an exception.
pub type ExecResult = Result<Option<Exit>, Exception>;

impl Cpu {
    /// Runs at most `budget` instructions.
    pub fn run(&mut self, bus: &mut dyn Bus, budget: u64) -> Exit {
        for _ in 0..budget {
            if let Some(e) = self.step(bus) {
                return e;
            }
        }
        Exit::Budget
    }

    /// Refreshes `irq_line`/`fiq_line` from the host, if it samples them
    /// ([`CoprocHost::interrupt_lines`](crate::cpu::CoprocHost::interrupt_lines)).
    pub(crate) fn sample_interrupt_lines(&mut self) {
        if let Some((irq, fiq)) = self.coproc_host.as_mut().and_then(|h| h.interrupt_lines()) {
            self.irq_line = irq;
            self.fiq_line = fiq;
        }
    }

    /// Executes one instruction (or takes one pending interrupt).
    pub fn step(&mut self, bus: &mut dyn Bus) -> Option<Exit> {
        if !self.flag(psr::I) || !self.flag(psr::F) {
            self.sample_interrupt_lines();
        }
        if self.fiq_line && !self.flag(psr::F) {
            self.take_exception(Exception::Fiq, 0);
            return None;
        }
        if self.irq_line && !self.flag(psr::I) {
            self.take_exception(Exception::Irq, 0);
            return None;
        }
        let pc = self.r[15];
        let thumb = self.thumb();
        let insn = match self.fetch_decode(bus, pc, thumb) {
            Ok(i) => i,
            Err(e) => return self.raise(e, if thumb { 2 } else { 4 }),
        };
        self.execute(bus, insn)
    }

    /// Executes `insn`, already fetched and decoded from the PC (a translator that keeps
    /// the decoded instruction calls this instead of [`Cpu::step`]; interrupts are not
    /// sampled, as translated code samples them between blocks).
    pub fn step_decoded(&mut self, bus: &mut dyn Bus, insn: Insn) -> Option<Exit> {
        self.execute(bus, insn)
    }

    fn execute(&mut self, bus: &mut dyn Bus, mut insn: Insn) -> Option<Exit> {
        let pc = self.r[15];
        let thumb = self.thumb();
        let len = insn.len as u32;
        self.cur_len = len;
        self.next_pc = pc.wrapping_add(len);
        self.pc_read = pc.wrapping_add(if thumb { 4 } else { 8 });
        let in_it = thumb && self.in_it();
        let cond = if in_it { self.it >> 4 } else { insn.cond };
        let result = if cond >= 14 || self.cond_passed(cond) {
            if let Some(h) = self.class_hits.as_mut() {
                h[insn.class as usize] += 1;
            }
            if in_it && len == 2 && decode::t16::t16_sets_flags_outside_it(insn.raw as u16) {
                if let Op::Dp { ref mut s, .. } | Op::Mul { ref mut s, .. } = insn.op {
                    *s = false;
                }
            }
            if insn.unpredictable {
                Err(Exception::Undefined)
            } else {
                self.exec(bus, &insn)
            }
        } else {
            Ok(None)
        };
        match result {
            Ok(exit) => {
                if thumb && !matches!(insn.op, Op::It { .. }) {
                    self.advance_it();
                }
                self.r[15] = self.next_pc;
                self.icount += 1;
                exit
            }
            Err(e) => self.raise(e, len),
        }
    }

    fn raise(&mut self, e: Exception, len: u32) -> Option<Exit> {
        if self.exit_on_exception {
            return Some(Exit::Exception(e));
        }
        if let Exception::Svc(_) = e {
            self.advance_it();
        }
        self.icount += 1;
        self.take_exception(e, len);
        None
    }

    fn fetch_decode(&mut self, bus: &mut dyn Bus, pc: u32, thumb: bool) -> Result<Insn, Exception> {
        let (raw, tag) = if thumb {
            let hw1 = self.fetch(bus, pc, 2)? as u16;
            if decode::t32_is_32bit(hw1) {
                let hw2 = self.fetch(bus, pc.wrapping_add(2), 2)? as u16;
                ((hw1 as u32) << 16 | hw2 as u32, pc | 1)
            } else {
                (hw1 as u32, pc | 1)
            }
        } else {
            (self.fetch(bus, pc, 4)?, pc)
        };
        let slot = &mut self.dcache[((pc >> 1) as usize) & (DCACHE_SIZE - 1)];
        if slot.0 == tag && slot.1 == raw {
            return Ok(slot.2);
        }
        let insn = if !thumb {
            decode::decode_a32(raw)
        } else if raw >> 16 != 0 {
            decode::t32::decode((raw >> 16) as u16, raw as u16)
        } else {
            decode::t16::decode(raw as u16)
        };
        *slot = (tag, raw, insn);
        Ok(insn)
    }

    fn fetch(&mut self, bus: &mut dyn Bus, va: u32, size: u8) -> Result<u32, Exception> {
        let user = self.mode == Mode::Usr;
        let acc = Access {
            write: false,
            fetch: true,
            user,
        };
        let lpae = self.cp15.lpae();
        let abort = |f: Fault| Exception::PrefetchAbort {
            fsr: f.fsr(lpae, false),
            far: va,
        };
        let pa = self.translate(bus, va, acc).map_err(abort)?;
        match bus.read(pa, size) {
            Ok(v) => Ok(v as u32),
            Err(_) => Err(abort(Fault::new(FaultKind::External))),
        }
    }

    /// Translates `va` for `acc` through the TLB (identity when `SCTLR.M` is clear).
    pub fn translate(&mut self, bus: &mut dyn Bus, va: u32, acc: Access) -> Result<u64, Fault> {
        if self.cp15.sctlr & 1 == 0 {
            return Ok(va as u64);
        }
        let need = acc.needed();
        if let Some((pa, p)) = self.tlb.lookup(va) {
            if p & need == need {
                return Ok(pa | (va & 0xfff) as u64);
            }
        }
        let w = mmu::walk(&self.cp15, bus, va)?;
        self.tlb.insert(va, w.pa_page, w.perms);
        if w.perms & need != need {
            return Err(Fault {
                kind: FaultKind::Permission,
                level: w.level,
                domain: w.domain,
            });
        }
        Ok(w.pa_page | (va & 0xfff) as u64)
    }

    /// Reads a register as an operand (R15 reads as the instruction address + 8/4).
    #[inline]
    pub(crate) fn rr(&self, n: u8) -> u32 {
        if n == 15 {
            self.pc_read
        } else {
            self.r[n as usize]
        }
    }

    /// Writes a register; R15 is `ALUWritePC` (interworking in A32, plain in T32).
    #[inline]
    pub(crate) fn wr_alu(&mut self, n: u8, v: u32) {
        if n == 15 {
            if self.thumb() {
                self.next_pc = v & !1;
            } else {
                self.bx_write_pc(v);
            }
        } else {
            self.r[n as usize] = v;
        }
    }

    /// Writes a register; R15 is `LoadWritePC` (interworking).
    #[inline]
    pub(crate) fn wr_load(&mut self, n: u8, v: u32) {
        if n == 15 {
            self.bx_write_pc(v);
        } else {
            self.r[n as usize] = v;
        }
    }

    /// `BXWritePC`: bit 0 selects Thumb.
    pub(crate) fn bx_write_pc(&mut self, v: u32) {
        if v & 1 != 0 {
            self.cpsr |= psr::T;
            self.next_pc = v & !1;
        } else {
            self.cpsr &= !psr::T;
            self.next_pc = v & !3;
        }
    }

    fn exec(&mut self, bus: &mut dyn Bus, i: &Insn) -> ExecResult {
        match i.op {
            Op::Mem { .. }
            | Op::MemDual { .. }
            | Op::Ldrex { .. }
            | Op::Strex { .. }
            | Op::Clrex
            | Op::Swp { .. }
            | Op::Multi { .. }
            | Op::Tb { .. } => self.exec_mem(bus, i),
            Op::Mrs { .. }
            | Op::Msr { .. }
            | Op::MrsBanked { .. }
            | Op::MsrBanked { .. }
            | Op::Cps { .. }
            | Op::Setend { .. }
            | Op::Srs { .. }
            | Op::Rfe { .. }
            | Op::Eret
            | Op::Mcr { .. }
            | Op::Mcrr { .. }
            | Op::Ldc { .. }
            | Op::Cdp { .. }
            | Op::Vfp { .. }
            | Op::Svc { .. }
            | Op::Bkpt { .. }
            | Op::Hvc { .. }
            | Op::Smc { .. }
            | Op::Udf { .. }
            | Op::Undefined
            | Op::Hint(_)
            | Op::Barrier(_)
            | Op::Preload { .. } => self.exec_system(bus, i),
            _ => self.exec_alu(i),
        }
    }
}
