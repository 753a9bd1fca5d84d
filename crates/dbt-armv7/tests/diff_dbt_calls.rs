//! Instructions that translated code runs through a call into the system model without
//! leaving the block (`translate::sys_call`): sensitive ones (`MRS`/`MSR` of the APSR,
//! `MCR`/`MRC` of TPIDRURW) and untranslated integer ones (saturating, parallel, `SEL`,
//! `SMLAxy`, `USAD8`), A32 and Thumb-2, conditional and inside IT blocks, mixed with
//! translated instructions that use their results and flags; three ways (`qemu-arm`, the
//! interpreter, the translator), from random registers and flags (NZCVQ, GE).

mod common;

use common::harness::{random_regs, run_batch, scratch, Case};
use common::Rng;

/// A32: each line one instruction.
const A32: [u32; 15] = [
    0xe102_0051, // qadd    r0, r1, r2
    0xe10f_3000, // mrs     r3, apsr
    0x0286_6001, // addeq   r6, r6, #1      (flags as the harness set them)
    0xe128_f004, // msr     APSR_nzcvq, r4
    0x0286_6001, // addeq   r6, r6, #1      (flags from r4)
    0xe6a7_5016, // ssat    r5, #8, r6
    0xe688_7fb9, // sel     r7, r8, r9      (GE from r4)
    0xe652_1f93, // uadd8   r1, r2, r3      (sets GE)
    0xee0d_1f50, // mcr     p15, 0, r1, c13, c0, 2
    0xee1d_2f50, // mrc     p15, 0, r2, c13, c0, 2
    0x1102_0051, // qaddne  r0, r1, r2
    0xe104_3281, // smlabb  r4, r1, r2, r3
    0xe622_8f73, // qsub16  r8, r2, r3
    0xe789_f411, // usad8   r9, r1, r4
    0xe10f_3000, // mrs     r3, apsr        (Q and GE after all of them)
];

/// Thumb-2: halfwords.
const T32: [u32; 21] = [
    0xbf08, // it      eq
    0xfa82, 0xf081, // qaddeq  r0, r1, r2
    0xf3ef, 0x8300, // mrs     r3, apsr
    0xf384, 0x8800, // msr     APSR_nzcvq, r4
    0xf306, 0x0507, // ssat    r5, #8, r6
    0xfaa0, 0xf781, // sel     r7, r0, r1
    0xee0d, 0x1f50, // mcr     p15, 0, r1, c13, c0, 2
    0xee1d, 0x2f50, // mrc     p15, 0, r2, c13, c0, 2
    0xbf14, // ite     ne
    0xfa82, 0xf143, // uadd8ne r1, r2, r3
    0x1c64, // addeq   r4, r4, #1
    0xf3ef, 0x8300, // mrs     r3, apsr
];

#[test]
fn called_instructions_agree_three_ways() {
    let mut rng = Rng(0xca11_5eed);
    let src = scratch(&mut rng);
    let mut cases = Vec::new();
    for _ in 0..60 {
        cases.push(Case::new(false, A32.to_vec(), random_regs(&mut rng, false)));
        cases.push(Case::new(true, T32.to_vec(), random_regs(&mut rng, true)));
    }
    let mut stats = Vec::new();
    let fails = run_batch(&cases, &src, &mut stats, "calls");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
