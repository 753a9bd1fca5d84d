//! Lowering of Advanced SIMD (NEON) data processing to A64 Advanced SIMD.
//!
//! The A32 groups map onto A64 groups nearly field for field: three registers of the same
//! length (`op:B` is the A64 opcode, `size` and `U` the same), shifts by an immediate
//! (`L:imm6` is `immh:immb`, A32 `op` is half the A64 opcode), three registers of
//! different lengths (`op` is the opcode), two-register miscellaneous, by-scalar
//! (`simd_elem`), `VEXT` (`EXT`), `VTBL/VTBX` (`TBL/TBX`), `VDUP` scalar (`DUP`
//! element). Operands (see [`vfp`](super::vfp) for where guest registers live): a D
//! register is used in its host register when mapped, loaded into a temporary otherwise;
//! a Q register is gathered into a temporary (`ZIP1 .2D` of two mapped halves, one
//! `LDR Q` from the memory file) and scattered back, unless splitting a lane-wise
//! operation into its two D halves is cheaper (mapped registers). Temporaries: `v0`
//! destination, `v1`/`v2` sources, `v3`-`v7` scratch.
//!
//! Floating point: Advanced SIMD arithmetic uses the "standard FPSCR value" (flush to
//! zero, default NaN, round to nearest) whatever FPSCR says, and still sets FPSCR's
//! cumulative flags: the host FPCR is switched to `DN|FZ` around the instruction
//! ([`std_fp`]) and the host FPSR gathers the flags as for VFP. `VMLA`/`VMLS` (float)
//! are a multiply and an add (two roundings), `VFMA`/`VFMS` fused.
//!
//! `VRECPE/VRSQRTE` are A64's estimates (the same values). Not lowered (the interpreter
//! runs them): `VRECPS/VRSQRTS` (ARMv7 rounds the product, A64's FRECPS/FRSQRTS are
//! fused), half-precision `VCVT`, encodings that are UNDEFINED or UNPREDICTABLE (odd Q
//! register numbers, reserved sizes, `VZIP`/`VUZP`/`VTRN` of a register with itself).

use super::asm::Asm;
use super::enc;
use super::enc_fp::*;
use super::vfp::{commit, dst, field, flag, host_d, off_d, src};
use super::{STATE, T_ADDR, T_OP2};

/// `D:Vd`-style register numbers of Advanced SIMD encodings (`hi` is the top bit of the
/// 4-bit field, `bit` the extra one).
pub(super) fn nreg(w: u32, hi: u32, bit: u32) -> u32 {
    (flag(w, bit) as u32) << 4 | field(w, hi, hi - 3)
}

/// A guest vector operand: D register `n`, or Q register `n / 2` with `q` (`n` even).
#[derive(Clone, Copy)]
pub(super) struct V {
    pub q: bool,
    pub n: u32,
}

/// Guest vector `v` in a host register: a mapped D register is its own, anything else is
/// loaded into temporary `v<t>`.
pub(super) fn get(a: &mut Asm, v: V, t: u8) -> u8 {
    if !v.q {
        return src(a, true, v.n, t);
    }
    match host_d(v.n) {
        Some(h) => a.put(zip1_2d(t, h, h + 1)),
        None => a.put(fls(true, Sz::Q, t, STATE, off_d(v.n))),
    }
    t
}

/// Makes host register `r` (a temporary, or a mapped D register's own) guest vector `v`.
pub(super) fn set(a: &mut Asm, v: V, r: u8) {
    if !v.q {
        commit(a, true, v.n, r);
        return;
    }
    match host_d(v.n) {
        Some(h) => {
            a.put(fmov_d(h, r));
            a.put(dup_d1(h + 1, r));
        }
        None => a.put(fls(false, Sz::Q, r, STATE, off_d(v.n))),
    }
}

/// The host register a result for guest vector `v` is computed in: a mapped D
/// register's own, else temporary `v<t>` (then [`set`]).
pub(super) fn out(v: V, t: u8) -> u8 {
    match host_d(v.n) {
        Some(h) if !v.q => h,
        _ => t,
    }
}

/// Runs `body` with the host FPCR set to the Advanced SIMD "standard FPSCR value" (`DN`,
/// `FZ`, round to nearest). An unconditional instruction leaves it so
/// ([`Asm::neon_fpcr`]): consecutive NEON floating-point instructions switch once, and
/// the block gives the guest's controls back before anything else
/// ([`vfp::guest_fpcr`](super::vfp::guest_fpcr)). A conditional one restores them itself.
fn std_fp(a: &mut Asm, body: impl FnOnce(&mut Asm)) {
    if a.neon_fpcr {
        body(a);
        return;
    }
    let keep = a.unconditional;
    if !keep {
        a.put(mrs_fpcr(T_ADDR));
    }
    a.put(enc::w_movz(T_OP2, 0x0300, 1));
    a.put(msr_fpcr(T_OP2));
    body(a);
    if keep {
        a.neon_fpcr = true;
    } else {
        a.put(msr_fpcr(T_ADDR));
    }
}

/// Emits one lane-wise operation `(asm, q, rd, rn, rm)`.
type Emit<'a> = &'a dyn Fn(&mut Asm, bool, u8, u8, u8);

/// `d = f(n, m)` lane by lane on D or Q registers (`n` absent for one-source operations,
/// `d` also a source with `accum`). A Q operation whose lanes do not cross the 64-bit
/// halves (`split`) runs as two D operations when that takes fewer host instructions.
#[allow(clippy::too_many_arguments)]
fn lanewise(
    a: &mut Asm,
    q: bool,
    d: u32,
    n: Option<u32>,
    m: u32,
    accum: bool,
    split: bool,
    emit: Emit,
) {
    let unmapped = |r: u32| host_d(r).is_none() as u32;
    let halves_cost =
        2 + 2 * (n.map_or(0, unmapped) + unmapped(m)) + 2 * unmapped(d) * (1 + accum as u32);
    let whole_cost = 1 + n.is_some() as u32 + 1 + accum as u32 + 1 + (1 - unmapped(d));
    if q && split && halves_cost < whole_cost {
        for k in 0..2 {
            let rn = n.map_or(0, |n| src(a, true, n + k, 1));
            let rm = src(a, true, m + k, 2);
            let rd = if accum {
                src(a, true, d + k, 0)
            } else {
                dst(true, d + k, 0)
            };
            emit(a, false, rd, rn, rm);
            commit(a, true, d + k, rd);
        }
        return;
    }
    let v = |n| V { q, n };
    let rn = n.map_or(0, |n| get(a, v(n), 1));
    let rm = get(a, v(m), 2);
    let rd = if accum { get(a, v(d), 0) } else { out(v(d), 0) };
    emit(a, q, rd, rn, rm);
    set(a, v(d), rd);
}

/// Lowers an Advanced SIMD data-processing instruction (A32 layout), or returns false.
pub fn data_proc(a: &mut Asm, w: u32) -> bool {
    if !flag(w, 23) {
        return three_same(a, w);
    }
    if flag(w, 4) {
        if field(w, 21, 19) == 0 && !flag(w, 7) {
            return modimm(a, w);
        }
        return shift_imm(a, w);
    }
    if field(w, 21, 20) != 3 {
        return if flag(w, 6) {
            by_scalar(a, w)
        } else {
            three_diff(a, w)
        };
    }
    if !flag(w, 24) {
        return vext(a, w);
    }
    match field(w, 11, 8) {
        0..=7 => two_misc(a, w),
        8..=11 => vtbl(a, w),
        12 if !flag(w, 7) => vdup(a, w),
        _ => false,
    }
}

/// Whether any of the registers of a Q operation is odd (UNDEFINED).
fn odd(q: bool, regs: &[u32]) -> bool {
    q && regs.iter().any(|r| r & 1 == 1)
}

/// Three registers of the same length: integer (`op:B` = A64 opcode 0-23) and single
/// precision.
fn three_same(a: &mut Asm, w: u32) -> bool {
    let u = flag(w, 24);
    let q = flag(w, 6);
    let size = field(w, 21, 20);
    let opcode = field(w, 11, 8) << 1 | flag(w, 4) as u32;
    let (d, n, m) = (nreg(w, 15, 22), nreg(w, 19, 7), nreg(w, 3, 5));
    if odd(q, &[d, n, m]) {
        return false;
    }
    if opcode >= 24 {
        return three_same_float(a, w, q, u, opcode, d, n, m);
    }
    let ok = match opcode {
        // VQADD, VQSUB, VSHL, VQSHL, VRSHL, VQRSHL, VADD/VSUB: 64-bit lanes too; the
        // bitwise group (3) has no size.
        1 | 3 | 5 | 8..=11 | 16 => true,
        19 => size == 0 || (!u && size < 3),
        20 | 21 => size < 3 && !q,
        22 => size == 1 || size == 2,
        23 => !u && size < 3 && !q,
        _ => size < 3,
    };
    if !ok {
        return false;
    }
    // A32 shifts the value in Vm by Vn; A64 shifts Rn by Rm.
    let (n, m) = if matches!(opcode, 8..=11) {
        (m, n)
    } else {
        (n, m)
    };
    let accum = matches!(opcode, 15 | 18) || (opcode == 3 && u && size != 0);
    let pairwise = matches!(opcode, 20 | 21 | 23);
    let emit = move |a: &mut Asm, qq: bool, rd: u8, rn: u8, rm: u8| {
        a.put(if size == 3 && !qq && opcode != 3 {
            simd3_scalar(u, 3, opcode, rd, rn, rm)
        } else {
            simd3(qq, u, size, opcode, rd, rn, rm)
        })
    };
    lanewise(a, q, d, Some(n), m, accum, !pairwise, &emit);
    true
}

/// Three registers of the same length, single precision (A64 opcodes 24-31 with `size`
/// = `a:sz`).
#[allow(clippy::too_many_arguments)]
fn three_same_float(
    a: &mut Asm,
    w: u32,
    q: bool,
    u: bool,
    opcode: u32,
    d: u32,
    n: u32,
    m: u32,
) -> bool {
    if flag(w, 20) {
        return false;
    }
    let hi = flag(w, 21);
    let size = (hi as u32) << 1;
    let pairwise = u && (opcode == 26 && !hi || opcode == 30);
    let ok = match (opcode, u) {
        (25, false) | (26, _) | (27, _) | (28, true) | (29, true) | (30, _) => true,
        (28, false) => !hi,
        _ => false,
    };
    if !ok || (opcode == 27 && u && hi) || (pairwise && q) {
        return false;
    }
    if opcode == 27 && !u {
        // VMLA/VMLS: FMUL into v3, then FADD/FSUB to the accumulator.
        let emit = move |a: &mut Asm, qq: bool, rd: u8, rn: u8, rm: u8| {
            a.put(simd3(qq, true, 0, 27, 3, rn, rm));
            a.put(simd3(qq, false, size, 26, rd, rd, 3));
        };
        std_fp(a, |a| lanewise(a, q, d, Some(n), m, true, true, &emit));
        return true;
    }
    let accum = opcode == 25;
    let emit = move |a: &mut Asm, qq: bool, rd: u8, rn: u8, rm: u8| {
        a.put(simd3(qq, u, size, opcode, rd, rn, rm))
    };
    std_fp(a, |a| {
        lanewise(a, q, d, Some(n), m, accum, !pairwise, &emit)
    });
    true
}

/// VMOV/VMVN/VORR/VBIC (immediate): A64's MOVI/MVNI/ORR/BIC (vector, immediate) and
/// FMOV (vector, single-precision immediate) take the same `op`, `cmode` and `imm8` and
/// expand them the same way (`AdvSIMDExpandImm`), one D register (a Q register's halves
/// one after the other) at a time.
fn modimm(a: &mut Asm, w: u32) -> bool {
    let q = flag(w, 6);
    let op = flag(w, 5);
    let cmode = field(w, 11, 8);
    let d = nreg(w, 15, 22);
    if (q && d % 2 == 1) || (op && cmode == 0b1111) {
        return false;
    }
    let imm8 = (flag(w, 24) as u32) << 7 | field(w, 18, 16) << 4 | field(w, 3, 0);
    // VORR/VBIC modify the register; the others replace it.
    let modifies = cmode & 1 == 1 && cmode < 0b1100;
    for k in 0..1 + q as u32 {
        let rd = if modifies {
            src(a, true, d + k, 0)
        } else {
            dst(true, d + k, 0)
        };
        a.put(simd_modimm(op, cmode, imm8, rd));
        commit(a, true, d + k, rd);
    }
    true
}

/// Shifts by an immediate: same length (`VSHR` .. `VQSHL`), narrowing (`VSHRN`,
/// `VQ{R}SHR{U}N`) and lengthening (`VSHLL`/`VMOVL`).
fn shift_imm(a: &mut Asm, w: u32) -> bool {
    let u = flag(w, 24);
    let q = flag(w, 6);
    let l = flag(w, 7);
    let immhb = (l as u32) << 6 | field(w, 21, 16);
    let op = field(w, 11, 8);
    let (d, m) = (nreg(w, 15, 22), nreg(w, 3, 5));
    match op {
        0..=7 => {
            if (matches!(op, 4 | 6) && !u) || odd(q, &[d, m]) {
                return false;
            }
            let opcode = op << 1;
            let accum = matches!(op, 1 | 3 | 4) || (op == 5 && u);
            let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rm: u8| {
                a.put(if l && !qq {
                    simd_shift_scalar(u, immhb, opcode, rd, rm)
                } else {
                    simd_shift(qq, u, immhb, opcode, rd, rm)
                })
            };
            lanewise(a, q, d, None, m, accum, true, &emit);
        }
        8 | 9 if !l => {
            if m & 1 == 1 {
                return false;
            }
            let opcode = 0b10000 | ((op == 9) as u32) << 1 | q as u32;
            let rm = get(a, V { q: true, n: m }, 2);
            let rd = out(V { q: false, n: d }, 0);
            a.put(simd_shift(false, u, immhb, opcode, rd, rm));
            commit(a, true, d, rd);
        }
        14 | 15 if !l => {
            // VCVT between single precision and 32-bit fixed point: SCVTF/UCVTF and
            // FCVTZS/FCVTZU (vector, fixed-point) with the same immh:immb.
            if immhb < 32 || odd(q, &[d, m]) {
                return false;
            }
            let opcode = if op == 15 { 0b11111 } else { 0b11100 };
            let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rm: u8| {
                a.put(simd_shift(qq, u, immhb, opcode, rd, rm))
            };
            std_fp(a, |a| lanewise(a, q, d, None, m, false, true, &emit));
        }
        10 if !l && !q => {
            if d & 1 == 1 {
                return false;
            }
            let rm = src(a, true, m, 2);
            a.put(simd_shift(false, u, immhb, 0b10100, 0, rm));
            set(a, V { q: true, n: d }, 0);
        }
        _ => return false,
    }
    true
}

/// Three registers of different lengths: long (`Qd = Dn op Dm`), wide (`Qd = Qn op Dm`)
/// and narrow (`Dd = Qn op Qm`); A32 `op` is the A64 opcode.
fn three_diff(a: &mut Asm, w: u32) -> bool {
    let u = flag(w, 24);
    let size = field(w, 21, 20);
    let op = field(w, 11, 8);
    let (d, n, m) = (nreg(w, 15, 22), nreg(w, 19, 7), nreg(w, 3, 5));
    let ok = match op {
        9 | 11 | 13 => !u && size != 0,
        14 => !u && size == 0,
        15 => false,
        _ => true,
    };
    let wide = matches!(op, 1 | 3);
    let narrow = matches!(op, 4 | 6);
    let (qd, qn, qm) = (!narrow, wide || narrow, narrow);
    if !ok || (qd && d & 1 == 1) || (qn && n & 1 == 1) || (qm && m & 1 == 1) {
        return false;
    }
    let accum = matches!(op, 5 | 8..=11);
    let rn = get(a, V { q: qn, n }, 1);
    let rm = get(a, V { q: qm, n: m }, 2);
    let vd = V { q: qd, n: d };
    let rd = if accum { get(a, vd, 0) } else { out(vd, 0) };
    a.put(simd3_diff(false, u, size, op, rd, rn, rm));
    set(a, vd, rd);
    true
}

/// Two registers and a scalar: `VMLA/VMLS/VMUL` (integer and single precision),
/// `VQ{R}DMULH`, and the long `VMLAL/VMLSL/VMULL/VQDMLAL/VQDMLSL/VQDMULL`.
fn by_scalar(a: &mut Asm, w: u32) -> bool {
    let op = field(w, 11, 8);
    let size = field(w, 21, 20);
    let long = matches!(op, 2 | 3 | 6 | 7 | 10 | 11);
    let float = matches!(op, 1 | 5 | 9);
    let bit24 = flag(w, 24);
    let (q, u) = if long { (false, bit24) } else { (bit24, false) };
    if size == 0 || (float && size != 2) || matches!(op, 14 | 15) || (matches!(op, 3 | 7 | 11) && u)
    {
        return false;
    }
    let (d, n) = (nreg(w, 15, 22), nreg(w, 19, 7));
    // The scalar: D0-D7 and index M:Vm<3> for 16-bit elements, D0-D15 and index M for
    // 32-bit ones.
    let (mr, index) = if size == 1 {
        (field(w, 2, 0), field(w, 5, 5) << 1 | field(w, 3, 3))
    } else {
        (field(w, 3, 0), field(w, 5, 5))
    };
    if (long && d & 1 == 1) || odd(q, &[d, n]) {
        return false;
    }
    // The scalar's D register: its own host register (v8-v15) or v3.
    let mut rs = src(a, true, mr, 3);
    if rs != 3 && !long && (mr == d || (q && mr == d + 1)) {
        // The scalar is also (half of) the destination, which a Q operation split into
        // halves writes before it reads the scalar again: a copy.
        a.put(fmov_d(3, rs));
        rs = 3;
    }
    if long {
        let opcode = op;
        let rn = get(a, V { q: false, n }, 1);
        let vd = V { q: true, n: d };
        let rd = if matches!(op, 2 | 3 | 6 | 7) {
            get(a, vd, 0)
        } else {
            0
        };
        a.put(simd_elem(false, u, size, opcode, rd, rn, rs, index));
        set(a, vd, rd);
        return true;
    }
    let (eu, opcode) = match op {
        0 => (true, 0),
        4 => (true, 4),
        8 => (false, 8),
        12 => (false, 12),
        13 => (false, 13),
        _ => (false, 9),
    };
    let accum = matches!(op, 0 | 4 | 1 | 5);
    if float {
        let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rn: u8| {
            if op == 9 {
                a.put(simd_elem(qq, false, 2, 9, rd, rn, rs, index));
            } else {
                a.put(simd_elem(qq, false, 2, 9, 4, rn, rs, index));
                a.put(simd3(qq, false, ((op == 5) as u32) << 1, 26, rd, rd, 4));
            }
        };
        std_fp(a, |a| lanewise(a, q, d, None, n, accum, true, &emit));
    } else {
        let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rn: u8| {
            a.put(simd_elem(qq, eu, size, opcode, rd, rn, rs, index))
        };
        lanewise(a, q, d, None, n, accum, true, &emit);
    }
    true
}

/// `VEXT`: bytes of `Vm:Vn` from byte `imm4` on, as `EXT`.
fn vext(a: &mut Asm, w: u32) -> bool {
    let q = flag(w, 6);
    let imm4 = field(w, 11, 8);
    let (d, n, m) = (nreg(w, 15, 22), nreg(w, 19, 7), nreg(w, 3, 5));
    if odd(q, &[d, n, m]) || (!q && imm4 >= 8) {
        return false;
    }
    let rn = get(a, V { q, n }, 1);
    let rm = if m == n { rn } else { get(a, V { q, n: m }, 2) };
    let vd = V { q, n: d };
    let rd = out(vd, 0);
    a.put(ext(q, rd, rn, rm, imm4));
    set(a, vd, rd);
    true
}

/// `VTBL/VTBX`: the 1-4 table D registers are packed in pairs into `v4`/`v5` for `TBL/
/// TBX`; with an odd count the last register's upper half is zero, and for VTBX the
/// indices past the table are made 0xff first (out of range for A64 too).
fn vtbl(a: &mut Asm, w: u32) -> bool {
    let len = field(w, 9, 8) + 1;
    let tbx = flag(w, 6);
    let (d, n, m) = (nreg(w, 15, 22), nreg(w, 19, 7), nreg(w, 3, 5));
    if n + len > 32 {
        return false;
    }
    for j in 0..len.div_ceil(2) {
        let t = 4 + j as u8;
        let lo = n + 2 * j;
        if lo + 1 < n + len {
            let r1 = src(a, true, lo, 6);
            let r2 = src(a, true, lo + 1, 7);
            a.put(zip1_2d(t, r1, r2));
        } else {
            // A scalar load or FMOV clears the upper half.
            let r1 = src(a, true, lo, t);
            if r1 != t {
                a.put(fmov_d(t, r1));
            }
        }
    }
    let mut ri = src(a, true, m, 2);
    if len % 2 == 1 && tbx {
        // VTBL reads the zero upper half for indices 8 * len.. (giving 0, as VTBL
        // does); VTBX must leave those bytes alone, so their indices are made 0xff.
        // CMHS v3.8B, vi.8B, v3.8B (index >= 8 * len) then ORR vi into it.
        a.put(movi_b(false, 3, 8 * len));
        a.put(simd3(false, true, 0, 7, 3, ri, 3));
        a.put(simd3(false, false, 2, 3, 3, ri, 3));
        ri = 3;
    }
    let rd = if tbx {
        src(a, true, d, 0)
    } else {
        dst(true, d, 0)
    };
    a.put(tbl(tbx, len.div_ceil(2), rd, 4, ri));
    commit(a, true, d, rd);
    true
}

/// `VDUP` (scalar): `DUP` (element).
fn vdup(a: &mut Asm, w: u32) -> bool {
    let q = flag(w, 6);
    let imm4 = field(w, 19, 16);
    let (d, m) = (nreg(w, 15, 22), nreg(w, 3, 5));
    let (bytes, index) = match imm4 {
        x if x & 1 == 1 => (1, x >> 1),
        x if x & 2 == 2 => (2, x >> 2),
        x if x & 4 == 4 => (4, x >> 3),
        _ => return false,
    };
    if odd(q, &[d]) {
        return false;
    }
    let rm = src(a, true, m, 2);
    let vd = V { q, n: d };
    let rd = out(vd, 0);
    a.put(dup_elem(q, rd, rm, bytes, index));
    set(a, vd, rd);
    true
}

/// Two registers, miscellaneous.
fn two_misc(a: &mut Asm, w: u32) -> bool {
    let size = field(w, 19, 18);
    let group = field(w, 17, 16);
    let b = field(w, 10, 7);
    let q = flag(w, 6);
    let (d, m) = (nreg(w, 15, 22), nreg(w, 3, 5));
    match group {
        0 => {
            let (u, opcode, ok, accum) = match b {
                0b0000 => (false, 0, size < 3, false),
                0b0001 => (true, 0, size < 2, false),
                0b0010 => (false, 1, size == 0, false),
                0b0100 | 0b0101 => (b & 1 == 1, 2, size < 3, false),
                0b1000 => (false, 4, size < 3, false),
                0b1001 => (true, 4, size < 3, false),
                0b1010 => (false, 5, size == 0, false),
                0b1011 => (true, 5, size == 0, false),
                0b1100 | 0b1101 => (b & 1 == 1, 6, size < 3, true),
                0b1110 => (false, 7, size < 3, false),
                0b1111 => (true, 7, size < 3, false),
                _ => return false,
            };
            if !ok || odd(q, &[d, m]) {
                return false;
            }
            let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rm: u8| {
                a.put(simd2(qq, u, size, opcode, rd, rm))
            };
            lanewise(a, q, d, None, m, accum, true, &emit);
        }
        1 => {
            let float = flag(w, 10);
            let op = field(w, 9, 7);
            if (float && size != 2) || (!float && size == 3) || op == 5 || odd(q, &[d, m]) {
                return false;
            }
            let (u, base) = match op {
                0 => (false, 8),
                1 => (true, 8),
                2 => (false, 9),
                3 => (true, 9),
                4 => (false, 10),
                6 => (false, 11),
                _ => (true, 11),
            };
            let (size, opcode) = if float { (2, base + 4) } else { (size, base) };
            let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rm: u8| {
                a.put(simd2(qq, u, size, opcode, rd, rm))
            };
            if float && op < 6 {
                std_fp(a, |a| lanewise(a, q, d, None, m, false, true, &emit));
            } else {
                lanewise(a, q, d, None, m, false, true, &emit);
            }
        }
        2 => return misc_permute(a, size, b, q, d, m),
        _ => {
            // VRECPE/VRSQRTE (b = 10FR: URECPE/URSQRTE/FRECPE/FRSQRTE) and VCVT between
            // single precision and 32-bit integers (b = 11xx, round to zero).
            if b & 0b1000 == 0 {
                return false;
            }
            if size != 2 || odd(q, &[d, m]) {
                return false;
            }
            let op = b & 3;
            let u = op & 1 == 1;
            let (size, opcode) = match b >> 2 {
                2 => (2, 0b11100 | op >> 1),
                _ if op < 2 => (0, 0b11101),
                _ => (2, 0b11011),
            };
            let emit = move |a: &mut Asm, qq: bool, rd: u8, _rn: u8, rm: u8| {
                a.put(simd2(qq, u, size, opcode, rd, rm))
            };
            std_fp(a, |a| lanewise(a, q, d, None, m, false, true, &emit));
        }
    }
    true
}

/// Two-register miscellaneous, group 2: `VSWP`, `VTRN/VUZP/VZIP`, `VMOVN/VQMOVN/
/// VQMOVUN` and `VSHLL` by the element size.
fn misc_permute(a: &mut Asm, size: u32, b: u32, q: bool, d: u32, m: u32) -> bool {
    match b {
        0b0000..=0b0011 => {
            if size == 3
                || odd(q, &[d, m])
                || (d == m && b != 0)
                || (b == 0 && size != 0)
                || (!q && size == 2 && b >= 2)
            {
                return false;
            }
            let (vd, vm) = (V { q, n: d }, V { q, n: m });
            let rd = get(a, vd, 0);
            let rm = get(a, vm, 1);
            if b == 0 {
                // VSWP: both values in temporaries before either register is written.
                for (r, t) in [(rd, 0), (rm, 1)] {
                    if r != t {
                        a.put(fmov_d(t, r));
                    }
                }
                set(a, vd, 1);
                set(a, vm, 0);
                return true;
            }
            let (o1, o2) = [(2, 6), (1, 5), (3, 7)][b as usize - 1];
            a.put(permute(q, size, o1, 2, rd, rm));
            a.put(permute(q, size, o2, 3, rd, rm));
            set(a, vd, 2);
            set(a, vm, 3);
        }
        0b0100 | 0b0101 => {
            if size == 3 || m & 1 == 1 {
                return false;
            }
            let (u, opcode) = match (b, q) {
                (0b0100, false) => (false, 0b10010),
                (0b0100, true) => (true, 0b10010),
                (_, false) => (false, 0b10100),
                _ => (true, 0b10100),
            };
            let rm = get(a, V { q: true, n: m }, 2);
            let rd = out(V { q: false, n: d }, 0);
            a.put(simd2(false, u, size, opcode, rd, rm));
            commit(a, true, d, rd);
        }
        0b0110 if !q => {
            if size == 3 || d & 1 == 1 {
                return false;
            }
            let rm = src(a, true, m, 2);
            a.put(simd2(false, true, size, 0b10011, 0, rm));
            set(a, V { q: true, n: d }, 0);
        }
        _ => return false,
    }
    true
}
