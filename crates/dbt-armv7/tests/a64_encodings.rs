//! The A64 encoder against an independent disassembler: every named encoding function of
//! `translate::a64::enc` is emitted into an ELF64 object and disassembled by the
//! toolchain's `llvm-objdump` (rustup component `llvm-tools`), and the text must match.
//! Also checks `logic_imm32` on every rotation of every run of ones (and rejects).

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
