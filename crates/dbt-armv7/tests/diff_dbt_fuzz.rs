//! Fuzzing the translator with random byte streams as guest code (fixed seed, bounded
//! count; `DBT_FUZZ_SEED`, `DBT_FUZZ_CHUNKS`).
//!
//! 1. Translation alone, on the build host: random bytes at random addresses, A32 and
//!    T32, through the front end and the A64 back end: no panic (the debug build also
//!    checks that every instruction the back end claims is lowered), and every block's
//!    side table and exits are consistent.
//! 2. Execution: chunks of 64 random bytes run by `a64-runner --fuzz` under
//!    `qemu-aarch64`, each from random registers for at most 1000 instructions, the odd
//!    ones in Thumb state: the runner must finish (no panic, no host fault outside
//!    translated code), every chunk ending in an architectural outcome (budget, system
//!    call, WFI, or an exception), and the interpreter alone on the same chunks must give
//!    the same counts of outcomes (within 1 %: a chunk that aborts between a
//!    load-exclusive and a store-exclusive may see the monitor cleared in one and not in
//!    the other, as the architecture allows). Random stores rewrite translated code
//!    hundreds of times: the engine's self-modifying-code detection handles them.

mod common;

use common::Rng;
use dbt_armv7::translate::frontend::{discover, Key};
use dbt_armv7::translate::{A64Gen, CodeGen};
use dbt_armv7::FlatRam;

fn seed() -> u64 {
    std::env::var("DBT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xf022_5eed)
}

#[test]
fn random_bytes_translate_without_panic() {
    let mut rng = Rng::seeded(seed());
    let gen = A64Gen::new();
    let (_, rt) = gen.runtime();
    let mut ram = FlatRam::new(0, 1 << 16);
    let bytes: Vec<u8> = (0..1 << 16).map(|_| rng.u32() as u8).collect();
    ram.load(0, &bytes);
    let (mut blocks, mut insns) = (0, 0);
    for k in 0..20_000u32 {
        let thumb = k % 2 == 1;
        let pc = rng.below(0xfff0) & if thumb { !1 } else { !3 };
        let key = Key {
            pc,
            thumb,
            privileged: rng.below(2) == 0,
            asid: 0,
            fp: true,
        };
        let b = discover(key, &mut ram, &gen);
        let hb = gen.translate(&b, 4096, &rt);
        assert_eq!(hb.insn_starts.len(), b.insns.len(), "{key:?}");
        assert!(hb.insn_starts.windows(2).all(|w| w[0] <= w[1]));
        assert!(hb.code.len() % 4 == 0 && !hb.code.is_empty());
        for e in &hb.exits {
            assert!(e.site >= 4096 && e.stub > e.site && e.stub < 4096 + hb.code.len());
        }
        blocks += 1;
        insns += b.insns.len();
    }
    println!("fuzz (translation): {blocks} blocks, {insns} guest instructions translated");
    assert!(insns > 10_000);
}

#[test]
fn random_code_runs_to_architectural_outcomes() {
    let chunks: u32 = std::env::var("DBT_FUZZ_CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng::seeded(seed());
    const BASE: u32 = 0x10000;
    const CODE: u32 = 0x11000;
    let mut img = vec![0u8; (CODE - BASE) as usize + 64 * chunks as usize + 0x10000];
    for b in img[(CODE - BASE) as usize..].iter_mut() {
        *b = rng.u32() as u8;
    }
    let elf = common::elf32(BASE, CODE, &img);
    let dir = std::env::temp_dir().join(format!("dbt-armv7-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fuzz.elf");
    std::fs::write(&path, elf).unwrap();
    let arg = format!("--fuzz={chunks}");
    let p2 = path.clone();
    let a2 = arg.clone();
    let t = std::thread::spawn(move || common::a64::run_with(&p2, &[&a2]));
    let i = common::a64::run_with(&path, &["--interp", &arg]);
    let t = t.join().unwrap();
    let _ = std::fs::remove_file(&path);
    let line = |o: &std::process::Output, who: &str| -> Vec<(String, u64)> {
        assert!(
            o.status.success(),
            "{who}: {:?} {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        let s = String::from_utf8_lossy(&o.stderr);
        let l = s
            .lines()
            .find(|l| l.starts_with("fuzz: "))
            .expect("fuzz line");
        println!("{who}: {l}");
        let w: Vec<&str> = l[6..].split_whitespace().collect();
        w.chunks(2)
            .map(|c| (c[0].to_string(), c[1].parse().unwrap()))
            .collect()
    };
    let (tl, il) = (line(&t, "translator"), line(&i, "interpreter"));
    let get = |l: &[(String, u64)], k: &str| l.iter().find(|x| x.0 == k).unwrap().1;
    let outcomes = [
        "budget",
        "svc",
        "wfi",
        "undefined",
        "data_abort",
        "prefetch_abort",
        "hvc_smc",
        "other",
    ];
    let total: u64 = outcomes.iter().map(|k| get(&tl, k)).sum();
    assert_eq!(total, chunks as u64);
    assert_eq!(get(&tl, "other"), 0, "an outcome that is not architectural");
    assert!(get(&tl, "translated") > 0 && get(&tl, "blocks") > 100);
    for k in outcomes {
        let (a, b) = (get(&tl, k), get(&il, k));
        assert!(
            a.abs_diff(b) * 100 <= chunks as u64,
            "{k}: translator {a}, interpreter {b}"
        );
    }
}
