//! `cargo xtask bench --dbt`: the ARMv7-A translator (`crates/dbt-armv7`) against its
//! interpreter on the kernels of `crates/dbt-armv7/bench-guest` (CRC-32, a sort, a
//! matrix multiply, a call-heavy recursion with indirect calls, a pointer chase over
//! 64 MiB, sensitive instructions, VFP, and NEON as Linux uses it), each a static ARM
//! Linux program run by `a64-runner` (a no_std AArch64 Linux program) under
//! `qemu-aarch64`.
//!
//! Host instructions are counted by a QEMU TCG plugin built here with `cc` (an inline
//! per-block counter: deterministic, identical from run to run), split into those executed
//! in the runner's code cache (translated code) and the rest (dispatcher, translator,
//! interpreter, runner). Per kernel: guest instructions; host instructions per guest
//! instruction through the translator (all, and in translated code) and through the
//! interpreter; the ratio; and the translation cost per guest instruction translated, from
//! a second run that translates every block once more (`--retranslate`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::Workspace;
use crate::error::{IoContext, Result};
use crate::fail;

/// The kernels (binaries of bench-guest), in table order.
const KERNELS: [(&str, &str); 9] = [
    ("crc32", "CRC-32, 8 x 64 KiB"),
    ("sort", "sort_unstable, 64 Ki words"),
    ("matmul", "96x96 matrix multiply"),
    ("fib", "recursion + indirect calls"),
    ("chase", "pointer chase, 64 MiB"),
    ("sysreg", "MCR/MRC TPIDRURW + MRS, 3 of 6 sensitive"),
    ("vfp", "VFP f64 dot product + NEON checksum"),
    ("neon", "NEON ChaCha20 + f32 mixer + u8 blend"),
    ("sha256", "SHA-256 of 256 KiB, Thumb-2 block function"),
];
/// Where the runner maps its code cache (a64-runner/src/code.rs) and its size.
const CACHE: (u64, u64) = (0x20_0000_0000, 16 << 20);
/// Seconds a run may take.
const TIMEOUT: &str = "600";

/// The instruction-counting plugin (QEMU plugin API version 1, as in QEMU 7.2; the few
/// declarations it needs are written out, so no QEMU headers are required).
const PLUGIN_C: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *,
    enum qemu_plugin_op, void *, uint64_t);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, void *), void *);
extern void qemu_plugin_outs(const char *);
static uint64_t inside, outside, lo, hi;
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    uint64_t pc = qemu_plugin_tb_vaddr(tb);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
        pc >= lo && pc < hi ? &inside : &outside, qemu_plugin_tb_n_insns(tb));
}
static void done(qemu_plugin_id_t id, void *p) {
    char buf[128];
    snprintf(buf, sizeof buf, "insns: cache %llu other %llu\n",
             (unsigned long long)inside, (unsigned long long)outside);
    qemu_plugin_outs(buf);
}
__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "lo=", 3)) lo = strtoull(argv[i] + 3, 0, 0);
        if (!strncmp(argv[i], "hi=", 3)) hi = strtoull(argv[i] + 3, 0, 0);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, done, 0);
    return 0;
}
"#;

/// One run's counts.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    /// Guest instructions executed.
    guest: u64,
    /// Guest instructions translated (static).
    translated: u64,
    /// Host instructions in the code cache.
    cache: u64,
    /// Host instructions elsewhere.
    other: u64,
}

impl Counts {
    fn host(&self) -> u64 {
        self.cache + self.other
    }
}

/// One kernel's row.
#[derive(Debug, Clone)]
struct Row {
    name: &'static str,
    what: &'static str,
    dbt: Counts,
    interp: Counts,
    retranslate: Counts,
}

fn cargo_build(manifest: &Path, target: &str, dir: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args([
            "build",
            "-q",
            "--release",
            "--target",
            target,
            "--manifest-path",
        ])
        .arg(manifest)
        .arg("--target-dir")
        .arg(dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .io(|| format!("running cargo build for {}", manifest.display()))?;
    if !st.success() {
        return Err(fail!("building {} failed", manifest.display()));
    }
    Ok(())
}

/// Builds the plugin into `dir` and returns its path.
fn plugin(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).io(|| format!("creating {}", dir.display()))?;
    let src = dir.join("count.c");
    let so = dir.join("libcount.so");
    std::fs::write(&src, PLUGIN_C).io(|| format!("writing {}", src.display()))?;
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .io(|| "running cc (a C compiler builds the counting plugin)".into())?;
    if !st.success() {
        return Err(fail!("building the QEMU plugin failed"));
    }
    Ok(so)
}

/// Runs `runner opts elf` under counting `qemu-aarch64`; returns the counts and stdout.
fn count(plugin: &Path, runner: &Path, opts: &[&str], elf: &Path) -> Result<(Counts, String)> {
    let out = Command::new("timeout")
        .arg(TIMEOUT)
        .arg("qemu-aarch64")
        .arg("-plugin")
        .arg(format!(
            "{},lo={:#x},hi={:#x}",
            plugin.display(),
            CACHE.0,
            CACHE.0 + CACHE.1
        ))
        .args(["-d", "plugin"])
        .arg(runner)
        .args(opts)
        .arg(elf)
        .output()
        .io(|| "running qemu-aarch64 (apt-get install -y qemu-user)".into())?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(fail!("{} {opts:?}: {} {err}", elf.display(), out.status));
    }
    let mut c = Counts::default();
    for line in err.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let field = |k: &str| -> Option<u64> {
            w.iter()
                .position(|x| *x == k)
                .and_then(|i| w.get(i + 1)?.parse().ok())
        };
        if line.starts_with("dbt: ") {
            c.guest = field("icount").unwrap_or(0);
            c.translated = field("guest_insns").unwrap_or(0);
        } else if line.starts_with("insns: ") {
            c.cache = field("cache").unwrap_or(0);
            c.other = field("other").unwrap_or(0);
        }
    }
    if c.guest == 0 || c.host() == 0 {
        return Err(fail!("{} {opts:?}: no counts in: {err}", elf.display()));
    }
    Ok((c, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The table (Markdown).
fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str(
        "| kernel | guest insns | translator: host/guest | of which in translated code | \
         interpreter: host/guest | translator speed-up | translation: host insns per guest insn translated |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let g = r.dbt.guest as f64;
        let tcost = r.retranslate.host().saturating_sub(r.dbt.host()) as f64
            / (r.retranslate.translated - r.dbt.translated).max(1) as f64;
        let _ = writeln!(
            s,
            "| {} ({}) | {} | {:.2} | {:.2} | {:.1} | {:.1}x | {:.0} |",
            r.name,
            r.what,
            r.dbt.guest,
            r.dbt.host() as f64 / g,
            r.dbt.cache as f64 / g,
            r.interp.host() as f64 / r.interp.guest as f64,
            r.interp.host() as f64 / r.dbt.host() as f64,
            tcost,
        );
    }
    s
}

/// `cargo xtask bench --dbt` (`DBT_BENCH_VM_ONLY=1`: the in-VM rows only). Returns the
/// exit status.
pub fn run(ws: &Workspace) -> Result<i32> {
    if std::env::var_os("DBT_BENCH_VM_ONLY").is_some() {
        // Only the in-VM rows (guests/armv7-dbtbench), e.g. while working on the runtime.
        println!("{}", crate::bench_dbt_vm::run(ws)?);
        return Ok(0);
    }
    let crate_dir = ws.root.join("crates/dbt-armv7");
    let runner_dir = ws.target.join("dbt-a64-runner");
    let guest_dir = ws.target.join("dbt-bench-guest");
    eprintln!("bench --dbt: building a64-runner and bench-guest");
    cargo_build(
        &crate_dir.join("a64-runner/Cargo.toml"),
        "aarch64-unknown-none",
        &runner_dir,
    )?;
    cargo_build(
        &crate_dir.join("bench-guest/Cargo.toml"),
        "armv7a-none-eabi",
        &guest_dir,
    )?;
    let runner = runner_dir.join("aarch64-unknown-none/release/dbt-a64-runner");
    let plugin = plugin(&ws.target.join("dbt-bench"))?;
    let mut rows = Vec::new();
    for (name, what) in KERNELS {
        let elf = guest_dir.join("armv7a-none-eabi/release").join(name);
        eprintln!("bench --dbt: {name}");
        let (dbt, out_t) = count(&plugin, &runner, &[], &elf)?;
        let (interp, out_i) = count(&plugin, &runner, &["--interp"], &elf)?;
        let (retranslate, _) = count(&plugin, &runner, &["--retranslate"], &elf)?;
        if out_t != out_i || dbt.guest != interp.guest {
            return Err(fail!(
                "{name}: the translator ({} instructions: {out_t:?}) and the interpreter ({} instructions: {out_i:?}) disagree",
                dbt.guest,
                interp.guest
            ));
        }
        rows.push(Row {
            name,
            what,
            dbt,
            interp,
            retranslate,
        });
    }
    println!(
        "DBT (crates/dbt-armv7): host AArch64 instructions per guest ARMv7 instruction, \
         counted by a QEMU plugin under qemu-aarch64 (deterministic)\n"
    );
    println!("{}", table(&rows));
    println!("{}", crate::bench_dbt_vm::run(ws)?);
    Ok(0)
}
