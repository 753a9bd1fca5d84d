//! Loads and stores: single, dual, multiple, exclusive, swap, table branches; data
//! translation, alignment checks and endianness.

use super::ExecResult;
use crate::bus::Bus;
use crate::cpu::{psr, Cpu, Exception, Mode};
use crate::decode::*;
use crate::mmu::{Access, Fault, FaultKind};

impl Cpu {
    fn data_abort(&self, f: Fault, va: u32, write: bool) -> Exception {
        Exception::DataAbort {
            fsr: f.fsr(self.cp15.lpae(), write),
            far: va,
        }
    }

    fn access_byte(
        &mut self,
        bus: &mut dyn Bus,
        va: u32,
        user: bool,
        write: Option<u8>,
    ) -> Result<u8, Exception> {
        let acc = Access {
            write: write.is_some(),
            fetch: false,
            user,
        };
        let pa = self
            .translate(bus, va, acc)
            .map_err(|f| self.data_abort(f, va, write.is_some()))?;
        let r = match write {
            Some(b) => bus.write(pa, 1, b as u64).map(|_| 0),
            None => bus.read(pa, 1),
        };
        r.map(|v| v as u8)
            .map_err(|_| self.data_abort(Fault::new(FaultKind::External), va, write.is_some()))
    }

    fn check_align(&self, va: u32, size: u32, strict: u32, write: bool) -> Result<bool, Exception> {
        let need = if self.cp15.sctlr & 2 != 0 {
            size
        } else {
            strict
        };
        if need > 1 && va & (need - 1) != 0 {
            return Err(self.data_abort(Fault::new(FaultKind::Alignment), va, write));
        }
        Ok(va & (size - 1) != 0)
    }

    /// The doubleword alignment `LDREXD`/`STREXD` require (`address<2:0> == '000'`),
    /// independent of `SCTLR.A`.
    fn check_exclusive_d(&self, va: u32, write: bool) -> Result<(), Exception> {
        if va & 7 != 0 {
            return Err(self.data_abort(Fault::new(FaultKind::Alignment), va, write));
        }
        Ok(())
    }

    /// Reads `size` bytes at `va` (little- or big-endian per `CPSR.E`); `strict` is the
    /// alignment the instruction requires even with `SCTLR.A` clear (1 = none).
    pub(crate) fn read_mem(
        &mut self,
        bus: &mut dyn Bus,
        va: u32,
        size: u32,
        user: bool,
        strict: u32,
    ) -> Result<u32, Exception> {
        let unaligned = self.check_align(va, size, strict, false)?;
        let mut v: u32 = if unaligned {
            let mut v = 0u32;
            for k in 0..size {
                v |= (self.access_byte(bus, va.wrapping_add(k), user, None)? as u32) << (8 * k);
            }
            v
        } else {
            let acc = Access {
                write: false,
                fetch: false,
                user,
            };
            let pa = self
                .translate(bus, va, acc)
                .map_err(|f| self.data_abort(f, va, false))?;
            bus.read(pa, size as u8)
                .map_err(|_| self.data_abort(Fault::new(FaultKind::External), va, false))?
                as u32
        };
        if self.cpsr & psr::E != 0 {
            v = v.swap_bytes() >> (32 - 8 * size);
        }
        Ok(v)
    }

    /// Writes `size` bytes of `v` at `va`.
    pub(crate) fn write_mem(
        &mut self,
        bus: &mut dyn Bus,
        va: u32,
        size: u32,
        v: u32,
        user: bool,
        strict: u32,
    ) -> Result<(), Exception> {
        let unaligned = self.check_align(va, size, strict, true)?;
        let v = if self.cpsr & psr::E != 0 {
            v.swap_bytes() >> (32 - 8 * size)
        } else {
            v
        };
        if unaligned {
            // Translate every byte first so a fault leaves memory untouched.
            for k in 0..size {
                let a = va.wrapping_add(k);
                let acc = Access {
                    write: true,
                    fetch: false,
                    user,
                };
                self.translate(bus, a, acc)
                    .map_err(|f| self.data_abort(f, a, true))?;
            }
            for k in 0..size {
                self.access_byte(bus, va.wrapping_add(k), user, Some((v >> (8 * k)) as u8))?;
            }
            return Ok(());
        }
        let acc = Access {
            write: true,
            fetch: false,
            user,
        };
        let pa = self
            .translate(bus, va, acc)
            .map_err(|f| self.data_abort(f, va, true))?;
        bus.write(pa, size as u8, v as u64)
            .map_err(|_| self.data_abort(Fault::new(FaultKind::External), va, true))
    }

    fn base(&self, rn: u8) -> u32 {
        if rn == 15 {
            self.pc_read & !3
        } else {
            self.r[rn as usize]
        }
    }

    fn address(&self, a: &Addr) -> (u32, u32) {
        let base = self.base(a.rn);
        let off = match a.off {
            MemOff::Imm(i) => i,
            MemOff::Reg { rm, shift, amount } => {
                crate::exec::alu::shift_c(self.rr(rm), shift, amount as u32, self.flag(psr::C)).0
            }
        };
        let oa = if a.add {
            base.wrapping_add(off)
        } else {
            base.wrapping_sub(off)
        };
        (if a.index { oa } else { base }, oa)
    }

    pub(crate) fn exec_mem(&mut self, bus: &mut dyn Bus, i: &Insn) -> ExecResult {
        let priv_user = self.mode == Mode::Usr;
        match i.op {
            Op::Mem {
                load,
                size,
                signed,
                rt,
                addr,
                unpriv,
            } => {
                let (va, wb) = self.address(&addr);
                let user = priv_user || unpriv;
                let n = size.bytes();
                if load {
                    let mut v = self.read_mem(bus, va, n, user, 1)?;
                    if signed {
                        v = match size {
                            Size::B => v as i8 as i32 as u32,
                            _ => v as i16 as i32 as u32,
                        };
                    }
                    if addr.wback {
                        self.r[addr.rn as usize] = wb;
                    }
                    self.wr_load(rt, v);
                } else {
                    let v = self.rr(rt);
                    self.write_mem(bus, va, n, v, user, 1)?;
                    if addr.wback {
                        self.r[addr.rn as usize] = wb;
                    }
                }
            }
            Op::MemDual {
                load,
                rt,
                rt2,
                addr,
            } => {
                let (va, wb) = self.address(&addr);
                if load {
                    let a = self.read_mem(bus, va, 4, priv_user, 4)?;
                    let b = self.read_mem(bus, va.wrapping_add(4), 4, priv_user, 4)?;
                    if addr.wback {
                        self.r[addr.rn as usize] = wb;
                    }
                    self.r[rt as usize] = a;
                    self.r[rt2 as usize] = b;
                } else {
                    let a = self.rr(rt);
                    let b = self.rr(rt2);
                    self.write_mem(bus, va, 4, a, priv_user, 4)?;
                    self.write_mem(bus, va.wrapping_add(4), 4, b, priv_user, 4)?;
                    if addr.wback {
                        self.r[addr.rn as usize] = wb;
                    }
                }
            }
            Op::Ldrex {
                size,
                rt,
                rt2,
                rn,
                imm,
            } => {
                let va = self.base(rn).wrapping_add(imm);
                if size == Size::D {
                    // LDREXD: `if address<2:0> != '000' then AlignmentFault` (ARM ARM
                    // pseudocode), whatever SCTLR.A says; the two words of the aligned
                    // doubleword are then word-aligned accesses.
                    self.check_exclusive_d(va, false)?;
                    let a = self.read_mem(bus, va, 4, priv_user, 4)?;
                    let b = self.read_mem(bus, va.wrapping_add(4), 4, priv_user, 4)?;
                    self.r[rt as usize] = a;
                    self.r[rt2 as usize] = b;
                } else {
                    let n = size.bytes();
                    let v = self.read_mem(bus, va, n, priv_user, n)?;
                    self.r[rt as usize] = v;
                }
                self.monitor = Some(va);
            }
            Op::Strex {
                size,
                rd,
                rt,
                rt2,
                rn,
                imm,
            } => {
                let va = self.base(rn).wrapping_add(imm);
                let n = size.bytes();
                // Alignment is checked even when the store fails (STREXD: doubleword
                // alignment whatever SCTLR.A says, as for LDREXD).
                if size == Size::D {
                    self.check_exclusive_d(va, true)?;
                } else {
                    self.check_align(va, n, n, true)?;
                }
                // ExclusiveMonitorsPass: whether a memory abort is detected before the
                // local monitor check is IMPLEMENTATION DEFINED (ARM ARM); here it is, so
                // a store-exclusive to a page it may not write (copy-on-write) aborts even
                // when the monitor is not ours: a translator that ran the LDREX as host
                // code leaves this model's monitor open, and a STREX that only failed would
                // loop forever without the guest ever seeing the permission fault.
                let acc = Access {
                    write: true,
                    fetch: false,
                    user: priv_user,
                };
                self.translate(bus, va, acc)
                    .map_err(|f| self.data_abort(f, va, true))?;
                if self.monitor == Some(va) {
                    if size == Size::D {
                        let a = self.rr(rt);
                        let b = self.rr(rt2);
                        self.write_mem(bus, va, 4, a, priv_user, 4)?;
                        self.write_mem(bus, va.wrapping_add(4), 4, b, priv_user, 4)?;
                    } else {
                        let v = self.rr(rt);
                        self.write_mem(bus, va, n, v, priv_user, n)?;
                    }
                    self.r[rd as usize] = 0;
                } else {
                    self.r[rd as usize] = 1;
                }
                self.monitor = None;
            }
            Op::Clrex => self.monitor = None,
            Op::Swp { byte, rt, rt2, rn } => {
                let va = self.rr(rn);
                let n = if byte { 1 } else { 4 };
                let old = self.read_mem(bus, va, n, priv_user, n)?;
                let new = self.rr(rt2);
                self.write_mem(bus, va, n, new, priv_user, n)?;
                self.r[rt as usize] = old;
            }
            Op::Multi {
                load,
                rn,
                list,
                inc,
                before,
                wback,
                user,
            } => return self.multi(bus, load, rn, list, inc, before, wback, user),
            Op::Tb { half, rn, rm } => {
                let base = self.rr(rn);
                let idx = self.rr(rm);
                let v = if half {
                    self.read_mem(bus, base.wrapping_add(idx << 1), 2, priv_user, 1)?
                } else {
                    self.read_mem(bus, base.wrapping_add(idx), 1, priv_user, 1)?
                };
                self.next_pc = self.pc_read.wrapping_add(v << 1);
            }
            _ => return Err(Exception::Undefined),
        }
        Ok(None)
    }

    #[allow(clippy::too_many_arguments)]
    fn multi(
        &mut self,
        bus: &mut dyn Bus,
        load: bool,
        rn: u8,
        list: u16,
        inc: bool,
        before: bool,
        wback: bool,
        user: bool,
    ) -> ExecResult {
        let n = list.count_ones();
        let base = self.rr(rn);
        let start = match (inc, before) {
            (true, false) => base,
            (true, true) => base.wrapping_add(4),
            (false, false) => base.wrapping_sub(4 * n).wrapping_add(4),
            (false, true) => base.wrapping_sub(4 * n),
        };
        let new_base = if inc {
            base.wrapping_add(4 * n)
        } else {
            base.wrapping_sub(4 * n)
        };
        let priv_user = self.mode == Mode::Usr;
        let exc_return = user && load && list & 0x8000 != 0;
        let user_regs = user && !exc_return;
        if load {
            let mut vals = [0u32; 16];
            let mut a = start;
            for (r, slot) in vals.iter_mut().enumerate() {
                if list & (1 << r) != 0 {
                    *slot = self.read_mem(bus, a, 4, priv_user, 4)?;
                    a = a.wrapping_add(4);
                }
            }
            if wback {
                self.r[rn as usize] = new_base;
            }
            for (r, &v) in vals.iter().enumerate().take(15) {
                if list & (1 << r) != 0 {
                    if user_regs {
                        self.set_user_reg(r, v);
                    } else {
                        self.r[r] = v;
                    }
                }
            }
            if list & 0x8000 != 0 {
                if exc_return && self.mode.has_spsr() {
                    let spsr = self.spsr[self.mode.bank()];
                    self.exception_return(vals[15], spsr);
                } else {
                    self.bx_write_pc(vals[15]);
                }
            }
        } else {
            let mut a = start;
            for r in 0..16usize {
                if list & (1 << r) != 0 {
                    let v = if r == 15 {
                        self.pc_read
                    } else if user_regs {
                        self.user_reg(r)
                    } else {
                        self.r[r]
                    };
                    self.write_mem(bus, a, 4, v, priv_user, 4)?;
                    a = a.wrapping_add(4);
                }
            }
            if wback {
                self.r[rn as usize] = new_base;
            }
        }
        Ok(None)
    }
}
