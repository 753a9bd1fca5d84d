//! Three-way differential test of the translator: random A32 sequences run under
//! `qemu-arm` (the reference), in the interpreter, and through the translator (A64 code
//! run by `a64-runner` under `qemu-aarch64`), and must leave the same registers, flags and
//! memory.
//!
//! The generator builds each instruction from an encoding family with random fields
//! (condition, opcode, S bit, registers, immediates, shifts, addressing mode). It never
//! asks the decoder, the interpreter or the translator which sequences to keep: fields
//! are constrained by construction only (destinations avoid r10, r11, r13 and the PC;
//! memory goes through the scratch base r11 and index r10; forward branches stay inside
//! the sequence). A sequence that any of the three runs rejects (an exception, a signal,
//! missing output) is counted with its reason and removed from its batch (one that only
//! some of the three stop at is a mismatch too); the batch runner is `common::run3`,
//! shared with `diff_vfp`. The test fails if more than 5 % are rejected, or on any
//! mismatch. The seed is printed; a failure gives
//! the case's encodings and registers, and `DBT_DIFF_SEED` reproduces it.
//!
//! `DBT_DBT_CASES` sets the number of sequences (default 10 000; `--full` runs of xtask
//! use 10^6).

mod common;

use common::gen_a32::sequence;
use common::harness::{scratch, Case, REC};
use common::run3::{run3, Run3};
use common::{a32, qemu_arm, Rng};
use std::fmt::Write as _;

/// Sequences per process (the harness holds at most ~1000 cases per image).
const BATCH: usize = 500;
/// What differs between the three records: core registers, CPSR, scratch memory.
fn diff(c: &Case, recs: [&[u8]; 3]) -> String {
    let names = ["qemu", "interp", "dbt"];
    let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let mut s = format!("{}\n", c.line());
    let regs = [
        "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr",
        "cpsr",
    ];
    for (i, n) in regs.iter().enumerate() {
        let v: Vec<u32> = recs.iter().map(|r| w(r, i)).collect();
        if v[0] != v[1] || v[0] != v[2] {
            writeln!(
                s,
                "  {n}: {} {:#010x} {} {:#010x} {} {:#010x}",
                names[0], v[0], names[1], v[1], names[2], v[2]
            )
            .unwrap();
        }
    }
    if let Some(k) = (60..REC).find(|&k| recs[0][k] != recs[1][k] || recs[0][k] != recs[2][k]) {
        writeln!(s, "  scratch differs first at +{:#x}", k - 60).unwrap();
    }
    s
}

#[test]
fn translator_matches_interpreter_and_qemu() {
    let _ = qemu_arm();
    let _ = common::a64::qemu_aarch64();
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0db7);
    let count: usize = std::env::var("DBT_DBT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    println!("translator differential: seed {seed:#x} (DBT_DIFF_SEED), {count} sequences");
    let mut rng = Rng::seeded(seed);
    let src = scratch(&mut rng);
    // One case in three is Thumb-2.
    let cases: Vec<Case> = (0..count)
        .map(|_| {
            if rng.below(3) == 0 {
                common::gen_t32::sequence(&mut rng)
            } else {
                sequence(&mut rng)
            }
        })
        .collect();
    let insns: usize = cases.iter().map(|c| c.code.len()).sum();
    let mut rejects = Vec::new();
    let mut fails = Vec::new();
    let mut spurious = Vec::new();
    let mut totals: std::collections::BTreeMap<String, u64> = Default::default();
    for (b, chunk) in cases.chunks(BATCH).enumerate() {
        let how = Run3 {
            tag: &format!("batch{b}"),
            qemu_cpu: None,
            budget: 500_000_000,
            qemu_stops: false,
            diff,
        };
        let out = run3(chunk.to_vec(), &src, &how);
        let (f, st) = (out.fails, out.stats);
        rejects.extend(out.rejects);
        spurious.extend(out.spurious);
        fails.extend(f);
        for (k, v) in st {
            *totals.entry(k).or_default() += v;
        }
    }
    let t = |k: &str| totals.get(k).copied().unwrap_or(0);
    println!(
        "translator differential: {count} sequences ({insns} A32 words or Thumb halfwords), {} rejected, {} mismatches",
        rejects.len(),
        fails.len()
    );
    println!(
        "translator: {} blocks, {} guest -> {} host instructions ({:.2} per guest instruction, stubs included); executed {} translated, {} interpreted; {} links",
        t("blocks"),
        t("guest_insns"),
        t("host_insns"),
        t("host_insns") as f64 / t("guest_insns").max(1) as f64,
        t("translated"),
        t("interpreted"),
        t("links")
    );
    for r in rejects.iter().take(20) {
        println!("rejected: {r}");
    }
    println!(
        "translator differential: {} spurious store-exclusive failures of the host (matched on rerun)",
        spurious.len()
    );
    for s in &spurious {
        println!("spurious store-exclusive failure: {s}");
    }
    assert!(
        spurious.len() * 1000 <= count.max(1000),
        "{} spurious store-exclusive failures in {count} sequences (more than 0.1 %): a translator bug, not the host",
        spurious.len()
    );
    if !fails.is_empty() {
        for f in fails.iter().take(15) {
            eprintln!("{f}");
        }
        panic!("{} mismatches (seed {seed:#x})", fails.len());
    }
    assert!(
        rejects.len() * 20 <= count,
        "{} of {count} sequences rejected (more than 5 %)",
        rejects.len()
    );
    let _ = a32::SVC0;
}
