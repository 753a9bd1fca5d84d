//! Self-modifying code: a loop that rewrites an instruction of its own block on every
//! iteration (`MOV r0, #i`, summed into r4; an `ISB` between the store and the new
//! instruction, as the architecture requires, and QEMU too), in A32, run three ways (`qemu-arm`, the
//! interpreter, the translator). The translator write-protects the guest pages it
//! translated from (`CodeMemory::protect_guest_page`; `a64-runner` with `mprotect`), so
//! the store faults, the engine drops the page's translations and the interpreter
//! performs the store; the sum must be 0 + 1 + ... + 99 = 4950 in all three.

mod common;

use common::harness::{random_regs, run_batch, scratch, Case};
use common::Rng;

/// The loop (offsets in bytes from the case's start).
const SMC_A32: [u32; 13] = [
    0xe3a0_4000, //  0: mov  r4, #0
    0xe3a0_5000, //  4: mov  r5, #0
    0xe28f_6010, //  8: add  r6, pc, #16      r6 = 32 (the patched instruction)
    0xe300_7000, // 12: movw r7, #0
    0xe34e_73a0, // 16: movt r7, #0xe3a0      r7 = MOV r0, #0
    0xe187_8005, // 20: loop: orr r8, r7, r5  MOV r0, #i
    0xe586_8000, // 24: str  r8, [r6]
    0xf57f_f06f, // 28: isb                   (architecturally required before the new code)
    0xe3a0_0000, // 32: mov  r0, #0           (rewritten)
    0xe084_4000, // 36: add  r4, r4, r0
    0xe285_5001, // 40: add  r5, r5, #1
    0xe355_0064, // 44: cmp  r5, #100
    0xbaff_fff7, // 48: blt  loop
];

#[test]
fn self_modifying_code_is_seen() {
    let mut rng = Rng(0x5e1f_c0de);
    let src = scratch(&mut rng);
    let cases: Vec<Case> = (0..4)
        .map(|_| Case::new(false, SMC_A32.to_vec(), random_regs(&mut rng, false)))
        .collect();
    let mut stats = Vec::new();
    let fails = run_batch(&cases, &src, &mut stats, "smc");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
