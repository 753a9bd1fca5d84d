//! Links between translated blocks across instruction-cache invalidations. As in
//! `diff_dbt_icache_all`, a PL1 loop rewrites the first instruction of a function behind
//! the translator's back (`--no-protect`), issues `ICIALLU` and calls the function, but
//! with `BL`: a direct call, which the engine links straight to the function's block. An
//! `ICIALLU` starts a new epoch, which must undo that link (and the one made again after
//! the previous epoch, and so on), so that the call goes through the dispatcher, which
//! finds the rewritten encoding and translates the function again: the sum must be
//! 0 + 1 + ... + 99 = 4950 as in the interpreter. An epoch that undid no links (or only
//! those of the first epoch) leaves the call in the stale `mov r0, #0` translation (an
//! engine whose epochs undo nothing fails here with sum 0; `diff_dbt_icache_all`, whose
//! call is indirect, does not see it).

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
    0xeb00_000a, // 0x20: bl f              (a direct, linked call)
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

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let mut img = vec![0u8; 0x1000];
    img.extend(LOOP.iter().flat_map(|w| w.to_le_bytes()));
    let elf = common::elf32(0x10000, 0x11000, &img);
    common::a64::run_image_status(&elf, "epoch-links", opts)
}

#[test]
fn an_iciallu_undoes_the_links_made_since_the_last_one() {
    let opts = ["--privileged", "--no-protect"];
    let (i, _) = run(&[&["--interp"][..], &opts].concat());
    assert_eq!(i, 1, "interpreter: sum 4950");
    let (t, st) = run(&opts);
    assert_eq!(t, 1, "translator: sum 4950 {st:?}");
    let get = |k: &str| st.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
    assert!(get("links") > 0, "the call was linked: {st:?}");
    assert!(
        get("blocks") > 100,
        "f translated again after each rewrite: {st:?}"
    );
}
