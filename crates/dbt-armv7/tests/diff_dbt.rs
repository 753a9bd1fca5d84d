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
//! missing output) is counted with its reason and removed from its batch; the test fails
//! if more than 5 % are rejected, or on any mismatch. The seed is printed; a failure gives
//! the case's encodings and registers, and `DBT_DIFF_SEED` reproduces it.
//!
//! `DBT_DBT_CASES` sets the number of sequences (default 10 000; `--full` runs of xtask
//! use 10^6).

mod common;

use common::gen_a32::sequence;
use common::harness::{build, normalise, scratch, Case, BASE, REC};
use common::{a32, qemu_arm, run_user_partial, Rng};
use std::fmt::Write as _;

/// Sequences per process (the harness holds at most ~1000 cases per image).
const BATCH: usize = 500;
struct Rejects {
    count: usize,
    reasons: Vec<String>,
}

impl Rejects {
    fn add(&mut self, why: String) {
        self.count += 1;
        if self.reasons.len() < 20 {
            self.reasons.push(why);
        }
    }
}

/// Records of one run, or the index of the first case it did not complete and why.
fn records(out: &[u8], n: usize, err: Option<String>) -> Result<Vec<Vec<u8>>, (usize, String)> {
    let done = out.len() / REC;
    if done < n {
        return Err((done, err.unwrap_or_else(|| "stopped".into())));
    }
    Ok((0..n)
        .map(|k| {
            let mut r = out[k * REC..(k + 1) * REC].to_vec();
            normalise(&mut r);
            r
        })
        .collect())
}

fn diff(c: &Case, names: [&str; 3], recs: [&[u8]; 3]) -> String {
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

/// Whether the case contains a store-exclusive (`STREX`, `STREXB/H/D`): the only
/// instruction whose translated outcome may differ between two runs, because the host's
/// exclusive monitor (here qemu-aarch64's) may fail a `STXR` for reasons outside the guest,
/// as the architecture allows.
fn has_store_exclusive(c: &Case) -> bool {
    use dbt_armv7::decode::{decode_a32, decode_thumb, Op};
    let mut k = 0;
    while k < c.code.len() {
        let insn = if c.thumb {
            let hw1 = c.code[k] as u16;
            let hw2 = c.code.get(k + 1).copied().unwrap_or(0) as u16;
            decode_thumb(hw1, hw2)
        } else {
            decode_a32(c.code[k])
        };
        if matches!(insn.op, Op::Strex { .. }) {
            return true;
        }
        k += if c.thumb {
            usize::from(insn.len / 2).max(1)
        } else {
            1
        };
    }
    false
}

/// Runs `case` alone through the translator up to three times; true when one run leaves
/// exactly `want` (the record qemu-arm and the interpreter agreed on).
fn translator_agrees_on_rerun(case: &Case, src: &[u8], tag: &str, want: &[u8]) -> bool {
    let dir = std::env::temp_dir().join(format!("dbt-armv7-dbt-{}", std::process::id()));
    let path = dir.join(format!("{tag}-rerun.elf"));
    let img = build(std::slice::from_ref(case), src);
    std::fs::write(&path, &img.bytes).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let agrees = (0..3).any(|_| {
        let t = common::a64::run(&path, false);
        t.status.success() && matches!(records(&t.stdout, 1, None), Ok(r) if r[0] == want)
    });
    let _ = std::fs::remove_file(&path);
    agrees
}

/// Runs one batch three ways, removing rejected cases; returns mismatches and the
/// runner's counters. A translator-only difference in a case with a store-exclusive that
/// disappears when the case runs again is a spurious exclusive failure of the host: it is
/// counted in `spurious` (and reported), not a mismatch.
fn run_batch3(
    mut cases: Vec<Case>,
    src: &[u8],
    tag: &str,
    rejects: &mut Rejects,
    spurious: &mut Vec<String>,
) -> (Vec<String>, Vec<(String, u64)>) {
    let dir = std::env::temp_dir().join(format!("dbt-armv7-dbt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.elf"));
    loop {
        if cases.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let img = build(&cases, src);
        std::fs::write(&path, &img.bytes).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let n = cases.len();
        // qemu-arm and the translator run as child processes while the interpreter runs here.
        let qchild = std::process::Command::new("timeout")
            .arg("120")
            .arg(qemu_arm())
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("qemu-arm");
        let tpath = path.clone();
        let tchild = std::thread::spawn(move || common::a64::run(&tpath, false));
        let (o, e) = match run_user_partial(BASE, &img.bytes, img.entry, 500_000_000, None) {
            Ok(o) => (o, None),
            Err((e, o)) => (o, Some(format!("interpreter: {e}"))),
        };
        let interp = records(&o, n, e);
        let q = qchild.wait_with_output().expect("qemu-arm");
        let qerr = (!q.status.success()).then(|| format!("qemu-arm: {:?}", q.status));
        let qemu = records(&q.stdout, n, qerr);
        let t = tchild.join().unwrap();
        let terr = (!t.status.success()).then(|| {
            format!(
                "translator: {:?} {}",
                t.status,
                String::from_utf8_lossy(&t.stderr).trim()
            )
        });
        let dbt = records(&t.stdout, n, terr);
        // The earliest case any of them did not complete is rejected; run the rest again.
        let first_bad = [&qemu, &interp, &dbt]
            .iter()
            .filter_map(|r| r.as_ref().err())
            .min_by_key(|(k, _)| *k)
            .cloned();
        if let Some((k, why)) = first_bad {
            let k = k.min(n - 1);
            rejects.add(format!("{why}\n    {}", cases[k].line()));
            cases.remove(k);
            continue;
        }
        let (qemu, interp, dbt) = (qemu.unwrap(), interp.unwrap(), dbt.unwrap());
        let mut fails = Vec::new();
        for (k, c) in cases.iter().enumerate() {
            if qemu[k] == interp[k]
                && qemu[k] != dbt[k]
                && has_store_exclusive(c)
                && translator_agrees_on_rerun(c, src, tag, &qemu[k])
            {
                spurious.push(format!("{tag} case {k}: {}", c.line()));
                continue;
            }
            if qemu[k] != interp[k] || qemu[k] != dbt[k] {
                fails.push(format!(
                    "{tag} case {k}: {}",
                    diff(
                        c,
                        ["qemu", "interp", "dbt"],
                        [&qemu[k], &interp[k], &dbt[k]]
                    )
                ));
            }
        }
        if std::env::var("DBT_DIFF_KEEP").is_err() {
            let _ = std::fs::remove_file(&path);
        }
        return (fails, common::a64::stats(&t.stderr));
    }
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
    let mut rng = Rng(seed | 1);
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
    let mut rejects = Rejects {
        count: 0,
        reasons: Vec::new(),
    };
    let mut fails = Vec::new();
    let mut spurious = Vec::new();
    let mut totals: std::collections::BTreeMap<String, u64> = Default::default();
    for (b, chunk) in cases.chunks(BATCH).enumerate() {
        let (f, st) = run_batch3(
            chunk.to_vec(),
            &src,
            &format!("batch{b}"),
            &mut rejects,
            &mut spurious,
        );
        fails.extend(f);
        for (k, v) in st {
            *totals.entry(k).or_default() += v;
        }
    }
    let t = |k: &str| totals.get(k).copied().unwrap_or(0);
    println!(
        "translator differential: {count} sequences ({insns} A32 words or Thumb halfwords), {} rejected, {} mismatches",
        rejects.count,
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
    for r in &rejects.reasons {
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
        rejects.count * 20 <= count,
        "{} of {count} sequences rejected (more than 5 %)",
        rejects.count
    );
    let _ = a32::SVC0;
}
