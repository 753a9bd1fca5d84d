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

/// The loop calls `f` with `BL f`: a direct call, which the engine links.
const LOOP: [u32; 22] = common::rewrite_loop::program(0xeb00_000a);

fn run(opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    common::rewrite_loop::run(&LOOP, "epoch-links", opts)
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
