//! IEEE 754 arithmetic as the ARM ARM's VFP pseudocode defines it (`FPUnpack`,
//! `FPRound`, `FPProcessNaN(s)`, `FPAdd`, `FPMul`, `FPDiv`, `FPSqrt`, `FPMulAdd`,
//! `FPCompare`, `FPToFixed`, `FixedToFP`, conversions), on integers so that it is exact on
//! any host: every rounding mode, flush-to-zero of inputs (IDC) and outputs (UFC), default
//! NaN, and the cumulative exception flags of FPSCR. Tininess is detected before rounding,
//! as the ARM ARM does.

use crate::cpu::fp::fpscr;

/// A floating-point format: exponent and fraction widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    /// Exponent bits.
    pub e: u32,
    /// Fraction bits.
    pub f: u32,
}

/// Half precision (VCVTB/VCVTT).
pub const F16: Fmt = Fmt { e: 5, f: 10 };
/// Single precision.
pub const F32: Fmt = Fmt { e: 8, f: 23 };
/// Double precision.
pub const F64: Fmt = Fmt { e: 11, f: 52 };

impl Fmt {
    fn bits(self) -> u32 {
        1 + self.e + self.f
    }
    fn emax(self) -> u64 {
        (1 << self.e) - 1
    }
    fn min_exp(self) -> i32 {
        2 - (1 << (self.e - 1))
    }
    fn bias(self) -> i32 {
        (1 << (self.e - 1)) - 1
    }
    fn sign_bit(self) -> u64 {
        1 << (self.bits() - 1)
    }
    /// `FPDefaultNaN`.
    pub fn default_nan(self) -> u64 {
        self.emax() << self.f | 1 << (self.f - 1)
    }
    /// `FPInfinity(sign)`.
    pub fn inf(self, sign: bool) -> u64 {
        (sign as u64) << (self.bits() - 1) | self.emax() << self.f
    }
    /// `FPZero(sign)`.
    pub fn zero(self, sign: bool) -> u64 {
        (sign as u64) << (self.bits() - 1)
    }
    fn max_normal(self, sign: bool) -> u64 {
        self.zero(sign) | (self.emax() - 1) << self.f | ((1 << self.f) - 1)
    }
    /// `FPNeg`: flips the sign bit (NaNs included, no exception).
    pub fn neg(self, v: u64) -> u64 {
        v ^ self.sign_bit()
    }
    /// `FPAbs`.
    pub fn abs(self, v: u64) -> u64 {
        v & !self.sign_bit()
    }
}

/// Rounding modes (FPSCR.RMode encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Round to nearest, ties to even.
    Nearest = 0,
    /// Towards plus infinity.
    PlusInf = 1,
    /// Towards minus infinity.
    MinusInf = 2,
    /// Towards zero.
    Zero = 3,
}

/// The controls an operation takes from FPSCR and the flags it raises.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Rounding mode.
    pub rmode: Rounding,
    /// Flush-to-zero (`FPSCR.FZ`; Advanced SIMD always flushes).
    pub fz: bool,
    /// Default NaN (`FPSCR.DN`; Advanced SIMD always uses it).
    pub dn: bool,
    /// Alternative half-precision (`FPSCR.AHP`).
    pub ahp: bool,
    /// Cumulative flags raised (FPSCR bit positions).
    pub flags: u32,
}

impl Ctx {
    /// The controls of FPSCR value `v`.
    pub fn from_fpscr(v: u32) -> Ctx {
        Ctx {
            rmode: match (v >> fpscr::RMODE_SHIFT) & 3 {
                0 => Rounding::Nearest,
                1 => Rounding::PlusInf,
                2 => Rounding::MinusInf,
                _ => Rounding::Zero,
            },
            fz: v & fpscr::FZ != 0,
            dn: v & fpscr::DN != 0,
            ahp: v & fpscr::AHP != 0,
            flags: 0,
        }
    }

    /// The "standard FPSCR value" Advanced SIMD arithmetic uses: round to nearest, FZ and
    /// DN set, AHP from FPSCR.
    pub fn standard(v: u32) -> Ctx {
        Ctx {
            rmode: Rounding::Nearest,
            fz: true,
            dn: true,
            ahp: v & fpscr::AHP != 0,
            flags: 0,
        }
    }

    fn raise(&mut self, f: u32) {
        self.flags |= f;
    }
}

/// Kinds of unpacked values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Zero (or a flushed denormal).
    Zero,
    /// A finite non-zero value.
    Finite,
    /// Infinity.
    Inf,
    /// Quiet NaN.
    QNaN,
    /// Signalling NaN.
    SNaN,
}

/// `FPUnpack`'s result: value = `mant * 2^exp` for finite values.
#[derive(Clone, Copy, Debug)]
pub struct Val {
    /// Kind.
    pub kind: Kind,
    /// Sign.
    pub sign: bool,
    /// Magnitude (finite values).
    pub mant: u64,
    /// Exponent of the magnitude's unit.
    pub exp: i32,
}

impl Val {
    fn is_nan(&self) -> bool {
        matches!(self.kind, Kind::QNaN | Kind::SNaN)
    }
}

/// `FPUnpack`: flush-to-zero applies to single and double precision inputs (IDC).
pub fn unpack(c: &mut Ctx, fmt: Fmt, v: u64) -> Val {
    let sign = v >> (fmt.bits() - 1) & 1 != 0;
    let e = (v >> fmt.f) & fmt.emax();
    let frac = v & ((1 << fmt.f) - 1);
    let mut r = Val {
        kind: Kind::Finite,
        sign,
        mant: 0,
        exp: 0,
    };
    let ahp = fmt == F16 && c.ahp;
    if e == 0 {
        if frac == 0 {
            r.kind = Kind::Zero;
        } else if c.fz && fmt != F16 {
            r.kind = Kind::Zero;
            c.raise(fpscr::IDC);
        } else {
            r.mant = frac;
            r.exp = fmt.min_exp() - fmt.f as i32;
        }
    } else if e == fmt.emax() && !ahp {
        r.kind = if frac == 0 {
            Kind::Inf
        } else if frac >> (fmt.f - 1) & 1 != 0 {
            Kind::QNaN
        } else {
            Kind::SNaN
        };
    } else {
        r.mant = frac | 1 << fmt.f;
        r.exp = e as i32 - fmt.bias() - fmt.f as i32;
    }
    r
}

/// `FPProcessNaN`: quiets a signalling NaN (IOC), or gives the default NaN with DN.
pub fn process_nan(c: &mut Ctx, fmt: Fmt, kind: Kind, v: u64) -> u64 {
    if kind == Kind::SNaN {
        c.raise(fpscr::IOC);
    }
    if c.dn {
        fmt.default_nan()
    } else {
        v | 1 << (fmt.f - 1)
    }
}

/// `FPProcessNaNs3` (and the two-operand form with `ops.len() == 2`): the first
/// signalling NaN, else the first quiet NaN, in operand order.
fn process_nans(c: &mut Ctx, fmt: Fmt, ops: &[(Val, u64)]) -> Option<u64> {
    if let Some(&(a, v)) = ops.iter().find(|(a, _)| a.kind == Kind::SNaN) {
        return Some(process_nan(c, fmt, a.kind, v));
    }
    if let Some(&(a, v)) = ops.iter().find(|(a, _)| a.kind == Kind::QNaN) {
        return Some(process_nan(c, fmt, a.kind, v));
    }
    None
}

/// How the discarded bits compare with half a unit in the last place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    Exact,
    Below,
    Half,
    Above,
}

/// Shifts `m` right by `sh` bits, classifying the bits shifted out (`sticky` means more
/// non-zero bits below those of `m`).
fn shift_right(m: u128, sh: u32, sticky: bool) -> (u128, Rest) {
    if sh == 0 {
        return (m, if sticky { Rest::Below } else { Rest::Exact });
    }
    let (q, rem, half) = if sh >= 128 {
        (0, m, if sh == 128 { 1u128 << 127 } else { u128::MAX })
    } else {
        (m >> sh, m & ((1u128 << sh) - 1), 1u128 << (sh - 1))
    };
    let rest = if sh > 128 {
        if rem == 0 && !sticky {
            Rest::Exact
        } else {
            Rest::Below
        }
    } else if rem == 0 && !sticky {
        Rest::Exact
    } else if rem < half {
        Rest::Below
    } else if rem == half {
        if sticky {
            Rest::Above
        } else {
            Rest::Half
        }
    } else {
        Rest::Above
    };
    (q, rest)
}

fn round_up(c: &Ctx, sign: bool, odd: bool, rest: Rest) -> bool {
    match c.rmode {
        Rounding::Nearest => rest == Rest::Above || (rest == Rest::Half && odd),
        Rounding::PlusInf => rest != Rest::Exact && !sign,
        Rounding::MinusInf => rest != Rest::Exact && sign,
        Rounding::Zero => false,
    }
}

/// `FPRound` of the non-zero value `(-1)^sign * (mant + sticky) * 2^exp`, where `sticky`
/// stands for non-zero bits below `mant`'s last one.
pub fn round(c: &mut Ctx, fmt: Fmt, sign: bool, mant: u128, exp: i32, sticky: bool) -> u64 {
    debug_assert!(mant != 0);
    let len = 128 - mant.leading_zeros() as i32;
    let e_real = exp + len - 1;
    let min_exp = fmt.min_exp();
    if c.fz && fmt != F16 && e_real < min_exp {
        c.raise(fpscr::UFC);
        return fmt.zero(sign);
    }
    let mut biased = (e_real - min_exp + 1).max(0) as u64;
    let unit = if biased > 0 { e_real } else { min_exp } - fmt.f as i32;
    let (mut m, rest) = if unit >= exp {
        let sh = (unit - exp) as u32;
        shift_right(mant, sh.min(300), sticky)
    } else {
        // Exact: fewer bits than the format holds.
        (mant << (exp - unit) as u32, Rest::Exact)
    };
    let mut inexact = rest != Rest::Exact;
    if biased == 0 && inexact {
        c.raise(fpscr::UFC);
    }
    let to_inf = match c.rmode {
        Rounding::Nearest => true,
        Rounding::PlusInf => !sign,
        Rounding::MinusInf => sign,
        Rounding::Zero => false,
    };
    if round_up(c, sign, m & 1 != 0, rest) {
        m += 1;
        if m == 1 << fmt.f {
            biased = 1;
        }
        if m == 1 << (fmt.f + 1) {
            biased += 1;
            m >>= 1;
        }
    }
    let ahp = fmt == F16 && c.ahp;
    let result;
    if !ahp && biased >= fmt.emax() {
        result = if to_inf {
            fmt.inf(sign)
        } else {
            fmt.max_normal(sign)
        };
        c.raise(fpscr::OFC);
        inexact = true;
    } else if ahp && biased > fmt.emax() {
        result = fmt.zero(sign) | (fmt.sign_bit() - 1);
        c.raise(fpscr::IOC);
        inexact = false;
    } else {
        result = fmt.zero(sign) | biased << fmt.f | (m as u64 & ((1 << fmt.f) - 1));
    }
    if inexact {
        c.raise(fpscr::IXC);
    }
    result
}

/// Adds two exact values `a + b` given as (sign, mantissa, exponent); zero results are
/// the caller's (it knows the signs of zero operands). Mantissas up to 106 bits.
fn add_exact(
    c: &mut Ctx,
    fmt: Fmt,
    (sa, ma, ea): (bool, u128, i32),
    (sb, mb, eb): (bool, u128, i32),
) -> u64 {
    if ma == 0 && mb == 0 {
        return fmt.zero(c.rmode == Rounding::MinusInf);
    }
    if mb == 0 {
        return round(c, fmt, sa, ma, ea, false);
    }
    if ma == 0 {
        return round(c, fmt, sb, mb, eb, false);
    }
    // Place the operand with the larger top bit at bit 125, the other relative to it.
    let top = |m: u128, e: i32| e + 127 - m.leading_zeros() as i32;
    let (big, small) = if top(ma, ea) >= top(mb, eb) {
        ((sa, ma, ea), (sb, mb, eb))
    } else {
        ((sb, mb, eb), (sa, ma, ea))
    };
    let shl = |m: u128| 125 - (127 - m.leading_zeros() as i32);
    let bs = shl(big.1);
    let bm = big.1 << bs;
    let e = big.2 - bs;
    // Small operand at exponent `e`.
    let d = small.2 - e;
    let (sm, sticky) = if d >= 0 {
        (small.1 << d as u32, false)
    } else {
        let sh = (-d) as u32;
        if sh >= 128 {
            (0, true)
        } else {
            (small.1 >> sh, small.1 & ((1u128 << sh) - 1) != 0)
        }
    };
    // Jam the sticky bit into the least significant bit (there are >= 70 guard bits).
    let sm = sm | sticky as u128;
    if big.0 == small.0 {
        round(c, fmt, big.0, bm + sm, e, false)
    } else if bm >= sm {
        let r = bm - sm;
        if r == 0 {
            return fmt.zero(c.rmode == Rounding::MinusInf);
        }
        round(c, fmt, big.0, r, e, false)
    } else {
        round(c, fmt, small.0, sm - bm, e, false)
    }
}

/// `FPAdd` (`neg_b`: `FPSub`, the NaN operand stays as given).
pub fn add(c: &mut Ctx, fmt: Fmt, a: u64, b: u64, neg_b: bool) -> u64 {
    let x = unpack(c, fmt, a);
    let mut y = unpack(c, fmt, b);
    if let Some(r) = process_nans(c, fmt, &[(x, a), (y, b)]) {
        return r;
    }
    y.sign ^= neg_b;
    match (x.kind, y.kind) {
        (Kind::Inf, Kind::Inf) if x.sign != y.sign => {
            c.raise(fpscr::IOC);
            fmt.default_nan()
        }
        (Kind::Inf, _) => fmt.inf(x.sign),
        (_, Kind::Inf) => fmt.inf(y.sign),
        (Kind::Zero, Kind::Zero) if x.sign == y.sign => fmt.zero(x.sign),
        _ => add_exact(
            c,
            fmt,
            (x.sign, x.mant as u128, x.exp),
            (y.sign, y.mant as u128, y.exp),
        ),
    }
}

/// `FPMul`.
pub fn mul(c: &mut Ctx, fmt: Fmt, a: u64, b: u64) -> u64 {
    let x = unpack(c, fmt, a);
    let y = unpack(c, fmt, b);
    if let Some(r) = process_nans(c, fmt, &[(x, a), (y, b)]) {
        return r;
    }
    let sign = x.sign != y.sign;
    match (x.kind, y.kind) {
        (Kind::Inf, Kind::Zero) | (Kind::Zero, Kind::Inf) => {
            c.raise(fpscr::IOC);
            fmt.default_nan()
        }
        (Kind::Inf, _) | (_, Kind::Inf) => fmt.inf(sign),
        (Kind::Zero, _) | (_, Kind::Zero) => fmt.zero(sign),
        _ => round(
            c,
            fmt,
            sign,
            x.mant as u128 * y.mant as u128,
            x.exp + y.exp,
            false,
        ),
    }
}

/// `FPMulAdd(addend, op1, op2)`: `addend + op1 * op2` rounded once (VFMA and friends).
pub fn mul_add(c: &mut Ctx, fmt: Fmt, addend: u64, a: u64, b: u64) -> u64 {
    let z = unpack(c, fmt, addend);
    let x = unpack(c, fmt, a);
    let y = unpack(c, fmt, b);
    let inf_zero = matches!(
        (x.kind, y.kind),
        (Kind::Inf, Kind::Zero) | (Kind::Zero, Kind::Inf)
    );
    if z.kind == Kind::QNaN && inf_zero {
        // The addend is a quiet NaN and the product is invalid: the default NaN
        // (ARMv8's FPMulAdd; QEMU and ARMv8 hardware in AArch32 do this).
        c.raise(fpscr::IOC);
        return fmt.default_nan();
    }
    if let Some(r) = process_nans(c, fmt, &[(z, addend), (x, a), (y, b)]) {
        return r;
    }
    let sp = x.sign != y.sign;
    let inf_p = x.kind == Kind::Inf || y.kind == Kind::Inf;
    let zero_p = x.kind == Kind::Zero || y.kind == Kind::Zero;
    if inf_zero || (z.kind == Kind::Inf && inf_p && z.sign != sp) {
        c.raise(fpscr::IOC);
        return fmt.default_nan();
    }
    if (z.kind == Kind::Inf && !z.sign) || (inf_p && !sp) {
        return fmt.inf(false);
    }
    if z.kind == Kind::Inf || inf_p {
        return fmt.inf(true);
    }
    if z.kind == Kind::Zero && zero_p && z.sign == sp {
        return fmt.zero(z.sign);
    }
    let (pm, pe) = if zero_p {
        (0, 0)
    } else {
        (x.mant as u128 * y.mant as u128, x.exp + y.exp)
    };
    let zm = if z.kind == Kind::Zero {
        0
    } else {
        z.mant as u128
    };
    if pm == 0 && zm == 0 {
        return fmt.zero(c.rmode == Rounding::MinusInf);
    }
    add_exact(c, fmt, (z.sign, zm, z.exp), (sp, pm, pe))
}

/// `FPDiv`.
pub fn div(c: &mut Ctx, fmt: Fmt, a: u64, b: u64) -> u64 {
    let x = unpack(c, fmt, a);
    let y = unpack(c, fmt, b);
    if let Some(r) = process_nans(c, fmt, &[(x, a), (y, b)]) {
        return r;
    }
    let sign = x.sign != y.sign;
    match (x.kind, y.kind) {
        (Kind::Inf, Kind::Inf) | (Kind::Zero, Kind::Zero) => {
            c.raise(fpscr::IOC);
            fmt.default_nan()
        }
        (Kind::Inf, _) => fmt.inf(sign),
        (_, Kind::Zero) => {
            c.raise(fpscr::DZC);
            fmt.inf(sign)
        }
        (Kind::Zero, _) | (_, Kind::Inf) => fmt.zero(sign),
        _ => {
            // Normalise both to 64-bit mantissas, then a 128/64 division.
            let xs = x.mant.leading_zeros();
            let ys = y.mant.leading_zeros();
            let xm = ((x.mant << xs) as u128) << 64;
            let ym = (y.mant << ys) as u128;
            let q = xm / ym;
            let r = xm % ym;
            let exp = (x.exp - xs as i32 - 64) - (y.exp - ys as i32);
            round(c, fmt, sign, q, exp, r != 0)
        }
    }
}

fn isqrt(n: u128) -> (u128, bool) {
    // Bit-by-bit integer square root with remainder.
    let mut rem = n;
    let mut root: u128 = 0;
    let mut bit: u128 = 1 << 126;
    while bit > n {
        bit >>= 2;
    }
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    (root, rem != 0)
}

/// `FPSqrt`.
pub fn sqrt(c: &mut Ctx, fmt: Fmt, a: u64) -> u64 {
    let x = unpack(c, fmt, a);
    match x.kind {
        Kind::QNaN | Kind::SNaN => process_nan(c, fmt, x.kind, a),
        Kind::Zero => fmt.zero(x.sign),
        Kind::Inf if !x.sign => fmt.inf(false),
        _ if x.sign => {
            c.raise(fpscr::IOC);
            fmt.default_nan()
        }
        _ => {
            // mant * 2^exp with an even exponent and the mantissa near the top.
            let mut sh = x.mant.leading_zeros() as i32 + 60;
            if (x.exp - sh) & 1 != 0 {
                sh += 1;
            }
            let e = x.exp - sh;
            let m = (x.mant as u128) << sh;
            let (r, inexact) = isqrt(m);
            round(c, fmt, false, r, e / 2, inexact)
        }
    }
}

/// `FPCompare`: the NZCV flags (bits 3:0) of `a` compared with `b`. With `signal_qnan`
/// (VCMPE) a quiet NaN operand raises Invalid Operation too.
pub fn compare(c: &mut Ctx, fmt: Fmt, a: u64, b: u64, signal_qnan: bool) -> u32 {
    let x = unpack(c, fmt, a);
    let y = unpack(c, fmt, b);
    if x.is_nan() || y.is_nan() {
        if x.kind == Kind::SNaN || y.kind == Kind::SNaN || signal_qnan {
            c.raise(fpscr::IOC);
        }
        return 0b0011;
    }
    match cmp_vals(&x, &y) {
        core::cmp::Ordering::Equal => 0b0110,
        core::cmp::Ordering::Less => 0b1000,
        core::cmp::Ordering::Greater => 0b0010,
    }
}

/// Orders two non-NaN unpacked values.
pub fn cmp_vals(x: &Val, y: &Val) -> core::cmp::Ordering {
    use core::cmp::Ordering;
    // Map to a signed key: (class, magnitude) with infinities and zeros in place.
    let mag = |v: &Val| -> (i32, i32, u128) {
        match v.kind {
            Kind::Zero => (0, 0, 0),
            Kind::Inf => (2, 0, 0),
            _ => {
                let top = v.exp + 63 - v.mant.leading_zeros() as i32;
                let norm = (v.mant as u128) << (v.mant.leading_zeros() + 64);
                (1, top, norm)
            }
        }
    };
    let (mx, my) = (mag(x), mag(y));
    let sx = x.sign && x.kind != Kind::Zero;
    let sy = y.sign && y.kind != Kind::Zero;
    match (sx, sy) {
        (false, true) => Ordering::Greater,
        (true, false) => {
            if x.kind == Kind::Zero && y.kind == Kind::Zero {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        }
        (false, false) => mx.cmp(&my),
        (true, true) => my.cmp(&mx),
    }
}

/// `FPConvert` between formats (VCVT.F64.F32/F32.F64, VCVTB/VCVTT), `AHP` applying to
/// half precision.
pub fn convert(c: &mut Ctx, from: Fmt, to: Fmt, a: u64) -> u64 {
    let x = unpack(c, from, a);
    let ahp_out = to == F16 && c.ahp;
    match x.kind {
        Kind::QNaN | Kind::SNaN => {
            if ahp_out {
                c.raise(fpscr::IOC);
                return to.zero(x.sign);
            }
            if x.kind == Kind::SNaN {
                c.raise(fpscr::IOC);
            }
            if c.dn {
                return to.default_nan();
            }
            let frac = a & ((1 << from.f) - 1);
            let frac = if to.f >= from.f {
                frac << (to.f - from.f)
            } else {
                frac >> (from.f - to.f)
            };
            to.zero(x.sign) | to.emax() << to.f | 1 << (to.f - 1) | frac
        }
        Kind::Inf => {
            if ahp_out {
                c.raise(fpscr::IOC);
                return to.zero(x.sign) | (to.sign_bit() - 1);
            }
            to.inf(x.sign)
        }
        Kind::Zero => to.zero(x.sign),
        Kind::Finite => round(c, to, x.sign, x.mant as u128, x.exp, false),
    }
}

/// `FPToFixed`: `a * 2^fbits` rounded (`round_zero`, else FPSCR's mode) and saturated to
/// a `bits`-bit signed or unsigned integer (IOC on NaN or saturation, else IXC when
/// inexact). Returns the integer's bits (zero-extended from `bits`).
pub fn to_fixed(
    c: &mut Ctx,
    fmt: Fmt,
    a: u64,
    bits: u32,
    fbits: u32,
    unsigned: bool,
    round_zero: bool,
) -> u64 {
    let x = unpack(c, fmt, a);
    let (mag, rest) = match x.kind {
        Kind::QNaN | Kind::SNaN => {
            c.raise(fpscr::IOC);
            return 0;
        }
        Kind::Zero => (0u128, Rest::Exact),
        Kind::Inf => (u128::MAX >> 1, Rest::Exact),
        Kind::Finite => {
            let e = x.exp + fbits as i32;
            if e >= 0 {
                if e > 70 {
                    (u128::MAX >> 1, Rest::Exact)
                } else {
                    ((x.mant as u128) << e, Rest::Exact)
                }
            } else {
                shift_right(x.mant as u128, ((-e) as u32).min(300), false)
            }
        }
    };
    let mode = if round_zero { Rounding::Zero } else { c.rmode };
    let rc = Ctx { rmode: mode, ..*c };
    let up = round_up(&rc, x.sign, mag & 1 != 0, rest);
    let mag = mag.saturating_add(up as u128);
    let v: i128 = if x.sign {
        -(mag.min(1 << 100) as i128)
    } else {
        mag.min(1 << 100) as i128
    };
    let (lo, hi) = if unsigned {
        (0i128, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    let sat = v.clamp(lo, hi);
    if sat != v {
        c.raise(fpscr::IOC);
    } else if rest != Rest::Exact {
        c.raise(fpscr::IXC);
    }
    (sat as u64) & (u64::MAX >> (64 - bits))
}

/// `FixedToFP`: the `bits`-bit integer `v` divided by `2^fbits`, rounded to nearest when
/// `nearest`, else by FPSCR's mode.
pub fn from_fixed(
    c: &mut Ctx,
    fmt: Fmt,
    v: u64,
    bits: u32,
    fbits: u32,
    unsigned: bool,
    nearest: bool,
) -> u64 {
    let v = v & (u64::MAX >> (64 - bits));
    let (sign, mag) = if !unsigned && v >> (bits - 1) & 1 != 0 {
        (
            true,
            (1u64 << (bits - 1) << 1).wrapping_sub(v) & (u64::MAX >> (64 - bits)),
        )
    } else {
        (false, v)
    };
    let mag = if sign && mag == 0 {
        1u128 << (bits - 1)
    } else {
        mag as u128
    };
    if mag == 0 {
        return fmt.zero(false);
    }
    let saved = c.rmode;
    if nearest {
        c.rmode = Rounding::Nearest;
    }
    let r = round(c, fmt, sign, mag, -(fbits as i32), false);
    c.rmode = saved;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::from_fpscr(0)
    }

    #[test]
    fn basic_arithmetic_matches_host() {
        let vals = [
            1.0f64,
            -2.5,
            3.0e300,
            1.0e-310,
            7.0,
            0.1,
            -0.0,
            123456.789,
            5e-324,
            2.0f64.powi(-1022),
        ];
        for &a in &vals {
            for &b in &vals {
                let mut c = ctx();
                let s = add(&mut c, F64, a.to_bits(), b.to_bits(), false);
                assert_eq!(s, (a + b).to_bits(), "{a} + {b}");
                let m = mul(&mut c, F64, a.to_bits(), b.to_bits());
                assert_eq!(m, (a * b).to_bits(), "{a} * {b}");
                if b != 0.0 {
                    let d = div(&mut c, F64, a.to_bits(), b.to_bits());
                    assert_eq!(d, (a / b).to_bits(), "{a} / {b}");
                }
                let f = mul_add(&mut c, F64, 1.5f64.to_bits(), a.to_bits(), b.to_bits());
                assert_eq!(f, a.mul_add(b, 1.5).to_bits(), "fma {a} {b}");
                let (fa, fb) = (a as f32, b as f32);
                let s = add(&mut c, F32, fa.to_bits() as u64, fb.to_bits() as u64, true);
                let want = if (fa - fb).is_nan() {
                    F32.default_nan() as u32 // the host's NaN may be negative
                } else {
                    (fa - fb).to_bits()
                };
                assert_eq!(s as u32, want, "{fa} - {fb}");
            }
            let mut c = ctx();
            if a >= 0.0 {
                assert_eq!(
                    sqrt(&mut c, F64, a.to_bits()),
                    a.sqrt().to_bits(),
                    "sqrt {a}"
                );
            }
            let f = a as f32;
            assert_eq!(convert(&mut c, F64, F32, a.to_bits()) as u32, f.to_bits());
        }
    }

    #[test]
    fn flags_and_modes() {
        let mut c = ctx();
        let one = 1.0f32.to_bits() as u64;
        let three = 3.0f32.to_bits() as u64;
        let q = div(&mut c, F32, one, three);
        assert_eq!(q as u32, (1.0f32 / 3.0).to_bits());
        assert_eq!(c.flags, fpscr::IXC);
        let mut c = Ctx::from_fpscr(3 << 22); // round towards zero (nearest rounds up)
        let q = div(&mut c, F32, one, three);
        assert_eq!(q as u32, (1.0f32 / 3.0).to_bits() - 1);
        let mut c = ctx();
        assert_eq!(div(&mut c, F32, one, 0), F32.inf(false));
        assert_eq!(c.flags, fpscr::DZC);
        let mut c = ctx();
        let big = f32::MAX.to_bits() as u64;
        assert_eq!(mul(&mut c, F32, big, big), F32.inf(false));
        assert_eq!(c.flags, fpscr::OFC | fpscr::IXC);
        let mut c = Ctx::from_fpscr(fpscr::FZ);
        let tiny = 1u64; // denormal input
        assert_eq!(add(&mut c, F32, tiny, 0, false), 0);
        assert_eq!(c.flags, fpscr::IDC);
        let mut c = ctx();
        assert_eq!(
            to_fixed(&mut c, F32, (-1.5f32).to_bits() as u64, 32, 0, false, true),
            (-1i32) as u32 as u64
        );
        assert_eq!(c.flags, fpscr::IXC);
        assert_eq!(
            to_fixed(&mut c, F32, 3e9f32.to_bits() as u64, 32, 0, false, true),
            0x7fff_ffff
        );
        assert!(c.flags & fpscr::IOC != 0);
        let mut c = ctx();
        assert_eq!(
            from_fixed(&mut c, F32, 0x8000_0000, 32, 0, false, false) as u32,
            (-2147483648.0f32).to_bits()
        );
    }
}
