//! VFP register transfers and loads/stores: VMRS/VMSR (FPSCR, FPEXC, FPSID, MVFR0/1,
//! `APSR_nzcv`), VMOV between core registers and S/D registers or D-register scalars,
//! VDUP from a core register, VLDR/VSTR and VLDM/VSTM (VPUSH/VPOP).

use super::{field, flag};
use crate::bus::Bus;
use crate::cpu::fp::{FPSID, MVFR0, MVFR1};
use crate::cpu::{psr, Cpu, Exception, Mode};
use crate::exec::ExecResult;

/// VMRS/VMSR system register numbers (`reg` field, bits 19:16).
const REG_FPSID: u32 = 0b0000;
const REG_FPSCR: u32 = 0b0001;
const REG_MVFR1: u32 = 0b0110;
const REG_MVFR0: u32 = 0b0111;
const REG_FPEXC: u32 = 0b1000;

impl Cpu {
    /// The checks of VMRS/VMSR: FPSCR needs the unit enabled; the others are PL1 only and
    /// need CPACR access but not `FPEXC.EN`.
    fn check_fp_sysreg(&self, reg: u32) -> Result<(), Exception> {
        if reg == REG_FPSCR {
            return self.check_fp_enabled(false);
        }
        if self.mode == Mode::Usr || !self.cpacr_allows_fp() {
            return Err(Exception::Undefined);
        }
        Ok(())
    }

    /// `VMRS Rt, <spec_reg>`; `Rt == 15` copies FPSCR.NZCV to the APSR.
    pub(crate) fn vmrs(&mut self, w: u32) -> ExecResult {
        let reg = field(w, 19, 16);
        let rt = field(w, 15, 12) as usize;
        self.check_fp_sysreg(reg)?;
        let v = match reg {
            REG_FPSCR => self.fp.fpscr,
            REG_FPSID => FPSID,
            REG_MVFR0 => MVFR0,
            REG_MVFR1 => MVFR1,
            REG_FPEXC => self.fp.fpexc,
            _ => return Err(Exception::Undefined),
        };
        if rt == 15 {
            if reg != REG_FPSCR {
                return Err(Exception::Undefined); // UNPREDICTABLE
            }
            self.cpsr = (self.cpsr & !0xf000_0000) | (v & 0xf000_0000);
        } else {
            self.r[rt] = v;
        }
        Ok(None)
    }

    /// `VMSR <spec_reg>, Rt`.
    pub(crate) fn vmsr(&mut self, w: u32) -> ExecResult {
        let reg = field(w, 19, 16);
        let v = self.r[field(w, 15, 12) as usize];
        self.check_fp_sysreg(reg)?;
        match reg {
            REG_FPSCR => self.fp.write_fpscr(v),
            REG_FPEXC => self.fp.write_fpexc(v),
            REG_FPSID => {} // read-only: writes are ignored
            _ => return Err(Exception::Undefined),
        }
        Ok(None)
    }

    /// Core register transfers: VMOV core<->S, VMOV core<->D scalar, VDUP (core), and the
    /// 64-bit VMOV (two core registers <-> two S or one D).
    pub(crate) fn vfp_transfer(&mut self, w: u32) -> ExecResult {
        let rt = field(w, 15, 12) as usize;
        if field(w, 27, 21) == 0b110_0010 {
            self.check_fp_enabled(false)?;
            let rt2 = field(w, 19, 16) as usize;
            let to_core = flag(w, 20);
            let m = field(w, 3, 0) as usize;
            let mbit = flag(w, 5) as usize;
            if field(w, 7, 6) != 0 || !flag(w, 4) {
                return Err(Exception::Undefined);
            }
            if flag(w, 8) {
                let dm = mbit << 4 | m;
                self.check_dreg(dm)?;
                if to_core {
                    let v = self.fp.d[dm];
                    self.r[rt] = v as u32;
                    self.r[rt2] = (v >> 32) as u32;
                } else {
                    self.fp.d[dm] = (self.r[rt2] as u64) << 32 | self.r[rt] as u64;
                }
            } else {
                let sm = m << 1 | mbit;
                if sm == 31 {
                    return Err(Exception::Undefined); // UNPREDICTABLE
                }
                if to_core {
                    self.r[rt] = self.fp.s(sm);
                    self.r[rt2] = self.fp.s(sm + 1);
                } else {
                    self.fp.set_s(sm, self.r[rt]);
                    self.fp.set_s(sm + 1, self.r[rt2]);
                }
            }
            return Ok(None);
        }
        let l = flag(w, 20);
        let c = flag(w, 8);
        let a = field(w, 23, 21);
        if !c {
            // VMOV between a core register and a single-precision register.
            if a != 0 || field(w, 6, 5) != 0 || field(w, 3, 0) != 0 {
                return Err(Exception::Undefined);
            }
            self.check_fp_enabled(false)?;
            let sn = (field(w, 19, 16) << 1 | flag(w, 7) as u32) as usize;
            if l {
                self.r[rt] = self.fp.s(sn);
            } else {
                self.fp.set_s(sn, self.r[rt]);
            }
            return Ok(None);
        }
        let dn = ((flag(w, 7) as u32) << 4 | field(w, 19, 16)) as usize;
        if field(w, 3, 0) != 0 {
            return Err(Exception::Undefined);
        }
        if !l && a & 0b100 != 0 {
            return self.vdup_core(w, dn, rt);
        }
        // VMOV scalar: opc1 (bits 22:21) and opc2 (bits 6:5) give size and index.
        let opc = field(w, 22, 21) << 2 | field(w, 6, 5);
        let (esize, index) = if opc & 0b1000 != 0 {
            (8, opc & 7)
        } else if opc & 1 != 0 {
            (16, opc >> 1 & 3)
        } else if opc & 0b11 == 0 {
            (32, opc >> 2 & 1)
        } else {
            return Err(Exception::Undefined);
        };
        let unsigned = flag(w, 23);
        if l && unsigned && esize == 32 {
            return Err(Exception::Undefined);
        }
        if !l && flag(w, 23) {
            return Err(Exception::Undefined);
        }
        self.check_fp_enabled(esize != 32)?;
        self.check_dreg(dn)?;
        let sh = esize * index;
        let mask = if esize == 32 {
            0xffff_ffffu64
        } else {
            (1u64 << esize) - 1
        };
        if l {
            let v = (self.fp.d[dn] >> sh) & mask;
            self.r[rt] = if unsigned || esize == 32 {
                v as u32
            } else {
                let s = 64 - esize;
                (((v << s) as i64) >> s) as u32
            };
        } else {
            let v = self.r[rt] as u64 & mask;
            self.fp.d[dn] = (self.fp.d[dn] & !(mask << sh)) | v << sh;
        }
        Ok(None)
    }

    /// `VDUP.<size> Dd/Qd, Rt`.
    fn vdup_core(&mut self, w: u32, dn: usize, rt: usize) -> ExecResult {
        let q = flag(w, 21);
        let be = (flag(w, 22) as u32) << 1 | flag(w, 5) as u32;
        let rep: u64 = match be {
            0b00 => 0x0000_0001_0000_0001,
            0b01 => 0x0001_0001_0001_0001,
            0b10 => 0x0101_0101_0101_0101,
            _ => return Err(Exception::Undefined),
        };
        if flag(w, 6) || (q && dn & 1 != 0) {
            return Err(Exception::Undefined);
        }
        self.check_fp_enabled(true)?;
        self.check_dreg(dn + q as usize)?;
        let esize = [32, 16, 8][be as usize];
        let v = (self.r[rt] as u64 & ((1u64 << esize) - 1)) * rep;
        self.fp.d[dn] = v;
        if q {
            self.fp.d[dn + 1] = v;
        }
        Ok(None)
    }

    /// VLDR/VSTR and VLDM/VSTM (VPUSH/VPOP): word accesses that must be word aligned.
    pub(crate) fn vfp_load_store(&mut self, bus: &mut dyn Bus, w: u32) -> ExecResult {
        let p = flag(w, 24);
        let u = flag(w, 23);
        let wb = flag(w, 21);
        let load = flag(w, 20);
        let dp = flag(w, 8);
        let rn = field(w, 19, 16) as u8;
        let imm8 = field(w, 7, 0);
        let vd = field(w, 15, 12);
        let dbit = flag(w, 22) as u32;
        let first = if dp { dbit << 4 | vd } else { vd << 1 | dbit } as usize;
        let single = p && !wb;
        if !single && (p == u) {
            return Err(Exception::Undefined);
        }
        self.check_fp_enabled(false)?;
        let user = self.mode == Mode::Usr;
        let base = if rn == 15 {
            self.rr(15) & !3
        } else {
            self.r[rn as usize]
        };
        let (count, addr) = if single {
            let off = imm8 * 4;
            (
                1,
                if u {
                    base.wrapping_add(off)
                } else {
                    base.wrapping_sub(off)
                },
            )
        } else {
            let n = if dp { imm8 / 2 } else { imm8 };
            let lim = if dp { 16 } else { 32 };
            if n == 0 || n > lim || first + n as usize > 32 {
                return Err(Exception::Undefined); // UNPREDICTABLE
            }
            (n, if u { base } else { base.wrapping_sub(imm8 * 4) })
        };
        if dp {
            self.check_dreg(first + count as usize - 1)?;
        }
        let words = if dp { 2 * count } else { count };
        let big = self.cpsr & psr::E != 0;
        if load {
            let mut buf = [0u32; 64];
            for (k, slot) in buf.iter_mut().enumerate().take(words as usize) {
                *slot = self.read_mem(bus, addr.wrapping_add(4 * k as u32), 4, user, 4)?;
            }
            for r in 0..count as usize {
                if dp {
                    let (w1, w2) = (buf[2 * r] as u64, buf[2 * r + 1] as u64);
                    self.fp.d[first + r] = if big { w1 << 32 | w2 } else { w2 << 32 | w1 };
                } else {
                    self.fp.set_s(first + r, buf[r]);
                }
            }
        } else {
            for r in 0..count as usize {
                if dp {
                    let v = self.fp.d[first + r];
                    let (lo, hi) = (v as u32, (v >> 32) as u32);
                    let (w1, w2) = if big { (hi, lo) } else { (lo, hi) };
                    let a = addr.wrapping_add(8 * r as u32);
                    self.write_mem(bus, a, 4, w1, user, 4)?;
                    self.write_mem(bus, a.wrapping_add(4), 4, w2, user, 4)?;
                } else {
                    let v = self.fp.s(first + r);
                    self.write_mem(bus, addr.wrapping_add(4 * r as u32), 4, v, user, 4)?;
                }
            }
        }
        if wb && !single {
            let off = imm8 * 4;
            self.r[rn as usize] = if u {
                base.wrapping_add(off)
            } else {
                base.wrapping_sub(off)
            };
        }
        Ok(None)
    }
}
