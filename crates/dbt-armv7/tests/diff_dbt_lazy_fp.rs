//! Lazy VFP switching with the kernel's trap, as Linux does it: a User-mode loop calls a
//! function holding a `VADD` indirectly (`BLX r6`) once with the FP unit on and once after
//! a "context switch" (`UDF #0`, whose handler clears `FPEXC.EN`), then runs a `VADD`
//! that traps again. The UNDEFINED handler enables the unit and retries the instruction
//! (`SUBS pc, lr, #4`), counting the traps. Every call with the unit off must trap: 100
//! iterations give 200 traps in the interpreter and in the translator. The translator's
//! indirect-branch target cache and return stack jump straight into host code, so they
//! must not hand a block translated with the unit on to code running with it off (they
//! once did: 100 traps, and Linux's busybox ran with another thread's VFP registers).

mod common;

/// Vectors and the handler at 0x10800 (`VBAR`; the image's first bytes hold the ELF
/// header), the function `f` at 0x10834.
const KERNEL: [u32; 16] = [
    0xeaff_fffe, // 0x00: b .                 reset (unused)
    0xeaff_ffff, // 0x04: b und               undefined instruction
    0xe51e_b004, // 0x08: und: ldr r11, [lr, #-4]
    0xe59f_c028, // 0x0c: ldr r12, =0xe7f000f0 (UDF #0)
    0xe15b_000c, // 0x10: cmp r11, r12
    0x0a00_0003, // 0x14: beq disable
    0xe3a0_9101, // 0x18: mov r9, #0x40000000  FPEXC.EN
    0xeee8_9a10, // 0x1c: vmsr fpexc, r9
    0xe28a_a001, // 0x20: add r10, r10, #1     traps
    0xe25e_f004, // 0x24: subs pc, lr, #4      retry
    0xe3a0_9000, // 0x28: disable: mov r9, #0
    0xeee8_9a10, // 0x2c: vmsr fpexc, r9
    0xe1b0_f00e, // 0x30: movs pc, lr          after the UDF
    0xee30_0b01, // 0x34: f: vadd.f64 d0, d0, d1
    0xe12f_ff1e, // 0x38: bx lr
    0xe7f0_00f0, // 0x3c: the literal
];

/// At 0x11000, entered in SVC mode.
const MAIN: [u32; 26] = [
    0xe3a0_260f, // mov r2, #0x00f00000   CPACR cp10/cp11 full access
    0xee01_2f50, // mcr p15, 0, r2, c1, c0, 2
    0xe3a0_2b42, // mov r2, #0x10800
    0xee0c_2f10, // mcr p15, 0, r2, c12, c0, 0   VBAR
    0xf57f_f06f, // isb
    0xe3a0_9101, // mov r9, #0x40000000
    0xeee8_9a10, // vmsr fpexc, r9        unit on
    0xeeb7_1b00, // vmov.f64 d1, #1.0
    0xee30_0b40, // vsub.f64 d0, d0, d0
    0xee32_2b42, // vsub.f64 d2, d2, d2
    0xe3a0_a000, // mov r10, #0
    0xe3a0_4000, // mov r4, #0
    0xe3a0_6b42, // mov r6, #0x10800
    0xe286_6034, // add r6, r6, #0x34     f
    0xf102_0010, // cps #0x10             User mode
    0xe12f_ff36, // loop: blx r6          unit on
    0xe7f0_00f0, // udf #0                context switch: unit off
    0xe12f_ff36, // blx r6                unit off: traps
    0xe7f0_00f0, // udf #0
    0xee32_2b01, // vadd.f64 d2, d2, d1   traps
    0xe284_4001, // add r4, r4, #1
    0xe354_0064, // cmp r4, #100
    0xbaff_fff7, // blt loop
    0xe1a0_000a, // mov r0, r10
    0xe3a0_7001, // mov r7, #1
    0xef00_0000, // svc #0                exit(traps)
];

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x800];
    img.extend(KERNEL.iter().flat_map(|w| w.to_le_bytes()));
    img.resize(0x1000, 0);
    img.extend(MAIN.iter().flat_map(|w| w.to_le_bytes()));
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "lazy-fp", opts)
}

#[test]
fn every_call_with_the_unit_off_traps() {
    let (i, _) = run(&["--interp", "--privileged", "--vectors"]);
    assert_eq!(i, 200, "interpreter: lazy-FP traps");
    let (t, st) = run(&["--privileged", "--vectors"]);
    assert_eq!(t, 200, "translator: lazy-FP traps {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap();
    assert!(get("translated") > 500, "the loop ran translated: {st:?}");
}
