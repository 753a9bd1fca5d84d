//! `cargo xtask fuzz [TARGET] [--time SECS] [--list]`: the libFuzzer targets of `fuzz/` (a
//! workspace of its own) through cargo-fuzz on the nightly toolchain, both installed on
//! first use. Each target starts from its committed seeds (`fuzz/corpus/<target>/`, read
//! only) and grows a working corpus under `target/fuzz/corpus/<target>/`; crashes land in
//! `target/fuzz/artifacts/<target>/`. At the end one line per target gives libFuzzer's
//! executions and coverage (`cov:` edges, `ft:` features). Fuzzing is not part of
//! `cargo xtask test`: a crash found becomes a regression test in its crate instead.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::build::{show_command, Workspace};
use crate::cli::FuzzArgs;
use crate::error::{IoContext, Result};
use crate::{fail, usage};

/// The toolchain cargo-fuzz needs (`-Z sanitizer`, `-C passes=sancov-module`).
pub const NIGHTLY: &str = "nightly";

/// Every target: its name (a `[[bin]]` of `fuzz/Cargo.toml`) and what it fuzzes.
pub const TARGETS: &[(&str, &str)] = &[
    (
        "esr_decode",
        "ESR_EL2 decoding (el2_core::exit) and each class's field decoders",
    ),
    (
        "mmio_decode",
        "the ISV=0 load/store decoder (el2_core::mmio_decode) and its resolution",
    ),
    (
        "exit_dispatch",
        "the exit handlers (hypervisor::exits) on a mock VM, runs of exits",
    ),
    (
        "vgic_regs",
        "vGIC GICD/GICR registers, SGI sysregs, lines, LR flush/sync",
    ),
    (
        "virtqueue",
        "virtio-mmio transport + virtqueues of block/console/rng/net devices",
    ),
    ("smccc", "SMCCC/PSCI dispatch (el2_core::smccc)"),
    (
        "host_dtb",
        "the host device tree (hypervisor::platform over the fdt crate)",
    ),
    (
        "vmpkg",
        "the VM package reader (vmpkg), read back through the writer",
    ),
    (
        "vm_config",
        "VM configuration and scenario files (xtask::config, xtask::scenarios)",
    ),
    ("dbt_decode", "the A32/T32 decoders of dbt-armv7"),
    (
        "dbt_translate",
        "dbt-armv7's translator front end and A64 back end",
    ),
];

/// What libFuzzer reported about one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FuzzStats {
    /// Inputs executed.
    pub execs: u64,
    /// Coverage: edges (`cov:`).
    pub cov: u64,
    /// Coverage: features (`ft:`).
    pub ft: u64,
    /// Inputs in the corpus (`corp:`).
    pub corpus: u64,
}

/// The last status line of libFuzzer's output (`#123 DONE cov: 45 ft: 67 corp: 8/90b ...`),
/// with `stat::number_of_executed_units` when `-print_final_stats=1` printed it.
pub fn parse_stats(log: &str) -> Option<FuzzStats> {
    let line = log
        .lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains(" cov: "))?;
    let field = |name: &str| -> Option<u64> {
        let mut words = line.split_whitespace();
        words.find(|w| *w == name)?;
        let value = words.next()?;
        value.split('/').next()?.parse().ok()
    };
    let mut stats = FuzzStats {
        execs: line
            .split_whitespace()
            .next()?
            .trim_start_matches('#')
            .parse()
            .ok()?,
        cov: field("cov:")?,
        ft: field("ft:").unwrap_or(0),
        corpus: field("corp:").unwrap_or(0),
    };
    let final_execs = log
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|v| v.trim().parse().ok());
    if let Some(n) = final_execs {
        stats.execs = n;
    }
    Some(stats)
}

/// The `cargo` arguments that fuzz `target` for `secs` seconds (paths relative to the
/// workspace root, where cargo runs).
pub fn fuzz_args(target: &str, secs: u64) -> Vec<String> {
    vec![
        format!("+{NIGHTLY}"),
        "fuzz".into(),
        "run".into(),
        "--fuzz-dir".into(),
        "fuzz".into(),
        "--target-dir".into(),
        "target/fuzz".into(),
        target.into(),
        // libFuzzer writes new inputs into the first directory only: the seeds stay as
        // committed.
        format!("target/fuzz/corpus/{target}"),
        format!("fuzz/corpus/{target}"),
        "--".into(),
        format!("-max_total_time={secs}"),
        format!("-artifact_prefix=target/fuzz/artifacts/{target}/"),
        "-print_final_stats=1".into(),
    ]
}

/// Runs `cargo xtask fuzz`; the exit status is non-zero when a target crashed.
pub fn run(ws: &Workspace, args: &FuzzArgs) -> Result<i32> {
    if args.list {
        for (name, what) in TARGETS {
            println!("{name:<14} {what}");
        }
        return Ok(0);
    }
    let targets: Vec<&str> = match &args.target {
        Some(t) if TARGETS.iter().any(|(n, _)| n == t) => vec![t.as_str()],
        Some(t) => {
            return Err(usage!(
                "no fuzz target '{t}'; `cargo xtask fuzz --list` shows them"
            ))
        }
        None => TARGETS.iter().map(|(n, _)| *n).collect(),
    };
    ensure_nightly()?;
    ensure_cargo_fuzz()?;
    let mut rows = Vec::new();
    let mut crashed = 0;
    for target in targets {
        let row = run_target(ws, target, args.time)?;
        crashed += usize::from(!row.ok);
        rows.push(row);
    }
    println!(
        "\n{:<14} {:>12} {:>7} {:>7} {:>6} {:>6}  result",
        "target", "execs", "cov", "ft", "corp", "secs"
    );
    for r in &rows {
        let s = r.stats.clone().unwrap_or_default();
        println!(
            "{:<14} {:>12} {:>7} {:>7} {:>6} {:>6}  {}",
            r.target,
            s.execs,
            s.cov,
            s.ft,
            s.corpus,
            r.secs,
            if r.ok { "ok" } else { "CRASH (see above)" }
        );
    }
    Ok(if crashed == 0 { 0 } else { 1 })
}

/// One target's result.
struct Row {
    target: String,
    stats: Option<FuzzStats>,
    secs: u64,
    ok: bool,
}

fn run_target(ws: &Workspace, target: &str, secs: u64) -> Result<Row> {
    let fuzz_target = ws.root.join("target/fuzz");
    for dir in ["corpus", "artifacts", "logs"] {
        let d = fuzz_target.join(dir).join(target);
        fs::create_dir_all(&d).io(|| format!("creating {}", d.display()))?;
    }
    let log_path = fuzz_target.join("logs").join(target).join("fuzz.log");
    let log = fs::File::create(&log_path).io(|| format!("creating {}", log_path.display()))?;
    let args = fuzz_args(target, secs);
    println!(
        "fuzz {target}: {} s (+ build); log {}\n  {}",
        secs,
        log_path.display(),
        show_command("cargo", &args)
    );
    let start = Instant::now();
    let status = nightly_cargo(&ws.root)
        .args(&args)
        .stdout(Stdio::inherit())
        .stderr(Stdio::from(log))
        .status()
        .io(|| "running cargo fuzz".into())?;
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let stats = parse_stats(&text);
    let ok = status.success();
    if !ok {
        println!("FAILED fuzz {target} ({status}); the end of its log:");
        for line in crate::scenarios::tail(&text, 40) {
            println!("  {line}");
        }
    } else if let Some(s) = &stats {
        println!(
            "ok fuzz {target}: {} execs, cov {}, ft {}, corpus {}",
            s.execs, s.cov, s.ft, s.corpus
        );
    }
    Ok(Row {
        target: target.into(),
        stats,
        secs: start.elapsed().as_secs(),
        ok,
    })
}

/// `cargo` in `root`, without the environment of the pinned toolchain that runs xtask (so
/// that `+nightly` decides).
fn nightly_cargo(root: &Path) -> Command {
    let mut c = Command::new("cargo");
    c.current_dir(root);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "CARGO_TARGET_DIR",
    ] {
        c.env_remove(var);
    }
    c
}

fn ensure_nightly() -> Result<()> {
    let out = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .io(|| "running rustup toolchain list (rustup is needed)".into())?;
    let list = String::from_utf8_lossy(&out.stdout);
    if list.lines().any(|l| l.starts_with(&format!("{NIGHTLY}-"))) {
        return Ok(());
    }
    println!("fuzz: installing the {NIGHTLY} toolchain (cargo-fuzz needs it): rustup toolchain install {NIGHTLY} --profile minimal");
    let status = Command::new("rustup")
        .args(["toolchain", "install", NIGHTLY, "--profile", "minimal"])
        .status()
        .io(|| "running rustup toolchain install".into())?;
    if !status.success() {
        return Err(fail!(
            "rustup toolchain install {NIGHTLY} failed ({status})"
        ));
    }
    Ok(())
}

fn ensure_cargo_fuzz() -> Result<()> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let installed = crate::setup::find_in_path("cargo-fuzz").is_some()
        || cargo_home.is_some_and(|h| h.join("bin/cargo-fuzz").is_file());
    if installed {
        return Ok(());
    }
    println!("fuzz: installing cargo-fuzz (once): cargo +{NIGHTLY} install cargo-fuzz --locked");
    let status = Command::new("cargo")
        .args([&format!("+{NIGHTLY}"), "install", "cargo-fuzz", "--locked"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .status()
        .io(|| "running cargo install cargo-fuzz".into())?;
    if !status.success() {
        return Err(fail!("cargo install cargo-fuzz failed ({status})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_target_is_built_and_seeded() {
        let manifest = fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
        let bins: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.strip_prefix("name = \""))
            .filter_map(|l| l.strip_suffix('"'))
            .filter(|n| *n != "hv-fuzz")
            .collect();
        let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
        assert_eq!(bins, names);
        for name in names {
            assert!(root()
                .join(format!("fuzz/fuzz_targets/{name}.rs"))
                .is_file());
            let seeds = fs::read_dir(root().join(format!("fuzz/corpus/{name}")))
                .unwrap_or_else(|e| panic!("fuzz/corpus/{name}: {e}"))
                .count();
            assert!(seeds > 0, "no seeds for {name}");
        }
    }

    #[test]
    fn stats_from_libfuzzer_output() {
        let log = "INFO: Seed: 1\n#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #1024\tpulse  cov: 40 ft: 55 corp: 7/90b lim: 4 exec/s: 512 rss: 31Mb\n\
                   #5000\tDONE   cov: 42 ft: 60 corp: 8/99b lim: 4 exec/s: 2500 rss: 31Mb\n\
                   Done 5000 runs in 2 second(s)\nstat::number_of_executed_units: 5001\n";
        let s = parse_stats(log).unwrap();
        assert_eq!(
            s,
            FuzzStats {
                execs: 5001,
                cov: 42,
                ft: 60,
                corpus: 8
            }
        );
        assert_eq!(parse_stats("no status"), None);
    }

    #[test]
    fn seeds_stay_read_only() {
        let a = fuzz_args("smccc", 120);
        let corpus: Vec<&String> = a.iter().filter(|s| s.contains("corpus")).collect();
        assert_eq!(corpus, ["target/fuzz/corpus/smccc", "fuzz/corpus/smccc"]);
        assert!(a.contains(&"-max_total_time=120".to_string()));
        assert_eq!(a[0], "+nightly");
    }
}
