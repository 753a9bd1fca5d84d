//! `SCTLR.A` in translated code, and big-endian data. A PL1 program sets `SCTLR.A` and
//! loops over word and halfword loads at every byte offset: run by the translator (which
//! translates with alignment checks once `SCTLR.A` is set) and by the interpreter alone,
//! `a64-runner --skip-aborts` prints the exact state at every alignment fault (PC, r0-r14,
//! CPSR, FSR/FAR) and goes on after the instruction; every line and the result must be
//! equal. `SETEND BE` data accesses (user mode) run in the interpreter fallback and agree
//! with `qemu-arm` three ways.

mod common;

use common::harness::{random_regs, run_batch, scratch, Case};
use common::Rng;

/// The PL1 program (at 0x11000; the ELF header takes the page before).
const ALIGN_A32: [u32; 24] = [
    0xee11_0f10, //  0: mrc  p15, 0, r0, c1, c0, 0
    0xe380_0002, //  4: orr  r0, r0, #2          SCTLR.A
    0xee01_0f10, //  8: mcr  p15, 0, r0, c1, c0, 0
    0xf57f_f06f, // 12: isb
    0xe3a0_4000, // 16: mov  r4, #0
    0xe3a0_5000, // 20: mov  r5, #0
    0xe59f_1030, // 24: ldr  r1, [pc, #48]      r1 = the data (80)
    0xe205_6007, // 28: loop: and r6, r5, #7
    0xe791_2006, // 32: ldr  r2, [r1, r6]       misaligned 6 times in 8
    0xe191_30b6, // 36: ldrh r3, [r1, r6]       misaligned 4 times in 8
    0xe084_4002, // 40: add  r4, r4, r2
    0xe084_4003, // 44: add  r4, r4, r3
    0xe285_5001, // 48: add  r5, r5, #1
    0xe355_0c01, // 52: cmp  r5, #256
    0xbaff_fff7, // 56: blt  loop
    0xe1a0_0004, // 60: mov  r0, r4             exit(r4)
    0xe3a0_7001, // 64: mov  r7, #1
    0xef00_0000, // 68: svc  #0
    0,           // 72
    0,           // 76
    0x0001_1060, // 80: the data's address
    0,           // 84
    0,           // 88
    0,           // 92
];

#[test]
fn alignment_faults_under_sctlr_a_are_exact() {
    let mut img = vec![0u8; 0x1000];
    img.extend(ALIGN_A32.iter().flat_map(|w| w.to_le_bytes()));
    img.extend((0..16u8).map(|b| b.wrapping_mul(37) ^ 0x5a));
    let elf = common::elf32(0x10000, 0x11000, &img);
    let i = common::a64::run_image(
        &elf,
        "align",
        &["--interp", "--privileged", "--skip-aborts"],
    );
    let t = common::a64::run_image(&elf, "align", &["--privileged", "--skip-aborts"]);
    let aborts = |o: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.contains("DataAbort"))
            .map(str::to_string)
            .collect()
    };
    let (ia, ta) = (aborts(&i), aborts(&t));
    assert_eq!(
        ia.len(),
        256 / 8 * 10,
        "{}",
        String::from_utf8_lossy(&i.stderr)
    );
    assert_eq!(ia, ta);
    assert_eq!(i.status.code(), t.status.code());
    let st = common::a64::stats(&t.stderr);
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap();
    // The loop ran translated (each fault is one instruction in the interpreter).
    assert!(get("translated") > 1000, "{st:?}");
}

/// `SETEND BE` around loads and stores of every size (user mode): the translator leaves
/// translated code while `CPSR.E` is set.
const SETEND_A32: [u32; 9] = [
    0xf101_0200, // setend be
    0xe59b_2000, // ldr   r2, [r11]
    0xe1db_30b2, // ldrh  r3, [r11, #2]
    0xe58b_4004, // str   r4, [r11, #4]
    0xe1cb_50b8, // strh  r5, [r11, #8]
    0xe1db_60f6, // ldrsh r6, [r11, #6]
    0xf101_0000, // setend le
    0xe59b_7004, // ldr   r7, [r11, #4]
    0xe082_8003, // add   r8, r2, r3
];

#[test]
fn big_endian_data_falls_back_and_agrees() {
    let mut rng = Rng(0xbe_e4d1);
    let src = scratch(&mut rng);
    let cases: Vec<Case> = (0..40)
        .map(|_| Case::new(false, SETEND_A32.to_vec(), random_regs(&mut rng, false)))
        .collect();
    let mut stats = Vec::new();
    let fails = run_batch(&cases, &src, &mut stats, "setend");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
