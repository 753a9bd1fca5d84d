//! Advanced SIMD shifts by an immediate (ARM ARM A7.4.4): VSHR, VSRA, VRSHR, VRSRA, VSRI,
//! VSHL, VSLI, VQSHL/VQSHLU, VSHRN/VRSHRN, VQSHRN/VQRSHRN/VQSHRUN/VQRSHRUN, VSHLL/VMOVL,
//! and the fixed-point VCVT between single precision and 32-bit lanes.

use super::neon::{dreg, int, lane, mask, sat, set_lane, shift_round};
use super::softfloat::{self as sf, Ctx, F32};
use super::{field, flag};
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

impl Cpu {
    /// Two registers and a shift amount.
    pub(super) fn neon_shift(&mut self, w: u32) -> ExecResult {
        let u = flag(w, 24);
        let imm6 = field(w, 21, 16);
        let op = field(w, 11, 8);
        let l = flag(w, 7);
        let q = flag(w, 6);
        let (d, m) = (dreg(w, 15, 22), dreg(w, 3, 5));
        let e: u32 = if l {
            64
        } else if imm6 & 0b100000 != 0 {
            32
        } else if imm6 & 0b010000 != 0 {
            16
        } else {
            8
        };
        let amount = (l as u32) << 6 | imm6;
        let right = (2 * e - amount) as i32;
        let left = (amount - e) as i32;
        if op >= 0b1000 {
            return self.neon_shift_narrow_long(w, op, u, e, right, left, d, m);
        }
        if q && (d | m) & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let regs = 1 + q as usize;
        let vm = self.vget(m, regs)?;
        let vd = self.vget(d, regs)?;
        let mut r = vd;
        let mut qc = false;
        for i in 0..(64 / e) as usize * regs {
            let x = lane(&vm, e, i);
            let z = lane(&vd, e, i);
            let v = match op {
                0b0000..=0b0011 => {
                    let s = shift_round(int(x, e, u), -right, op & 2 != 0) as u64;
                    if op & 1 != 0 {
                        z.wrapping_add(s)
                    } else {
                        s
                    }
                }
                0b0100 if u => {
                    // VSRI: insert the shifted value, keep the top `right` bits of d.
                    let keep = if right as u32 >= e {
                        mask(e)
                    } else {
                        !(mask(e) >> right) & mask(e)
                    };
                    let s = if right as u32 >= e { 0 } else { x >> right };
                    (z & keep) | s
                }
                0b0101 => {
                    let s = (x << left) & mask(e);
                    if u {
                        // VSLI: keep the low `left` bits of d.
                        (z & mask(left as u32)) | s
                    } else {
                        s
                    }
                }
                0b0110 | 0b0111 => {
                    let src_unsigned = u && op == 0b0111;
                    let dst_unsigned = u;
                    if !u && op == 0b0110 {
                        return Err(Exception::Undefined);
                    }
                    let (v, s) = sat(int(x, e, src_unsigned) << left, e, dst_unsigned);
                    qc |= s;
                    v
                }
                _ => return Err(Exception::Undefined),
            };
            set_lane(&mut r, e, i, v & mask(e));
        }
        self.vset(d, regs, &r)?;
        self.set_qc(qc);
        Ok(None)
    }

    /// The narrowing (from Qm to Dd) and lengthening (Dm to Qd) shifts.
    #[allow(clippy::too_many_arguments)]
    fn neon_shift_narrow_long(
        &mut self,
        w: u32,
        op: u32,
        u: bool,
        e: u32,
        right: i32,
        left: i32,
        d: usize,
        m: usize,
    ) -> ExecResult {
        let l = flag(w, 7);
        let b6 = flag(w, 6);
        if l || e == 64 {
            return Err(Exception::Undefined);
        }
        let mut qc = false;
        match op {
            0b1000 | 0b1001 => {
                if m & 1 != 0 {
                    return Err(Exception::Undefined);
                }
                let vm = self.vget(m, 2)?;
                let mut r = [0u64; 1];
                for i in 0..(64 / e) as usize {
                    let x = lane(&vm, 2 * e, i);
                    let v = match (op, u) {
                        (0b1000, false) => shift_round(int(x, 2 * e, true), -right, b6) as u64,
                        (0b1000, true) => {
                            // VQ(R)SHRUN: signed source, unsigned result.
                            let (v, s) =
                                sat(shift_round(int(x, 2 * e, false), -right, b6), e, true);
                            qc |= s;
                            v
                        }
                        _ => {
                            let (v, s) = sat(shift_round(int(x, 2 * e, u), -right, b6), e, u);
                            qc |= s;
                            v
                        }
                    };
                    set_lane(&mut r, e, i, v & mask(e));
                }
                self.vset(d, 1, &r)?;
            }
            0b1010 if !b6 => {
                // VSHLL / VMOVL.
                if d & 1 != 0 {
                    return Err(Exception::Undefined);
                }
                let vm = self.vget(m, 1)?;
                let mut r = [0u64; 2];
                for i in 0..(64 / e) as usize {
                    let v = (int(lane(&vm, e, i), e, u) << left) as u64;
                    set_lane(&mut r, 2 * e, i, v & mask(2 * e));
                }
                self.vset(d, 2, &r)?;
            }
            0b1110 | 0b1111 => {
                // VCVT between single precision and 32-bit fixed point with `64 - imm6`
                // fraction bits (bit 8: to fixed point, rounding towards zero; from fixed
                // point rounds to nearest), under the standard FPSCR value.
                if e != 32 || (b6 && (d | m) & 1 != 0) {
                    return Err(Exception::Undefined);
                }
                let regs = 1 + b6 as usize;
                let vm = self.vget(m, regs)?;
                let mut r = [0u64; 4];
                let mut c = Ctx::standard(self.fp.fpscr);
                let fbits = right as u32;
                for i in 0..2 * regs {
                    let x = lane(&vm, 32, i);
                    let v = if op == 0b1111 {
                        sf::to_fixed(&mut c, F32, x, 32, fbits, u, true)
                    } else {
                        sf::from_fixed(&mut c, F32, x, 32, fbits, u, true)
                    };
                    set_lane(&mut r, 32, i, v);
                }
                self.vset(d, regs, &r)?;
                self.fp.fpscr |= c.flags;
            }
            _ => return Err(Exception::Undefined),
        }
        self.set_qc(qc);
        Ok(None)
    }
}
