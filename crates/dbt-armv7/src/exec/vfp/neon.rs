//! Advanced SIMD data processing (ARM ARM A7.4), dispatch and the "three registers of
//! the same length", "one register and a modified immediate", VEXT, VTBL/VTBX and VDUP
//! (scalar) groups. Shifts by an immediate are in `neon_shift`, the two-register
//! miscellaneous group in `neon_misc`, the long/narrow/wide and by-scalar groups in
//! `neon_long`.
//!
//! UNDEFINED here (not implemented, counted by the tests as rejections if generated): the
//! half-precision VCVT of Advanced SIMD (VRECPS/VRSQRTS are here, VRECPE/VRSQRTE in
//! `neon_misc` and `estimate`, the fixed-point VCVT in `neon_shift`). Floating-point lanes use the "standard FPSCR value" (round to nearest,
//! flush to zero, default NaN) and record exceptions in FPSCR's cumulative flags.

use super::estimate;
use super::softfloat::{self as sf, Ctx, F32};
use super::{field, flag};
use crate::cpu::fp::fpscr;
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

/// A mask of `e` bits (`e` <= 64).
pub(super) fn mask(e: u32) -> u64 {
    if e >= 64 {
        u64::MAX
    } else {
        (1u64 << e) - 1
    }
}

/// Element `i` of size `e` of a vector held as consecutive D registers.
pub(super) fn lane(v: &[u64], e: u32, i: usize) -> u64 {
    let per = (64 / e) as usize;
    (v[i / per] >> (e as usize * (i % per))) & mask(e)
}

/// Writes element `i` of size `e`.
pub(super) fn set_lane(v: &mut [u64], e: u32, i: usize, x: u64) {
    let per = (64 / e) as usize;
    let sh = e as usize * (i % per);
    let m = mask(e) << sh;
    v[i / per] = (v[i / per] & !m) | (x << sh & m);
}

/// Sign-extends the `e`-bit value `x`.
pub(super) fn sx(x: u64, e: u32) -> i64 {
    if e >= 64 {
        x as i64
    } else {
        ((x << (64 - e)) as i64) >> (64 - e)
    }
}

/// The `e`-bit value of `x` as a signed or unsigned integer.
pub(super) fn int(x: u64, e: u32, unsigned: bool) -> i128 {
    if unsigned {
        (x & mask(e)) as i128
    } else {
        sx(x, e) as i128
    }
}

/// `SatQ`: `v` saturated to `e` bits, and whether it saturated.
pub(super) fn sat(v: i128, e: u32, unsigned: bool) -> (u64, bool) {
    let (lo, hi) = if unsigned {
        (0i128, (1i128 << e) - 1)
    } else {
        (-(1i128 << (e - 1)), (1i128 << (e - 1)) - 1)
    };
    let c = v.clamp(lo, hi);
    ((c as u64) & mask(e), c != v)
}

/// D register number from a 4-bit field and its extra bit.
pub(super) fn dreg(w: u32, hi: u32, bit: u32) -> usize {
    ((flag(w, bit) as u32) << 4 | field(w, hi, hi - 3)) as usize
}

impl Cpu {
    /// Reads `count` consecutive D registers from `n` (UNDEFINED past D31 or with D32DIS).
    pub(super) fn vget(&self, n: usize, count: usize) -> Result<[u64; 4], Exception> {
        if n + count > 32 {
            return Err(Exception::Undefined);
        }
        self.check_dreg(n + count - 1)?;
        let mut v = [0; 4];
        v[..count].copy_from_slice(&self.fp.d[n..n + count]);
        Ok(v)
    }

    /// Writes `count` consecutive D registers from `n`.
    pub(super) fn vset(&mut self, n: usize, count: usize, v: &[u64]) -> Result<(), Exception> {
        if n + count > 32 {
            return Err(Exception::Undefined);
        }
        self.check_dreg(n + count - 1)?;
        self.fp.d[n..n + count].copy_from_slice(&v[..count]);
        Ok(())
    }

    /// Sets FPSCR.QC when a saturating operation saturated.
    pub(super) fn set_qc(&mut self, saturated: bool) {
        if saturated {
            self.fp.fpscr |= fpscr::QC;
        }
    }

    /// Executes an Advanced SIMD data-processing instruction (`1111 001U` in A32 layout).
    pub(crate) fn neon_data_proc(&mut self, w: u32) -> ExecResult {
        let u = flag(w, 24);
        let a = field(w, 23, 19);
        let b = field(w, 11, 8);
        let c = field(w, 7, 4);
        if a & 0b10000 == 0 {
            return self.neon_3same(w);
        }
        if c & 1 == 1 {
            if a & 0b10111 == 0b10000 && c & 0b1001 == 0b0001 {
                return self.neon_modimm(w);
            }
            return self.neon_shift(w);
        }
        if a & 0b10110 != 0b10110 {
            return if c & 0b0101 == 0 {
                self.neon_3diff(w)
            } else if c & 0b0101 == 0b0100 {
                self.neon_scalar(w)
            } else {
                Err(Exception::Undefined)
            };
        }
        if !u {
            return self.neon_vext(w);
        }
        if b & 0b1000 == 0 {
            self.neon_misc(w)
        } else if b & 0b1100 == 0b1000 {
            self.neon_vtbl(w)
        } else if b == 0b1100 && c & 0b1001 == 0 {
            self.neon_vdup_scalar(w)
        } else {
            Err(Exception::Undefined)
        }
    }

    /// Three registers of the same length.
    fn neon_3same(&mut self, w: u32) -> ExecResult {
        let u = flag(w, 24);
        let op = field(w, 11, 8);
        let bb = flag(w, 4);
        let size = field(w, 21, 20);
        let q = flag(w, 6);
        let (d, n, m) = (dreg(w, 15, 22), dreg(w, 19, 7), dreg(w, 3, 5));
        let regs = 1 + q as usize;
        if q && (d | n | m) & 1 != 0 {
            return Err(Exception::Undefined);
        }
        if op >= 0b1100 {
            return self.neon_3same_float(w, d, n, m, regs);
        }
        let e = 8u32 << size;
        let vn = self.vget(n, regs)?;
        let vm = self.vget(m, regs)?;
        let vd = self.vget(d, regs)?;
        let lanes = (64 / e) as usize * regs;
        let mut r = vd;
        let mut qc = false;
        // Bitwise operations work on whole registers.
        if op == 0b0001 && bb {
            for k in 0..regs {
                let (x, y, z) = (vn[k], vm[k], vd[k]);
                r[k] = match (u, size) {
                    (false, 0) => x & y,
                    (false, 1) => x & !y,
                    (false, 2) => x | y,
                    (false, _) => x | !y,
                    (true, 0) => x ^ y,
                    (true, 1) => (x & z) | (y & !z), // VBSL
                    (true, 2) => (x & y) | (z & !y), // VBIT
                    (true, _) => (z & y) | (x & !y), // VBIF
                };
            }
            self.vset(d, regs, &r)?;
            return Ok(None);
        }
        let ok64 = matches!(
            (op, bb),
            (0b0000, true) | (0b0010, true) | (0b0100, _) | (0b0101, _) | (0b1000, false)
        );
        if e == 64 && !ok64 {
            return Err(Exception::Undefined);
        }
        let pairwise = matches!(op, 0b1010) || (op == 0b1011 && bb);
        if pairwise {
            if q || (op == 0b1011 && u) {
                return Err(Exception::Undefined);
            }
            let half = lanes / 2;
            for i in 0..lanes {
                let src = if i < half { &vn } else { &vm };
                let j = 2 * (i % half);
                let (x, y) = (lane(src, e, j), lane(src, e, j + 1));
                let v = if op == 0b1011 {
                    x.wrapping_add(y)
                } else {
                    let (a, b) = (int(x, e, u), int(y, e, u));
                    (if bb { a.min(b) } else { a.max(b) }) as u64
                };
                set_lane(&mut r, e, i, v);
            }
            self.vset(d, regs, &r)?;
            return Ok(None);
        }
        for i in 0..lanes {
            let (x, y, z) = (lane(&vn, e, i), lane(&vm, e, i), lane(&vd, e, i));
            let (a, b) = (int(x, e, u), int(y, e, u));
            let v: u64 = match (op, bb) {
                (0b0000, false) => ((a + b) >> 1) as u64,
                (0b0000, true) => {
                    let (v, s) = sat(a + b, e, u);
                    qc |= s;
                    v
                }
                (0b0001, false) => ((a + b + 1) >> 1) as u64,
                (0b0010, false) => ((a - b) >> 1) as u64,
                (0b0010, true) => {
                    let (v, s) = sat(a - b, e, u);
                    qc |= s;
                    v
                }
                (0b0011, false) => mask(e) * (a > b) as u64,
                (0b0011, true) => mask(e) * (a >= b) as u64,
                (0b0100..=0b0101, _) => {
                    // VSHL/VQSHL/VRSHL/VQRSHL (register): Vm shifted by the signed low
                    // byte of Vn's element.
                    let sh = sx(x & 0xff, 8) as i32;
                    let round = op == 0b0101;
                    let v = shift_round(int(y, e, u), sh, round);
                    if bb {
                        let (v, s) = sat(v, e, u);
                        qc |= s;
                        v
                    } else {
                        v as u64
                    }
                }
                (0b0110, _) => (if bb { a.min(b) } else { a.max(b) }) as u64,
                (0b0111, false) => (a - b).unsigned_abs() as u64,
                (0b0111, true) => z.wrapping_add((a - b).unsigned_abs() as u64),
                (0b1000, false) => {
                    if u {
                        x.wrapping_sub(y)
                    } else {
                        x.wrapping_add(y)
                    }
                }
                (0b1000, true) => {
                    let t = if u { x == y } else { x & y != 0 };
                    mask(e) * t as u64
                }
                (0b1001, false) => {
                    let p = x.wrapping_mul(y);
                    if u {
                        z.wrapping_sub(p)
                    } else {
                        z.wrapping_add(p)
                    }
                }
                (0b1001, true) => {
                    if u {
                        if e != 8 {
                            return Err(Exception::Undefined);
                        }
                        pmul(x, y, 8)
                    } else {
                        x.wrapping_mul(y)
                    }
                }
                (0b1011, false) => {
                    // VQDMULH / VQRDMULH.
                    if e == 8 {
                        return Err(Exception::Undefined);
                    }
                    let (sa, sb) = (sx(x, e) as i128, sx(y, e) as i128);
                    let round = if u { 1i128 << (e - 1) } else { 0 };
                    let (v, s) = sat((2 * sa * sb + round) >> e, e, false);
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

    /// Three registers of the same length, single-precision lanes.
    fn neon_3same_float(
        &mut self,
        w: u32,
        d: usize,
        n: usize,
        m: usize,
        regs: usize,
    ) -> ExecResult {
        let u = flag(w, 24);
        let op = field(w, 11, 8);
        let bb = flag(w, 4);
        let sz = flag(w, 20);
        let hi = flag(w, 21);
        if sz {
            return Err(Exception::Undefined); // half precision lanes: ARMv8.2
        }
        let vn = self.vget(n, regs)?;
        let vm = self.vget(m, regs)?;
        let vd = self.vget(d, regs)?;
        let lanes = 2 * regs;
        let mut c = Ctx::standard(self.fp.fpscr);
        let mut r = vd;
        let pairwise = u && ((op == 0b1101 && !bb && !hi) || (op == 0b1111 && !bb));
        if pairwise && regs == 2 {
            return Err(Exception::Undefined);
        }
        for i in 0..lanes {
            let (x, y, z) = if pairwise {
                let src = if i == 0 { &vn } else { &vm };
                (lane(src, 32, 0), lane(src, 32, 1), 0)
            } else {
                (lane(&vn, 32, i), lane(&vm, 32, i), lane(&vd, 32, i))
            };
            let f = F32;
            let v = match (op, bb, u) {
                (0b1100, true, false) => {
                    // VFMA / VFMS.
                    let x = if hi { f.neg(x) } else { x };
                    sf::mul_add(&mut c, f, z, x, y)
                }
                (0b1101, false, false) => sf::add(&mut c, f, x, y, hi),
                (0b1101, false, true) if !hi => sf::add(&mut c, f, x, y, false), // VPADD
                (0b1101, false, true) => {
                    let s = sf::add(&mut c, f, x, y, true);
                    f.abs(s) // VABD
                }
                (0b1101, true, false) => {
                    let p = sf::mul(&mut c, f, x, y);
                    sf::add(&mut c, f, z, p, hi) // VMLA / VMLS
                }
                (0b1101, true, true) if !hi => sf::mul(&mut c, f, x, y),
                (0b1110, false, false) if !hi => cmp_mask(&mut c, x, y, Cmp::Eq),
                (0b1110, false, true) => cmp_mask(&mut c, x, y, if hi { Cmp::Gt } else { Cmp::Ge }),
                (0b1110, true, true) => {
                    let (ax, ay) = (f.abs(x), f.abs(y));
                    cmp_mask(&mut c, ax, ay, if hi { Cmp::Gt } else { Cmp::Ge })
                }
                (0b1111, false, _) => min_max(&mut c, x, y, hi),
                // VRECPS / VRSQRTS (ARMv7's: not fused).
                (0b1111, true, false) => estimate::step_f32(&mut c, x as u32, y as u32, hi) as u64,
                _ => return Err(Exception::Undefined),
            };
            set_lane(&mut r, 32, i, v);
        }
        self.vset(d, regs, &r)?;
        self.fp.fpscr |= c.flags;
        Ok(None)
    }

    /// One register and a modified immediate: VMOV, VORR, VMVN, VBIC (immediate).
    fn neon_modimm(&mut self, w: u32) -> ExecResult {
        let q = flag(w, 6);
        let d = dreg(w, 15, 22);
        if q && d & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let regs = 1 + q as usize;
        let cmode = field(w, 11, 8);
        let op = flag(w, 5);
        let imm8 = (flag(w, 24) as u32) << 7 | field(w, 18, 16) << 4 | field(w, 3, 0);
        let imm = adv_simd_expand_imm(op, cmode, imm8)?;
        let mut r = self.vget(d, regs)?;
        for v in r.iter_mut().take(regs) {
            *v = match (cmode & 1 == 1 && cmode < 12, op) {
                (true, false) => *v | imm, // VORR
                (true, true) => *v & !imm, // VBIC
                (false, false) => imm,     // VMOV
                (false, true) => {
                    if cmode == 14 {
                        imm // VMOV.I64
                    } else {
                        !imm // VMVN
                    }
                }
            };
        }
        self.vset(d, regs, &r)?;
        Ok(None)
    }

    /// VEXT: bytes from `imm4` of the concatenation Vm:Vn.
    fn neon_vext(&mut self, w: u32) -> ExecResult {
        let q = flag(w, 6);
        let (d, n, m) = (dreg(w, 15, 22), dreg(w, 19, 7), dreg(w, 3, 5));
        let imm4 = field(w, 11, 8) as usize;
        if flag(w, 4) || (q && (d | n | m) & 1 != 0) || (!q && imm4 > 7) {
            return Err(Exception::Undefined);
        }
        let regs = 1 + q as usize;
        let vn = self.vget(n, regs)?;
        let vm = self.vget(m, regs)?;
        let bytes = 8 * regs;
        let mut r = [0u64; 4];
        for i in 0..bytes {
            let j = i + imm4;
            let b = if j < bytes {
                lane(&vn, 8, j)
            } else {
                lane(&vm, 8, j - bytes)
            };
            set_lane(&mut r, 8, i, b);
        }
        self.vset(d, regs, &r)?;
        Ok(None)
    }

    /// VTBL/VTBX: byte table lookup in 1-4 consecutive D registers.
    fn neon_vtbl(&mut self, w: u32) -> ExecResult {
        let (d, n, m) = (dreg(w, 15, 22), dreg(w, 19, 7), dreg(w, 3, 5));
        let len = field(w, 9, 8) as usize + 1;
        let extension = flag(w, 6);
        if n + len > 32 {
            return Err(Exception::Undefined);
        }
        let table = self.vget(n, len)?;
        let idx = self.vget(m, 1)?[0];
        let old = self.vget(d, 1)?[0];
        let mut r = [0u64; 1];
        for i in 0..8 {
            let k = (idx >> (8 * i) & 0xff) as usize;
            let b = if k < 8 * len {
                lane(&table, 8, k)
            } else if extension {
                old >> (8 * i) & 0xff
            } else {
                0
            };
            set_lane(&mut r, 8, i, b);
        }
        self.vset(d, 1, &r)?;
        Ok(None)
    }

    /// VDUP (scalar): `Dd/Qd` = every lane from `Dm[x]`.
    fn neon_vdup_scalar(&mut self, w: u32) -> ExecResult {
        let q = flag(w, 6);
        let (d, m) = (dreg(w, 15, 22), dreg(w, 3, 5));
        let imm4 = field(w, 19, 16);
        let (e, x) = if imm4 & 1 == 1 {
            (8, imm4 >> 1)
        } else if imm4 & 2 == 2 {
            (16, imm4 >> 2)
        } else if imm4 & 4 == 4 {
            (32, imm4 >> 3)
        } else {
            return Err(Exception::Undefined);
        };
        if q && d & 1 != 0 {
            return Err(Exception::Undefined);
        }
        let regs = 1 + q as usize;
        let v = lane(&self.vget(m, 1)?, e, x as usize);
        let mut r = [0u64; 4];
        for i in 0..(64 / e) as usize * regs {
            set_lane(&mut r, e, i, v);
        }
        self.vset(d, regs, &r)?;
        Ok(None)
    }
}

/// `x` shifted left by `sh` (right when negative), rounding right shifts when `round`.
pub(super) fn shift_round(x: i128, sh: i32, round: bool) -> i128 {
    if sh >= 0 {
        if sh >= 64 {
            if x == 0 {
                0
            } else {
                x.signum() << 70 // saturates or truncates to zero either way
            }
        } else {
            x << sh
        }
    } else {
        let s = (-sh).min(100) as u32;
        let r = if round { 1i128 << (s - 1) } else { 0 };
        (x + r) >> s
    }
}

/// Polynomial (carry-less) multiplication of `e`-bit values, keeping `2e` bits.
pub(super) fn pmul(x: u64, y: u64, e: u32) -> u64 {
    let mut r = 0u64;
    for i in 0..e {
        if y >> i & 1 != 0 {
            r ^= (x & mask(e)) << i;
        }
    }
    r
}

#[derive(Clone, Copy)]
pub(super) enum Cmp {
    Eq,
    Ge,
    Gt,
}

/// All ones when the single-precision comparison holds (`FPCompareEQ/GE/GT`: a NaN gives
/// false; GE and GT signal on quiet NaNs too).
pub(super) fn cmp_mask(c: &mut Ctx, x: u64, y: u64, k: Cmp) -> u64 {
    let nzcv = sf::compare(c, F32, x, y, !matches!(k, Cmp::Eq));
    let t = match k {
        Cmp::Eq => nzcv == 0b0110,
        Cmp::Ge => nzcv == 0b0110 || nzcv == 0b0010,
        Cmp::Gt => nzcv == 0b0010,
    };
    if t {
        0xffff_ffff
    } else {
        0
    }
}

/// `FPMax`/`FPMin` of single-precision values (NaNs propagate; +0 > -0).
pub(super) fn min_max(c: &mut Ctx, x: u64, y: u64, min: bool) -> u64 {
    let a = sf::unpack(c, F32, x);
    let b = sf::unpack(c, F32, y);
    if matches!(a.kind, sf::Kind::QNaN | sf::Kind::SNaN)
        || matches!(b.kind, sf::Kind::QNaN | sf::Kind::SNaN)
    {
        let first = if matches!(a.kind, sf::Kind::SNaN)
            || (!matches!(b.kind, sf::Kind::SNaN) && matches!(a.kind, sf::Kind::QNaN))
        {
            (a.kind, x)
        } else {
            (b.kind, y)
        };
        return sf::process_nan(c, F32, first.0, first.1);
    }
    let ord = sf::cmp_vals(&a, &b);
    let pick_x = match ord {
        core::cmp::Ordering::Greater => !min,
        core::cmp::Ordering::Less => min,
        core::cmp::Ordering::Equal => {
            // Equal values: zeros of different signs pick by sign.
            if min {
                a.sign
            } else {
                !a.sign
            }
        }
    };
    // Flushed inputs give zeros of their sign.
    let v = if pick_x { (a, x) } else { (b, y) };
    if v.0.kind == sf::Kind::Zero {
        F32.zero(v.0.sign)
    } else {
        v.1
    }
}

/// `AdvSIMDExpandImm(op, cmode, imm8)`.
pub(super) fn adv_simd_expand_imm(op: bool, cmode: u32, imm8: u32) -> Result<u64, Exception> {
    let i = imm8 as u64;
    let rep32 = |v: u64| v << 32 | v;
    Ok(match cmode >> 1 {
        0 => rep32(i),
        1 => rep32(i << 8),
        2 => rep32(i << 16),
        3 => rep32(i << 24),
        4 => (i << 16 | i) * 0x0000_0001_0000_0001,
        5 => (i << 24 | i << 8) * 0x0000_0001_0000_0001,
        6 => {
            if cmode & 1 == 0 {
                rep32(i << 8 | 0xff)
            } else {
                rep32(i << 16 | 0xffff)
            }
        }
        _ => {
            if cmode & 1 == 0 && !op {
                i * 0x0101_0101_0101_0101
            } else if cmode & 1 == 0 {
                let mut v = 0u64;
                for b in 0..8 {
                    if i >> b & 1 != 0 {
                        v |= 0xff << (8 * b);
                    }
                }
                v
            } else if !op {
                // Single-precision immediate.
                let a = (i >> 7) << 31
                    | ((i >> 6 & 1) ^ 1) << 30
                    | (if i >> 6 & 1 == 1 { 0x1f } else { 0 }) << 25
                    | (i & 0x3f) << 19;
                rep32(a)
            } else {
                return Err(Exception::Undefined);
            }
        }
    })
}
