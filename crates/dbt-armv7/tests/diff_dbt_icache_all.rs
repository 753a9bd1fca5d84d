//! `ICIALLU` (invalidate the whole instruction cache) after code changed behind the
//! translator's back. A PL1 loop rewrites the first instruction of a function
//! (`MOV r0, #i`), invalidates the instruction cache, calls the function and sums what it
//! returns. With `--no-protect` the runner does not write-protect translated pages, so
//! the store goes unseen, as a device's DMA into guest memory does under the hypervisor:
//! only the invalidation tells the translator. The translator does not drop every
//! translation on `ICIALLU` (Linux issues one whenever it maps a user page executable);
//! it checks each translation's encodings before it runs again and translates again only
//! what changed: the sum must be 0 + 1 + ... + 99 = 4950 as in the interpreter, and when
//! the function is rewritten with the same instruction every time, the loop's blocks are
//! translated once.

mod common;

/// At 0x11000 (A32, SVC mode); exits with 1 if the sum is 4950.
const LOOP: [u32; 22] = [
    0xe3a0_4000, // 0x00: mov r4, #0          sum
    0xe3a0_5000, // 0x04: mov r5, #0          i
    0xe28f_6040, // 0x08: adr r6, f
    0xe59f_7038, // 0x0c: ldr r7, tmpl        mov r0, #0
    0xe187_8005, // 0x10: loop: orr r8, r7, r5
    0xe586_8000, // 0x14: str r8, [r6]        f: mov r0, #i (unseen)
    0xee07_0f15, // 0x18: mcr p15, 0, r0, c7, c5, 0   ICIALLU
    0xf57f_f06f, // 0x1c: isb
    0xe12f_ff36, // 0x20: blx r6
    0xe084_4000, // 0x24: add r4, r4, r0
    0xe285_5001, // 0x28: add r5, r5, #1
    0xe355_0064, // 0x2c: cmp r5, #100
    0xbaff_fff6, // 0x30: blt loop
    0xe301_9356, // 0x34: movw r9, #4950
    0xe154_0009, // 0x38: cmp r4, r9
    0x03a0_0001, // 0x3c: moveq r0, #1
    0x13a0_0000, // 0x40: movne r0, #0
    0xe3a0_7001, // 0x44: mov r7, #1
    0xef00_0000, // 0x48: svc #0              exit(sum == 4950)
    0xe3a0_0000, // 0x4c: tmpl: mov r0, #0
    0xe3a0_0000, // 0x50: f: mov r0, #i
    0xe12f_ff1e, // 0x54: bx lr
];

/// `orr r8, r7, r5` replaced by `mov r8, r7`: the function is rewritten with the same
/// `mov r0, #0` every time (the exit status is then 0: the sum is 0).
const SAME: u32 = 0xe1a0_8007;

fn run(code: &[u32], opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend(code.iter().flat_map(|w| w.to_le_bytes()));
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "icache-all", opts)
}

#[test]
fn code_changed_behind_the_translator_runs_after_iciallu() {
    let opts = ["--privileged", "--no-protect"];
    let (i, _) = run(&LOOP, &[&["--interp"][..], &opts].concat());
    assert_eq!(i, 1, "interpreter: sum 4950");
    let (t, st) = run(&LOOP, &opts);
    assert_eq!(t, 1, "translator: sum 4950 {st:?}");
}

#[test]
fn unchanged_code_is_not_translated_again_after_iciallu() {
    let mut code = LOOP;
    code[4] = SAME;
    let opts = ["--privileged", "--no-protect"];
    let (t, st) = run(&code, &opts);
    assert_eq!(t, 0, "translator: sum 0 {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    // main, the loop, f, the call's continuation, the end: a handful, not 100 of each.
    assert!(get("blocks") < 20, "blocks translated once: {st:?}");
    assert!(get("translated") > 500, "the loop ran translated: {st:?}");
}
