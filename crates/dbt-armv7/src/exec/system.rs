//! System instructions: status registers, banked registers, CPS, SRS/RFE/ERET, coprocessor
//! accesses (CP15, CP14, generic timer), exception-generating instructions and hints.

use super::ExecResult;
use crate::bus::Bus;
use crate::cp15::Cp15Effect;
use crate::cpu::{psr, Cpu, Exception, Exit, Mode};
use crate::decode::*;
use crate::mmu::Access;

/// Decodes the `SYSm`/`R` operand of banked MRS/MSR: a mode's register or its SPSR.
fn banked(r: bool, sysm: u8) -> Option<(Mode, Option<usize>)> {
    if r {
        let m = match sysm {
            0b01110 => Mode::Fiq,
            0b10000 => Mode::Irq,
            0b10010 => Mode::Svc,
            0b10100 => Mode::Abt,
            0b10110 => Mode::Und,
            _ => return None,
        };
        return Some((m, None));
    }
    Some(match sysm {
        0..=6 => (Mode::Usr, Some(8 + sysm as usize)),
        8..=14 => (Mode::Fiq, Some(sysm as usize)),
        0b10000 => (Mode::Irq, Some(14)),
        0b10001 => (Mode::Irq, Some(13)),
        0b10010 => (Mode::Svc, Some(14)),
        0b10011 => (Mode::Svc, Some(13)),
        0b10100 => (Mode::Abt, Some(14)),
        0b10101 => (Mode::Abt, Some(13)),
        0b10110 => (Mode::Und, Some(14)),
        0b10111 => (Mode::Und, Some(13)),
        _ => return None,
    })
}

impl Cpu {
    /// Timer status lines `(physical, virtual)`: enabled, unmasked and expired.
    pub fn timer_irq(&mut self) -> (bool, bool) {
        let now = self.counter_value();
        let fire = |ctl: u32, cval: u64| ctl & 1 != 0 && ctl & 2 == 0 && now >= cval;
        (
            fire(self.cp15.cntp_ctl, self.cp15.cntp_cval),
            fire(self.cp15.cntv_ctl, self.cp15.cntv_cval),
        )
    }

    fn timer_read(&mut self, crm: u8, opc2: u8) -> Option<u32> {
        let now = self.counter_value();
        let st = |ctl: u32, cval: u64| (ctl & 3) | if now >= cval { 4 } else { 0 };
        Some(match (crm, opc2) {
            (0, 0) => self.cp15.cntfrq,
            (1, 0) => self.cp15.cntkctl,
            (2, 0) => self.cp15.cntp_cval.wrapping_sub(now) as u32,
            (2, 1) => st(self.cp15.cntp_ctl, self.cp15.cntp_cval),
            (3, 0) => self.cp15.cntv_cval.wrapping_sub(now) as u32,
            (3, 1) => st(self.cp15.cntv_ctl, self.cp15.cntv_cval),
            _ => return None,
        })
    }

    fn timer_write(&mut self, crm: u8, opc2: u8, v: u32) -> Option<()> {
        let now = self.counter_value();
        match (crm, opc2) {
            (0, 0) => self.cp15.cntfrq = v,
            (1, 0) => self.cp15.cntkctl = v & 0x3ff,
            (2, 0) => self.cp15.cntp_cval = now.wrapping_add(v as i32 as i64 as u64),
            (2, 1) => self.cp15.cntp_ctl = v & 3,
            (3, 0) => self.cp15.cntv_cval = now.wrapping_add(v as i32 as i64 as u64),
            (3, 1) => self.cp15.cntv_ctl = v & 3,
            _ => return None,
        }
        Some(())
    }

    /// Records what an instruction-cache maintenance operation (CP15 c7, `crm`, `opc2`,
    /// operand `v`) invalidates for a translator: `ICIALLU`/`ICIALLUIS` everything,
    /// `ICIMVAU` the 64-byte line holding virtual address `v` (the MMU is off whenever
    /// code is translated, so it is the physical line). Branch-predictor maintenance
    /// (`BPIALL`, `BPIMVA`...) changes no instruction and invalidates nothing.
    fn note_code_invalidation(&mut self, crm: u8, opc2: u8, v: u32) {
        let range = match (crm, opc2) {
            (1, 0) | (5, 0) => (0, 1 << 32),
            (5, 1) => {
                let lo = v & !63;
                (lo, lo as u64 + 64)
            }
            _ => return,
        };
        self.code_invalidation = Some(match self.code_invalidation {
            Some((lo, hi)) => (lo.min(range.0), hi.max(range.1)),
            None => range,
        });
    }

    fn apply(&mut self, bus: &mut dyn Bus, e: Cp15Effect) {
        match e {
            Cp15Effect::FlushTlb => self.tlb.flush(),
            Cp15Effect::Translate(va, write, user) => {
                let acc = Access {
                    write,
                    fetch: false,
                    user,
                };
                let lpae = self.cp15.lpae();
                self.cp15.par = match self.translate(bus, va, acc) {
                    Ok(pa) if lpae => (pa & 0xff_ffff_f000) | 1 << 11,
                    Ok(pa) => pa & 0xffff_f000,
                    Err(f) => {
                        let fsr = f.fsr(lpae, write);
                        if lpae {
                            1 << 11 | ((fsr & 0x3f) as u64) << 1 | 1
                        } else {
                            ((((fsr >> 10) & 1) << 5 | (fsr & 0xf)) as u64) << 1 | 1
                        }
                    }
                };
            }
            Cp15Effect::None | Cp15Effect::FlushICache | Cp15Effect::Timer => {}
        }
    }

    fn coproc(&mut self, bus: &mut dyn Bus, i: &Insn) -> ExecResult {
        let user = self.mode == Mode::Usr;
        match i.op {
            Op::Mcr {
                to_cp,
                cp,
                opc1,
                crn,
                crm,
                opc2,
                rt,
            } => {
                if cp == 14 {
                    // Debug and trivial Jazelle registers (`cp14.rs`).
                    if to_cp {
                        let v = self.rr(rt);
                        if !self.cp14.write(opc1, crn, crm, opc2, v, user) {
                            return Err(Exception::Undefined);
                        }
                    } else {
                        let v = self
                            .cp14
                            .read(opc1, crn, crm, opc2, user)
                            .ok_or(Exception::Undefined)?;
                        self.wr_mrc(rt, v);
                    }
                    return Ok(None);
                }
                if cp != 15 || (user && !self.cp15.user_accessible(opc1, crn, crm, opc2, to_cp)) {
                    return Err(Exception::Undefined);
                }
                let value = self.rr(rt);
                if let Some(h) = self.coproc_host.as_mut() {
                    if h.undefined(cp, opc1, crn, crm, opc2) {
                        return Err(Exception::Undefined);
                    }
                    if to_cp {
                        if h.write(cp, opc1, crn, crm, opc2, value) {
                            return Ok(None);
                        }
                    } else if let Some(v) = h.read(cp, opc1, crn, crm, opc2) {
                        self.wr_mrc(rt, v);
                        return Ok(None);
                    }
                }
                if to_cp {
                    let v = self.rr(rt);
                    let e = self
                        .cp15
                        .write(opc1, crn, crm, opc2, v)
                        .ok_or(Exception::Undefined)?;
                    if e == Cp15Effect::Timer {
                        self.timer_write(crm, opc2, v).ok_or(Exception::Undefined)?;
                    }
                    if e == Cp15Effect::FlushICache {
                        self.note_code_invalidation(crm, opc2, v);
                    }
                    self.apply(bus, e);
                } else {
                    let (v, e) = self
                        .cp15
                        .read(opc1, crn, crm, opc2)
                        .ok_or(Exception::Undefined)?;
                    let v = if e == Cp15Effect::Timer {
                        self.timer_read(crm, opc2).ok_or(Exception::Undefined)?
                    } else {
                        v
                    };
                    self.wr_mrc(rt, v);
                }
            }
            Op::Mcrr {
                to_cp,
                cp,
                opc1,
                crm,
                rt,
                rt2,
            } => {
                if cp == 14 {
                    // DBGDRAR/DBGDSAR (64-bit), read-only (`cp14.rs`).
                    let v = self
                        .cp14
                        .read64(opc1, crm)
                        .filter(|_| !to_cp)
                        .ok_or(Exception::Undefined)?;
                    self.r[rt as usize] = v as u32;
                    self.r[rt2 as usize] = (v >> 32) as u32;
                    return Ok(None);
                }
                let timer_user_ok = crm == 14
                    && !to_cp
                    && ((opc1 == 0 && self.cp15.cntkctl & 1 != 0)
                        || (opc1 == 1 && self.cp15.cntkctl & 2 != 0));
                if cp != 15 || (user && !timer_user_ok) {
                    return Err(Exception::Undefined);
                }
                let value = (self.rr(rt2) as u64) << 32 | self.rr(rt) as u64;
                if let Some(h) = self.coproc_host.as_mut() {
                    if to_cp {
                        if h.write64(cp, opc1, crm, value) {
                            return Ok(None);
                        }
                    } else if let Some(v) = h.read64(cp, opc1, crm) {
                        self.r[rt as usize] = v as u32;
                        self.r[rt2 as usize] = (v >> 32) as u32;
                        return Ok(None);
                    }
                }
                if to_cp {
                    let v = (self.rr(rt2) as u64) << 32 | self.rr(rt) as u64;
                    let e = self
                        .cp15
                        .write64(opc1, crm, v)
                        .ok_or(Exception::Undefined)?;
                    if e == Cp15Effect::Timer {
                        match opc1 {
                            2 => self.cp15.cntp_cval = v,
                            3 => self.cp15.cntv_cval = v,
                            _ => return Err(Exception::Undefined),
                        }
                    }
                    self.apply(bus, e);
                } else {
                    let (mut v, e) = self.cp15.read64(opc1, crm).ok_or(Exception::Undefined)?;
                    if e == Cp15Effect::Timer {
                        v = match opc1 {
                            0 | 1 => self.counter_value(),
                            2 => self.cp15.cntp_cval,
                            _ => self.cp15.cntv_cval,
                        };
                    }
                    self.r[rt as usize] = v as u32;
                    self.r[rt2 as usize] = (v >> 32) as u32;
                }
            }
            _ => return Err(Exception::Undefined),
        }
        Ok(None)
    }

    fn wr_mrc(&mut self, rt: u8, v: u32) {
        if rt == 15 {
            self.cpsr = (self.cpsr & 0x0fff_ffff) | (v & 0xf000_0000);
        } else {
            self.r[rt as usize] = v;
        }
    }

    pub(crate) fn exec_system(&mut self, bus: &mut dyn Bus, i: &Insn) -> ExecResult {
        let user = self.mode == Mode::Usr;
        match i.op {
            Op::Mrs { rd, spsr } => {
                let v = if spsr {
                    self.spsr().ok_or(Exception::Undefined)?
                } else {
                    self.cpsr() & !(psr::IT_MASK | psr::J | psr::T)
                };
                self.r[rd as usize] = v;
            }
            Op::Msr { spsr, mask, src } => {
                let v = match src {
                    MsrSrc::Reg(r) => self.rr(r),
                    MsrSrc::Imm(v) => v,
                };
                if spsr {
                    if !self.mode.has_spsr() {
                        return Err(Exception::Undefined);
                    }
                    let mut m = 0u32;
                    for b in 0..4 {
                        if mask & (1 << b) != 0 {
                            m |= 0xff << (8 * b);
                        }
                    }
                    let s = &mut self.spsr[self.mode.bank()];
                    *s = (*s & !m) | (v & m);
                } else {
                    self.write_cpsr_by_instr(v, mask);
                }
            }
            Op::MrsBanked { rd, r, sysm } => {
                let (m, reg) = banked(r, sysm).ok_or(Exception::Undefined)?;
                if user || (m == self.mode && reg.is_none()) {
                    return Err(Exception::Undefined);
                }
                self.r[rd as usize] = match reg {
                    Some(n) => self.banked_reg(m, n),
                    None => self.banked_spsr(m),
                };
            }
            Op::MsrBanked { rn, r, sysm } => {
                let (m, reg) = banked(r, sysm).ok_or(Exception::Undefined)?;
                if user {
                    return Err(Exception::Undefined);
                }
                let v = self.rr(rn);
                match reg {
                    Some(n) => self.set_banked_reg(m, n, v),
                    None => self.set_banked_spsr(m, v),
                }
            }
            Op::Cps { imod, aif, mode } => {
                if !user {
                    let bits = (aif as u32) << 6;
                    match imod {
                        2 => self.cpsr &= !bits,
                        3 => self.cpsr |= bits,
                        _ => {}
                    }
                    if let Some(m) = mode.and_then(|m| Mode::from_bits(m as u32)) {
                        self.switch_mode(m);
                    }
                }
            }
            Op::Setend { big } => self.set_flag(psr::E, big),
            Op::Srs {
                mode,
                inc,
                before,
                wback,
            } => {
                let m = Mode::from_bits(mode as u32).ok_or(Exception::Undefined)?;
                if !self.mode.has_spsr() {
                    return Err(Exception::Undefined);
                }
                let base = self.banked_reg(m, 13);
                let addr = match (inc, before) {
                    (true, false) => base,
                    (true, true) => base.wrapping_add(4),
                    (false, false) => base.wrapping_sub(4),
                    (false, true) => base.wrapping_sub(8),
                };
                let lr = self.r[14];
                let spsr = self.spsr[self.mode.bank()];
                self.write_mem(bus, addr, 4, lr, false, 4)?;
                self.write_mem(bus, addr.wrapping_add(4), 4, spsr, false, 4)?;
                if wback {
                    let nb = if inc {
                        base.wrapping_add(8)
                    } else {
                        base.wrapping_sub(8)
                    };
                    self.set_banked_reg(m, 13, nb);
                }
            }
            Op::Rfe {
                rn,
                inc,
                before,
                wback,
            } => {
                if user {
                    return Err(Exception::Undefined);
                }
                let base = self.rr(rn);
                let addr = match (inc, before) {
                    (true, false) => base,
                    (true, true) => base.wrapping_add(4),
                    (false, false) => base.wrapping_sub(4),
                    (false, true) => base.wrapping_sub(8),
                };
                let pc = self.read_mem(bus, addr, 4, false, 4)?;
                let cpsr = self.read_mem(bus, addr.wrapping_add(4), 4, false, 4)?;
                if wback {
                    self.r[rn as usize] = if inc {
                        base.wrapping_add(8)
                    } else {
                        base.wrapping_sub(8)
                    };
                }
                self.exception_return(pc, cpsr);
            }
            Op::Eret => {
                // Without EL2, ERET at PL1 is SUBS PC, LR, #0.
                if !self.mode.has_spsr() {
                    return Err(Exception::Undefined);
                }
                let spsr = self.spsr[self.mode.bank()];
                let lr = self.r[14];
                self.exception_return(lr, spsr);
            }
            Op::Mcr { .. } | Op::Mcrr { .. } => return self.coproc(bus, i),
            Op::Vfp { .. } => return self.exec_vfp(bus, i),
            Op::Ldc { .. } | Op::Cdp { .. } => return Err(Exception::Undefined),
            Op::Svc { imm } => {
                if self.exit_on_svc {
                    return Ok(Some(Exit::Svc(imm)));
                }
                return Err(Exception::Svc(imm));
            }
            Op::Bkpt { .. } => {
                return Err(Exception::PrefetchAbort {
                    fsr: if self.cp15.lpae() {
                        1 << 9 | 0b100010
                    } else {
                        0b00010
                    },
                    far: self.r[15],
                })
            }
            Op::Hvc { imm } => {
                if user {
                    return Err(Exception::Undefined);
                }
                return Ok(Some(Exit::Hvc(imm)));
            }
            Op::Smc { imm } => {
                if user {
                    return Err(Exception::Undefined);
                }
                return Ok(Some(Exit::Smc(imm)));
            }
            Op::Udf { .. } | Op::Undefined => return Err(Exception::Undefined),
            Op::Hint(Hint::Wfi) => {
                self.sample_interrupt_lines();
                if !(self.irq_line || self.fiq_line) {
                    return Ok(Some(Exit::Wfi));
                }
            }
            Op::Hint(_) | Op::Barrier(_) | Op::Preload { .. } => {}
            _ => return Err(Exception::Undefined),
        }
        Ok(None)
    }
}
