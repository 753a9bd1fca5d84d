//! Advanced SIMD two registers, miscellaneous (ARM ARM A7.4.5): VREV16/32/64,
//! VPADDL/VPADAL, VCLS/VCLZ/VCNT, VMVN, VQABS/VQNEG, comparisons with zero, VABS/VNEG
//! (integer and float), VSWP, VTRN, VUZP, VZIP, VMOVN/VQMOVN/VQMOVUN, VSHLL (maximum
//! shift), VCVT between single precision and 32-bit integers, VRECPE/VRSQRTE (unsigned
//! and single precision). The half-precision VCVT is UNDEFINED here (not implemented).

use super::estimate;
use super::neon::{cmp_mask, dreg, int, lane, mask, sat, set_lane, sx, Cmp};
use super::softfloat::{self as sf, Ctx, F32};
use super::{field, flag};
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

impl Cpu {
    /// Two registers, miscellaneous.
    pub(super) fn neon_misc(&mut self, w: u32) -> ExecResult {
        let size = field(w, 19, 18);
        let a = field(w, 17, 16);
        let b = field(w, 10, 6);
        let q = flag(w, 6);
        let (d, m) = (dreg(w, 15, 22), dreg(w, 3, 5));
        let e = 8u32 << size;
        let regs = 1 + q as usize;
        // Narrowing and lengthening forms have their own register shapes.
        if a == 0b10 && (b >> 1 == 0b0100 || b >> 1 == 0b0101 || b == 0b01100) {
            return self.neon_misc_narrow(w, b, e, d, m);
        }
        if q && (d | m) & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let vm = self.vget(m, regs)?;
        let vd = self.vget(d, regs)?;
        let lanes = (64 / e) as usize * regs;
        let mut r = [0u64; 4];
        let mut qc = false;
        let mut c = Ctx::standard(self.fp.fpscr);
        match (a, b >> 1) {
            (0b00, 0b0000..=0b0010) => {
                // VREV64/32/16: reverse the elements of each 64/32/16-bit group.
                let group = 64 >> (b >> 1);
                if e >= group {
                    return Err(Exception::Undefined);
                }
                let per = (group / e) as usize;
                for i in 0..lanes {
                    let j = (i / per) * per + (per - 1 - i % per);
                    set_lane(&mut r, e, i, lane(&vm, e, j));
                }
            }
            (0b00, 0b0100 | 0b0101 | 0b1100 | 0b1101) => {
                // VPADDL / VPADAL (bit 7: unsigned, bit 10: accumulate).
                if e == 64 {
                    return Err(Exception::Undefined);
                }
                let u = flag(w, 7);
                let acc = flag(w, 10);
                for i in 0..lanes / 2 {
                    let s = int(lane(&vm, e, 2 * i), e, u) + int(lane(&vm, e, 2 * i + 1), e, u);
                    let s = if acc {
                        (s as u64).wrapping_add(lane(&vd, 2 * e, i))
                    } else {
                        s as u64
                    };
                    set_lane(&mut r, 2 * e, i, s & mask(2 * e));
                }
            }
            (0b00, 0b1000..=0b1010) if e != 64 => {
                for i in 0..lanes {
                    let x = lane(&vm, e, i);
                    let v = match b >> 1 {
                        0b1000 => {
                            // VCLS: leading bits equal to the sign, excluding it.
                            let s = sx(x, e);
                            let t = if s < 0 { !s } else { s } as u64 & mask(e);
                            (t.leading_zeros() - (64 - e) - 1) as u64
                        }
                        0b1001 => (x.leading_zeros() - (64 - e)) as u64,
                        _ => {
                            if e != 8 {
                                return Err(Exception::Undefined);
                            }
                            x.count_ones() as u64
                        }
                    };
                    set_lane(&mut r, e, i, v);
                }
            }
            (0b00, 0b1011) => {
                if size != 0 {
                    return Err(Exception::Undefined);
                }
                for k in 0..regs {
                    r[k] = !vm[k];
                }
            }
            (0b00, 0b1110 | 0b1111) if e != 64 => {
                // VQABS / VQNEG.
                for i in 0..lanes {
                    let x = int(lane(&vm, e, i), e, false);
                    let v = if b >> 1 == 0b1110 { x.abs() } else { -x };
                    let (v, s) = sat(v, e, false);
                    qc |= s;
                    set_lane(&mut r, e, i, v);
                }
            }
            (0b01, op) if e != 64 => {
                let float = op & 0b1000 != 0;
                if float && e != 32 {
                    return Err(Exception::Undefined);
                }
                for i in 0..lanes {
                    let x = lane(&vm, e, i);
                    let v = if float {
                        match op & 7 {
                            0b000 => cmp_mask(&mut c, x, 0, Cmp::Gt),
                            0b001 => cmp_mask(&mut c, x, 0, Cmp::Ge),
                            0b010 => cmp_mask(&mut c, x, 0, Cmp::Eq),
                            0b011 => cmp_mask(&mut c, 0, x, Cmp::Ge),
                            0b100 => cmp_mask(&mut c, 0, x, Cmp::Gt),
                            0b110 => F32.abs(x),
                            0b111 => F32.neg(x),
                            _ => return Err(Exception::Undefined),
                        }
                    } else {
                        let s = sx(x, e);
                        let t = |b: bool| mask(e) * b as u64;
                        match op & 7 {
                            0b000 => t(s > 0),
                            0b001 => t(s >= 0),
                            0b010 => t(s == 0),
                            0b011 => t(s <= 0),
                            0b100 => t(s < 0),
                            0b110 => s.unsigned_abs() & mask(e),
                            0b111 => (s.wrapping_neg() as u64) & mask(e),
                            _ => return Err(Exception::Undefined),
                        }
                    };
                    set_lane(&mut r, e, i, v);
                }
            }
            (0b10, 0b0000) => {
                // VSWP.
                if size != 0 {
                    return Err(Exception::Undefined);
                }
                self.vset(d, regs, &vm)?;
                self.vset(m, regs, &vd)?;
                return Ok(None);
            }
            (0b10, 0b0001..=0b0011) => return self.neon_permute(b >> 1, e, regs, d, m, vd, vm),
            (0b11, 0b1000..=0b1011) => {
                // VRECPE / VRSQRTE (bit 7), unsigned or single precision (bit 8).
                if e != 32 {
                    return Err(Exception::Undefined);
                }
                let (float, root) = (flag(w, 8), flag(w, 7));
                for i in 0..lanes {
                    let x = lane(&vm, 32, i) as u32;
                    let v = match (float, root) {
                        (false, false) => estimate::recip_u32(x),
                        (false, true) => estimate::rsqrt_u32(x),
                        (true, false) => estimate::recip_f32(&mut c, x),
                        (true, true) => estimate::rsqrt_f32(&mut c, x),
                    };
                    set_lane(&mut r, 32, i, v as u64);
                }
            }
            (0b11, 0b1100..=0b1111) => {
                // VCVT between F32 and S32/U32 (bit 8: to integer, bit 7: unsigned).
                if e != 32 {
                    return Err(Exception::Undefined);
                }
                let to_int = flag(w, 8);
                let unsigned = flag(w, 7);
                for i in 0..lanes {
                    let x = lane(&vm, 32, i);
                    let v = if to_int {
                        sf::to_fixed(&mut c, F32, x, 32, 0, unsigned, true)
                    } else {
                        sf::from_fixed(&mut c, F32, x, 32, 0, unsigned, true)
                    };
                    set_lane(&mut r, 32, i, v);
                }
            }
            _ => return Err(Exception::Undefined),
        }
        self.vset(d, regs, &r)?;
        self.set_qc(qc);
        self.fp.fpscr |= c.flags;
        Ok(None)
    }

    /// VTRN, VUZP, VZIP (both registers are written).
    #[allow(clippy::too_many_arguments)]
    fn neon_permute(
        &mut self,
        op: u32,
        e: u32,
        regs: usize,
        d: usize,
        m: usize,
        vd: [u64; 4],
        vm: [u64; 4],
    ) -> ExecResult {
        let lanes = (64 / e) as usize * regs;
        if e == 64 || (op != 0b0001 && regs == 1 && e == 32) {
            return Err(Exception::Undefined);
        }
        let (mut rd, mut rm) = ([0u64; 4], [0u64; 4]);
        // The concatenation d:m as one list of 2*lanes elements (d first).
        let get = |i: usize| {
            if i < lanes {
                lane(&vd, e, i)
            } else {
                lane(&vm, e, i - lanes)
            }
        };
        for i in 0..lanes {
            let (x, y) = match op {
                0b0001 => {
                    // VTRN: swap odd elements of d with even elements of m.
                    if i % 2 == 0 {
                        (lane(&vd, e, i), lane(&vd, e, i + 1))
                    } else {
                        (lane(&vm, e, i - 1), lane(&vm, e, i))
                    }
                }
                0b0010 => (get(2 * i), get(2 * i + 1)), // VUZP
                _ => {
                    // VZIP: interleave d and m.
                    let k = i / 2;
                    let zd = if i % 2 == 0 {
                        lane(&vd, e, k)
                    } else {
                        lane(&vm, e, k)
                    };
                    let k2 = (i + lanes) / 2;
                    let zm = if i % 2 == 0 {
                        lane(&vd, e, k2)
                    } else {
                        lane(&vm, e, k2)
                    };
                    (zd, zm)
                }
            };
            set_lane(&mut rd, e, i, x);
            set_lane(&mut rm, e, i, y);
        }
        if op == 0b0001 {
            // VTRN computed pairs above as (d', m') element by element.
            let (mut td, mut tm) = ([0u64; 4], [0u64; 4]);
            for i in (0..lanes).step_by(2) {
                set_lane(&mut td, e, i, lane(&vd, e, i));
                set_lane(&mut td, e, i + 1, lane(&vm, e, i));
                set_lane(&mut tm, e, i, lane(&vd, e, i + 1));
                set_lane(&mut tm, e, i + 1, lane(&vm, e, i + 1));
            }
            rd = td;
            rm = tm;
            if e == 32 && d == m {
                // UNPREDICTABLE; qemu-arm swaps the 32-bit pairs one element at a time
                // through the register file, which with one register swaps each pair.
                for i in (0..lanes).step_by(2) {
                    set_lane(&mut rd, e, i, lane(&vd, e, i + 1));
                    set_lane(&mut rd, e, i + 1, lane(&vd, e, i));
                }
            }
        }
        // With d == m the result is Dd's (written last).
        self.vset(m, regs, &rm)?;
        self.vset(d, regs, &rd)?;
        Ok(None)
    }

    /// VMOVN, VQMOVUN, VQMOVN (Qm to Dd) and VSHLL with the maximum shift (Dm to Qd).
    fn neon_misc_narrow(&mut self, w: u32, b: u32, e: u32, d: usize, m: usize) -> ExecResult {
        if e == 64 {
            return Err(Exception::Undefined);
        }
        let mut qc = false;
        if b == 0b01100 {
            if d & 1 != 0 {
                return Err(Exception::Undefined);
            }
            let vm = self.vget(m, 1)?;
            let mut r = [0u64; 2];
            for i in 0..(64 / e) as usize {
                set_lane(&mut r, 2 * e, i, lane(&vm, e, i) << e);
            }
            self.vset(d, 2, &r)?;
            return Ok(None);
        }
        if m & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let _ = w;
        let vm = self.vget(m, 2)?;
        let mut r = [0u64; 1];
        for i in 0..(64 / e) as usize {
            let x = lane(&vm, 2 * e, i);
            let v = match b {
                0b01000 => x & mask(e),
                0b01001 => {
                    let (v, s) = sat(int(x, 2 * e, false), e, true); // VQMOVUN
                    qc |= s;
                    v
                }
                0b01010 => {
                    let (v, s) = sat(int(x, 2 * e, false), e, false);
                    qc |= s;
                    v
                }
                _ => {
                    let (v, s) = sat(int(x, 2 * e, true), e, true);
                    qc |= s;
                    v
                }
            };
            set_lane(&mut r, e, i, v);
        }
        self.vset(d, 1, &r)?;
        self.set_qc(qc);
        Ok(None)
    }
}
