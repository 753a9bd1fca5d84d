//! `cargo xtask bench --profile OP`: where the EL2 instructions of one bench operation go.
//!
//! The `bench` guest runs twice per cell under the hypervisor: with `only=OP` (that
//! operation's loop alone) and with `only=none` (boot and shutdown only). A QEMU TCG plugin
//! (built here with `cc`; QEMU 7.2's plugin API, version 1) counts every executed
//! instruction of the hypervisor image by address. It tells hypervisor code from guest code
//! at the same virtual address (both are linked at 0x4008_0000) by the host address QEMU
//! maps it from: the hypervisor runs identity-mapped, so host address minus virtual address
//! is one constant for all of its code (learnt from the first instruction QEMU translates,
//! the hypervisor's entry with the MMU off); the guest's RAM lies elsewhere. The difference
//! of the two runs, divided by the operation's iterations, is the EL2 cost of one
//! operation, per instruction address; `llvm-addr2line` names the function (innermost
//! inlined frame) and the `run_vcpu` phase (the frame inlined into it) of each address.
//! Deterministic like the bench itself (`-icount`), so two profiles are identical.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::bench::{cell_args, run_logged, Cell, CPUS};
use crate::error::{IoContext, Result};
use crate::fail;

/// The declarations of the QEMU plugin API (version 1, as in QEMU 7.2) that the benches'
/// counting plugins use, written out so that no QEMU headers are required: the start of
/// each plugin's C source (`concat!(qemu_plugin_api!(), ...)`).
macro_rules! qemu_plugin_api {
    () => {
        r#"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
extern void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *);
extern const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
extern void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *,
    enum qemu_plugin_op, void *, uint64_t);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *,
    void (*)(unsigned int, void *), enum qemu_plugin_cb_flags, void *);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *,
    void (*)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void *),
    enum qemu_plugin_cb_flags, enum qemu_plugin_mem_rw, void *);
extern struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t, uint64_t);
extern int qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *);
extern uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, void *), void *);
"#
    };
}
pub(crate) use qemu_plugin_api;

/// The EL2 instruction counting plugin (QEMU plugin API version 1, as in QEMU 7.2; the few
/// declarations it needs are written out, so no QEMU headers are required). Arguments:
/// `base=` and `size=` (the hypervisor image), `out=` (the file it writes: one
/// `address count` line per executed hypervisor instruction, then `guest N`).
const PLUGIN_C: &str = concat!(
    crate::bench_profile::qemu_plugin_api!(),
    r#"
static uint64_t base, size, guest, *counts;
static int64_t delta;
static int have_delta;
static char out[4096];
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        int64_t d = (int64_t)(uintptr_t)qemu_plugin_insn_haddr(insn) - (int64_t)va;
        if (!have_delta) { delta = d; have_delta = 1; }
        void *slot = &guest;
        if (d == delta && va >= base && va - base < size) slot = &counts[(va - base) / 4];
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, slot, 1);
    }
}
static void done(qemu_plugin_id_t id, void *p) {
    FILE *f = fopen(out, "w");
    if (!f) return;
    for (uint64_t i = 0; i < size / 4; i++)
        if (counts[i]) fprintf(f, "%llx %llu\n", (unsigned long long)(base + 4 * i),
                               (unsigned long long)counts[i]);
    fprintf(f, "guest %llu\n", (unsigned long long)guest);
    fclose(f);
}
__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "base=", 5)) base = strtoull(argv[i] + 5, 0, 0);
        if (!strncmp(argv[i], "size=", 5)) size = strtoull(argv[i] + 5, 0, 0);
        if (!strncmp(argv[i], "out=", 4)) snprintf(out, sizeof out, "%s", argv[i] + 4);
    }
    counts = calloc(size / 4 + 1, sizeof *counts);
    if (!counts || !out[0]) return -1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, done, 0);
    return 0;
}
"#
);

/// Iterations of each operation's timed loop in the guest (`guests/bench`).
pub fn iterations(op: &str) -> Option<u64> {
    match op {
        "hvc" | "sysreg" | "mmio-pl011" | "mmio-gicd" | "virtio-notify" => Some(2000),
        "sgi-self" => Some(1000),
        "timer-latency" => Some(100),
        "ipi-roundtrip" => Some(200),
        _ => None,
    }
}

/// Builds a QEMU TCG plugin from its C `source` into `dir/<stem>.so` with the host's `cc`
/// (again only when the source changed); `what` names the feature that needs it, for the
/// error messages. Shared by `--profile` and the counted Linux boot.
pub fn build_qemu_plugin(
    dir: &Path,
    stem: &str,
    source: &str,
    what: &str,
) -> Result<std::path::PathBuf> {
    fs::create_dir_all(dir).io(|| format!("creating {}", dir.display()))?;
    let src = dir.join(format!("{stem}.c"));
    let so = dir.join(format!("{stem}.so"));
    if fs::read_to_string(&src).ok().as_deref() != Some(source) || !so.exists() {
        fs::write(&src, source).io(|| format!("writing {}", src.display()))?;
        let st = Command::new("cc")
            .args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&src)
            .status()
            .io(|| format!("running cc (needed for {what})"))?;
        if !st.success() {
            return Err(fail!("cc failed building the plugin for {what}"));
        }
    }
    Ok(so)
}

/// Executed hypervisor instructions by address, and the guest's instruction count.
fn read_counts(path: &Path) -> Result<(BTreeMap<u64, u64>, u64)> {
    let text = fs::read_to_string(path).io(|| format!("reading {}", path.display()))?;
    let mut m = BTreeMap::new();
    let mut guest = 0;
    for line in text.lines() {
        let Some((a, n)) = line.split_once(' ') else {
            continue;
        };
        let n: u64 = n.parse().unwrap_or(0);
        if a == "guest" {
            guest = n;
        } else if let Ok(addr) = u64::from_str_radix(a, 16) {
            m.insert(addr, n);
        }
    }
    Ok((m, guest))
}

/// The hypervisor image's address range from its ELF symbols (`__image_start`/`__image_end`).
pub fn image_range(elf: &Path) -> Result<(u64, u64)> {
    let out = Command::new("llvm-nm")
        .arg(elf)
        .output()
        .io(|| "running llvm-nm (needed for --profile)".into())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let sym = |name: &str| {
        text.lines().find_map(|l| {
            let mut it = l.split_whitespace();
            let (a, _, n) = (it.next()?, it.next()?, it.next()?);
            (n == name)
                .then(|| u64::from_str_radix(a, 16).ok())
                .flatten()
        })
    };
    match (sym("__image_start"), sym("__image_end")) {
        (Some(a), Some(b)) if b > a => Ok((a, b - a)),
        _ => Err(fail!("no __image_start/__image_end in {}", elf.display())),
    }
}

/// One address's source: (innermost function, the frame inlined into `run_vcpu` or the
/// outermost function).
fn symbolize(elf: &Path, addrs: &[u64]) -> Result<Vec<(String, String)>> {
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let mut child = Command::new("llvm-addr2line")
        .args(["--output-style=JSON", "-f", "-i", "-C", "-e"])
        .arg(elf)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .io(|| "running llvm-addr2line (needed for --profile)".into())?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped");
        stdin
            .write_all(input.as_bytes())
            .io(|| "writing to llvm-addr2line".into())?;
    }
    let out = child
        .wait_with_output()
        .io(|| "reading llvm-addr2line".into())?;
    let text = String::from_utf8_lossy(&out.stdout);
    // One JSON object per address; its inline chain is the "FunctionName"s, innermost first.
    let mut res = Vec::with_capacity(addrs.len());
    for line in text.lines().filter(|l| l.starts_with('{')) {
        let chain: Vec<String> = line
            .split("\"FunctionName\":\"")
            .skip(1)
            .filter_map(|rest| rest.split_once('"').map(|(f, _)| f.to_string()))
            .collect();
        let inner = chain.first().cloned().unwrap_or_else(|| "??".into());
        let pos = chain.iter().position(|f| f.ends_with("run_vcpu"));
        let phase = match pos {
            Some(0) | None => chain.last().cloned().unwrap_or_else(|| "??".into()),
            Some(p) => chain[p - 1].clone(),
        };
        res.push((short(&inner), short(&phase)));
    }
    if res.len() != addrs.len() {
        return Err(fail!(
            "llvm-addr2line gave {} of {} chains",
            res.len(),
            addrs.len()
        ));
    }
    Ok(res)
}

/// A readable function name: legacy Rust mangling escapes decoded, the hash suffix, generic
/// arguments and all but the last three path segments dropped.
fn short(name: &str) -> String {
    let mut name = name.to_string();
    for (from, to) in [
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$u20$", " "),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$RF$", "&"),
        ("$C$", ","),
        ("..", "::"),
    ] {
        name = name.replace(from, to);
    }
    if let Some((head, hash)) = name.rsplit_once("::h") {
        if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
            name = head.to_string();
        }
    }
    let mut out = String::new();
    let mut depth = 0;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    // `<A as Trait>::f` leaves `::f`: name it by what was inside.
    if out.starts_with("::") {
        if let Some(inner) = name.strip_prefix('<').and_then(|n| n.split_once(" as ")) {
            out = format!("{}{out}", inner.0);
        }
    }
    let parts: Vec<&str> = out.split("::").filter(|p| !p.is_empty()).collect();
    parts[parts.len().saturating_sub(3)..].join("::")
}

/// What a profile run needs on disk.
pub struct Files<'a> {
    /// `qemu-system-aarch64`.
    pub qemu: &'a Path,
    /// Where the plugin, counts and logs go.
    pub dir: &'a Path,
    /// The bench guest's image.
    pub guest_bin: &'a Path,
    /// The hypervisor's ELF (symbols, image range).
    pub hv_elf: &'a Path,
    /// The hypervisor's image QEMU boots.
    pub hv_bin: &'a Path,
    /// The package with the bench guest and `only=OP`.
    pub with_op: &'a Path,
    /// The package with `only=none`.
    pub without: &'a Path,
}

/// Profiles `op` in `cell`; returns the report text.
pub fn profile(files: &Files<'_>, cell: Cell, op: &str) -> Result<String> {
    let Files {
        qemu,
        dir,
        guest_bin,
        hv_elf,
        hv_bin,
        with_op,
        without,
    } = *files;
    let packages = (with_op, without);
    let n = iterations(op).ok_or_else(|| fail!("--profile: unknown operation {op}"))?;
    let so = build_qemu_plugin(dir, "el2count", PLUGIN_C, "--profile")?;
    let (base, size) = image_range(hv_elf)?;
    let tag = cell.name().replace(['/', ' '], "-");
    let mut runs = Vec::new();
    for (which, package) in [("op", packages.0), ("none", packages.1)] {
        let out = dir.join(format!("{tag}-{op}-{which}.counts"));
        let mut args: Vec<OsString> = cell_args(cell, CPUS, guest_bin, hv_bin, package);
        args.push("-plugin".into());
        args.push(
            format!(
                "{},base={base:#x},size={size:#x},out={}",
                so.display(),
                out.display()
            )
            .into(),
        );
        let log = dir.join(format!("{tag}-{op}-{which}.log"));
        let text = run_logged(qemu, &args, &log, true)?;
        if !text.contains("bench: done") {
            return Err(fail!(
                "the profiled run did not finish (log: {})",
                log.display()
            ));
        }
        runs.push((read_counts(&out)?, text));
    }
    let ((with, guest_with), text) = &runs[0];
    let ((without, guest_without), _) = &runs[1];
    let mut diff: Vec<(u64, i64)> = with
        .iter()
        .map(|(a, c)| (*a, *c as i64 - *without.get(a).unwrap_or(&0) as i64))
        .filter(|(_, d)| *d != 0)
        .collect();
    for (a, c) in without {
        if !with.contains_key(a) {
            diff.push((*a, -(*c as i64)));
        }
    }
    let addrs: Vec<u64> = diff.iter().map(|(a, _)| *a).collect();
    let names = symbolize(hv_elf, &addrs)?;
    let mut by_func: BTreeMap<(String, String), i64> = BTreeMap::new();
    let mut by_phase: BTreeMap<String, i64> = BTreeMap::new();
    let mut total = 0i64;
    for ((_, d), (func, phase)) in diff.iter().zip(&names) {
        *by_func.entry((phase.clone(), func.clone())).or_default() += d;
        *by_phase.entry(phase.clone()).or_default() += d;
        total += d;
    }
    let per = |x: i64| x as f64 / n as f64;
    let mut r = String::new();
    use std::fmt::Write as _;
    let measured = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("bench: {op} ")))
        .filter(|v| !v.starts_with("exits"))
        .unwrap_or("?");
    let _ = writeln!(
        r,
        "{} {op}: bench says {measured} per op; EL2 instructions per op {:.1} ({} iterations), \
         guest instructions per op {:.1} (loop and exit-count reads included)",
        cell.name(),
        per(total),
        n,
        per(*guest_with as i64 - *guest_without as i64)
    );
    let mut phases: Vec<_> = by_phase.into_iter().collect();
    phases.sort_by_key(|(_, d)| -d.abs());
    for (phase, d) in phases {
        let _ = writeln!(r, "  {:>8.1}  {phase}", per(d));
        let mut funcs: Vec<_> = by_func
            .iter()
            .filter(|((p, _), _)| *p == phase)
            .map(|((_, f), d)| (f.clone(), *d))
            .collect();
        funcs.sort_by_key(|(_, d)| -d.abs());
        for (f, d) in funcs.into_iter().filter(|(_, d)| per(*d).abs() >= 0.5) {
            let _ = writeln!(r, "  {:>8.1}      {f}", per(d));
        }
    }
    Ok(r)
}
