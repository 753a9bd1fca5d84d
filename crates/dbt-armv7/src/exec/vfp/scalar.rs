//! VFP data-processing instructions (ARM ARM A7.5, `1110 1110 .... .... 101x ...0`):
//! VMLA/VMLS/VNMLA/VNMLS/VNMUL/VMUL/VADD/VSUB/VDIV, VFMA/VFMS/VFNMA/VFNMS, VMOV
//! immediate and register, VABS/VNEG/VSQRT, VCMP/VCMPE, VCVT between precisions, between
//! integer or fixed point and floating point, VCVTB/VCVTT half precision. FPSCR short
//! vectors are not implemented (a Cortex-A15 has none), so every operation is scalar.

use super::softfloat::{self as sf, Ctx, Fmt, F16, F32, F64};
use super::{field, flag};
use crate::cpu::fp::fpscr;
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

/// A scalar register operand: double (`D` number) or single (`S` number).
#[derive(Clone, Copy)]
struct Reg {
    dp: bool,
    n: usize,
}

/// `Vd:D` / `D:Vd` style register numbers.
fn reg(dp: bool, v4: u32, bit: bool) -> Reg {
    let n = if dp {
        (bit as u32) << 4 | v4
    } else {
        v4 << 1 | bit as u32
    };
    Reg { dp, n: n as usize }
}

fn rd(w: u32, dp: bool) -> Reg {
    reg(dp, field(w, 15, 12), flag(w, 22))
}
fn rn(w: u32, dp: bool) -> Reg {
    reg(dp, field(w, 19, 16), flag(w, 7))
}
fn rm(w: u32, dp: bool) -> Reg {
    reg(dp, field(w, 3, 0), flag(w, 5))
}

/// `VFPExpandImm(imm8)` for the format.
fn expand_imm(imm8: u32, fmt: Fmt) -> u64 {
    let sign = (imm8 >> 7) as u64;
    let b6 = (imm8 >> 6 & 1) as u64;
    let exp_rep = fmt.e - 3; // replicated bits
    let exp = (b6 ^ 1) << (fmt.e - 1)
        | (if b6 == 1 { (1u64 << exp_rep) - 1 } else { 0 }) << 2
        | (imm8 >> 4 & 3) as u64;
    let frac = ((imm8 & 0xf) as u64) << (fmt.f - 4);
    sign << (fmt.e + fmt.f) | exp << fmt.f | frac
}

impl Cpu {
    fn fr(&self, r: Reg) -> Result<u64, Exception> {
        if r.dp {
            self.check_dreg(r.n)?;
            Ok(self.fp.d[r.n])
        } else {
            Ok(self.fp.s(r.n) as u64)
        }
    }

    fn fw(&mut self, r: Reg, v: u64) -> Result<(), Exception> {
        if r.dp {
            self.check_dreg(r.n)?;
            self.fp.d[r.n] = v;
        } else {
            self.fp.set_s(r.n, v as u32);
        }
        Ok(())
    }

    /// FPSCR.Len or FPSCR.Stride is not zero.
    fn short_vectors(&self) -> bool {
        self.fp.fpscr & fpscr::LEN_STRIDE != 0
    }

    fn finish(&mut self, c: Ctx) {
        self.fp.fpscr |= c.flags;
    }

    /// Executes a VFP data-processing instruction.
    pub(crate) fn vfp_data_proc(&mut self, w: u32) -> ExecResult {
        let dp = flag(w, 8);
        let fmt = if dp { F64 } else { F32 };
        let opc1 = field(w, 23, 20) & 0b1011;
        let op6 = flag(w, 6);
        let mut c = Ctx::from_fpscr(self.fp.fpscr);
        let (d, n, m) = (rd(w, dp), rn(w, dp), rm(w, dp));
        let three =
            |s: &Cpu| -> Result<(u64, u64, u64), Exception> { Ok((s.fr(d)?, s.fr(n)?, s.fr(m)?)) };
        // Short vectors: every three-operand form would be vectorised (and the fused ones
        // are UNPREDICTABLE), so with Len/Stride not zero they are UNDEFINED.
        if opc1 != 0b1011 && self.short_vectors() {
            return Err(Exception::Undefined);
        }
        let result = match opc1 {
            0b0000 => {
                // VMLA / VMLS: d + (+/-)(n * m), rounded twice.
                let (vd, vn, vm) = three(self)?;
                let p = sf::mul(&mut c, fmt, vn, vm);
                let p = if op6 { fmt.neg(p) } else { p };
                sf::add(&mut c, fmt, vd, p, false)
            }
            0b0001 => {
                // VNMLS (op=0): -d + n*m; VNMLA (op=1): -d - n*m.
                let (vd, vn, vm) = three(self)?;
                let p = sf::mul(&mut c, fmt, vn, vm);
                let p = if op6 { fmt.neg(p) } else { p };
                sf::add(&mut c, fmt, fmt.neg(vd), p, false)
            }
            0b0010 => {
                let (_, vn, vm) = three(self)?;
                let p = sf::mul(&mut c, fmt, vn, vm);
                if op6 {
                    fmt.neg(p) // VNMUL
                } else {
                    p
                }
            }
            0b0011 => {
                let (_, vn, vm) = three(self)?;
                sf::add(&mut c, fmt, vn, vm, op6) // VADD / VSUB
            }
            0b1000 if !op6 => {
                let (_, vn, vm) = three(self)?;
                sf::div(&mut c, fmt, vn, vm)
            }
            0b1001 => {
                // VFNMS (op=0): -d + n*m; VFNMA (op=1): -d + (-n)*m, fused.
                let (vd, vn, vm) = three(self)?;
                let vn = if op6 { fmt.neg(vn) } else { vn };
                sf::mul_add(&mut c, fmt, fmt.neg(vd), vn, vm)
            }
            0b1010 => {
                // VFMA (op=0): d + n*m; VFMS (op=1): d + (-n)*m, fused.
                let (vd, vn, vm) = three(self)?;
                let vn = if op6 { fmt.neg(vn) } else { vn };
                sf::mul_add(&mut c, fmt, vd, vn, vm)
            }
            0b1011 => return self.vfp_other(w, dp, fmt, c),
            _ => return Err(Exception::Undefined),
        };
        self.fw(d, result)?;
        self.finish(c);
        Ok(None)
    }

    /// The "other" group (`opc1 = 1x11`): VMOV immediate/register, VABS, VNEG, VSQRT,
    /// VCMP(E), conversions.
    fn vfp_other(&mut self, w: u32, dp: bool, fmt: Fmt, mut c: Ctx) -> ExecResult {
        let d = rd(w, dp);
        let m = rm(w, dp);
        let opc2 = field(w, 19, 16);
        if (!flag(w, 6) || opc2 <= 1) && self.short_vectors() {
            // VMOV immediate/register, VABS, VNEG, VSQRT would be vectorised.
            return Err(Exception::Undefined);
        }
        if !flag(w, 6) {
            // VMOV immediate (bits 7:4 of the low byte are 0 in this encoding: 5 and 7
            // must be zero, otherwise UNDEFINED).
            if field(w, 7, 4) & 0b1011 != 0 {
                return Err(Exception::Undefined);
            }
            let imm8 = field(w, 19, 16) << 4 | field(w, 3, 0);
            self.fw(d, expand_imm(imm8, fmt))?;
            return Ok(None);
        }
        let t7 = flag(w, 7);
        match opc2 {
            0b0000 => {
                let v = self.fr(m)?;
                let r = if t7 { fmt.abs(v) } else { v }; // VABS / VMOV
                self.fw(d, r)?;
            }
            0b0001 => {
                let v = self.fr(m)?;
                let r = if t7 {
                    sf::sqrt(&mut c, fmt, v)
                } else {
                    fmt.neg(v)
                };
                self.fw(d, r)?;
            }
            0b0010 | 0b0011 => {
                // VCVTB/VCVTT: bit 16 = to half; T (bit 7) selects the top half.
                let to_half = flag(w, 16);
                let sd = rd(w, false);
                let sm = rm(w, false);
                let sh = if t7 { 16 } else { 0 };
                if dp {
                    // Half<->double is ARMv8; UNDEFINED on VFPv4.
                    return Err(Exception::Undefined);
                }
                if to_half {
                    let h = sf::convert(&mut c, F32, F16, self.fr(sm)?) as u32;
                    let old = self.fr(sd)? as u32;
                    let new = (old & !(0xffff << sh)) | (h & 0xffff) << sh;
                    self.fw(sd, new as u64)?;
                } else {
                    let h = (self.fr(sm)? as u32 >> sh) & 0xffff;
                    let s = sf::convert(&mut c, F16, F32, h as u64);
                    self.fw(sd, s)?;
                }
            }
            0b0100 | 0b0101 => {
                // VCMP{E} Vd, Vm / #0.0 (with zero: bits 5 and 3:0 are zero).
                let with_zero = flag(w, 16);
                if with_zero && field(w, 5, 0) & 0b101111 != 0 {
                    return Err(Exception::Undefined);
                }
                let a = self.fr(d)?;
                let b = if with_zero { 0 } else { self.fr(m)? };
                let nzcv = sf::compare(&mut c, fmt, a, b, t7);
                self.fp.fpscr = (self.fp.fpscr & 0x0fff_ffff) | nzcv << 28;
            }
            0b0111 if t7 => {
                // VCVT between double and single: the destination is the other size.
                let dd = rd(w, !dp);
                let to = if dp { F32 } else { F64 };
                let r = sf::convert(&mut c, fmt, to, self.fr(m)?);
                self.fw(dd, r)?;
            }
            0b1000 => {
                // VCVT.F<fmt>.S32/U32 Sm (bit 7: signed); FPSCR rounding.
                let sm = rm(w, false);
                let v = self.fr(sm)?;
                let r = sf::from_fixed(&mut c, fmt, v, 32, 0, !t7, false);
                self.fw(d, r)?;
            }
            0b1010 | 0b1011 | 0b1110 | 0b1111 => {
                // VCVT between floating point and fixed point, in place: bit 18 = to
                // fixed, bit 16 = unsigned, bit 7 = 32-bit (else 16-bit) fixed.
                let to_fixed = flag(w, 18);
                let unsigned = flag(w, 16);
                let size = if t7 { 32 } else { 16 };
                let imm = (field(w, 3, 0) << 1 | flag(w, 5) as u32) as i32;
                let fbits = size - imm;
                if fbits < 0 {
                    return Err(Exception::Undefined); // UNPREDICTABLE
                }
                let v = self.fr(d)?;
                let r = if to_fixed {
                    let x = sf::to_fixed(&mut c, fmt, v, size as u32, fbits as u32, unsigned, true);
                    let width = if dp { 64 } else { 32 };
                    extend(x, size as u32, unsigned, width)
                } else {
                    sf::from_fixed(&mut c, fmt, v, size as u32, fbits as u32, unsigned, true)
                };
                self.fw(d, r)?;
            }
            0b1100 | 0b1101 => {
                // VCVT{R}.S32/U32.F<fmt> Sd, Vm: bit 16 = signed, bit 7 = round to zero.
                let sd = rd(w, false);
                let v = self.fr(m)?;
                let r = sf::to_fixed(&mut c, fmt, v, 32, 0, !flag(w, 16), t7);
                self.fw(sd, r)?;
            }
            _ => return Err(Exception::Undefined),
        }
        self.finish(c);
        Ok(None)
    }
}

/// Sign- or zero-extends the `bits`-bit value `x` to `width` bits.
fn extend(x: u64, bits: u32, unsigned: bool, width: u32) -> u64 {
    let v = if unsigned {
        x
    } else {
        (((x << (64 - bits)) as i64) >> (64 - bits)) as u64
    };
    v & (u64::MAX >> (64 - width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vfp_expand_imm() {
        assert_eq!(expand_imm(0x70, F32) as u32, 1.0f32.to_bits());
        assert_eq!(expand_imm(0x00, F32) as u32, 2.0f32.to_bits());
        assert_eq!(expand_imm(0xf0, F64), (-1.0f64).to_bits());
        assert_eq!(expand_imm(0x60, F64), 0.5f64.to_bits());
    }
}
