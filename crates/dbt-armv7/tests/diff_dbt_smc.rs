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

/// The loop of [`SMC_A32`] at PL1, with the instruction-cache maintenance a guest does
/// after writing code (`maint`: an `MCR p15` of c7, then `DSB`, `ISB`), ending with the
/// sum in the exit status; run through the translator without the runner's page
/// protection, so only the maintenance can tell it that the code changed.
fn maintained(maint: u32) -> Vec<u8> {
    let code: [u32; 18] = [
        0xe3a0_4000, //  0: mov  r4, #0
        0xe3a0_5000, //  4: mov  r5, #0
        0xe28f_6018, //  8: add  r6, pc, #24      r6 = 40 (the patched instruction)
        0xe300_7000, // 12: movw r7, #0
        0xe34e_73a0, // 16: movt r7, #0xe3a0      r7 = MOV r0, #0
        0xe187_8005, // 20: loop: orr r8, r7, r5  MOV r0, #i
        0xe586_8000, // 24: str  r8, [r6]
        maint,       // 28: the maintenance operation
        0xf57f_f04f, // 32: dsb  sy
        0xf57f_f06f, // 36: isb  sy
        0xe3a0_0000, // 40: mov  r0, #0           (rewritten)
        0xe084_4000, // 44: add  r4, r4, r0
        0xe285_5001, // 48: add  r5, r5, #1
        0xe355_0064, // 52: cmp  r5, #100
        0xbaff_fff5, // 56: blt  loop
        0xe1a0_0004, // 60: mov  r0, r4          exit(sum)
        0xe3a0_7001, // 64: mov  r7, #1
        0xef00_0000, // 68: svc  #0
    ];
    // The ELF header takes the first page; the code is on the next one.
    let mut img = vec![0u8; 0x1000];
    img.extend(code.iter().flat_map(|w| w.to_le_bytes()));
    common::elf32(0x10000, 0x11000, &img)
}

#[test]
fn instruction_cache_maintenance_drops_stale_translations() {
    let sum = 4950 % 256;
    for (name, maint) in [
        ("icimvau", 0xee07_6f35), // mcr p15, 0, r6, c7, c5, 1: the line of the new code
        ("iciallu", 0xee07_0f15), // mcr p15, 0, r0, c7, c5, 0: all of it
    ] {
        let elf = maintained(maint);
        let (i, _) = common::a64::run_image_status(&elf, name, &["--interp", "--privileged"]);
        assert_eq!(i, sum, "{name}: interpreter");
        let (t, st) = common::a64::run_image_status(&elf, name, &["--privileged", "--no-protect"]);
        assert_eq!(t, sum, "{name}: translator {st:?}");
        let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap();
        assert!(get("code_invalidations") >= 100, "{name}: {st:?}");
    }
    // Without the maintenance (a NOP instead), the translator keeps running the code it
    // translated first, as a core with a stale instruction cache may: the test above
    // sees the maintenance working, not the runner's page protection.
    let (t, _) = common::a64::run_image_status(
        &maintained(0xe320_f000),
        "nop",
        &["--privileged", "--no-protect"],
    );
    assert_ne!(t, sum, "without maintenance");
}
