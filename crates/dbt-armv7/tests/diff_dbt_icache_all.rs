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

/// The loop calls `f` with `BLX r6`: an indirect call.
const LOOP: [u32; 22] = common::rewrite_loop::program(0xe12f_ff36);

/// `orr r8, r7, r5` replaced by `mov r8, r7`: the function is rewritten with the same
/// `mov r0, #0` every time (the exit status is then 0: the sum is 0).
const SAME: u32 = 0xe1a0_8007;

fn run(code: &[u32], opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    common::rewrite_loop::run(code, "icache-all", opts)
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
