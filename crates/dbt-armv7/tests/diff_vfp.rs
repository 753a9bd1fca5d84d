//! Three-way differential test of VFP: random VFPv3/VFPv4 sequences (and Advanced SIMD
//! core-register transfers) from the seeded generator `tests/common/gen_vfp.rs`, run under
//! `qemu-arm -cpu cortex-a15` (the reference: VFPv4-D32 with NEON, as the model), in the
//! interpreter, and through the translator (`a64-runner` under `qemu-aarch64`). Each case
//! loads D0-D31 and FPSCR, runs its instructions and stores D0-D31 and FPSCR, so the
//! records compare every D register, FPSCR (flags, cumulative exceptions, modes), the
//! core registers, APSR and the scratch memory.
//!
//! The generator never asks the code under test what to keep. A case that any of the
//! three does not complete is rejected with its reason (counted and printed); the test
//! fails on any mismatch or if more than 5 % are rejected. `DBT_DIFF_SEED` sets the seed
//! (printed), `DBT_VFP_CASES` the number of cases of each test (default 5000: 10^4 in
//! all; under `--full`, where `DBT_DBT_CASES` is 10^6, 500,000 each).

mod common;

use common::gen_vfp::{fill_fp_area, sequence};
use common::harness::{scratch, Case, REC};
use common::run3::{run3, Run3};
use common::{qemu_arm, Rng};
use std::fmt::Write as _;

const BATCH: usize = 200;

/// What differs between the three records: core registers, FPSCR (r12) and D registers.
fn diff(c: &Case, recs: [&[u8]; 3]) -> String {
    let names = ["qemu", "interp", "dbt"];
    let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let mut s = format!("{}\n", c.line());
    for i in 0..15 {
        let v: Vec<u32> = recs.iter().map(|r| w(r, i)).collect();
        if v[0] != v[1] || v[0] != v[2] {
            let n = match i {
                12 => "fpscr(r12)".to_string(),
                13 => "lr".into(),
                14 => "cpsr".into(),
                _ => format!("r{i}"),
            };
            writeln!(
                s,
                "  {n}: {} {:#010x} {} {:#010x} {} {:#010x}",
                names[0], v[0], names[1], v[1], names[2], v[2]
            )
            .unwrap();
        }
    }
    let fp = 60 + common::gen_vfp::FP_AREA;
    for d in 0..32 {
        let r = fp + 8 * d..fp + 8 * d + 8;
        let v: Vec<u64> = recs
            .iter()
            .map(|x| u64::from_le_bytes(x[r.clone()].try_into().unwrap()))
            .collect();
        if v[0] != v[1] || v[0] != v[2] {
            writeln!(
                s,
                "  d{d}: qemu {:#018x} interp {:#018x} dbt {:#018x}",
                v[0], v[1], v[2]
            )
            .unwrap();
        }
    }
    if let Some(k) = (60..REC).find(|&k| recs[0][k] != recs[1][k] || recs[0][k] != recs[2][k]) {
        writeln!(s, "  scratch differs first at +{:#x}", k - 60).unwrap();
    }
    s
}

/// Runs one batch three ways (`common::run3`), qemu-arm as a Cortex-A15 (VFPv4-D32 and
/// NEON, as the model): the mismatches; the rejected cases go to `rejects`.
fn run_batch3(cases: Vec<Case>, src: &[u8], tag: &str, rejects: &mut Vec<String>) -> Vec<String> {
    let how = Run3 {
        tag,
        qemu_cpu: Some("cortex-a15"),
        budget: 100_000_000,
        qemu_stops: true,
        diff,
    };
    let out = run3(cases, src, &how);
    rejects.extend(out.rejects);
    let mut fails = out.fails;
    fails.extend(
        out.spurious
            .iter()
            .map(|s| format!("store-exclusive in a VFP case: {s}")),
    );
    fails
}

#[test]
fn vfp_matches_qemu_three_ways() {
    run("vfp", false, 5000);
}

/// VFP accesses through a base made misaligned after an aligned access in the same block:
/// each misaligned case must stop all three runs (an alignment fault: `SIGBUS` under
/// `qemu-arm`, a data abort in the interpreter and through the translator's side exit),
/// each aligned one none.
#[test]
fn vfp_alignment_faults_agree() {
    let _ = qemu_arm();
    let mut rng = Rng(0x5eed_a119);
    let mut src = scratch(&mut rng);
    fill_fp_area(&mut rng, &mut src);
    let deltas: Vec<u32> = (0..24).map(|k| [4, 1, 2, 3, 8, 6][k % 6]).collect();
    let cases: Vec<Case> = deltas
        .iter()
        .map(|&d| common::gen_vfp::alignment_case(&mut rng, d))
        .collect();
    let mut rejects = Vec::new();
    let fails = run_batch3(cases, &src, "align", &mut rejects);
    for r in &rejects {
        println!("stopped: {r}");
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
    let misaligned = deltas.iter().filter(|&&d| d % 4 != 0).count();
    assert_eq!(
        rejects.len(),
        misaligned,
        "every misaligned access faults, no other"
    );
}

#[test]
fn neon_matches_qemu_three_ways() {
    run("neon", true, 5000);
}

fn run(name: &str, neon: bool, default_count: usize) {
    let _ = qemu_arm();
    let _ = common::a64::qemu_aarch64();
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0f9a);
    // `cargo xtask test --full` asks diff_dbt for 10^6 sequences (DBT_DBT_CASES); the two
    // tests here then run half of that each, 10^6 in all (10^5 took 293 s, 10^6 of
    // diff_dbt 48 min, on this 2-core machine under load).
    let full = std::env::var("DBT_DBT_CASES")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .map(|n| (n / 2).max(default_count));
    let count: usize = std::env::var("DBT_VFP_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .or(full)
        .unwrap_or(default_count);
    println!("{name} differential: seed {seed:#x} (DBT_DIFF_SEED), {count} cases");
    let mut rng = Rng::seeded(seed);
    // One case in three is Thumb-2.
    let mut cases: Vec<Case> = (0..count)
        .map(|_| {
            let thumb = rng.below(3) == 0;
            sequence(&mut rng, thumb, neon)
        })
        .collect();
    if let Ok(words) = std::env::var("DBT_VFP_WORDS") {
        // Reproduce one A32 sequence: `DBT_VFP_WORDS="f2e625c5 ..."`.
        let w: Vec<u32> = words
            .split_whitespace()
            .map(|x| u32::from_str_radix(x, 16).expect("hex word"))
            .collect();
        cases = vec![common::gen_vfp::fixed(&mut rng, &w)];
    }
    let mut rejects = Vec::new();
    let mut fails = Vec::new();
    for (b, chunk) in cases.chunks(BATCH).enumerate() {
        // Each batch starts its cases from its own FP register image and memory.
        let mut src = scratch(&mut rng);
        fill_fp_area(&mut rng, &mut src);
        fails.extend(run_batch3(
            chunk.to_vec(),
            &src,
            &format!("{name}{b}"),
            &mut rejects,
        ));
    }
    println!(
        "{name} differential: {count} cases, {} rejected, {} mismatches",
        rejects.len(),
        fails.len()
    );
    for r in rejects.iter().take(20) {
        println!("rejected: {r}");
    }
    if !fails.is_empty() {
        for f in fails.iter().take(15) {
            eprintln!("{f}");
        }
        panic!("{} mismatches (seed {seed:#x})", fails.len());
    }
    assert!(
        rejects.len() * 20 <= count,
        "{} of {count} cases rejected (more than 5 %)",
        rejects.len()
    );
}
