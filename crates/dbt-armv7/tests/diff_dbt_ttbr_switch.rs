//! Address-space switches in translated code (`translate::sys_call`'s fast path for
//! `MCR` to `TTBR0`, `TTBR1`, `DACR` and `CONTEXTIDR`, which skips the decoder and the
//! interpreter): a PL1 loop writes `TTBR0`/`TTBR1` alternately with two tables' addresses,
//! `CONTEXTIDR` with the iteration number and, under a condition that fails every other
//! iteration, `DACR`; it reads each back with `MRC` and sums what it read. The sum must be
//! the one the architecture gives (10051), in the interpreter and in the translator, and
//! the loop must run translated (its `MCR`s are calls from translated code, not
//! interpreted blocks).

mod common;

/// At 0x11000 (A32, SVC mode, MMU off); exits with 1 if the sum is 10051.
const LOOP: [u32; 29] = [
    0xe3a0_4000, // 0x00: mov r4, #0                  sum
    0xe3a0_5000, // 0x04: mov r5, #0                  i
    0xe304_6000, // 0x08: movw r6, #0x4000            table A
    0xe308_7000, // 0x0c: movw r7, #0x8000            table B
    0xe215_9001, // 0x10: loop: ands r9, r5, #1
    0x01a0_8006, // 0x14: moveq r8, r6                even i: A
    0x11a0_8007, // 0x18: movne r8, r7                odd i: B
    0xee02_8f10, // 0x1c: mcr p15, 0, r8, c2, c0, 0   TTBR0
    0xee0d_5f30, // 0x20: mcr p15, 0, r5, c13, c0, 1  CONTEXTIDR = i
    0x1e03_5f10, // 0x24: mcrne p15, 0, r5, c3, c0, 0 DACR = i (odd i only)
    0xee02_8f30, // 0x28: mcr p15, 0, r8, c2, c0, 1   TTBR1
    0xee12_af10, // 0x2c: mrc p15, 0, r10, c2, c0, 0
    0xe084_472a, // 0x30: add r4, r4, r10, lsr #14    A: 1, B: 2
    0xee1d_af30, // 0x34: mrc p15, 0, r10, c13, c0, 1
    0xe084_400a, // 0x38: add r4, r4, r10             i
    0xee13_af10, // 0x3c: mrc p15, 0, r10, c3, c0, 0
    0xe084_400a, // 0x40: add r4, r4, r10             the last odd i (0 at first)
    0xee12_af30, // 0x44: mrc p15, 0, r10, c2, c0, 1
    0xe084_47aa, // 0x48: add r4, r4, r10, lsr #15    A: 0, B: 1
    0xe285_5001, // 0x4c: add r5, r5, #1
    0xe355_0064, // 0x50: cmp r5, #100
    0xbaff_ffed, // 0x54: blt loop
    0xe302_9743, // 0x58: movw r9, #10051
    0xe154_0009, // 0x5c: cmp r4, r9
    0x03a0_0001, // 0x60: moveq r0, #1
    0x13a0_0000, // 0x64: movne r0, #0
    0xe3a0_7001, // 0x68: mov r7, #1
    0xef00_0000, // 0x6c: svc #0                      exit(sum == 10051)
    0xe320_f000, // 0x70: nop
];

/// The same loop in Thumb-2 (assembled with `llvm-mc -triple=armv7a -mattr=+thumb2`),
/// entered by an A32 `BLX` at 0x11000 (0xfaff_ffff: to 0x11004): the `MCRNE` to `DACR` is in an IT block (the
/// interpreter runs it), the others are not (the fast path).
const LOOP_T32: [u8; 96] = [
    0xff, 0xff, 0xff, 0xfa, 0x00, 0x24, 0x00, 0x25, 0x44, 0xf2, 0x00, 0x06, 0x48, 0xf2, 0x00, 0x07,
    0x15, 0xf0, 0x01, 0x09, 0x0c, 0xbf, 0xb0, 0x46, 0xb8, 0x46, 0x02, 0xee, 0x10, 0x8f, 0x0d, 0xee,
    0x30, 0x5f, 0x18, 0xbf, 0x03, 0xee, 0x10, 0x5f, 0x02, 0xee, 0x30, 0x8f, 0x12, 0xee, 0x10, 0xaf,
    0x04, 0xeb, 0x9a, 0x34, 0x1d, 0xee, 0x30, 0xaf, 0x54, 0x44, 0x13, 0xee, 0x10, 0xaf, 0x54, 0x44,
    0x12, 0xee, 0x30, 0xaf, 0x04, 0xeb, 0xda, 0x34, 0x6d, 0x1c, 0x64, 0x2d, 0xe0, 0xdb, 0x42, 0xf2,
    0x43, 0x79, 0x4c, 0x45, 0x0c, 0xbf, 0x01, 0x20, 0x00, 0x20, 0x01, 0x27, 0x00, 0xdf, 0x00, 0xbf,
];

/// The 64-bit (LPAE) forms: `MCRR` to `TTBR0` (opc1 0) and `TTBR1` (opc1 1) with
/// `i << 4` and `i * 0x01010101` as the two words, read back with `MRRC` (the high word
/// keeps bits 23:16 and 7:0 only); exits with 1 if the sum of the words read is
/// 0x7cc0_df6c.
const LOOP_LPAE: [u32; 24] = [
    0xe3a0_4000, // 0x00: mov r4, #0                  sum
    0xe3a0_5000, // 0x04: mov r5, #0                  i
    0xe300_7101, // 0x08: movw r7, #0x0101
    0xe340_7101, // 0x0c: movt r7, #0x0101
    0xe006_0795, // 0x10: loop: mul r6, r5, r7
    0xe1a0_8205, // 0x14: lsl r8, r5, #4
    0xec46_8f02, // 0x18: mcrr p15, 0, r8, r6, c2     TTBR0 = r6:r8
    0xec48_6f12, // 0x1c: mcrr p15, 1, r6, r8, c2     TTBR1 = r8:r6
    0xec5b_af02, // 0x20: mrrc p15, 0, r10, r11, c2
    0xe084_400a, // 0x24: add r4, r4, r10
    0xe084_400b, // 0x28: add r4, r4, r11
    0xec5b_af12, // 0x2c: mrrc p15, 1, r10, r11, c2
    0xe084_400a, // 0x30: add r4, r4, r10
    0xe084_400b, // 0x34: add r4, r4, r11
    0xe285_5001, // 0x38: add r5, r5, #1
    0xe355_0064, // 0x3c: cmp r5, #100
    0xbaff_fff2, // 0x40: blt loop
    0xe30d_9f6c, // 0x44: movw r9, #0xdf6c
    0xe347_9cc0, // 0x48: movt r9, #0x7cc0
    0xe154_0009, // 0x4c: cmp r4, r9
    0x03a0_0001, // 0x50: moveq r0, #1
    0x13a0_0000, // 0x54: movne r0, #0
    0xe3a0_7001, // 0x58: mov r7, #1
    0xef00_0000, // 0x5c: svc #0                      exit(sum == 0x7cc0_df6c)
];

fn run(code: &[u8], opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend_from_slice(code);
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "ttbr-switch", opts)
}

fn check(code: &[u8]) {
    let (i, _) = run(code, &["--privileged", "--interp"]);
    assert_eq!(i, 1, "interpreter: sum 10051");
    let (t, st) = run(code, &["--privileged"]);
    assert_eq!(t, 1, "translator: sum 10051 {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    // 100 iterations of 18 or 20 instructions, the loop's blocks end at each switch.
    assert!(get("translated") > 1000, "the loop ran translated: {st:?}");
}

#[test]
fn translation_register_writes_agree_with_the_interpreter() {
    let a32: Vec<u8> = LOOP.iter().flat_map(|w| w.to_le_bytes()).collect();
    check(&a32);
}

#[test]
fn thumb_translation_register_writes_agree_with_the_interpreter() {
    check(&LOOP_T32);
}

#[test]
fn lpae_translation_register_writes_agree_with_the_interpreter() {
    let code: Vec<u8> = LOOP_LPAE.iter().flat_map(|w| w.to_le_bytes()).collect();
    check(&code);
}
