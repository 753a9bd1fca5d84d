//! The A64 encoder against an independent disassembler: every named encoding function of
//! `translate::a64::enc` is emitted into an ELF64 object and disassembled by the
//! toolchain's `llvm-objdump` (rustup component `llvm-tools`), and the text must match.
//! The FP and Advanced SIMD encoders (`enc_fp`) are checked the same way. Also checks
//! `logic_imm32` on every rotation of every run of ones (and rejects).

use dbt_armv7::translate::a64::enc::{self, AddSub, ExSize, Ext, Logic, Ls, Sh, ShiftV, Unary};
use std::path::PathBuf;
use std::process::Command;

fn objdump() -> PathBuf {
    let sysroot = String::from_utf8(
        Command::new("rustc")
            .args(["--print", "sysroot"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let p =
        PathBuf::from(sysroot.trim()).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-objdump");
    assert!(
        p.exists(),
        "llvm-objdump missing: rustup component add llvm-tools"
    );
    p
}

/// A minimal ELF64 relocatable for AArch64 with one `.text` section.
fn elf64(text: &[u8]) -> Vec<u8> {
    let shstr = b"\0.text\0.shstrtab\0";
    let text_off = 64u64;
    let str_off = text_off + text.len() as u64;
    let sh_off = (str_off + shstr.len() as u64 + 7) & !7;
    let mut e = Vec::new();
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    e.extend_from_slice(&1u16.to_le_bytes()); // ET_REL
    e.extend_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
    e.extend_from_slice(&1u32.to_le_bytes());
    e.extend_from_slice(&0u64.to_le_bytes()); // entry
    e.extend_from_slice(&0u64.to_le_bytes()); // phoff
    e.extend_from_slice(&sh_off.to_le_bytes());
    e.extend_from_slice(&0u32.to_le_bytes());
    for v in [64u16, 0, 0, 64, 3, 2] {
        e.extend_from_slice(&v.to_le_bytes());
    }
    e.extend_from_slice(text);
    e.extend_from_slice(shstr);
    e.resize(sh_off as usize, 0);
    let sh = |e: &mut Vec<u8>, name: u32, ty: u32, flags: u64, off: u64, size: u64| {
        e.extend_from_slice(&name.to_le_bytes());
        e.extend_from_slice(&ty.to_le_bytes());
        e.extend_from_slice(&flags.to_le_bytes());
        e.extend_from_slice(&0u64.to_le_bytes());
        e.extend_from_slice(&off.to_le_bytes());
        e.extend_from_slice(&size.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes());
        e.extend_from_slice(&4u64.to_le_bytes());
        e.extend_from_slice(&0u64.to_le_bytes());
    };
    sh(&mut e, 0, 0, 0, 0, 0);
    sh(&mut e, 1, 1, 6, text_off, text.len() as u64); // .text, PROGBITS, AX
    sh(&mut e, 7, 3, 0, str_off, shstr.len() as u64); // .shstrtab
    e
}

#[test]
fn encodings_match_llvm_objdump() {
    let cases: Vec<(u32, &str)> = vec![
        (
            enc::w_addsub_reg(AddSub::Add, 0, 1, 2, Sh::Lsl, 3),
            "add w0, w1, w2, lsl #3",
        ),
        (
            enc::w_addsub_reg(AddSub::Subs, 31, 4, 5, Sh::Asr, 31),
            "cmp w4, w5, asr #31",
        ),
        (
            enc::w_addsub_reg(AddSub::Adds, 6, 7, 8, Sh::Lsr, 1),
            "adds w6, w7, w8, lsr #1",
        ),
        (
            enc::w_addsub_imm(AddSub::Sub, 9, 10, 4095, false),
            "sub w9, w10, #0xfff",
        ),
        (
            enc::w_addsub_imm(AddSub::Adds, 31, 3, 1, true),
            "cmn w3, #0x1, lsl #12 // =0x1000",
        ),
        (
            enc::x_addsub_imm(AddSub::Sub, 27, 27, 12),
            "sub x27, x27, #0xc",
        ),
        (enc::w_adc(false, true, 1, 2, 3), "adcs w1, w2, w3"),
        (enc::w_adc(true, false, 1, 2, 3), "sbc w1, w2, w3"),
        (
            enc::w_logic_reg(Logic::Bic, 1, 2, 3, Sh::Ror, 7),
            "bic w1, w2, w3, ror #7",
        ),
        (
            enc::w_logic_reg(Logic::Orn, 1, 31, 3, Sh::Lsl, 0),
            "mvn w1, w3",
        ),
        (
            enc::w_logic_reg(Logic::Ands, 31, 20, 20, Sh::Lsl, 0),
            "tst w20, w20",
        ),
        (
            enc::w_logic_reg(Logic::Eor, 4, 5, 6, Sh::Asr, 2),
            "eor w4, w5, w6, asr #2",
        ),
        (enc::w_mov(16, 3), "mov w16, w3"),
        (enc::x_mov(28, 0), "mov x28, x0"),
        (
            enc::w_movz(16, 0x1234, 1),
            "mov w16, #0x12340000 // =305397760",
        ),
        (enc::w_movk(16, 0xabcd, 1), "movk w16, #0xabcd, lsl #16"),
        (enc::w_movn(3, 0, 0), "mov w3, #-0x1 // =-1"),
        (enc::x_movn(15, 0, 0), "mov x15, #-0x1 // =-1"),
        (enc::w_lsl_imm(1, 2, 5), "lsl w1, w2, #5"),
        (enc::w_lsr_imm(1, 2, 31), "lsr w1, w2, #31"),
        (enc::w_asr_imm(1, 2, 31), "asr w1, w2, #31"),
        (enc::w_extr(1, 2, 2, 9), "ror w1, w2, #0x9"),
        (enc::w_extr(17, 17, 3, 1), "extr w17, w17, w3, #0x1"),
        (enc::x_ubfx(19, 3, 31, 1), "ubfx x19, x3, #31, #1"),
        (enc::x_bfxil(16, 15, 0, 30), "bfxil x16, x15, #0, #30"),
        (enc::x_bfi(16, 19, 29, 1), "bfi x16, x19, #29, #1"),
        (enc::w_cset(17, 2), "cset w17, hs"),
        (enc::w_madd(false, 1, 2, 3, 31), "mul w1, w2, w3"),
        (enc::w_madd(true, 1, 2, 3, 4), "msub w1, w2, w3, w4"),
        (enc::w_div(true, 1, 2, 3), "sdiv w1, w2, w3"),
        (enc::w_div(false, 1, 2, 3), "udiv w1, w2, w3"),
        (enc::w_unary(Unary::Clz, 1, 2), "clz w1, w2"),
        (enc::w_unary(Unary::Rbit, 1, 2), "rbit w1, w2"),
        (enc::w_unary(Unary::Rev16, 1, 2), "rev16 w1, w2"),
        (enc::w_unary(Unary::Rev, 1, 2), "rev w1, w2"),
        (enc::ls_uimm(Ls::Ldr, 1, 16, 0), "ldr w1, [x16]"),
        (enc::ls_uimm(Ls::Ldrsh, 1, 2, 6), "ldrsh w1, [x2, #0x6]"),
        (enc::ls_uimm(Ls::Strb, 1, 2, 4095), "strb w1, [x2, #0xfff]"),
        (enc::ls_uimm(Ls::StrX, 15, 28, 80), "str x15, [x28, #0x50]"),
        (enc::ls_uimm(Ls::LdrX, 27, 28, 72), "ldr x27, [x28, #0x48]"),
        (enc::ls_uimm(Ls::Ldrsb, 1, 2, 0), "ldrsb w1, [x2]"),
        (
            enc::ls_unscaled(Ls::Ldrh, 1, 2, -2),
            "ldurh w1, [x2, #-0x2]",
        ),
        (enc::ls_reg(Ls::Str, 1, 2, 3), "str w1, [x2, x3]"),
        (enc::ls_unpriv(Ls::Ldr, 1, 2, 4), "ldtr w1, [x2, #0x4]"),
        (enc::ls_unpriv(Ls::Strb, 1, 2, -3), "sttrb w1, [x2, #-0x3]"),
        (enc::ls_unpriv(Ls::Ldrsh, 1, 2, 0), "ldtrsh w1, [x2]"),
        (
            enc::ls_reg_lsl(Ls::Ldr, 1, 2, 3, true),
            "ldr w1, [x2, x3, lsl #2]",
        ),
        (
            enc::ls_reg_lsl(Ls::Ldrh, 1, 2, 3, true),
            "ldrh w1, [x2, x3, lsl #1]",
        ),
        (
            enc::ls_reg_lsl(Ls::Strb, 1, 2, 3, false),
            "strb w1, [x2, x3]",
        ),
        (enc::x_sub_reg(26, 26, 24), "sub x26, x26, x24"),
        (
            enc::x_logic_imm(Logic::And, 26, 26, true, 51, 62),
            "and x26, x26, #0xffffffffffffefff",
        ),
        (
            enc::x_stp_pre(14, 23, 26, 16),
            "stp x14, x23, [x26, #0x10]!",
        ),
        (enc::w_stp(4, 5, 13, -16), "stp w4, w5, [x13, #-0x10]"),
        (enc::w_stp_pre(4, 5, 13, -16), "stp w4, w5, [x13, #-0x10]!"),
        (enc::ls_pre(Ls::Ldr, 1, 2, -256), "ldr w1, [x2, #-0x100]!"),
        (enc::w_shiftv(ShiftV::Lsl, 1, 2, 3), "lsl w1, w2, w3"),
        (enc::w_shiftv(ShiftV::Ror, 1, 2, 3), "ror w1, w2, w3"),
        (enc::x_shiftv(ShiftV::Lsr, 1, 2, 3), "lsr x1, x2, x3"),
        (enc::x_shiftv(ShiftV::Asr, 1, 2, 3), "asr x1, x2, x3"),
        (enc::x_lsl_imm(1, 2, 1), "lsl x1, x2, #1"),
        (enc::x_sxtw(1, 2), "sxtw x1, w2"),
        (enc::w_csel(1, 2, 3, 3), "csel w1, w2, w3, lo"),
        (enc::x_maddl(false, 1, 2, 3, 31), "umull x1, w2, w3"),
        (enc::x_maddl(true, 1, 2, 3, 4), "smaddl x1, w2, w3, x4"),
        (enc::x_add_reg(1, 2, 3), "add x1, x2, x3"),
        (enc::x_ands_reg(31, 2, 2), "tst x2, x2"),
        (enc::w_add_ext(1, 2, 3, Ext::Sxth), "add w1, w2, w3, sxth"),
        (enc::w_add_ext(1, 2, 3, Ext::Uxtb), "add w1, w2, w3, uxtb"),
        (enc::ldxr(ExSize::W, 1, 2), "ldxr w1, [x2]"),
        (enc::ldxr(ExSize::B, 1, 2), "ldxrb w1, [x2]"),
        (enc::ldxr(ExSize::H, 1, 2), "ldxrh w1, [x2]"),
        (enc::stxr(ExSize::W, 3, 1, 2), "stxr w3, w1, [x2]"),
        (enc::stxr(ExSize::B, 3, 1, 2), "stxrb w3, w1, [x2]"),
        (enc::w_ldxp(1, 2, 3), "ldxp w1, w2, [x3]"),
        (enc::w_stxp(4, 1, 2, 3), "stxp w4, w1, w2, [x3]"),
        (enc::CLREX, "clrex"),
        (enc::x_add_lsl(22, 25, 22, 4), "add x22, x25, x22, lsl #4"),
        (enc::x_eor_reg(23, 23, 16), "eor x23, x23, x16"),
        (enc::ls_pre(Ls::Strb, 1, 2, 255), "strb w1, [x2, #0xff]!"),
        (
            enc::x_stp_pre(29, 30, 31, -96),
            "stp x29, x30, [sp, #-0x60]!",
        ),
        (enc::x_ldp_post(29, 30, 31, 96), "ldp x29, x30, [sp], #0x60"),
        (enc::x_stp(19, 20, 31, 16), "stp x19, x20, [sp, #0x10]"),
        (enc::w_ldp(0, 1, 28, 0), "ldp w0, w1, [x28]"),
        (enc::w_stp(12, 13, 28, 48), "stp w12, w13, [x28, #0x30]"),
        (enc::mrs_nzcv(15), "mrs x15, NZCV"),
        (enc::msr_nzcv(16), "msr NZCV, x16"),
        (enc::msr_daif(17), "msr DAIF, x17"),
        (enc::MSR_DAIFSET_IF, "msr DAIFSet, #0x3"),
        (enc::br(16), "br x16"),
        (enc::RET, "ret"),
        (enc::DMB_ISH, "dmb ish"),
        (enc::DSB_ISH, "dsb ish"),
        (enc::ISB, "isb"),
        (enc::NOP, "nop"),
    ];
    // Logical immediates, checked through the disassembler's decoding of the value.
    let mut all = cases.clone();
    let imm_cases = [
        0x0000_00ffu32,
        0x0078_0000,
        0x8000_0001,
        0x5555_5555,
        0x00ff_00ff,
        0xfffe_ffff,
    ];
    let imm_text: Vec<String> = imm_cases
        .iter()
        .map(|&v| format!("and w1, w2, #{v:#x}"))
        .collect();
    for &v in &imm_cases {
        let (r, s) = enc::logic_imm32(v).expect("encodable");
        all.push((enc::w_logic_imm(Logic::And, 1, 2, r, s), ""));
    }
    let text: Vec<u8> = all.iter().flat_map(|(w, _)| w.to_le_bytes()).collect();
    let dir = std::env::temp_dir().join(format!("dbt-a64-enc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("enc.o");
    std::fs::write(&obj, elf64(&text)).unwrap();
    let out = Command::new(objdump())
        .args(["-d", "--no-show-raw-insn"])
        .arg(&obj)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let s = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = s
        .lines()
        .filter_map(|l| {
            let (addr, t) = l.trim_start().split_once(':')?;
            u64::from_str_radix(addr, 16).ok()?;
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            (!t.is_empty()).then_some(t)
        })
        .collect();
    assert_eq!(lines.len(), all.len(), "{s}");
    let mut bad = Vec::new();
    for (k, (w, want)) in all.iter().enumerate() {
        let want = if k < cases.len() {
            want.to_string()
        } else {
            imm_text[k - cases.len()].clone()
        };
        if lines[k] != want {
            bad.push(format!(
                "{w:08x}: llvm-objdump says `{}`, expected `{want}`",
                lines[k]
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn logic_imm32_covers_every_bitmask() {
    let mut n = 0;
    for size in [2u32, 4, 8, 16, 32] {
        for ones in 1..size {
            for rot in 0..size {
                let emask = if size == 32 {
                    u32::MAX
                } else {
                    (1 << size) - 1
                };
                let run = (1u32 << ones) - 1;
                let elt = ((run >> rot) | (run << ((size - rot) % size))) & emask;
                let mut v = 0u32;
                for k in 0..32 / size {
                    v |= elt << (k * size);
                }
                let (immr, imms) = enc::logic_imm32(v).unwrap_or_else(|| panic!("{v:#x}"));
                // Decode (DecodeBitMasks, 32-bit: the element size is the highest clear
                // bit of imms<5:0> below 32) and compare.
                let size_d = {
                    let mut s = 32;
                    while s > 2 && imms as u32 & (s) != 0 {
                        s /= 2;
                    }
                    s
                };
                let d_ones = (imms as u32 & (size_d - 1)) + 1;
                let d_run = if d_ones == 32 {
                    u32::MAX
                } else {
                    (1u32 << d_ones) - 1
                };
                let de = if size_d == 32 {
                    u32::MAX
                } else {
                    (1 << size_d) - 1
                };
                let r = immr as u32 % size_d;
                let d_elt = ((d_run >> r) | (d_run << ((size_d - r) % size_d))) & de;
                let mut d = 0u32;
                for k in 0..32 / size_d {
                    d |= d_elt << (k * size_d);
                }
                assert_eq!(
                    d, v,
                    "size {size} ones {ones} rot {rot}: immr {immr} imms {imms:#x}"
                );
                n += 1;
            }
        }
    }
    assert!(n > 1000);
    for v in [0u32, u32::MAX, 0x1234_5678, 0x8000_0005, 0x0000_0101] {
        assert!(enc::logic_imm32(v).is_none(), "{v:#x}");
    }
}

/// `llvm-objdump`'s text of each word, whitespace collapsed.
fn disassemble(words: &[u32]) -> Vec<String> {
    let text: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let dir = std::env::temp_dir().join(format!("dbt-a64-fp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("enc.o");
    std::fs::write(&obj, elf64(&text)).unwrap();
    let out = Command::new(objdump())
        .args(["-d", "--no-show-raw-insn"])
        .arg(&obj)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let s = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = s
        .lines()
        .filter_map(|l| {
            let (addr, t) = l.trim_start().split_once(':')?;
            u64::from_str_radix(addr, 16).ok()?;
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            (!t.is_empty()).then_some(t)
        })
        .collect();
    assert_eq!(lines.len(), words.len(), "{s}");
    lines
}

/// The FP and Advanced SIMD encoders (`enc_fp`) the VFP/NEON lowerings use, one or more
/// forms each, against the disassembler.
#[test]
fn fp_simd_encodings_match_llvm_objdump() {
    use dbt_armv7::translate::a64::enc_fp::*;
    let cases: Vec<(u32, &str)> = vec![
        (fls(true, Sz::S, 1, 28, 8), "ldr s1, [x28, #0x8]"),
        (fls(false, Sz::D, 9, 28, 384), "str d9, [x28, #0x180]"),
        (fls(true, Sz::Q, 2, 28, 256), "ldr q2, [x28, #0x100]"),
        (flsu(false, Sz::Q, 3, 9, -16), "stur q3, [x9, #-0x10]"),
        (flsu(true, Sz::D, 0, 4, 255), "ldur d0, [x4, #0xff]"),
        (fp2(2, false, 0, 1, 2), "fadd s0, s1, s2"),
        (fp2(8, true, 8, 9, 10), "fnmul d8, d9, d10"),
        (fp2(1, true, 3, 4, 5), "fdiv d3, d4, d5"),
        (fp3(false, true, true, 8, 1, 2, 4), "fmsub d8, d1, d2, d4"),
        (fp3(true, false, false, 0, 1, 2, 3), "fnmadd s0, s1, s2, s3"),
        (fp1(3, true, 1, 2), "fsqrt d1, d2"),
        (fp1(4, true, 0, 9), "fcvt s0, d9"),
        (fmov_d(8, 0), "fmov d8, d0"),
        (dup_s1(1, 9), "mov s1, v9.s[1]"),
        (dup_d1(9, 0), "mov d9, v0.d[1]"),
        (ins_s(8, 1, 0), "mov v8.s[1], v0.s[0]"),
        (ins_elem(3, 2, 5, 7, 1), "mov v3.h[5], v7.h[1]"),
        (ins_w(10, 1, 7, 3), "mov v10.b[7], w3"),
        (mov_w(4, 2, 3, 9, true), "smov w4, v9.h[3]"),
        (mov_w(4, 4, 1, 9, false), "mov w4, v9.s[1]"),
        (dlsp(true, 8, 9, 28, 128), "ldp d8, d9, [x28, #0x80]"),
        (slsp(false, 0, 1, 11, 8), "stp s0, s1, [x11, #0x8]"),
        (mrs_fpcr(16), "mrs x16, FPCR"),
        (msr_fpcr(17), "msr FPCR, x17"),
        (mrs_fpsr(16), "mrs x16, FPSR"),
        (msr_fpsr(31), "msr FPSR, xzr"),
        (
            simd3(false, false, 0, 1, 0, 1, 2),
            "sqadd v0.8b, v1.8b, v2.8b",
        ),
        (simd3(true, true, 2, 8, 0, 2, 1), "ushl v0.4s, v2.4s, v1.4s"),
        (
            simd3(true, false, 3, 16, 0, 1, 2),
            "add v0.2d, v1.2d, v2.2d",
        ),
        (
            simd3(false, true, 1, 3, 8, 9, 10),
            "bsl v8.8b, v9.8b, v10.8b",
        ),
        (
            simd3(false, true, 0, 19, 0, 1, 2),
            "pmul v0.8b, v1.8b, v2.8b",
        ),
        (
            simd3(false, false, 1, 22, 0, 1, 2),
            "sqdmulh v0.4h, v1.4h, v2.4h",
        ),
        (
            simd3(false, false, 2, 23, 0, 1, 2),
            "addp v0.2s, v1.2s, v2.2s",
        ),
        (
            simd3(true, false, 0, 25, 0, 1, 2),
            "fmla v0.4s, v1.4s, v2.4s",
        ),
        (
            simd3(false, true, 2, 26, 0, 1, 2),
            "fabd v0.2s, v1.2s, v2.2s",
        ),
        (
            simd3(true, true, 0, 27, 3, 1, 2),
            "fmul v3.4s, v1.4s, v2.4s",
        ),
        (
            simd3(false, true, 2, 29, 0, 1, 2),
            "facgt v0.2s, v1.2s, v2.2s",
        ),
        (
            simd3(false, true, 0, 30, 0, 1, 2),
            "fmaxp v0.2s, v1.2s, v2.2s",
        ),
        (simd3_scalar(false, 3, 1, 0, 1, 2), "sqadd d0, d1, d2"),
        (simd3_scalar(true, 3, 10, 0, 1, 2), "urshl d0, d1, d2"),
        (simd2(false, false, 0, 0, 0, 1), "rev64 v0.8b, v1.8b"),
        (simd2(true, true, 1, 0, 0, 1), "rev32 v0.8h, v1.8h"),
        (simd2(false, false, 0, 5, 0, 1), "cnt v0.8b, v1.8b"),
        (simd2(true, true, 0, 5, 0, 1), "mvn v0.16b, v1.16b"),
        (simd2(false, true, 2, 6, 0, 1), "uadalp v0.1d, v1.2s"),
        (simd2(true, false, 2, 10, 0, 1), "cmlt v0.4s, v1.4s, #0"),
        (simd2(false, true, 2, 12, 0, 1), "fcmge v0.2s, v1.2s, #0.0"),
        (simd2(true, true, 2, 15, 0, 1), "fneg v0.4s, v1.4s"),
        (simd2(false, true, 0, 18, 0, 2), "sqxtun v0.8b, v2.8h"),
        (simd2(false, true, 2, 20, 0, 2), "uqxtn v0.2s, v2.2d"),
        (simd2(false, true, 0, 19, 0, 2), "shll v0.8h, v2.8b, #8"),
        (simd2(true, true, 0, 29, 0, 1), "ucvtf v0.4s, v1.4s"),
        (simd2(false, false, 2, 27, 0, 1), "fcvtzs v0.2s, v1.2s"),
        (
            simd_shift(false, false, 0x0b, 0, 0, 1),
            "sshr v0.8b, v1.8b, #0x5",
        ),
        (
            simd_shift(true, true, 0x21, 2, 0, 1),
            "usra v0.4s, v1.4s, #0x1f",
        ),
        (
            simd_shift(false, true, 0x13, 10, 0, 1),
            "sli v0.4h, v1.4h, #0x3",
        ),
        (
            simd_shift(false, true, 0x0f, 12, 0, 1),
            "sqshlu v0.8b, v1.8b, #0x7",
        ),
        (
            simd_shift(false, false, 0x20, 17, 0, 2),
            "rshrn v0.2s, v2.2d, #0x20",
        ),
        (
            simd_shift(false, true, 0x10, 19, 0, 2),
            "uqrshrn v0.4h, v2.4s, #0x10",
        ),
        (
            simd_shift(false, false, 0x0a, 20, 0, 2),
            "sshll v0.8h, v2.8b, #0x2",
        ),
        (simd_shift_scalar(true, 0x41, 0, 0, 1), "ushr d0, d1, #0x3f"),
        (
            simd_shift_scalar(false, 0x7f, 10, 0, 1),
            "shl d0, d1, #0x3f",
        ),
        (
            simd3_diff(false, true, 0, 0, 0, 1, 2),
            "uaddl v0.8h, v1.8b, v2.8b",
        ),
        (
            simd3_diff(false, false, 2, 3, 0, 1, 2),
            "ssubw v0.2d, v1.2d, v2.2s",
        ),
        (
            simd3_diff(false, true, 1, 4, 0, 1, 2),
            "raddhn v0.4h, v1.4s, v2.4s",
        ),
        (
            simd3_diff(false, false, 1, 9, 0, 1, 2),
            "sqdmlal v0.4s, v1.4h, v2.4h",
        ),
        (
            simd3_diff(false, false, 0, 14, 0, 1, 2),
            "pmull v0.8h, v1.8b, v2.8b",
        ),
        (
            simd_elem(false, true, 1, 0, 0, 1, 3, 3),
            "mla v0.4h, v1.4h, v3.h[3]",
        ),
        (
            simd_elem(true, false, 2, 9, 4, 1, 15, 1),
            "fmul v4.4s, v1.4s, v15.s[1]",
        ),
        (
            simd_elem(false, true, 2, 10, 0, 1, 8, 1),
            "umull v0.2d, v1.2s, v8.s[1]",
        ),
        (
            simd_elem(false, false, 1, 13, 0, 1, 9, 2),
            "sqrdmulh v0.4h, v1.4h, v9.h[2]",
        ),
        (ext(true, 0, 1, 2, 15), "ext v0.16b, v1.16b, v2.16b, #0xf"),
        (ext(false, 8, 9, 10, 3), "ext v8.8b, v9.8b, v10.8b, #0x3"),
        (
            tbl(false, 2, 0, 4, 3),
            "tbl v0.8b, { v4.16b, v5.16b }, v3.8b",
        ),
        (tbl(true, 1, 8, 4, 2), "tbx v8.8b, { v4.16b }, v2.8b"),
        (dup_elem(true, 0, 2, 4, 1), "dup v0.4s, v2.s[1]"),
        (dup_elem(false, 8, 9, 1, 7), "dup v8.8b, v9.b[7]"),
        (permute(true, 0, 6, 3, 0, 1), "trn2 v3.16b, v0.16b, v1.16b"),
        (permute(false, 1, 1, 2, 0, 1), "uzp1 v2.4h, v0.4h, v1.4h"),
        (zip1_2d(0, 8, 9), "zip1 v0.2d, v8.2d, v9.2d"),
        (movi_b(false, 3, 24), "movi v3.8b, #0x18"),
        (
            ldst_multi(true, false, 8, 1, 0, 9),
            "ld2 { v0.4h, v1.4h }, [x9]",
        ),
        (
            ldst_multi(false, true, 8, 0, 0, 9),
            "st2 { v0.16b, v1.16b }, [x9]",
        ),
        (
            ldst_multi(true, false, 0, 2, 0, 9),
            "ld4 { v0.2s, v1.2s, v2.2s, v3.2s }, [x9]",
        ),
        (
            ldst_multi(false, false, 4, 0, 0, 9),
            "st3 { v0.8b, v1.8b, v2.8b }, [x9]",
        ),
        (ldst_lane(true, 1, 1, 7, 0, 9), "ld1 { v0.b }[7], [x9]"),
        (
            ldst_lane(false, 2, 2, 3, 0, 9),
            "st2 { v0.h, v1.h }[3], [x9]",
        ),
        (
            ldst_lane(true, 3, 4, 1, 0, 9),
            "ld3 { v0.s, v1.s, v2.s }[1], [x9]",
        ),
        (
            ldst_lane(false, 4, 1, 5, 0, 9),
            "st4 { v0.b, v1.b, v2.b, v3.b }[5], [x9]",
        ),
        (ld_rep(1, false, 2, 0, 9), "ld1r { v0.2s }, [x9]"),
        (
            ld_rep(4, false, 1, 0, 9),
            "ld4r { v0.4h, v1.4h, v2.4h, v3.4h }, [x9]",
        ),
        (fmov_imm(true, 8, 0x70), "fmov d8, #1.00000000"),
        (fmov_imm(false, 0, 0x00), "fmov s0, #2.00000000"),
        (fcmp(true, true, false, 1, 2), "fcmpe d1, d2"),
        (fcmp(false, false, true, 1, 0), "fcmp s1, #0.0"),
        (fmov_w_s(16, 1), "fmov w16, s1"),
        (cvtf_d_w(true, 8, 16), "scvtf d8, w16"),
        (cvtf_d_w(false, 0, 16), "ucvtf d0, w16"),
        (cvtf_s_s(true, 0, 1), "scvtf s0, s1"),
        (cvtf_s_s(false, 0, 1), "ucvtf s0, s1"),
        (fcvtz_w_d(true, 16, 9), "fcvtzs w16, d9"),
        (fcvtz_w_d(false, 16, 9), "fcvtzu w16, d9"),
        (fcvtz_s_s(true, 0, 1), "fcvtzs s0, s1"),
        (fcvtz_s_s(false, 0, 1), "fcvtzu s0, s1"),
        (simd_modimm(false, 0b1110, 0xab, 8), "movi v8.8b, #0xab"),
        (
            simd_modimm(true, 0b0010, 0x12, 0),
            "mvni v0.2s, #0x12, lsl #8",
        ),
        (
            simd_modimm(false, 0b1111, 0x70, 3),
            "fmov v3.2s, #1.00000000",
        ),
        (simd_modimm(true, 0b1001, 0x01, 9), "bic v9.4h, #0x1"),
        (fcvtz_fixed(false, true, 16, 1, 16), "fcvtzs w16, s1, #0x10"),
        (fcvtz_fixed(true, false, 16, 9, 32), "fcvtzu w16, d9, #0x20"),
        (cvtf_fixed(false, true, 0, 16, 1), "scvtf s0, w16, #0x1"),
        (cvtf_fixed(true, false, 8, 16, 7), "ucvtf d8, w16, #0x7"),
    ];
    let words: Vec<u32> = cases.iter().map(|(w, _)| *w).collect();
    let lines = disassemble(&words);
    let bad: Vec<String> = cases
        .iter()
        .zip(&lines)
        .filter(|((_, want), got)| got.as_str() != *want)
        .map(|((w, want), got)| format!("{w:08x}: want `{want}`, objdump `{got}`"))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
