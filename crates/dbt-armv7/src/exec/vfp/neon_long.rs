//! Advanced SIMD three registers of different lengths (ARM ARM A7.4.2: VADDL/VADDW,
//! VSUBL/VSUBW, V(R)ADDHN, V(R)SUBHN, VABAL, VABDL, VMLAL, VMLSL, VMULL integer and
//! polynomial, VQDMLAL, VQDMLSL, VQDMULL) and two registers and a scalar (A7.4.3: VMLA,
//! VMLS, VMUL integer and float, VMLAL, VMLSL, VMULL, VQDMLAL, VQDMLSL, VQDMULL, VQDMULH,
//! VQRDMULH).

use super::neon::{dreg, int, lane, mask, pmul, sat, set_lane, sx};
use super::softfloat::{self as sf, Ctx, F32};
use super::{field, flag};
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

impl Cpu {
    /// Three registers of different lengths.
    pub(super) fn neon_3diff(&mut self, w: u32) -> ExecResult {
        let u = flag(w, 24);
        let e = 8u32 << field(w, 21, 20);
        let op = field(w, 11, 8);
        let (d, n, m) = (dreg(w, 15, 22), dreg(w, 19, 7), dreg(w, 3, 5));
        let lanes = (64 / e) as usize;
        let wide_n = matches!(op, 0b0001 | 0b0011);
        let narrow = matches!(op, 0b0100 | 0b0110);
        if (narrow && (n | m) & 1 != 0) || (!narrow && d & 1 != 0) || (wide_n && n & 1 != 0) {
            return Err(Exception::Undefined);
        }
        if narrow {
            let vn = self.vget(n, 2)?;
            let vm = self.vget(m, 2)?;
            let mut r = [0u64; 1];
            for i in 0..lanes {
                let (x, y) = (lane(&vn, 2 * e, i), lane(&vm, 2 * e, i));
                let s = if op == 0b0100 {
                    x.wrapping_add(y)
                } else {
                    x.wrapping_sub(y)
                };
                let s = if u { s.wrapping_add(1 << (e - 1)) } else { s };
                set_lane(&mut r, e, i, (s >> e) & mask(e));
            }
            self.vset(d, 1, &r)?;
            return Ok(None);
        }
        let vn = self.vget(n, if wide_n { 2 } else { 1 })?;
        let vm = self.vget(m, 1)?;
        let vd = self.vget(d, 2)?;
        let mut r = vd;
        let mut qc = false;
        let e2 = 2 * e;
        for i in 0..lanes {
            let xn = if wide_n {
                int(lane(&vn, e2, i), e2, u)
            } else {
                int(lane(&vn, e, i), e, u)
            };
            let ym = int(lane(&vm, e, i), e, u);
            let z = lane(&vd, e2, i);
            let v: u64 = match op {
                0b0000 | 0b0001 => (xn + ym) as u64,
                0b0010 | 0b0011 => (xn - ym) as u64,
                0b0101 => z.wrapping_add((xn - ym).unsigned_abs() as u64),
                0b0111 => (xn - ym).unsigned_abs() as u64,
                0b1000 => z.wrapping_add((xn * ym) as u64),
                0b1010 => z.wrapping_sub((xn * ym) as u64),
                0b1100 => (xn * ym) as u64,
                0b1110 => {
                    if u || e != 8 {
                        return Err(Exception::Undefined);
                    }
                    pmul(lane(&vn, 8, i), lane(&vm, 8, i), 8)
                }
                0b1001 | 0b1011 | 0b1101 => {
                    if u || e == 8 {
                        return Err(Exception::Undefined);
                    }
                    let (p, s1) = sat(2 * xn * ym, e2, false);
                    let p = sx(p, e2) as i128;
                    let (v, s2) = match op {
                        0b1001 => sat(sx(z, e2) as i128 + p, e2, false),
                        0b1011 => sat(sx(z, e2) as i128 - p, e2, false),
                        _ => (p as u64, false),
                    };
                    qc |= s1 | s2;
                    v
                }
                _ => return Err(Exception::Undefined),
            };
            set_lane(&mut r, e2, i, v & mask(e2));
        }
        self.vset(d, 2, &r)?;
        self.set_qc(qc);
        Ok(None)
    }

    /// Two registers and a scalar.
    pub(super) fn neon_scalar(&mut self, w: u32) -> ExecResult {
        let q = flag(w, 24);
        let size = field(w, 21, 20);
        let op = field(w, 11, 8);
        let (d, n) = (dreg(w, 15, 22), dreg(w, 19, 7));
        let vm4 = field(w, 3, 0);
        let mb = flag(w, 5) as u32;
        let (e, m, idx) = match size {
            0b01 => (16u32, (vm4 & 7) as usize, (mb << 1 | vm4 >> 3) as usize),
            0b10 => (32, vm4 as usize, mb as usize),
            _ => return Err(Exception::Undefined),
        };
        let long = matches!(op, 0b0010 | 0b0011 | 0b0110 | 0b0111 | 0b1010 | 0b1011);
        let float = op & 1 == 1 && op <= 0b1001 && !long;
        let scalar = lane(&self.vget(m, 1)?, e, idx);
        if float && e != 32 {
            return Err(Exception::Undefined);
        }
        let mut qc = false;
        if long {
            // The "unsigned" bit is bit 24 here (no Q).
            let u = q;
            if d & 1 != 0 || (u && op & 1 == 1) {
                return Err(Exception::Undefined);
            }
            let vn = self.vget(n, 1)?;
            let vd = self.vget(d, 2)?;
            let mut r = vd;
            let e2 = 2 * e;
            let y = int(scalar, e, u);
            for i in 0..(64 / e) as usize {
                let x = int(lane(&vn, e, i), e, u);
                let z = lane(&vd, e2, i);
                let v = match op {
                    0b0010 => z.wrapping_add((x * y) as u64),
                    0b0110 => z.wrapping_sub((x * y) as u64),
                    0b1010 => (x * y) as u64,
                    _ => {
                        let (p, s1) = sat(2 * x * y, e2, false);
                        let p = sx(p, e2) as i128;
                        let (v, s2) = match op {
                            0b0011 => sat(sx(z, e2) as i128 + p, e2, false),
                            0b0111 => sat(sx(z, e2) as i128 - p, e2, false),
                            _ => (p as u64, false),
                        };
                        qc |= s1 | s2;
                        v
                    }
                };
                set_lane(&mut r, e2, i, v & mask(e2));
            }
            self.vset(d, 2, &r)?;
            self.set_qc(qc);
            return Ok(None);
        }
        if q && (d | n) & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let regs = 1 + q as usize;
        let vn = self.vget(n, regs)?;
        let vd = self.vget(d, regs)?;
        let mut r = vd;
        let mut c = Ctx::standard(self.fp.fpscr);
        for i in 0..(64 / e) as usize * regs {
            let x = lane(&vn, e, i);
            let z = lane(&vd, e, i);
            let v = match op {
                0b0000 => z.wrapping_add(x.wrapping_mul(scalar)),
                0b0100 => z.wrapping_sub(x.wrapping_mul(scalar)),
                0b1000 => x.wrapping_mul(scalar),
                0b0001 | 0b0101 => {
                    let p = sf::mul(&mut c, F32, x, scalar);
                    sf::add(&mut c, F32, z, p, op == 0b0101)
                }
                0b1001 => sf::mul(&mut c, F32, x, scalar),
                0b1100 | 0b1101 => {
                    let round = if op == 0b1101 { 1i128 << (e - 1) } else { 0 };
                    let p = 2 * sx(x, e) as i128 * sx(scalar, e) as i128 + round;
                    let (v, s) = sat(p >> e, e, false);
                    qc |= s;
                    v
                }
                _ => return Err(Exception::Undefined),
            };
            set_lane(&mut r, e, i, v & mask(e));
        }
        self.vset(d, regs, &r)?;
        self.set_qc(qc);
        self.fp.fpscr |= c.flags;
        Ok(None)
    }
}
