//! A return that changes the instruction set inside the code cache, then an instruction
//! that translated code hands to the system model (`step_from_code`). Thumb code calls
//! an A32 function (`BLX imm`, through the dispatcher), which returns with `BX LR`; from
//! the second call on, the return finds the Thumb continuation in the target cache and
//! jumps to it without the dispatcher, so the guest core's `CPSR.T` still says A32 there.
//! The continuation's first instruction is an `MRS` (sensitive: it runs in the
//! interpreter through `step_from_code`), which must still be decoded and executed as
//! T32; decoded as A32, `f3ef 8100` is UNDEFINED. This is how every busybox `insmod` of
//! Linux armhf under the DBT died of SIGILL: glibc's Thumb `strlen` starts with
//! `pld [r0]`, which went through `step_from_code` too, and was entered in A32 state
//! after a return from A32 `memcpy` (`f890 f000` as A32 is UNDEFINED as well).
//!
//! The same for an `SVC` that translated code takes itself (PL1 to PL1): its `SPSR`
//! must say Thumb, or the handler's `MOVS pc, lr` returns to the Thumb code in A32 state.

mod common;

/// At 0x11000 (entered in Thumb state): 100 calls of the A32 function at 0x11020, each
/// followed by an `MRS` and a `PLD`; exits with the number of iterations.
const CODE: [u16; 16] = [
    0x2400, // 0x00: movs r4, #0
    0x4668, // 0x02: mov r0, sp
    0xf000, 0xe80c, // 0x04: loop: blx 0x11020   (A32)
    0xf3ef, 0x8100, // 0x08: mrs r1, apsr       (through step_from_code)
    0xf890, 0xf000, // 0x0c: pld [r0]
    0x3401, // 0x10: adds r4, #1
    0x2c64, // 0x12: cmp r4, #100
    0xdbf6, // 0x14: blt loop
    0x4620, // 0x16: mov r0, r4
    0x2701, // 0x18: movs r7, #1
    0xdf00, // 0x1a: svc #0                exit(r4)
    0, 0, // 0x1c: padding
];

/// At 0x11020: `bx lr` (A32).
const ARM_FUNCTION: u32 = 0xe12f_ff1e;

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend(CODE.iter().flat_map(|h| h.to_le_bytes()));
    img.extend(ARM_FUNCTION.to_le_bytes());
    let elf = common::elf32(0x10000, 0x11000 | 1, &img);
    common::a64::run_image_status(&elf, "isa-switch", opts)
}

#[test]
fn a_system_call_after_a_cached_return_to_thumb_runs_as_thumb() {
    let (i, _) = run(&["--interp"]);
    assert_eq!(i, 100, "interpreter: iterations");
    let (t, st) = run(&[]);
    assert_eq!(t, 100, "translator: iterations {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    assert!(get("translated") > 300, "the loop ran translated: {st:?}");
}

/// PL1 variant: vectors at 0x10800 (`VBAR`): SVC returns at once (`MOVS pc, lr`), an
/// UNDEFINED instruction exits with status 99.
const VECTORS: [u32; 8] = [
    0xeaff_fffe, // 0x00: b .              reset
    0xea00_0002, // 0x04: b 0x14           undefined instruction
    0xe1b0_f00e, // 0x08: movs pc, lr      SVC
    0xeaff_fffe, // 0x0c: b .              prefetch abort
    0xeaff_fffe, // 0x10: b .              data abort
    0xe3a0_0063, // 0x14: mov r0, #99
    0xe3a0_7001, // 0x18: mov r7, #1
    0xe140_0070, // 0x1c: hvc #0           exit(99)
];

/// At 0x11000 (A32, SVC mode): `VBAR`, then the Thumb loop at 0x11100.
const SETUP: [u32; 6] = [
    0xe3a0_2b42, // mov r2, #0x10800
    0xee0c_2f10, // mcr p15, 0, r2, c12, c0, 0   VBAR
    0xf57f_f06f, // isb
    0xe301_2101, // movw r2, #0x1101
    0xe340_2001, // movt r2, #1
    0xe12f_ff12, // bx r2
];

/// At 0x11100 (Thumb): 100 calls of the A32 function at 0x11140, each followed by an
/// `SVC`; exits (`HVC`) with the number of iterations.
const SVC_LOOP: [u16; 11] = [
    0x2400, // 0x00: movs r4, #0
    0xf000, 0xe81e, // 0x02: loop: blx 0x11140   (A32)
    0xdf01, // 0x06: svc #1
    0x3401, // 0x08: adds r4, #1
    0x2c64, // 0x0a: cmp r4, #100
    0xdbf9, // 0x0c: blt loop
    0x4620, // 0x0e: mov r0, r4
    0x2701, // 0x10: movs r7, #1
    0xf7e0, 0x8000, // 0x12: hvc #0           exit(r4)
];

fn run_svc(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x800];
    img.extend(VECTORS.iter().flat_map(|w| w.to_le_bytes()));
    img.resize(0x1000, 0);
    img.extend(SETUP.iter().flat_map(|w| w.to_le_bytes()));
    img.resize(0x1100, 0);
    img.extend(SVC_LOOP.iter().flat_map(|h| h.to_le_bytes()));
    img.resize(0x1140, 0);
    img.extend(ARM_FUNCTION.to_le_bytes());
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "isa-switch-svc", opts)
}

#[test]
fn an_svc_after_a_cached_return_to_thumb_saves_thumb_in_spsr() {
    let opts = ["--privileged", "--vectors", "--svc-vectors"];
    let (i, _) = run_svc(&[&["--interp"][..], &opts].concat());
    assert_eq!(i, 100, "interpreter: iterations");
    let (t, st) = run_svc(&opts);
    assert_eq!(t, 100, "translator: iterations {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    assert!(get("translated") > 300, "the loop ran translated: {st:?}");
}
