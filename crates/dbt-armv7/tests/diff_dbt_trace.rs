//! The translator's block shapes, three ways (`qemu-arm`, the interpreter, the
//! translator): superblocks that go on past conditional branches, loops unrolled into
//! copies that each leave the block when the back-edge is not taken, and one-instruction
//! register-offset accesses (`[xn, xm, LSL #2]`) whose host address passes 4 GiB where
//! the guest's wraps: the fault in the host's guard region makes the engine translate
//! that instruction again with 32-bit address arithmetic, once.

mod common;

use common::a32;
use common::harness::{build, random_regs, run_batch, scratch, Case};
use common::Rng;

/// `mov r4, #0; loop: add r4, r4, r0; subs r0, r0, #1; bne loop`: `r0` iterations, so
/// each count leaves the unrolled block from another copy.
fn counted_loop(rng: &mut Rng) -> Case {
    let mut regs = random_regs(rng, false);
    regs[0] = 1 + rng.below(13);
    let code = vec![
        0xe3a0_4000,
        0xe084_4000,
        0xe250_0001,
        a32::b(1, 8, 4), // bne loop (offsets from the case's start)
    ];
    let mut c = Case::new(false, code, regs);
    c.note = format!("loop of {}", regs[0]);
    c
}

/// A superblock: conditional forward branches and conditional instructions in one block,
/// with random flags and operands deciding which way each goes.
fn superblock(rng: &mut Rng) -> Case {
    let code = vec![
        0xe150_0001,        //  0: cmp   r0, r1
        a32::b(8, 4, 12),   //  4: bhi   12
        0xe282_2001,        //  8: add   r2, r2, #1
        0xe083_3002,        // 12: add   r3, r3, r2
        0xe153_0004,        // 16: cmp   r3, r4
        0x3285_5001,        // 20: addlo r5, r5, #1
        a32::b(0, 24, 32),  // 24: beq   32
        0xe026_6003,        // 28: eor   r6, r6, r3
        0xe357_0000,        // 32: cmp   r7, #0
        a32::b(11, 36, 44), // 36: blt   44
        0xe288_8007,        // 40: add   r8, r8, #7
        0xe1a0_9005,        // 44: mov   r9, r5
    ];
    Case::new(false, code, random_regs(rng, false))
}

/// A loop over `ldr r0, [r11, r2, LSL #2]` with `r2` negative: `r11 - 4 * |r2|` in the
/// guest, past 4 GiB in the host's 64-bit addressing.
fn wrapping_index(rng: &mut Rng) -> Case {
    let mut regs = random_regs(rng, false);
    regs[2] = 0u32.wrapping_sub(1 + rng.below(64));
    let code = vec![
        0xe3a0_5000,      //  0: mov  r5, #0
        0xe3a0_6008,      //  4: mov  r6, #8
        0xe79b_0102,      //  8: ldr  r0, [r11, r2, lsl #2]
        0xe085_5000,      // 12: add  r5, r5, r0
        0xe256_6001,      // 16: subs r6, r6, #1
        a32::b(1, 20, 8), // 20: bne  8
    ];
    let mut c = Case::new(false, code, regs);
    c.note = format!("index {:#x}", regs[2]);
    c
}

#[test]
fn superblocks_unrolled_loops_and_wrapping_indices_agree() {
    let mut rng = Rng(0x7ace_b10c);
    let src = scratch(&mut rng);
    let mut cases = Vec::new();
    for _ in 0..40 {
        cases.push(counted_loop(&mut rng));
        cases.push(superblock(&mut rng));
        cases.push(wrapping_index(&mut rng));
    }
    let mut stats = Vec::new();
    let fails = run_batch(&cases, &src, &mut stats, "trace");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn a_wrapping_access_is_translated_again_once() {
    let mut rng = Rng(0x3a9);
    let src = scratch(&mut rng);
    // The same code (at different addresses) many times: each copy faults once.
    let cases: Vec<Case> = (0..10).map(|_| wrapping_index(&mut rng)).collect();
    let img = build(&cases, &src);
    let dir = std::env::temp_dir().join(format!("dbt-armv7-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wrap.elf");
    std::fs::write(&path, &img.bytes).unwrap();
    let out = common::a64::run(&path, false);
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = common::a64::stats(&out.stderr);
    let get = |k: &str| stats.iter().find(|s| s.0 == k).map(|s| s.1).unwrap();
    // One host fault per case's load (then 32-bit arithmetic), not one per iteration.
    assert_eq!(get("faults"), cases.len() as u64, "{stats:?}");
}
