//! `BLX` immediate, the call that changes the instruction set, stays in the code cache:
//! Thumb code calls an A32 function with `BLX imm`, which runs a sensitive instruction
//! (`MRS`, handed to the system model by `step_from_code`, which must decode it as A32
//! although the guest core's `CPSR.T` still says Thumb when the call was a target-cache
//! hit), calls a Thumb function with `BLX imm` and returns with `POP {.., pc}`. Translator
//! and interpreter must compute the same sum, and the calls and returns must not go
//! through the dispatcher once the target cache and the shadow return stack know them
//! (busybox `sha256sum` under Linux armhf calls glibc's A32 `memcpy` through `BLX imm`
//! once per 64-byte block).

mod common;

/// At 0x11000 (entered in Thumb state): 100 calls of the A32 function at 0x11100, adding
/// up what it returns; exits with the sum / 64.
const MAIN: [u16; 14] = [
    0x2081, // 0x00: movs r0, #0x81
    0x0240, // 0x02: lsls r0, r0, #9
    0x4685, // 0x04: mov sp, r0          (a stack below the code, at 0x10200)
    0x2400, // 0x06: movs r4, #0
    0x2500, // 0x08: movs r5, #0
    0xf000, 0xe87a, // 0x0a: loop: blx 0x11100   (A32)
    0x182d, // 0x0e: adds r5, r5, r0
    0x3401, // 0x10: adds r4, #1
    0x2c64, // 0x12: cmp r4, #100
    0xdbf9, // 0x14: blt loop
    0x09a8, // 0x16: lsrs r0, r5, #6
    0x2701, // 0x18: movs r7, #1
    0xdf00, // 0x1a: svc #0              exit(sum / 64)
];

/// At 0x11100 (A32): returns 2 * (r4 + 3), computed by the Thumb function at 0x11200.
const ARM_FUNCTION: [u32; 5] = [
    0xe92d_4010, // push {r4, lr}
    0xe10f_1000, // mrs r1, apsr        (through step_from_code, as A32)
    0xe284_0003, // add r0, r4, #3
    0xfa00_003b, // blx 0x11200         (Thumb)
    0xe8bd_8010, // pop {r4, pc}        (back to Thumb)
];

/// At 0x11200 (Thumb): r0 *= 2.
const THUMB_FUNCTION: [u16; 2] = [
    0x0040, // lsls r0, r0, #1
    0x4770, // bx lr
];

/// Sum over i in 0..100 of 2 * (i + 3), divided by 64.
const EXPECTED: i32 = (2 * (4950 + 300)) / 64;

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend(MAIN.iter().flat_map(|h| h.to_le_bytes()));
    img.resize(0x1100, 0);
    img.extend(ARM_FUNCTION.iter().flat_map(|w| w.to_le_bytes()));
    img.resize(0x1200, 0);
    img.extend(THUMB_FUNCTION.iter().flat_map(|h| h.to_le_bytes()));
    let elf = common::elf32(0x10000, 0x11000 | 1, &img);
    common::a64::run_image_status(&elf, "blx-imm", opts)
}

#[test]
fn blx_immediate_calls_and_their_returns_stay_in_the_code_cache() {
    let (i, _) = run(&["--interp"]);
    assert_eq!(i, EXPECTED, "interpreter");
    let (t, st) = run(&[]);
    assert_eq!(t, EXPECTED, "translator: {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    assert!(get("translated") > 1000, "the loop ran translated: {st:?}");
    // 100 iterations of two calls and two returns: through the dispatcher that is 400+
    // entries into the code cache; kept in it, a few for the first calls.
    assert!(
        get("entries") < 40,
        "calls or returns left the code cache: {st:?}"
    );
}
