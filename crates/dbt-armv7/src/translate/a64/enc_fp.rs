//! Encoders of the A64 floating-point and Advanced SIMD instructions the VFP/NEON
//! lowerings emit (register numbers are `v0`-`v31` / `x0`-`x30`). Each returns one
//! instruction word; `tests/a64_encodings.rs` checks them against `llvm-objdump`.

/// Sizes of FP/SIMD scalar loads and stores.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sz {
    /// 32 bits (`St`).
    S = 2,
    /// 64 bits (`Dt`).
    D = 3,
    /// 128 bits (`Qt`).
    Q = 4,
}

/// `LDR/STR St|Dt|Qt, [Xn, #off]` (unsigned scaled offset).
pub fn fls(load: bool, sz: Sz, rt: u8, rn: u8, off: u32) -> u32 {
    let s = sz as u32;
    debug_assert!(off.is_multiple_of(1 << s) && off >> s < 4096);
    let (size, opc) = match sz {
        Sz::Q => (0, if load { 3 } else { 2 }),
        _ => (s, load as u32),
    };
    0x3d00_0000 | size << 30 | opc << 22 | (off >> s) << 10 | (rn as u32) << 5 | rt as u32
}

/// `LDUR/STUR St|Dt|Qt, [Xn, #simm9]`.
pub fn flsu(load: bool, sz: Sz, rt: u8, rn: u8, off: i32) -> u32 {
    debug_assert!((-256..256).contains(&off));
    let (size, opc) = match sz {
        Sz::Q => (0, if load { 3 } else { 2 }),
        s => (s as u32, load as u32),
    };
    0x3c00_0000
        | size << 30
        | opc << 22
        | ((off as u32) & 0x1ff) << 12
        | (rn as u32) << 5
        | rt as u32
}

/// Two-source FP data processing (`FMUL` 0, `FDIV` 1, `FADD` 2, `FSUB` 3, `FNMUL` 8).
pub fn fp2(op: u32, dp: bool, rd: u8, rn: u8, rm: u8) -> u32 {
    0x1e20_0800 | (dp as u32) << 22 | (rm as u32) << 16 | op << 12 | (rn as u32) << 5 | rd as u32
}

/// Three-source FP (`FMADD` o1=0 o0=0, `FMSUB` 0 1, `FNMADD` 1 0, `FNMSUB` 1 1).
#[allow(clippy::too_many_arguments)]
pub fn fp3(o1: bool, o0: bool, dp: bool, rd: u8, rn: u8, rm: u8, ra: u8) -> u32 {
    0x1f00_0000
        | (dp as u32) << 22
        | (o1 as u32) << 21
        | (rm as u32) << 16
        | (o0 as u32) << 15
        | (ra as u32) << 10
        | (rn as u32) << 5
        | rd as u32
}

/// One-source FP (`FMOV` 0, `FABS` 1, `FNEG` 2, `FSQRT` 3, `FCVT` to single 4, to
/// double 5).
pub fn fp1(op: u32, dp: bool, rd: u8, rn: u8) -> u32 {
    0x1e20_4000 | (dp as u32) << 22 | op << 15 | (rn as u32) << 5 | rd as u32
}

/// `FMOV Dd, Dn`.
pub fn fmov_d(rd: u8, rn: u8) -> u32 {
    fp1(0, true, rd, rn)
}

/// `DUP Sd, Vn.S[1]`.
pub fn dup_s1(rd: u8, rn: u8) -> u32 {
    0x5e0c_0400 | (rn as u32) << 5 | rd as u32
}

/// `DUP Dd, Vn.D[1]` (the upper half of a vector as a scalar).
pub fn dup_d1(rd: u8, rn: u8) -> u32 {
    0x5e18_0400 | (rn as u32) << 5 | rd as u32
}

/// `INS Vd.S[i], Vn.S[0]`.
pub fn ins_s(rd: u8, i: u32, rn: u8) -> u32 {
    ins_elem(rd, 4, i, rn, 0)
}

/// `INS Vd.<T>[di], Vn.<T>[si]` for elements of `bytes` bytes.
pub fn ins_elem(rd: u8, bytes: u32, di: u32, rn: u8, si: u32) -> u32 {
    let sh = bytes.trailing_zeros();
    0x6e00_0400 | imm5(bytes, di) << 16 | (si << sh) << 11 | (rn as u32) << 5 | rd as u32
}

/// `INS Vd.<T>[i], Wn` for elements of `bytes` bytes.
pub fn ins_w(rd: u8, bytes: u32, i: u32, rn: u8) -> u32 {
    0x4e00_1c00 | imm5(bytes, i) << 16 | (rn as u32) << 5 | rd as u32
}

/// `UMOV Wd, Vn.<T>[i]` (`SMOV` with `signed`).
pub fn mov_w(rd: u8, bytes: u32, i: u32, rn: u8, signed: bool) -> u32 {
    let op = if signed { 0x0e00_2c00 } else { 0x0e00_3c00 };
    op | imm5(bytes, i) << 16 | (rn as u32) << 5 | rd as u32
}

/// The `imm5` of element `i` of `bytes` bytes.
pub fn imm5(bytes: u32, i: u32) -> u32 {
    let sh = bytes.trailing_zeros();
    (i << 1 | 1) << sh
}

/// `LDP/STP Dt1, Dt2, [Xn, #off]`.
pub fn dlsp(load: bool, rt: u8, rt2: u8, rn: u8, off: u32) -> u32 {
    debug_assert!(off.is_multiple_of(8) && off / 8 < 64);
    0x6d00_0000
        | (load as u32) << 22
        | (off / 8) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `LDP/STP St1, St2, [Xn, #off]`.
pub fn slsp(load: bool, rt: u8, rt2: u8, rn: u8, off: u32) -> u32 {
    debug_assert!(off.is_multiple_of(4) && off / 4 < 64);
    0x2d00_0000
        | (load as u32) << 22
        | (off / 4) << 15
        | (rt2 as u32) << 10
        | (rn as u32) << 5
        | rt as u32
}

/// `MRS Xt, FPCR`.
pub fn mrs_fpcr(rt: u8) -> u32 {
    0xd53b_4400 | rt as u32
}
/// `MSR FPCR, Xt`.
pub fn msr_fpcr(rt: u8) -> u32 {
    0xd51b_4400 | rt as u32
}
/// `MRS Xt, FPSR`.
pub fn mrs_fpsr(rt: u8) -> u32 {
    0xd53b_4420 | rt as u32
}
/// `MSR FPSR, Xt`.
pub fn msr_fpsr(rt: u8) -> u32 {
    0xd51b_4420 | rt as u32
}

fn rdn(rd: u8, rn: u8) -> u32 {
    (rn as u32) << 5 | rd as u32
}

/// Advanced SIMD three registers of the same type (`0 Q U 01110 size 1 Rm opcode 1 Rn
/// Rd`): `SHADD` .. `ADDP` (opcodes 0-23), the single-precision ones with `size` = `a:0`.
#[allow(clippy::too_many_arguments)]
pub fn simd3(q: bool, u: bool, size: u32, opcode: u32, rd: u8, rn: u8, rm: u8) -> u32 {
    0x0e20_0400
        | (q as u32) << 30
        | (u as u32) << 29
        | size << 22
        | (rm as u32) << 16
        | opcode << 11
        | rdn(rd, rn)
}

/// Advanced SIMD scalar three same (64-bit elements of `Dn`/`Dm`): `SQADD`, `SSHL`,
/// `ADD`, ...
pub fn simd3_scalar(u: bool, size: u32, opcode: u32, rd: u8, rn: u8, rm: u8) -> u32 {
    0x5e20_0400 | (u as u32) << 29 | size << 22 | (rm as u32) << 16 | opcode << 11 | rdn(rd, rn)
}

/// Advanced SIMD two-register miscellaneous (`0 Q U 01110 size 10000 opcode 10 Rn Rd`).
pub fn simd2(q: bool, u: bool, size: u32, opcode: u32, rd: u8, rn: u8) -> u32 {
    0x0e20_0800 | (q as u32) << 30 | (u as u32) << 29 | size << 22 | opcode << 12 | rdn(rd, rn)
}

/// Advanced SIMD shift by immediate (`0 Q U 011110 immh:immb opcode 1 Rn Rd`).
pub fn simd_shift(q: bool, u: bool, immhb: u32, opcode: u32, rd: u8, rn: u8) -> u32 {
    0x0f00_0400 | (q as u32) << 30 | (u as u32) << 29 | immhb << 16 | opcode << 11 | rdn(rd, rn)
}

/// Advanced SIMD scalar shift by immediate (64-bit elements: `immh` = `1xxx`).
pub fn simd_shift_scalar(u: bool, immhb: u32, opcode: u32, rd: u8, rn: u8) -> u32 {
    0x5f00_0400 | (u as u32) << 29 | immhb << 16 | opcode << 11 | rdn(rd, rn)
}

/// Advanced SIMD three different (`0 Q U 01110 size 1 Rm opcode 00 Rn Rd`): `SADDL` ..
/// `PMULL` (opcodes 0-14).
#[allow(clippy::too_many_arguments)]
pub fn simd3_diff(q: bool, u: bool, size: u32, opcode: u32, rd: u8, rn: u8, rm: u8) -> u32 {
    0x0e20_0000
        | (q as u32) << 30
        | (u as u32) << 29
        | size << 22
        | (rm as u32) << 16
        | opcode << 12
        | rdn(rd, rn)
}

/// Advanced SIMD vector x indexed element (`0 Q U 01111 size L M Rm opcode H 0 Rn Rd`),
/// 16-bit (`size` 1, `Vm` in v0-v15, index 0-7) or 32-bit (`size` 2, index 0-3)
/// elements.
#[allow(clippy::too_many_arguments)]
pub fn simd_elem(
    q: bool,
    u: bool,
    size: u32,
    opcode: u32,
    rd: u8,
    rn: u8,
    rm: u8,
    index: u32,
) -> u32 {
    let (h, l, m) = if size == 1 {
        debug_assert!(rm < 16 && index < 8);
        (index >> 2 & 1, index >> 1 & 1, index & 1)
    } else {
        debug_assert!(index < 4);
        (index >> 1 & 1, index & 1, rm as u32 >> 4)
    };
    0x0f00_0000
        | (q as u32) << 30
        | (u as u32) << 29
        | size << 22
        | l << 21
        | m << 20
        | (rm as u32 & 15) << 16
        | opcode << 12
        | h << 11
        | rdn(rd, rn)
}

/// `EXT Vd, Vn, Vm, #imm4` (bytes of `Vm:Vn` from byte `imm4` on).
pub fn ext(q: bool, rd: u8, rn: u8, rm: u8, imm4: u32) -> u32 {
    0x2e00_0000 | (q as u32) << 30 | (rm as u32) << 16 | imm4 << 11 | rdn(rd, rn)
}

/// `TBL/TBX Vd.8B, {Vn.16B .. (len registers)}, Vm.8B`.
pub fn tbl(tbx: bool, len: u32, rd: u8, rn: u8, rm: u8) -> u32 {
    debug_assert!((1..=4).contains(&len));
    0x0e00_0000 | (rm as u32) << 16 | (len - 1) << 13 | (tbx as u32) << 12 | rdn(rd, rn)
}

/// `DUP Vd.<T>, Vn.<Ts>[index]` for elements of `bytes` bytes.
pub fn dup_elem(q: bool, rd: u8, rn: u8, bytes: u32, index: u32) -> u32 {
    0x0e00_0400 | (q as u32) << 30 | imm5(bytes, index) << 16 | rdn(rd, rn)
}

/// Advanced SIMD permute (`UZP1` 1, `TRN1` 2, `ZIP1` 3, `UZP2` 5, `TRN2` 6, `ZIP2` 7).
pub fn permute(q: bool, size: u32, opc: u32, rd: u8, rn: u8, rm: u8) -> u32 {
    0x0e00_0800 | (q as u32) << 30 | size << 22 | (rm as u32) << 16 | opc << 12 | rdn(rd, rn)
}

/// `ZIP1 Vd.2D, Vn.2D, Vm.2D`: `Vd` = `Vn.D[0]`, `Vm.D[0]`.
pub fn zip1_2d(rd: u8, rn: u8, rm: u8) -> u32 {
    permute(true, 3, 3, rd, rn, rm)
}

/// `MOVI Vd.16B, #imm8` (or `.8B` without `q`).
pub fn movi_b(q: bool, rd: u8, imm8: u32) -> u32 {
    0x0f00_e400 | (q as u32) << 30 | (imm8 >> 5) << 16 | (imm8 & 31) << 5 | rd as u32
}

/// Advanced SIMD load/store multiple structures without offset (`LD1`-`LD4`/`ST1`-`ST4`;
/// `opcode` 0 `LD4`, 2 `LD1` x4, 4 `LD3`, 6 `LD1` x3, 7 `LD1` x1, 8 `LD2`, 10 `LD1` x2).
pub fn ldst_multi(load: bool, q: bool, opcode: u32, size: u32, rt: u8, rn: u8) -> u32 {
    0x0c00_0000 | (q as u32) << 30 | (load as u32) << 22 | opcode << 12 | size << 10 | rdn(rt, rn)
}

/// Advanced SIMD load/store of one `count`-element structure (1-4) to/from lane `index`
/// of `count` consecutive registers, elements of `bytes` bytes (`LD1 {Vt.B}[i], [Xn]`
/// ..); `index` counts lanes of the whole 128-bit register.
pub fn ldst_lane(load: bool, count: u32, bytes: u32, index: u32, rt: u8, rn: u8) -> u32 {
    let r = (count == 2 || count == 4) as u32;
    let o0 = (count >= 3) as u32;
    let (opcode, qss) = match bytes {
        1 => (o0, index),
        2 => (0b010 | o0, index << 1),
        4 => (0b100 | o0, index << 2),
        _ => (0b100 | o0, index << 3 | 1),
    };
    0x0d00_0000
        | (qss >> 3) << 30
        | (load as u32) << 22
        | r << 21
        | opcode << 13
        | (qss >> 2 & 1) << 12
        | (qss & 3) << 10
        | rdn(rt, rn)
}

/// `LD1R`-`LD4R {Vt.<T> ..}, [Xn]`: one `count`-element structure to all lanes.
pub fn ld_rep(count: u32, q: bool, size: u32, rt: u8, rn: u8) -> u32 {
    let r = (count == 2 || count == 4) as u32;
    let o0 = (count >= 3) as u32;
    0x0d40_0000 | (q as u32) << 30 | r << 21 | (0b110 | o0) << 13 | size << 10 | rdn(rt, rn)
}

/// `FMOV Sd|Dd, #imm` (`imm8` expanded as VFPExpandImm).
pub fn fmov_imm(dp: bool, rd: u8, imm8: u32) -> u32 {
    0x1e20_1000 | (dp as u32) << 22 | imm8 << 13 | rd as u32
}

/// `FCMP`/`FCMPE` (`signalling`) `Sn|Dn, Sm|Dm` or with `#0.0` (`zero`).
pub fn fcmp(dp: bool, signalling: bool, zero: bool, rn: u8, rm: u8) -> u32 {
    0x1e20_2000
        | (dp as u32) << 22
        | (rm as u32) << 16
        | (rn as u32) << 5
        | (signalling as u32) << 4
        | (zero as u32) << 3
}

/// `FMOV Wd, Sn`.
pub fn fmov_w_s(rd: u8, rn: u8) -> u32 {
    0x1e26_0000 | rdn(rd, rn)
}

/// `SCVTF`/`UCVTF Dd, Wn` (32-bit integer to double, FPCR rounding).
pub fn cvtf_d_w(signed: bool, rd: u8, rn: u8) -> u32 {
    (if signed { 0x1e62_0000 } else { 0x1e63_0000 }) | rdn(rd, rn)
}

/// `SCVTF`/`UCVTF Sd, Sn` (32-bit integer in an S register to single).
pub fn cvtf_s_s(signed: bool, rd: u8, rn: u8) -> u32 {
    (if signed { 0x5e21_d800 } else { 0x7e21_d800 }) | rdn(rd, rn)
}

/// `FCVTZS`/`FCVTZU Wd, Dn` (double to 32-bit integer, rounding towards zero).
pub fn fcvtz_w_d(signed: bool, rd: u8, rn: u8) -> u32 {
    (if signed { 0x1e78_0000 } else { 0x1e79_0000 }) | rdn(rd, rn)
}

/// `FCVTZS`/`FCVTZU Sd, Sn` (single to a 32-bit integer in an S register).
pub fn fcvtz_s_s(signed: bool, rd: u8, rn: u8) -> u32 {
    (if signed { 0x5ea1_b800 } else { 0x7ea1_b800 }) | rdn(rd, rn)
}

/// Advanced SIMD modified immediate (`MOVI`/`MVNI`/`ORR`/`BIC`/`FMOV` vector, 64-bit
/// `Vd`): `op`, `cmode` and `imm8` as A32's `VMOV`/`VMVN`/`VORR`/`VBIC` (immediate).
pub fn simd_modimm(op: bool, cmode: u32, imm8: u32, rd: u8) -> u32 {
    0x0f00_0400
        | (op as u32) << 29
        | (imm8 >> 5) << 16
        | cmode << 12
        | (imm8 & 0x1f) << 5
        | rd as u32
}

/// `FCVTZS`/`FCVTZU Wd, Sn|Dn, #fbits` (scalar to 32-bit fixed point, towards zero).
pub fn fcvtz_fixed(dp: bool, signed: bool, rd: u8, rn: u8, fbits: u32) -> u32 {
    debug_assert!((1..=32).contains(&fbits));
    let op = if signed { 0x1e18_0000 } else { 0x1e19_0000 };
    op | (dp as u32) << 22 | (64 - fbits) << 10 | rdn(rd, rn)
}

/// `SCVTF`/`UCVTF Sd|Dd, Wn, #fbits` (32-bit fixed point to floating point, FPCR
/// rounding).
pub fn cvtf_fixed(dp: bool, signed: bool, rd: u8, rn: u8, fbits: u32) -> u32 {
    debug_assert!((1..=32).contains(&fbits));
    let op = if signed { 0x1e02_0000 } else { 0x1e03_0000 };
    op | (dp as u32) << 22 | (64 - fbits) << 10 | rdn(rd, rn)
}
