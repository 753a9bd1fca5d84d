//! The armv7 rows of `cargo xtask bench --linux`: Debian's armhf LPAE kernel and initramfs
//! (`linux-armv7`) booted natively under `qemu-system-arm -M virt -cpu cortex-a15`, in
//! hardware AArch32 under the hypervisor (`cortex-a57` non-VHE, `max` VHE; GICv2 and
//! GICv3) and under the hypervisor's binary translator (`a64fx`, a CPU without AArch32 at
//! EL1; VHE, GICv3), all under `-icount shift=0` (virtual nanoseconds = instructions,
//! identical run to run). One vCPU on one CPU: with two, the armhf kernel stalls under
//! `-icount` before it unpacks the initramfs, natively under qemu-system-arm as well as
//! under the hypervisor (QEMU 7.2).
//!
//! Each cell is one boot with `sha256_bench=1` on the kernel command line, which gives two
//! figures: the kernel's timestamp of its `Run /init` line, and the virtual time of a
//! compute command in the guest's userland, `sha256sum` of 16 MiB in a tmpfs
//! ([`crate::linux::sha256_bench`]), whose digest is checked.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::{count, init_time, INIT_LINE};
use crate::bench::{fixed_dtb, DETERMINISM_ARGS};
use crate::build::{self, Guest, Workspace};
use crate::cli::{Backend, Cpu, Gic, HOST_MEM_OVERHEAD};
use crate::config::VmPlan;
use crate::error::Result;
use crate::linux::{self, armv7, sha256_bench};
use crate::qemu::QemuConfig;
use crate::{fail, setup};

/// The QEMU that runs ARMv7-A guests natively.
const QEMU_ARM: &str = "qemu-system-arm";
/// The CPU of the native runs.
const NATIVE_CPU: &str = "cortex-a15";
/// vCPUs and physical CPUs (see the module comment for why one).
const CPUS: u32 = 1;
/// Longest a native or hardware-AArch32 run (boot, benchmark, power-off) may take.
const TIMEOUT: Duration = Duration::from_secs(900);
/// Longest a run under the binary translator may take (its boot alone is ~5 min of wall
/// time on an idle machine).
const DBT_TIMEOUT: Duration = Duration::from_secs(3000);
/// Goal: boot in hardware AArch32 within this factor of native.
const GOAL_HARDWARE_BOOT: f64 = 1.10;
/// Goal: boot under the translator within this factor of native.
const GOAL_DBT_BOOT: f64 = 3.0;
/// Goal: `sha256sum` under the translator within this factor of hardware AArch32.
const GOAL_DBT_SHA256: f64 = 1.5;

/// Where the armhf kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// `qemu-system-arm -cpu cortex-a15`, no hypervisor.
    Native,
    /// Under the hypervisor at AArch32 EL1 (`HCR_EL2.RW` = 0) on this CPU and backend.
    Hardware(Cpu, Backend),
    /// Under the hypervisor's binary translator on this CPU (which has no AArch32 EL1).
    Dbt(Cpu, Backend),
}

/// One armv7 cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Armv7Cell {
    /// Where the kernel runs.
    pub host: Host,
    /// GIC version.
    pub gic: Gic,
}

impl Armv7Cell {
    /// `armv7 native cortex-a15 gic2`, `armv7 cortex-a57/nvhe gic2`, `armv7 dbt a64fx/vhe gic3`.
    pub fn name(self) -> String {
        let g = self.gic.number();
        match self.host {
            Host::Native => format!("armv7 native {NATIVE_CPU} gic{g}"),
            Host::Hardware(cpu, b) => format!("armv7 {}/{} gic{g}", cpu.name(), b.name()),
            Host::Dbt(cpu, b) => format!("armv7 dbt {}/{} gic{g}", cpu.name(), b.name()),
        }
    }

    /// The cell this one's boot is compared with (native on the same GIC) and the goal.
    fn boot_reference(self) -> Option<(Armv7Cell, f64)> {
        let native = Armv7Cell {
            host: Host::Native,
            gic: self.gic,
        };
        match self.host {
            Host::Native => None,
            Host::Hardware(..) => Some((native, GOAL_HARDWARE_BOOT)),
            Host::Dbt(..) => Some((native, GOAL_DBT_BOOT)),
        }
    }

    /// The cell this one's `sha256sum` is compared with, and the goal if there is one: in
    /// hardware against native (no goal), under the DBT against hardware AArch32 on `max`
    /// with the same backend and GIC.
    fn sha256_reference(self) -> Option<(Armv7Cell, Option<f64>)> {
        match self.host {
            Host::Native => None,
            Host::Hardware(..) => Some((
                Armv7Cell {
                    host: Host::Native,
                    gic: self.gic,
                },
                None,
            )),
            Host::Dbt(_, backend) => Some((
                Armv7Cell {
                    host: Host::Hardware(Cpu::Max, backend),
                    gic: self.gic,
                },
                Some(GOAL_DBT_SHA256),
            )),
        }
    }
}

/// The cells: per GIC native first, then hardware AArch32; the translator on GICv3 (as the
/// `linux-armv7` scenario runs it).
fn cells() -> Vec<Armv7Cell> {
    let hosts = [
        Host::Native,
        Host::Hardware(Cpu::CortexA57, Backend::Nvhe),
        Host::Hardware(Cpu::Max, Backend::Vhe),
    ];
    let mut all: Vec<Armv7Cell> = [Gic::V2, Gic::V3]
        .into_iter()
        .flat_map(|gic| hosts.into_iter().map(move |host| Armv7Cell { host, gic }))
        .collect();
    all.push(Armv7Cell {
        host: Host::Dbt(Cpu::A64fx, Backend::Vhe),
        gic: Gic::V3,
    });
    all
}

/// One boot of one cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Armv7Run {
    /// The machine.
    pub cell: Armv7Cell,
    /// The kernel's timestamp of `Run /init`, virtual ns.
    pub boot_ns: Option<u64>,
    /// What the guest's `sha256sum` printed.
    pub sha256: Option<sha256_bench::Sha256Result>,
    /// Why a figure is missing or wrong (the digest, a failed userland, a timeout).
    pub problem: Option<String>,
}

impl Armv7Run {
    /// The `sha256sum` time in virtual ns, if the digest was right.
    fn sha256_ns(&self) -> Option<u64> {
        self.sha256
            .as_ref()
            .filter(|r| r.digest_ok())
            .map(|r| r.us * 1000)
    }

    /// The same command's time on an empty file (starting and ending it), virtual ns.
    fn sha256_empty_ns(&self) -> Option<u64> {
        self.sha256.as_ref()?.empty_us.map(|us| us * 1000)
    }
}

/// Boots the armhf kernel in every cell (matching `filter`) with the benchmark on its command
/// line and returns each cell's figures.
pub fn run(
    ws: &Workspace,
    qemu_aarch64: &Path,
    out_dir: &Path,
    hypervisor: &Path,
    filter: Option<&str>,
) -> Result<Vec<Armv7Run>> {
    let assets = armv7::ensure_assets(ws)?;
    let qemu_arm = setup::find_in_path(QEMU_ARM)
        .ok_or_else(|| fail!("{QEMU_ARM} not found (Debian package qemu-system-arm)"))?;
    let cmdline = format!("{} {}", linux::DEFAULT_CMDLINE, sha256_bench::CMDLINE_WORD);
    let plan = VmPlan {
        name: build::LINUX_ARMV7_GUEST.into(),
        guest: Guest::LinuxArmv7,
        kernel: None,
        initrd: None,
        mem: linux::DEFAULT_MEM,
        vcpus: CPUS,
        cmdline: cmdline.clone(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Armv7 { dbt_force: false },
    };
    let package = out_dir.join("linux-armv7-package.bin");
    build::write_package(&package, &build::vm_configs(ws, &[plan])?)?;
    let mut out = Vec::new();
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        let (qemu, args): (&Path, Vec<OsString>) = match cell.host {
            Host::Native => (
                &qemu_arm,
                [
                    "-M".to_string(),
                    format!("virt,gic-version={}", cell.gic.number()),
                    "-cpu".into(),
                    NATIVE_CPU.into(),
                    "-smp".into(),
                    CPUS.to_string(),
                    "-m".into(),
                    format!("{}M", linux::DEFAULT_MEM >> 20),
                    "-nographic".into(),
                    "-nic".into(),
                    "none".into(),
                    "-kernel".into(),
                    assets.image.display().to_string(),
                    "-initrd".into(),
                    assets.initramfs.display().to_string(),
                    "-append".into(),
                    cmdline.clone(),
                ]
                .into_iter()
                .map(OsString::from)
                .collect(),
            ),
            Host::Hardware(cpu, backend) | Host::Dbt(cpu, backend) => (
                qemu_aarch64,
                QemuConfig {
                    cpu,
                    gic: cell.gic,
                    smp: CPUS,
                    host_mem: linux::DEFAULT_MEM + HOST_MEM_OVERHEAD,
                    backend,
                    gdb: false,
                    kernel: hypervisor.to_path_buf(),
                    initrd: package.clone(),
                    disk: None,
                    net: crate::cli::Net::None,
                    boot: Default::default(),
                    platform: None,
                }
                .args(),
            ),
        };
        let mut args = fixed_dtb(args);
        args.extend(DETERMINISM_ARGS.iter().map(OsString::from));
        let name = format!("linux {}", cell.name());
        let log = out_dir.join(format!("{}.log", name.replace([' ', '/'], "-")));
        let timeout = match cell.host {
            Host::Dbt(..) => DBT_TIMEOUT,
            _ => TIMEOUT,
        };
        eprintln!("xtask: bench {name}");
        let (console, ended) = match count::run_until(qemu, &args, &log, timeout, STOP_ON) {
            Ok(bytes) => (String::from_utf8_lossy(&bytes).into_owned(), None),
            Err(e) => (
                std::fs::read_to_string(&log).unwrap_or_default(),
                Some(e.to_string()),
            ),
        };
        let r = judge(cell, &console, ended.as_deref());
        if let Some(p) = &r.problem {
            eprintln!("xtask: bench {name}: {p} (log: {})", log.display());
        }
        out.push(r);
    }
    Ok(out)
}

/// Console lines after which the guest will not get to the result: the run ends there.
const STOP_ON: &[&str] = &["Kernel panic", "Attempted to kill init"];

/// Console lines that tell why the guest's userland did not get to the result.
const USERLAND_FAILURES: &[&str] = &[
    "Illegal instruction",
    "SIGILL",
    "Segmentation fault",
    "SIGSEGV",
    "unhandled",
    "Kernel panic",
    "Internal error",
    "Unable to handle",
    "Attempted to kill init",
    "insmod",
];

/// A cell's figures from its console output; `ended` = why QEMU did not end by itself.
fn judge(cell: Armv7Cell, console: &str, ended: Option<&str>) -> Armv7Run {
    let boot_ns = init_time(console).map(|s| (s * 1e9).round() as u64);
    let sha256 = sha256_bench::parse(console);
    let problem = match (&boot_ns, &sha256) {
        (None, _) => Some(format!(
            "no `{INIT_LINE}`{}",
            ended.map_or(String::new(), |e| format!(": {e}"))
        )),
        (Some(_), None) => {
            let why = console
                .lines()
                .skip_while(|l| !l.contains(INIT_LINE))
                .find(|l| USERLAND_FAILURES.iter().any(|w| l.contains(w)))
                .map(|l| l.trim().to_string())
                .or_else(|| ended.map(str::to_string))
                .unwrap_or_else(|| format!("no `{}` line", sha256_bench::RESULT_PREFIX.trim_end()));
            Some(format!("guest userland failed: {why}"))
        }
        (Some(_), Some(r)) if !r.digest_ok() => Some(format!(
            "sha256sum printed {}, expected {}",
            r.digest,
            sha256_bench::EXPECTED_DIGEST
        )),
        _ => None,
    };
    Armv7Run {
        cell,
        boot_ns,
        sha256,
        problem,
    }
}

/// How many cells failed (no boot figure, no or a wrong `sha256sum` result).
pub fn failures(runs: &[Armv7Run]) -> usize {
    runs.iter().filter(|r| r.problem.is_some()).count()
}

/// `xRATIO` with ` ok`/` NO` against `goal`, or `-` when either figure is missing.
fn ratio(value: Option<u64>, reference: Option<u64>, goal: Option<f64>) -> String {
    match (value, reference) {
        (Some(v), Some(r)) if r > 0 => {
            let x = v as f64 / r as f64;
            let mark = match goal {
                Some(g) if x <= g => " ok",
                Some(_) => " NO",
                None => "",
            };
            format!("x{x:.2}{mark}")
        }
        _ => "-".into(),
    }
}

/// The armv7 rows: millions of virtual ns (= instructions) to `Run /init` and for
/// `sha256sum` of 16 MiB, with their ratios and goals.
pub fn table(runs: &[Armv7Run]) -> String {
    let mut s = format!(
        "armhf Linux (1 vCPU), millions of virtual ns (= instructions under -icount): boot to \
         `{INIT_LINE}` (ratio to native, goals: hardware AArch32 <= x{GOAL_HARDWARE_BOOT:.2}, \
         DBT <= x{GOAL_DBT_BOOT:.1}); sha256sum of {} MiB in tmpfs (ratio: hardware to native; \
         DBT to max/vhe hardware on the same GIC, goal <= x{GOAL_DBT_SHA256:.1}); \
         empty: the same command on an empty file (its start and exit)\n",
        sha256_bench::FILE_MIB
    );
    let _ = writeln!(
        s,
        "  {:<32} {:>10} {:>9} {:>10} {:>9} {:>8}",
        "cell", "boot", "ratio", "sha256sum", "ratio", "empty"
    );
    let find = |cell: Armv7Cell| runs.iter().find(|r| r.cell == cell);
    let m = |v: Option<u64>| v.map_or("-".into(), |v| format!("{:.1}", v as f64 / 1e6));
    for r in runs {
        let boot_ratio = r.cell.boot_reference().map_or(String::new(), |(c, goal)| {
            ratio(r.boot_ns, find(c).and_then(|n| n.boot_ns), Some(goal))
        });
        let sha_ratio = r
            .cell
            .sha256_reference()
            .map_or(String::new(), |(c, goal)| {
                ratio(r.sha256_ns(), find(c).and_then(Armv7Run::sha256_ns), goal)
            });
        let _ = write!(
            s,
            "  {:<32} {:>10} {boot_ratio:>9} {:>10} {sha_ratio:>9} {:>8}",
            r.cell.name(),
            m(r.boot_ns),
            m(r.sha256_ns()),
            m(r.sha256_empty_ns()),
        );
        if let Some(p) = &r.problem {
            let _ = write!(s, "  ({p})");
        }
        s.push('\n');
    }
    s
}

/// `results.json` with a `"linux_armv7_boot"` list added before the closing brace.
pub fn add_to_json(json: &str, runs: &[Armv7Run]) -> String {
    let num = |v: Option<u64>| v.map_or("null".into(), |v| v.to_string());
    let items: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{{\"cell\": \"{}\", \"ns_to_init\": {}, \"sha256sum_ns\": {}, \"sha256sum_empty_ns\": {}, \"sha256sum_digest\": {}}}",
                r.cell.name(),
                num(r.boot_ns),
                num(r.sha256_ns()),
                num(r.sha256_empty_ns()),
                r.sha256
                    .as_ref()
                    .map_or("null".into(), |x| format!("\"{}\"", x.digest.escape_default())),
            )
        })
        .collect();
    let body = json.trim_end().trim_end_matches('}').trim_end();
    format!(
        "{body},\n  \"linux_armv7_boot\": [{}]\n}}\n",
        items.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console(init_s: &str, us: Option<u64>, digest: &str) -> String {
        let mut c =
            format!("[    0.1] Booting\n[ {init_s}] {INIT_LINE}\nlinux-guest: userspace up\n");
        if let Some(us) = us {
            c.push_str(&format!(
                "[  100.000000] {}\n[  {}.{:06}] {}\n{}16 MiB: {digest}\n",
                sha256_bench::BEGIN_LINE,
                100 + us / 1_000_000,
                us % 1_000_000,
                sha256_bench::END_LINE,
                sha256_bench::RESULT_PREFIX
            ));
        }
        c
    }

    #[test]
    fn names() {
        let c = cells();
        assert_eq!(c[0].name(), "armv7 native cortex-a15 gic2");
        assert_eq!(c[1].name(), "armv7 cortex-a57/nvhe gic2");
        assert_eq!(c.last().unwrap().name(), "armv7 dbt a64fx/vhe gic3");
    }

    #[test]
    fn rows_ratios_and_goals() {
        let c = cells();
        let dig = sha256_bench::EXPECTED_DIGEST;
        let native3 = judge(c[3], &console("1.000000", Some(100_000), dig), None);
        let max3 = judge(c[5], &console("1.050000", Some(110_000), dig), None);
        let dbt_console = format!(
            "{}[  99.000000] {}\n[  99.043300] {}\n",
            console("3.500000", Some(200_000), dig),
            sha256_bench::EMPTY_BEGIN_LINE,
            sha256_bench::EMPTY_END_LINE
        );
        let dbt = judge(c[6], &dbt_console, None);
        assert_eq!(native3.problem, None);
        let t = table(&[native3, max3, dbt]);
        let row = |name: &str| t.lines().find(|l| l.contains(name)).unwrap().to_string();
        let max_row = row("armv7 max/vhe gic3");
        assert!(
            max_row.contains("1050.0") && max_row.contains("x1.05 ok"),
            "{t}"
        );
        assert!(
            max_row.contains("110.0") && max_row.contains("x1.10"),
            "{t}"
        );
        let dbt_row = row("armv7 dbt a64fx/vhe gic3");
        // Boot 3.5x native: over the 3x goal; sha256sum 200/110 of hardware: over 1.5x.
        assert!(dbt_row.contains("x3.50 NO"), "{t}");
        assert!(dbt_row.contains("x1.82 NO"), "{t}");
        assert!(
            dbt_row.trim_end().ends_with(" 43.3"),
            "the empty-file column: {t}"
        );
        assert!(
            max_row.trim_end().ends_with(" -"),
            "no empty-file figure: {t}"
        );
    }

    #[test]
    fn failures_are_explained() {
        let c = cells();
        let dbt = c[6];
        let mut out = console("3.5", None, "");
        out.push_str("insmod: can't insert 'virtio.ko': Illegal instruction\n");
        let r = judge(dbt, &out, Some("timed out after 3000 s"));
        assert_eq!(r.boot_ns, Some(3_500_000_000));
        let p = r.problem.unwrap();
        assert!(p.starts_with("guest userland failed: insmod"), "{p}");
        let r = judge(dbt, &console("3.5", None, ""), Some("timed out"));
        assert_eq!(
            r.problem.as_deref(),
            Some("guest userland failed: timed out")
        );
        let r = judge(dbt, &console("3.5", Some(5), "abcd"), None);
        assert!(r.problem.unwrap().contains("printed abcd, expected"));
        assert_eq!(r.sha256.as_ref().map(|x| x.us), Some(5));
        assert_eq!(
            judge(dbt, "", Some("x")).problem.as_deref(),
            Some("no `Run /init as init process`: x")
        );
        let j = add_to_json("{\n  \"a\": 1\n}\n", &[judge(c[0], "", None)]);
        assert!(j.contains("\"linux_armv7_boot\": [{\"cell\": \"armv7 native cortex-a15 gic2\", \"ns_to_init\": null, \"sha256sum_ns\": null, \"sha256sum_empty_ns\": null, \"sha256sum_digest\": null}]"), "{j}");
    }
}
