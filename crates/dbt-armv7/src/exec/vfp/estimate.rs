//! Reciprocal and reciprocal square root estimates (VRECPE, VRSQRTE) of single-precision
//! and unsigned 32-bit lanes, as the ARM ARM's pseudocode defines them (`FPRecipEstimate`,
//! `FPRSqrtEstimate`, `UnsignedRecipEstimate`, `UnsignedRSqrtEstimate` with 8-bit
//! estimates; ARMv8 keeps ARMv7's values): the same values A64's FRECPE, FRSQRTE, URECPE
//! and URSQRTE give, and qemu-arm's. And the Newton-Raphson steps (VRECPS, VRSQRTS) as
//! ARMv7 defines them, a rounded product then a rounded subtraction (ARMv8's AArch32 and
//! A64 FRECPS/FRSQRTS fuse them; qemu-arm's Cortex-A15 does not).

use super::softfloat::{self as sf, process_nan, unpack, Ctx, Kind, F32};
use crate::cpu::fp::fpscr;

/// `RecipEstimate`: `a` in [256, 512) (0.5 <= a/512 < 1) to an estimate in [256, 512).
fn recip(a: u32) -> u32 {
    let a = a * 2 + 1;
    let b = (1 << 19) / a;
    b.div_ceil(2)
}

/// `RecipSqrtEstimate`: `a` in [128, 512) to an estimate in [256, 512).
fn rsqrt(a: u32) -> u32 {
    let a = if a < 256 {
        a as u64 * 2 + 1
    } else {
        (((a as u64 >> 1) << 1) + 1) * 2
    };
    let mut b = 512u64;
    while a * (b + 1) * (b + 1) < 1 << 28 {
        b += 1;
    }
    b.div_ceil(2) as u32
}

/// `FPRecipEstimate` of a single-precision value.
pub fn recip_f32(c: &mut Ctx, x: u32) -> u32 {
    let v = unpack(c, F32, x as u64);
    match v.kind {
        Kind::QNaN | Kind::SNaN => return process_nan(c, F32, v.kind, x as u64) as u32,
        Kind::Inf => return F32.zero(v.sign) as u32,
        Kind::Zero => {
            c.flags |= fpscr::DZC;
            return F32.inf(v.sign) as u32;
        }
        Kind::Finite => {}
    }
    let field = (x >> 23 & 0xff) as i32;
    if field == 0 && x & 0x7f_ffff < 1 << 21 {
        // |x| < 2^-128: the reciprocal overflows (round to nearest: infinity).
        c.flags |= fpscr::OFC | fpscr::IXC;
        return F32.inf(v.sign) as u32;
    }
    if c.fz && field >= 253 {
        c.flags |= fpscr::UFC;
        return F32.zero(v.sign) as u32;
    }
    let mut exp = field;
    let mut frac = ((x & 0x7f_ffff) as u64) << 29;
    if exp == 0 {
        if frac >> 51 & 1 == 0 {
            exp = -1;
            frac = (frac & ((1 << 50) - 1)) << 2;
        } else {
            frac = (frac & ((1 << 51) - 1)) << 1;
        }
    }
    let scaled = 256 | (frac >> 44 & 0xff) as u32;
    let mut rexp = 253 - exp;
    let mut frac = ((recip(scaled) & 0xff) as u64) << 44;
    if rexp == 0 {
        frac = 1 << 51 | frac >> 1;
    } else if rexp == -1 {
        frac = 1 << 50 | frac >> 2;
        rexp = 0;
    }
    (v.sign as u32) << 31 | (rexp as u32 & 0xff) << 23 | (frac >> 29) as u32
}

/// `FPRSqrtEstimate` of a single-precision value.
pub fn rsqrt_f32(c: &mut Ctx, x: u32) -> u32 {
    let v = unpack(c, F32, x as u64);
    match v.kind {
        Kind::QNaN | Kind::SNaN => return process_nan(c, F32, v.kind, x as u64) as u32,
        Kind::Zero => {
            c.flags |= fpscr::DZC;
            return F32.inf(v.sign) as u32;
        }
        _ if v.sign => {
            c.flags |= fpscr::IOC;
            return F32.default_nan() as u32;
        }
        Kind::Inf => return 0,
        Kind::Finite => {}
    }
    let mut exp = (x >> 23 & 0xff) as i32;
    let mut frac = ((x & 0x7f_ffff) as u64) << 29;
    let m52 = (1u64 << 52) - 1;
    if exp == 0 {
        while frac >> 51 & 1 == 0 {
            frac = (frac << 1) & m52;
            exp -= 1;
        }
        frac = (frac << 1) & m52;
    }
    let scaled = if exp & 1 == 0 {
        1 << 8 | (frac >> 44 & 0xff) as u32
    } else {
        1 << 7 | (frac >> 45 & 0x7f) as u32
    };
    let rexp = (380 - exp).div_euclid(2);
    (rexp as u32 & 0xff) << 23 | (rsqrt(scaled) & 0xff) << 15
}

/// `UnsignedRecipEstimate` (VRECPE.U32).
pub fn recip_u32(x: u32) -> u32 {
    if x >> 31 == 0 {
        u32::MAX
    } else {
        (recip(x >> 23) & 0x1ff) << 23
    }
}

/// `UnsignedRSqrtEstimate` (VRSQRTE.U32).
pub fn rsqrt_u32(x: u32) -> u32 {
    if x >> 30 == 0 {
        u32::MAX
    } else {
        (rsqrt(x >> 23) & 0x1ff) << 23
    }
}

/// `FPRecipStep` (`2 - a * b`, VRECPS) or `FPRSqrtStep` (`(3 - a * b) / 2`, VRSQRTS)
/// with `root`: an infinity times a zero (or a denormal, flushed) gives exactly 2 (1.5).
pub fn step_f32(c: &mut Ctx, a: u32, b: u32, root: bool) -> u32 {
    let (x, y) = (unpack(c, F32, a as u64), unpack(c, F32, b as u64));
    let inf_zero = matches!(
        (x.kind, y.kind),
        (Kind::Inf, Kind::Zero) | (Kind::Zero, Kind::Inf)
    );
    let (two, three) = (0x4000_0000u64, 0x4040_0000u64);
    if inf_zero {
        return if root { 0x3fc0_0000 } else { two as u32 };
    }
    let p = sf::mul(c, F32, a as u64, b as u64);
    if root {
        let t = sf::add(c, F32, three, p, true);
        sf::div(c, F32, t, two) as u32
    } else {
        sf::add(c, F32, two, p, true) as u32
    }
}
