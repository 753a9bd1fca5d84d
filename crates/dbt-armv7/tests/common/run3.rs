//! The three-way batch runner of the translator's differential tests (`diff_dbt`,
//! `diff_vfp`): one image of cases runs under `qemu-arm` (the reference), in the
//! interpreter and through the translator (`a64-runner` under `qemu-aarch64`); the
//! records are compared. A case that any of the three does not complete is rejected with
//! the reasons of all that stopped there (and the batch runs again without it); when only
//! one of the interpreter and the translator stopped there it is a mismatch too (one
//! raised an exception the other did not), and so is any disagreement with qemu-arm about
//! stopping where [`Run3::qemu_stops`] says qemu-arm is exact for the generated family.

use super::harness::{build, normalise, Case, BASE, REC};
use super::{qemu_arm, run_user_partial};
use dbt_armv7::decode::{decode_a32, decode_thumb, Op};

/// How a batch runs.
pub struct Run3<'a> {
    /// Names the image (and the reruns) in the temporary directory and in messages.
    pub tag: &'a str,
    /// `qemu-arm -cpu` (None: its default CPU).
    pub qemu_cpu: Option<&'a str>,
    /// The interpreter's instruction budget for the whole batch.
    pub budget: u64,
    /// Whether a case qemu-arm stops at and the two others do not (or the reverse) is a
    /// mismatch (the VFP/NEON families) rather than a rejection (the integer families,
    /// where qemu-arm's user mode does not raise every alignment fault the model does,
    /// e.g. `STREXD` to a word-aligned address).
    pub qemu_stops: bool,
    /// Describes how three records of a case differ (a line per register that does).
    pub diff: fn(&Case, [&[u8]; 3]) -> String,
}

/// What a batch gave.
#[derive(Default)]
pub struct Outcome {
    /// Mismatches, each with the case and what differs.
    pub fails: Vec<String>,
    /// Rejected cases with the reasons of those that stopped.
    pub rejects: Vec<String>,
    /// Translator-only differences in cases with a store-exclusive that matched when the
    /// case ran alone again (spurious `STXR` failures of the host).
    pub spurious: Vec<String>,
    /// The translator's counters (`dbt: name value ...`) of the last run.
    pub stats: Vec<(String, u64)>,
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

/// Whether the case contains a store-exclusive (`STREX`, `STREXB/H/D`): the only
/// instruction whose translated outcome may differ between two runs, because the host's
/// exclusive monitor (here qemu-aarch64's) may fail a `STXR` for reasons outside the guest,
/// as the architecture allows.
fn has_store_exclusive(c: &Case) -> bool {
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

fn write_elf(path: &std::path::Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// Runs `case` alone through the translator up to three times; true when one run leaves
/// exactly `want` (the record qemu-arm and the interpreter agreed on).
fn translator_agrees_on_rerun(
    case: &Case,
    src: &[u8],
    path: &std::path::Path,
    want: &[u8],
) -> bool {
    let path = path.with_extension("rerun.elf");
    write_elf(&path, &build(std::slice::from_ref(case), src).bytes);
    let agrees = (0..3).any(|_| {
        let t = super::a64::run(&path, false);
        t.status.success() && matches!(records(&t.stdout, 1, None), Ok(r) if r[0] == want)
    });
    let _ = std::fs::remove_file(&path);
    agrees
}

/// Runs one batch three ways (see the module doc), each case starting from scratch
/// window `src`.
pub fn run3(mut cases: Vec<Case>, src: &[u8], how: &Run3) -> Outcome {
    let dir = std::env::temp_dir().join(format!("dbt-armv7-run3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.elf", how.tag));
    let mut out = Outcome::default();
    loop {
        if cases.is_empty() {
            return out;
        }
        let img = build(&cases, src);
        write_elf(&path, &img.bytes);
        let n = cases.len();
        // qemu-arm and the translator run as child processes while the interpreter runs here.
        let mut q = std::process::Command::new("timeout");
        q.arg("120").arg(qemu_arm());
        if let Some(cpu) = how.qemu_cpu {
            q.args(["-cpu", cpu]);
        }
        let qchild = q
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("qemu-arm");
        let tpath = path.clone();
        let tchild = std::thread::spawn(move || super::a64::run(&tpath, false));
        let (o, e) = match run_user_partial(BASE, &img.bytes, img.entry, how.budget, None) {
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
        let runs = [
            ("qemu-arm", &qemu),
            ("interpreter", &interp),
            ("translator", &dbt),
        ];
        let first = runs
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().map(|(k, _)| *k))
            .min();
        if let Some(k) = first {
            let k = k.min(n - 1);
            let stopped: Vec<String> = runs
                .iter()
                .filter_map(|(name, r)| match r {
                    Err((j, why)) if (*j).min(n - 1) == k => Some(format!("{name}: {why}")),
                    _ => None,
                })
                .collect();
            let why = stopped.join("; ");
            let stops = |r: &Result<Vec<Vec<u8>>, (usize, String)>| matches!(r, Err((j, _)) if (*j).min(n - 1) == k);
            let disagree =
                stops(&interp) != stops(&dbt) || (how.qemu_stops && stops(&qemu) != stops(&interp));
            if disagree {
                out.fails.push(format!(
                    "{}: not all stopped ({why})\n    {}",
                    how.tag,
                    cases[k].line()
                ));
            }
            out.rejects.push(format!("{why}\n    {}", cases[k].line()));
            cases.remove(k);
            continue;
        }
        let (qemu, interp, dbt) = (qemu.unwrap(), interp.unwrap(), dbt.unwrap());
        for (k, c) in cases.iter().enumerate() {
            if qemu[k] == interp[k]
                && qemu[k] != dbt[k]
                && has_store_exclusive(c)
                && translator_agrees_on_rerun(c, src, &path, &qemu[k])
            {
                out.spurious
                    .push(format!("{} case {k}: {}", how.tag, c.line()));
                continue;
            }
            if qemu[k] != interp[k] || qemu[k] != dbt[k] {
                out.fails.push(format!(
                    "{} case {k}: {}",
                    how.tag,
                    (how.diff)(c, [&qemu[k], &interp[k], &dbt[k]])
                ));
            }
        }
        if std::env::var("DBT_DIFF_KEEP").is_err() {
            let _ = std::fs::remove_file(&path);
        }
        out.stats = super::a64::stats(&t.stderr);
        return out;
    }
}
