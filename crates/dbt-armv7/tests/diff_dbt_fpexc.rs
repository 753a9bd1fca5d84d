//! Lazy VFP switching, as Linux does it: a PL1 loop that enables the FP unit
//! (`VMSR FPEXC` with EN), adds 1.0 to D0, disables it again and goes round 100 times,
//! then converts D0 and exits with it. The interpreter and the translator must both give
//! 100, and the translator must not flush its code cache on the toggles: `FPEXC.EN` is a
//! bit of the translation key (blocks made with the unit on and off live side by side).

mod common;

/// The program (offsets in bytes from its start).
const LOOP: [u32; 20] = [
    0xe3a0_260f, //  0: mov  r2, #0x00f00000    CPACR cp10/cp11 full access
    0xee01_2f50, //  4: mcr  p15, 0, r2, c1, c0, 2
    0xf57f_f06f, //  8: isb
    0xe3a0_1101, // 12: mov  r1, #0x40000000    FPEXC.EN
    0xe3a0_3000, // 16: mov  r3, #0
    0xe3a0_4000, // 20: mov  r4, #0
    0xeee8_1a10, // 24: vmsr fpexc, r1
    0xeeb7_1b00, // 28: vmov.f64 d1, #1.0
    0xee30_0b40, // 32: vsub.f64 d0, d0, d0
    0xeee8_1a10, // 36: loop: vmsr fpexc, r1  (on)
    0xee30_0b01, // 40: vadd.f64 d0, d0, d1
    0xeee8_3a10, // 44: vmsr fpexc, r3        (off)
    0xe284_4001, // 48: add  r4, r4, #1
    0xe354_0064, // 52: cmp  r4, #100
    0xbaff_fff9, // 56: blt  loop
    0xeee8_1a10, // 60: vmsr fpexc, r1
    0xeebd_2bc0, // 64: vcvt.s32.f64 s4, d0
    0xee12_0a10, // 68: vmov r0, s4
    0xe3a0_7001, // 72: mov  r7, #1
    0xef00_0000, // 76: svc  #0                exit(r0)
];

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend(LOOP.iter().flat_map(|w| w.to_le_bytes()));
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "fpexc", opts)
}

#[test]
fn fpexc_toggles_keep_translations() {
    let (i, _) = run(&["--interp", "--privileged"]);
    assert_eq!(i, 100, "interpreter");
    let (t, st) = run(&["--privileged"]);
    assert_eq!(t, 100, "translator {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap();
    println!("translator: {st:?}");
    assert_eq!(
        get("flushes"),
        0,
        "FPEXC toggles flushed the code cache: {st:?}"
    );
    assert!(get("translated") > 300, "the loop ran translated: {st:?}");
}
