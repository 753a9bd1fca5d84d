//! The A64 side of the translator tests: builds `a64-runner` (a static no_std AArch64
//! Linux program that runs an ARM ELF32 through the translator) for `aarch64-unknown-none`
//! into `target/dbt-a64-runner`, and runs it under `qemu-aarch64` (Debian `qemu-user`).

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Path of the runner, built once per test process.
pub fn runner() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            let tdir = dir.join("../../target/dbt-a64-runner");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let st = Command::new(cargo)
                .args([
                    "build",
                    "-q",
                    "--release",
                    "--target",
                    "aarch64-unknown-none",
                ])
                .arg("--manifest-path")
                .arg(dir.join("a64-runner/Cargo.toml"))
                .arg("--target-dir")
                .arg(&tdir)
                .env_remove("RUSTFLAGS")
                .env_remove("CARGO_ENCODED_RUSTFLAGS")
                .status()
                .expect("cargo build a64-runner");
            assert!(st.success(), "building a64-runner failed");
            tdir.join("aarch64-unknown-none/release/dbt-a64-runner")
        })
        .clone()
}

/// Path of `qemu-aarch64`, or a panic telling how to install it.
pub fn qemu_aarch64() -> PathBuf {
    let p = PathBuf::from("/usr/bin/qemu-aarch64");
    assert!(
        p.exists(),
        "qemu-aarch64 not found: install Debian's user-mode emulator with `apt-get install -y qemu-user`"
    );
    p
}

/// The runner's counters line (`dbt: name value ...`) as pairs.
pub fn stats(stderr: &[u8]) -> Vec<(String, u64)> {
    let s = String::from_utf8_lossy(stderr);
    let Some(line) = s.lines().find(|l| l.starts_with("dbt: ")) else {
        return Vec::new();
    };
    let w: Vec<&str> = line[5..].split_whitespace().collect();
    w.chunks(2)
        .filter_map(|c| Some((c[0].to_string(), c.get(1)?.parse().ok()?)))
        .collect()
}

/// Runs the ELF32 at `elf` through the translator (or with `--interp`, the interpreter
/// alone) under `qemu-aarch64`, killed after 120 s.
pub fn run(elf: &std::path::Path, interp_only: bool) -> std::process::Output {
    run_with(elf, if interp_only { &["--interp"] } else { &[] })
}

/// Runs the ELF32 at `elf` in the runner with options `opts`, killed after 120 s.
pub fn run_with(elf: &std::path::Path, opts: &[&str]) -> std::process::Output {
    Command::new("timeout")
        .arg("120")
        .arg(qemu_aarch64())
        .arg(runner())
        .args(opts)
        .arg(elf)
        .output()
        .expect("running qemu-aarch64")
}

/// Writes the ELF32 image `elf` to a temporary file named after `tag` (unique within the
/// test process) and runs it in the runner with options `opts`; the file is removed after.
pub fn run_image(elf: &[u8], tag: &str, opts: &[&str]) -> std::process::Output {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!("dbt-armv7-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.elf", NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&path, elf).unwrap();
    let out = run_with(&path, opts);
    let _ = std::fs::remove_file(&path);
    out
}

/// [`run_image`], then the guest's exit status and the runner's counters.
pub fn run_image_status(elf: &[u8], tag: &str, opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let out = run_image(elf, tag, opts);
    let code = out.status.code().expect("runner exit status");
    (code, stats(&out.stderr))
}

/// [`run_image`], then the guest's exit status, its output and the runner's counters.
pub fn run_image_output(
    elf: &[u8],
    tag: &str,
    opts: &[&str],
) -> (i32, Vec<u8>, Vec<(String, u64)>) {
    let out = run_image(elf, tag, opts);
    let code = out.status.code().expect("runner exit status");
    (code, out.stdout, stats(&out.stderr))
}
