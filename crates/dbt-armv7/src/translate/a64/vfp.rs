//! Lowering of VFP and Advanced SIMD instructions to A64 FP/SIMD code.
//!
//! Register mapping: the guest's D0-D7 live in host `d8`-`d15` (the low halves of
//! `v8`-`v15`, which the AAPCS64 makes callee-saved, so Rust code that translated code
//! calls keeps them; the runtime's prologue saves the host's values in
//! [`GuestState::host_d`](crate::translate::state::GuestState::host_d) and loads the
//! guest's, the epilogue does the reverse). D8-D31 live in memory, in
//! [`GuestState::fp`](crate::translate::state::GuestState::fp), which x28 points at
//! (D0-D7's slots there are valid outside translated code). S0-S15 are the halves of
//! `d8`-`d15`: an even one is the `s` view of its host register, an odd one is element 1
//! (read with `DUP`, written with `INS`, since a scalar write would clear the other half);
//! S16-S31 are words of the memory file. Host `v0`-`v7` are temporaries. Double-precision
//! arithmetic on D0-D7 is one host instruction. FPSCR's RMode, FZ, DN and AHP are the host
//! FPCR's while translated code runs, and its cumulative flags come back from the host
//! FPSR (see [`vfp_host`](super::vfp_host)); the A64 operations used here (`FADD`,
//! `FMADD`, `FCVT`, `FCVTZS`, `SCVTF`, ...) compute what the AArch32 instructions define
//! under the same FPCR, NaN propagation and flush-to-zero included.
//!
//! Translated: VFP data processing (VADD/VSUB/VMUL/VNMUL/VDIV, VMLA/VMLS/VNMLA/VNMLS as a
//! multiply and an add, VFMA/VFMS/VFNMA/VFNMS fused, VABS/VNEG/VSQRT/VMOV, VMOV
//! immediate, VCMP/VCMPE into FPSCR.NZCV, VCVT between single and double, VCVT to
//! integers rounding to zero and from integers), VMRS of FPSCR (to a core register or
//! `APSR_nzcv`), VLDR/VSTR and VLDM/VSTM/VPUSH/VPOP (with the word-alignment check as a
//! side exit), VMOV between core registers and S/D registers or D-register scalars,
//! VLD1/VST1 of multiple registers, and the Advanced SIMD integer VADD/VSUB/VMUL, bitwise
//! operations and modified immediates on D or Q registers. Everything else (VMSR, conversions with FPSCR
//! rounding or fixed point, Advanced SIMD floating point, which uses the "standard FPSCR
//! value", the other Advanced SIMD groups) ends the block and runs in the interpreter.

use super::asm::{Asm, Label};
use super::enc::{self, AddSub, Ls};
use super::enc_fp::*;
use super::gen::mov32;
use super::lower::Lowered;
use super::{STATE, T_ADDR, T_OP2, T_RES};
use crate::decode::{Insn, Op, VfpKind};
use crate::translate::state::{OFF_FP, OFF_FPSCR, OFF_HOST_D};

/// Bits `hi..=lo` of `w`.
pub(super) fn field(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

pub(super) fn flag(w: u32, n: u32) -> bool {
    w >> n & 1 != 0
}

/// The byte offset of guest S register `n` in the state.
pub(super) fn off_s(n: u32) -> u32 {
    OFF_FP + 4 * n
}
/// The byte offset of guest D register `n`.
pub(super) fn off_d(n: u32) -> u32 {
    OFF_FP + 8 * n
}

/// A VFP scalar operand: double register `n` or single register `n`.
pub(super) fn reg(dp: bool, v4: u32, bit: bool) -> u32 {
    if dp {
        (bit as u32) << 4 | v4
    } else {
        v4 << 1 | bit as u32
    }
}

/// Guest D registers below this live in host `d8`.. (see the module doc).
pub(super) const MAPPED: u32 = 8;

/// The host register holding guest D register `n`, if it lives in one.
pub(super) fn host_d(n: u32) -> Option<u8> {
    (n < MAPPED).then_some(8 + n as u8)
}

/// The host FP register holding guest register `n` (single or double), loading it into
/// temporary `v<t>` when it is not in one.
pub(super) fn src(a: &mut Asm, dp: bool, n: u32, t: u8) -> u8 {
    if dp {
        if let Some(h) = host_d(n) {
            return h;
        }
        a.put(fls(true, Sz::D, t, STATE, off_d(n)));
        return t;
    }
    match host_d(n / 2) {
        Some(h) if n.is_multiple_of(2) => h,
        Some(h) => {
            a.put(dup_s1(t, h));
            t
        }
        None => {
            a.put(fls(true, Sz::S, t, STATE, off_s(n)));
            t
        }
    }
}

/// The host register a result for guest register `n` is best computed into: its own
/// host register for a mapped double, else temporary `v<t>` (then [`commit`]).
pub(super) fn dst(dp: bool, n: u32, t: u8) -> u8 {
    match host_d(n) {
        Some(h) if dp => h,
        _ => t,
    }
}

/// Makes host register `r` the value of guest register `n`.
pub(super) fn commit(a: &mut Asm, dp: bool, n: u32, r: u8) {
    if dp {
        match host_d(n) {
            Some(h) if h == r => {}
            Some(h) => a.put(fmov_d(h, r)),
            None => a.put(fls(false, Sz::D, r, STATE, off_d(n))),
        }
        return;
    }
    match host_d(n / 2) {
        Some(h) => a.put(ins_s(h, n % 2, r)),
        None => a.put(fls(false, Sz::S, r, STATE, off_s(n))),
    }
}

/// Guest S register `n` into core register `w`.
fn s_to_core(a: &mut Asm, w: u8, n: u32) {
    match host_d(n / 2) {
        Some(h) => a.put(mov_w(w, 4, n % 2, h, false)),
        None => a.put(enc::ls_uimm(Ls::Ldr, w, STATE, off_s(n))),
    }
}

/// Core register `w` into guest S register `n`.
fn core_to_s(a: &mut Asm, n: u32, w: u8) {
    match host_d(n / 2) {
        Some(h) => a.put(ins_w(h, 4, n % 2, w)),
        None => a.put(enc::ls_uimm(Ls::Str, w, STATE, off_s(n))),
    }
}

/// The runtime prologue's part (x28 holds the state): save the host's `d8`-`d15`, load
/// the guest's D0-D7.
pub fn enter_code(a: &mut Asm) {
    for k in (0..8u8).step_by(2) {
        a.put(dlsp(false, 8 + k, 9 + k, STATE, OFF_HOST_D + 8 * k as u32));
    }
    for k in (0..8u8).step_by(2) {
        a.put(dlsp(true, 8 + k, 9 + k, STATE, off_d(k as u32)));
    }
}

/// The runtime epilogue's part: store the guest's D0-D7, restore the host's `d8`-`d15`.
pub fn leave_code(a: &mut Asm) {
    for k in (0..8u8).step_by(2) {
        a.put(dlsp(false, 8 + k, 9 + k, STATE, off_d(k as u32)));
    }
    for k in (0..8u8).step_by(2) {
        a.put(dlsp(true, 8 + k, 9 + k, STATE, OFF_HOST_D + 8 * k as u32));
    }
}

/// Lowers a VFP or Advanced SIMD instruction, or says it is not translated.
pub fn lower(a: &mut Asm, i: &Insn, pc_read: u32, side: &mut Option<Label>) -> Lowered {
    let Op::Vfp { kind, .. } = i.op else {
        return Lowered::Unsupported;
    };
    let w = i.raw;
    let done = match kind {
        VfpKind::DataProc => data_proc(a, w),
        VfpKind::LoadStore => load_store(a, w, pc_read, side),
        VfpKind::Transfer => transfer(a, w),
        VfpKind::NeonDataProc => super::neon::data_proc(a, w),
        VfpKind::NeonLoadStore => super::neon_mem::load_store(a, w, side),
        VfpKind::Vmrs => vmrs(a, w),
        VfpKind::Vmsr => vmsr(a, w, side),
    };
    if done {
        Lowered::Done
    } else {
        Lowered::Unsupported
    }
}

/// Gives the host FPCR the guest's FPSCR controls again (AHP, DN, FZ, RMode from the
/// state's FPSCR) after NEON floating-point code left the standard value in it
/// ([`Asm::neon_fpcr`]); nothing when it did not.
pub fn guest_fpcr(a: &mut Asm) {
    if !a.neon_fpcr {
        return;
    }
    a.neon_fpcr = false;
    let (r, s) = enc::logic_imm32(0x07c0_0000).expect("a run of ones");
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_FPSCR));
    a.put(enc::w_logic_imm(enc::Logic::And, T_ADDR, T_ADDR, r, s));
    a.put(msr_fpcr(T_ADDR));
}

/// `VMRS APSR_nzcv, FPSCR` (FPSCR.NZCV into the host NZCV, which holds the guest's) and
/// `VMRS Rt, FPSCR` (with the cumulative flags the host FPSR has gathered). The other
/// system registers are for the system model.
fn vmrs(a: &mut Asm, w: u32) -> bool {
    let rt = field(w, 15, 12) as u8;
    if field(w, 19, 16) != 1 {
        return false;
    }
    if rt == 15 {
        a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_FPSCR));
        a.put(enc::msr_nzcv(T_ADDR));
    } else {
        a.put(enc::ls_uimm(Ls::Ldr, rt, STATE, OFF_FPSCR));
        a.put(mrs_fpsr(T_ADDR));
        a.put(enc::w_logic_reg(
            enc::Logic::Orr,
            rt,
            rt,
            T_ADDR,
            enc::Sh::Lsl,
            0,
        ));
    }
    true
}

/// `VMSR FPSCR, Rt`: a value asking for short vectors (Len/Stride non-zero) leaves through
/// the side exit (the interpreter writes it and translated VFP code stops running);
/// otherwise FPSCR's writable bits are stored, its controls become the host FPCR's and the
/// host FPSR's flags are cleared (the written flags replace the gathered ones). FPEXC and
/// the ID registers are the system model's.
fn vmsr(a: &mut Asm, w: u32, side: &mut Option<Label>) -> bool {
    let rt = field(w, 15, 12) as u8;
    if field(w, 19, 16) != 1 || rt == 15 {
        return false;
    }
    let l = *side.get_or_insert_with(|| a.label());
    // Len (bits 18:16) and Stride (bits 21:20).
    for bit in [16, 17, 18, 20, 21] {
        a.tbnz_to(rt, bit, l);
    }
    // FPSCR's writable bits without Len/Stride: 31:22, 7 and 4:0 (two logical
    // immediates: 31:22 and 7:0, then all but 6:5).
    let (r1, s1) = enc::logic_imm32(0xffc0_00ff).expect("a run of ones");
    let (r2, s2) = enc::logic_imm32(0xffff_ff9f).expect("a run of ones");
    a.put(enc::w_logic_imm(enc::Logic::And, T_OP2, rt, r1, s1));
    a.put(enc::w_logic_imm(enc::Logic::And, T_OP2, T_OP2, r2, s2));
    a.put(enc::ls_uimm(Ls::Str, T_OP2, STATE, OFF_FPSCR));
    // AHP, DN, FZ, RMode (bits 26:22) are the host FPCR's.
    let (r3, s3) = enc::logic_imm32(0x07c0_0000).expect("a run of ones");
    a.put(enc::w_logic_imm(enc::Logic::And, T_OP2, T_OP2, r3, s3));
    a.put(msr_fpcr(T_OP2));
    a.put(msr_fpsr(31));
    true
}

/// VFP data processing.
fn data_proc(a: &mut Asm, w: u32) -> bool {
    let dp = flag(w, 8);
    let opc1 = field(w, 23, 20) & 0b1011;
    let op6 = flag(w, 6);
    let d = reg(dp, field(w, 15, 12), flag(w, 22));
    let n = reg(dp, field(w, 19, 16), flag(w, 7));
    let m = reg(dp, field(w, 3, 0), flag(w, 5));
    if opc1 == 0b1011 {
        return other(a, w, dp, d, m);
    }
    if opc1 == 0b1000 && op6 || !matches!(opc1, 0b0000..=0b0011 | 0b1000..=0b1010) {
        return false;
    }
    let rn = src(a, dp, n, 1);
    let rm = src(a, dp, m, 2);
    let rd = dst(dp, d, 0);
    match opc1 {
        0b0000 => {
            // VMLA: d + n*m; VMLS: d + -(n*m) (two roundings).
            let ra = src(a, dp, d, 4);
            a.put(fp2(if op6 { 8 } else { 0 }, dp, 3, rn, rm));
            a.put(fp2(2, dp, rd, ra, 3));
        }
        0b0001 => {
            // VNMLS: -d + n*m; VNMLA: -d + -(n*m).
            let ra = src(a, dp, d, 4);
            a.put(fp2(if op6 { 8 } else { 0 }, dp, 3, rn, rm));
            a.put(fp1(2, dp, 4, ra));
            a.put(fp2(2, dp, rd, 4, 3));
        }
        0b0010 => a.put(fp2(if op6 { 8 } else { 0 }, dp, rd, rn, rm)),
        0b0011 => a.put(fp2(if op6 { 3 } else { 2 }, dp, rd, rn, rm)),
        0b1000 => a.put(fp2(1, dp, rd, rn, rm)),
        // VFNMS (op=0): -d + n*m = FNMSUB; VFNMA (op=1): -d - n*m = FNMADD.
        0b1001 => {
            let ra = src(a, dp, d, 4);
            a.put(fp3(true, !op6, dp, rd, rn, rm, ra));
        }
        // VFMA: d + n*m = FMADD; VFMS: d - n*m = FMSUB.
        _ => {
            let ra = src(a, dp, d, 4);
            a.put(fp3(false, op6, dp, rd, rn, rm, ra));
        }
    }
    commit(a, dp, d, rd);
    true
}

/// The `opc1 = 1x11` group: VMOV immediate/register, VABS, VNEG, VSQRT, conversions.
fn other(a: &mut Asm, w: u32, dp: bool, d: u32, m: u32) -> bool {
    if !flag(w, 6) {
        if field(w, 7, 4) & 0b1011 != 0 {
            return false;
        }
        // VMOV immediate: A64's FMOV immediate expands imm8 the same way.
        let imm8 = field(w, 19, 16) << 4 | field(w, 3, 0);
        let rd = dst(dp, d, 0);
        a.put(fmov_imm(dp, rd, imm8));
        commit(a, dp, d, rd);
        return true;
    }
    let opc2 = field(w, 19, 16);
    let t7 = flag(w, 7);
    match opc2 {
        0b0000 | 0b0001 => {
            // VMOV/VABS/VNEG/VSQRT = FMOV/FABS/FNEG/FSQRT.
            let rm = src(a, dp, m, 1);
            let rd = dst(dp, d, 0);
            a.put(fp1((opc2 << 1) | t7 as u32, dp, rd, rm));
            commit(a, dp, d, rd);
        }
        0b0100 | 0b0101 => {
            // VCMP{E} Vd, Vm/#0: FCMP{E} sets the host NZCV, which holds the guest's:
            // save them, compare, take the result into FPSCR.NZCV, restore them.
            let zero = opc2 == 0b0101;
            if zero && field(w, 5, 0) & 0b10_1111 != 0 {
                return false;
            }
            let rd = src(a, dp, d, 1);
            let rm = if zero { 0 } else { src(a, dp, m, 2) };
            a.put(enc::mrs_nzcv(T_ADDR));
            a.put(fcmp(dp, t7, zero, rd, rm));
            a.put(enc::mrs_nzcv(T_OP2));
            a.put(enc::msr_nzcv(T_ADDR));
            a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_FPSCR));
            // BFXIL w17, w16, #0, #28: the new NZCV over the rest of FPSCR.
            a.put(enc::w_bfm(T_OP2, T_ADDR, 0, 27));
            a.put(enc::ls_uimm(Ls::Str, T_OP2, STATE, OFF_FPSCR));
        }
        0b0111 if t7 => {
            // VCVT between double and single: the destination is the other size.
            let dd = reg(!dp, field(w, 15, 12), flag(w, 22));
            let rm = src(a, dp, m, 1);
            let rd = dst(!dp, dd, 0);
            a.put(fp1(if dp { 4 } else { 5 }, dp, rd, rm));
            commit(a, !dp, dd, rd);
        }
        0b1000 => {
            // VCVT.F<dp>.S32/U32 Sm (bit 7: signed) under FPSCR's rounding = SCVTF/UCVTF.
            let sm = reg(false, field(w, 3, 0), flag(w, 5));
            let rs = src(a, false, sm, 1);
            let rd = dst(dp, d, 0);
            if dp {
                a.put(fmov_w_s(T_ADDR, rs));
                a.put(cvtf_d_w(t7, rd, T_ADDR));
            } else {
                a.put(cvtf_s_s(t7, rd, rs));
            }
            commit(a, dp, d, rd);
        }
        0b1100 | 0b1101 if t7 => {
            // VCVT.S32/U32.F<dp> (round towards zero) = FCVTZS/FCVTZU.
            let sd = reg(false, field(w, 15, 12), flag(w, 22));
            let signed = flag(w, 16);
            let rm = src(a, dp, m, 1);
            if dp {
                a.put(fcvtz_w_d(signed, T_ADDR, rm));
                core_to_s(a, sd, T_ADDR);
            } else {
                a.put(fcvtz_s_s(signed, 0, rm));
                commit(a, false, sd, 0);
            }
        }
        0b1010 | 0b1011 | 0b1110 | 0b1111 => return fixed(a, w, dp, d),
        _ => return false,
    }
    true
}

/// VCVT between floating point and fixed point, in place in `Vd` (`fbits` = size -
/// `imm4:i`): to fixed point (rounding towards zero) with 32-bit results in an S register
/// as FCVTZS/FCVTZU (scalar, fixed-point) to a core register; from 16- or 32-bit fixed
/// point (the low bits of Sd, or of Dd's low word), extended, as SCVTF/UCVTF (scalar,
/// fixed-point) rounding to nearest. 16-bit results (saturated to 16 bits) and the
/// 64-bit extension a double-precision destination needs stay in the interpreter.
fn fixed(a: &mut Asm, w: u32, dp: bool, d: u32) -> bool {
    let to_fixed = flag(w, 18);
    let unsigned = flag(w, 16);
    let size = if flag(w, 7) { 32 } else { 16 };
    let imm = field(w, 3, 0) << 1 | flag(w, 5) as u32;
    if imm >= size || (to_fixed && (size != 32 || dp)) {
        return false; // (no fraction bits: rare, and not A64's fixed-point form)
    }
    let fbits = size - imm;
    if to_fixed {
        let rm = src(a, false, d, 1);
        a.put(fcvtz_fixed(dp, !unsigned, T_ADDR, rm, fbits));
        core_to_s(a, d, T_ADDR);
        return true;
    }
    // The fixed-point value: Sd, or the low word of Dd (S register 2d).
    s_to_core(a, T_ADDR, if dp { 2 * d } else { d });
    if size == 16 {
        a.put(if unsigned {
            enc::w_ubfm(T_ADDR, T_ADDR, 0, 15)
        } else {
            enc::w_sbfm(T_ADDR, T_ADDR, 0, 15)
        });
    }
    let rd = dst(dp, d, 0);
    // Always rounded to nearest (the ARM ARM's FixedToFP with round_nearest, whatever
    // FPSCR.RMode says): FPCR.RMode cleared around the conversion.
    let (r, s) = enc::logic_imm32(!0x00c0_0000).expect("a run of ones");
    a.put(mrs_fpcr(T_OP2));
    a.put(enc::w_logic_imm(enc::Logic::And, T_RES, T_OP2, r, s));
    a.put(msr_fpcr(T_RES));
    a.put(cvtf_fixed(dp, !unsigned, rd, T_ADDR, fbits));
    a.put(msr_fpcr(T_OP2));
    commit(a, dp, d, rd);
    true
}

/// Adds `imm` to guest register `rn` in 32 bits into [`T_ADDR`] (for offsets the load
/// or store cannot hold).
fn addr_add(a: &mut Asm, rn: u8, imm: i32) {
    let op = if imm < 0 { AddSub::Sub } else { AddSub::Add };
    a.put(enc::w_addsub_imm(op, T_ADDR, rn, imm.unsigned_abs(), false));
}

/// A host FP load or store of `sz` at guest address `rn + off`: one instruction when the
/// offset fits.
pub(super) fn mem_at(a: &mut Asm, load: bool, sz: Sz, t: u8, rn: u8, off: i32) {
    let unit = 1i32 << sz as u32;
    if off >= 0 && off % unit == 0 && off / unit < 4096 {
        a.put(fls(load, sz, t, rn, off as u32));
    } else if (-256..256).contains(&off) {
        a.put(flsu(load, sz, t, rn, off));
    } else {
        addr_add(a, rn, off);
        a.put(fls(load, sz, t, T_ADDR, 0));
    }
}

/// Branches to the side exit when guest register `r` is not word aligned (the interpreter
/// then raises the alignment fault VLDR/VSTR/VLDM/VSTM require), unless the block already
/// knows it is ([`Asm::aligned`], which the block layout keeps up to date across
/// instructions); from here on it knows.
pub(super) fn check_word(a: &mut Asm, r: u8, side: &mut Option<Label>) {
    if r < 15 && a.aligned & (1 << r) != 0 {
        return;
    }
    let l = *side.get_or_insert_with(|| a.label());
    a.tbnz_to(r, 0, l);
    a.tbnz_to(r, 1, l);
    if r < 15 {
        a.aligned |= 1 << r;
    }
}

/// VLDR/VSTR; VLDM/VSTM go to [`load_store_multiple`].
fn load_store(a: &mut Asm, w: u32, pc_read: u32, side: &mut Option<Label>) -> bool {
    let (p, u, wb, l) = (flag(w, 24), flag(w, 23), flag(w, 21), flag(w, 20));
    if !p || wb {
        return load_store_multiple(a, w, side);
    }
    let dp = flag(w, 8);
    let d = reg(dp, field(w, 15, 12), flag(w, 22));
    let rn = field(w, 19, 16) as u8;
    let imm = (field(w, 7, 0) * 4) as i32;
    let off = if u { imm } else { -imm };
    let sz = if dp { Sz::D } else { Sz::S };
    let (base, off) = if rn == 15 {
        mov32(a, T_ADDR, (pc_read & !3).wrapping_add(off as u32));
        (T_ADDR, 0)
    } else {
        check_word(a, rn, side);
        (rn, off)
    };
    if l {
        // The load is the instruction's only access: straight into a mapped register.
        let rd = dst(dp, d, 0);
        mem_at(a, true, sz, rd, base, off);
        commit(a, dp, d, rd);
    } else {
        let rs = src(a, dp, d, 0);
        mem_at(a, false, sz, rs, base, off);
    }
    true
}

/// Host temporary `k` of a multiple load: `v0`-`v7`, then `v16`-`v31` (caller-saved and
/// holding nothing across guest instructions).
pub(super) fn temp(k: u32) -> u8 {
    if k < 8 {
        k as u8
    } else {
        16 + (k - 8) as u8
    }
}

/// VLDM/VSTM (VPUSH/VPOP): increment after (with or without writeback) or decrement
/// before (with writeback), word-aligned base (side exit otherwise). Loads go to
/// temporaries first so that a fault changes no register; the base is written back after
/// the accesses.
fn load_store_multiple(a: &mut Asm, w: u32, side: &mut Option<Label>) -> bool {
    let (p, u, wb, l) = (flag(w, 24), flag(w, 23), flag(w, 21), flag(w, 20));
    if p == u || (p && !wb) {
        return false;
    }
    let dp = flag(w, 8);
    let first = reg(dp, field(w, 15, 12), flag(w, 22));
    let rn = field(w, 19, 16) as u8;
    let imm8 = field(w, 7, 0);
    let count = if dp { imm8 / 2 } else { imm8 };
    if rn == 15 || count == 0 || count > 16 || first + count > 32 || (dp && imm8 % 2 == 1) {
        return false;
    }
    check_word(a, rn, side);
    let bytes = imm8 * 4;
    let base = if p {
        a.put(enc::w_addsub_imm(AddSub::Sub, T_ADDR, rn, bytes, false));
        T_ADDR
    } else {
        rn
    };
    let unit = if dp { 8 } else { 4 };
    let pair = |load: bool, r1: u8, r2: u8, off: u32| {
        if dp {
            dlsp(load, r1, r2, base, off)
        } else {
            slsp(load, r1, r2, base, off)
        }
    };
    let sz = if dp { Sz::D } else { Sz::S };
    let mut k = 0;
    while k < count {
        let two = k + 1 < count;
        if l {
            if two {
                a.put(pair(true, temp(k), temp(k + 1), unit * k));
            } else {
                a.put(fls(true, sz, temp(k), base, unit * k));
            }
        } else {
            let r1 = src(a, dp, first + k, temp(k));
            if two {
                let r2 = src(a, dp, first + k + 1, temp(k + 1));
                a.put(pair(false, r1, r2, unit * k));
            } else {
                a.put(fls(false, sz, r1, base, unit * k));
            }
        }
        k += 1 + two as u32;
    }
    if l {
        for k in 0..count {
            commit(a, dp, first + k, temp(k));
        }
    }
    if wb {
        let op = if u { AddSub::Add } else { AddSub::Sub };
        a.put(enc::w_addsub_imm(op, rn, rn, bytes, false));
    }
    true
}

/// VMOV between core registers and S registers, D registers or D-register scalars.
fn transfer(a: &mut Asm, w: u32) -> bool {
    let rt = field(w, 15, 12) as u8;
    if rt == 15 {
        return false;
    }
    if field(w, 27, 21) == 0b110_0010 {
        let rt2 = field(w, 19, 16) as u8;
        if rt2 == 15 || field(w, 7, 6) != 0 || !flag(w, 4) {
            return false;
        }
        let dp = flag(w, 8);
        let m = reg(dp, field(w, 3, 0), flag(w, 5));
        if !dp && m == 31 {
            return false;
        }
        let to_core = flag(w, 20);
        if to_core && rt == rt2 {
            return false;
        }
        // S registers m and m+1, or D register m's halves.
        let (s0, s1) = if dp { (2 * m, 2 * m + 1) } else { (m, m + 1) };
        if host_d(s0 / 2).is_none() && host_d(s1 / 2).is_none() {
            // Two consecutive words in memory: one LDP/STP of the core registers (whose
            // offset reaches 252; past it, through the address in a scratch register).
            let off = off_s(s0);
            let (base, off) = if off <= 252 {
                (STATE, off as i32)
            } else {
                a.put(enc::x_addsub_imm(AddSub::Add, T_ADDR, STATE, off));
                (T_ADDR, 0)
            };
            if to_core {
                a.put(enc::w_ldp(rt, rt2, base, off));
            } else {
                a.put(enc::w_stp(rt, rt2, base, off));
            }
        } else if to_core {
            s_to_core(a, rt, s0);
            s_to_core(a, rt2, s1);
        } else {
            core_to_s(a, s0, rt);
            core_to_s(a, s1, rt2);
        }
        return true;
    }
    let l = flag(w, 20);
    if !flag(w, 8) {
        if field(w, 23, 21) != 0 || field(w, 6, 5) != 0 || field(w, 3, 0) != 0 {
            return false;
        }
        let sn = field(w, 19, 16) << 1 | flag(w, 7) as u32;
        if l {
            s_to_core(a, rt, sn);
        } else {
            core_to_s(a, sn, rt);
        }
        return true;
    }
    if field(w, 3, 0) != 0 || (!l && flag(w, 23)) {
        return false;
    }
    let dn = (flag(w, 7) as u32) << 4 | field(w, 19, 16);
    let opc = field(w, 22, 21) << 2 | field(w, 6, 5);
    let (bytes, index) = if opc & 0b1000 != 0 {
        (1, opc & 7)
    } else if opc & 1 != 0 {
        (2, opc >> 1 & 3)
    } else if opc & 0b11 == 0 {
        (4, opc >> 2 & 1)
    } else {
        return false;
    };
    let unsigned = flag(w, 23);
    if l && unsigned && bytes == 4 {
        return false;
    }
    if let Some(h) = host_d(dn) {
        if l {
            a.put(mov_w(rt, bytes, index, h, !unsigned && bytes < 4));
        } else {
            a.put(ins_w(h, bytes, index, rt));
        }
        return true;
    }
    let op = match (l, bytes, unsigned) {
        (false, 1, _) => Ls::Strb,
        (false, 2, _) => Ls::Strh,
        (false, _, _) => Ls::Str,
        (true, 1, true) => Ls::Ldrb,
        (true, 1, false) => Ls::Ldrsb,
        (true, 2, true) => Ls::Ldrh,
        (true, 2, false) => Ls::Ldrsh,
        _ => Ls::Ldr,
    };
    a.put(enc::ls_uimm(op, rt, STATE, off_d(dn) + bytes * index));
    true
}
