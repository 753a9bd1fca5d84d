//! `cargo xtask bench --smp-scaling`: the same 2-vCPU bench VM under the hypervisor on
//! machines of 1, 4 and 8 physical CPUs, to show that the cost of an exit (hvc, trapped
//! sysreg read) and of an IPI round trip does not grow with the core count. At `-smp 1` both
//! vCPUs share the one physical CPU, so the IPI round trip there includes two vCPU switches.
//!
//! Then fairness ([`fairness`]): the `smp` guest in `fair` mode with 8 spinning vCPUs on 4
//! physical CPUs, spread evenly and placed 5+1+1+1 (load balancing evens it out); each vCPU
//! counts its progress in one window of virtual time, and the table gives max/min share,
//! Jain's index and the share furthest from equal. (Without balancing, 5+1+1+1 under
//! `-icount` livelocks QEMU 7.2 during bring-up: a CPU re-executes one `MSR CNTHP_CTL_EL2`
//! forever; under real time it gives the five vCPUs a fifth of a CPU each.)

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::bench::{self, Cell, Results};
use crate::build::{self, Guest, Workspace};
use crate::cli::{Backend, Cpu, Gic, DEFAULT_MEM};
use crate::config::VmPlan;
use crate::error::{IoContext, Result};

/// Physical CPU counts of the host machine, one column each.
pub const SMPS: &[u32] = &[1, 4, 8];
/// The operations compared, one row each.
pub const OPS: &[&str] = &["hvc", "sysreg", "ipi-roundtrip"];

/// The cells measured: max VHE on GICv3, and cortex-a57 non-VHE on GICv2.
pub fn cells() -> [Cell; 2] {
    [
        Cell {
            cpu: Cpu::Max,
            gic: Gic::V3,
            backend: Some(Backend::Vhe),
        },
        Cell {
            cpu: Cpu::CortexA57,
            gic: Gic::V2,
            backend: Some(Backend::Nvhe),
        },
    ]
}

/// Paths one scaling run needs (the files `cargo xtask bench` already prepared).
pub struct Files<'a> {
    /// QEMU binary.
    pub qemu: &'a Path,
    /// Output directory for the console logs.
    pub dir: &'a Path,
    /// The bench guest image.
    pub guest_bin: &'a Path,
    /// The hypervisor image.
    pub hv_bin: &'a Path,
    /// The package with the 2-vCPU bench VM.
    pub package: &'a Path,
}

/// Runs every cell of [`cells`] matching `filter` at every size of [`SMPS`]; returns
/// `(cell, smp, results)` per run (`None` where the run failed, with the reason on stderr).
pub fn run(files: &Files, filter: Option<&str>) -> Vec<(Cell, u32, Option<Results>)> {
    let mut out = Vec::new();
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        for &smp in SMPS {
            let args = bench::cell_args(cell, smp, files.guest_bin, files.hv_bin, files.package);
            let log = files.dir.join(format!(
                "{}-smp{smp}.log",
                cell.name().replace([' ', '/'], "-")
            ));
            eprintln!("xtask: bench {} -smp {smp}", cell.name());
            let r = match bench::run_logged(files.qemu, &args, &log, true) {
                Ok(text) => {
                    let r = bench::parse(&text);
                    if !r.done {
                        eprintln!(
                            "xtask: bench {} -smp {smp}: no `bench: done` (log: {})",
                            cell.name(),
                            log.display()
                        );
                    }
                    r.done.then_some(r)
                }
                Err(e) => {
                    eprintln!("xtask: bench {} -smp {smp}: {e}", cell.name());
                    None
                }
            };
            out.push((cell, smp, r));
        }
    }
    out
}

/// Markdown tables, one per cell: rows [`OPS`], columns `smp 1/4/8`, instructions per
/// operation (`-`: not measured).
pub fn table(runs: &[(Cell, u32, Option<Results>)]) -> String {
    let mut s = String::from(
        "instructions per operation, 2-vCPU bench VM, by physical CPUs of the machine \
         (QEMU -icount shift=0; at smp 1 both vCPUs share one CPU)\n",
    );
    let mut seen: Vec<Cell> = Vec::new();
    for &(cell, _, _) in runs {
        if seen.contains(&cell) {
            continue;
        }
        seen.push(cell);
        let _ = write!(s, "\n| {} |", cell.name());
        for smp in SMPS {
            let _ = write!(s, " smp {smp} |");
        }
        s.push_str("\n|---|");
        for _ in SMPS {
            s.push_str("---:|");
        }
        s.push('\n');
        for op in OPS {
            let _ = write!(s, "| {op} |");
            for &smp in SMPS {
                let v = runs
                    .iter()
                    .find(|(c, n, _)| *c == cell && *n == smp)
                    .and_then(|(_, _, r)| r.as_ref())
                    .and_then(|r| r.get(op));
                match v {
                    Some(v) => {
                        let _ = write!(s, " {v:.1} |");
                    }
                    None => s.push_str(" - |"),
                }
            }
            s.push('\n');
        }
    }
    s
}

/// Physical CPUs of the fairness machine.
pub const FAIR_SMP: u32 = 4;
/// Spinning vCPUs of the fairness VM.
pub const FAIR_VCPUS: u32 = 8;
/// Largest distance of a share from equal that passes (the 10 %).
pub const FAIR_TOLERANCE: f64 = 0.10;

/// One fairness run: how the hypervisor is asked to place and move the vCPUs.
#[derive(Debug, Clone, Copy)]
pub struct FairCase {
    /// Row label.
    pub name: &'static str,
    /// Words added to the hypervisor's command line.
    pub hv_words: &'static str,
}

/// The fairness runs, one row each.
pub const FAIR_CASES: &[FairCase] = &[
    FairCase {
        name: "spread 2+2+2+2",
        hv_words: "",
    },
    FairCase {
        name: "placed 5+1+1+1",
        hv_words: "place=0,0,0,0,0,1,2,3",
    },
];

/// What one fairness run showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fairness {
    /// Blocks counted by each vCPU in the window, by vCPU index.
    pub counts: Vec<u64>,
    /// vCPU moves the hypervisor reported.
    pub moves: Option<u64>,
}

impl Fairness {
    /// Parses the guest's `fair: cpu N: C blocks` lines and the hypervisor's move count.
    pub fn parse(log: &str) -> Self {
        let mut f = Fairness::default();
        for line in log.lines() {
            if let Some(rest) = line.split("smp: fair: cpu ").nth(1) {
                let mut it = rest.split(|c: char| c == ':' || c.is_whitespace());
                let cpu = it.next().and_then(|c| c.parse::<usize>().ok());
                let count = it
                    .find(|w| !w.is_empty())
                    .and_then(|c| c.parse::<u64>().ok());
                if let (Some(cpu), Some(count)) = (cpu, count) {
                    if f.counts.len() <= cpu {
                        f.counts.resize(cpu + 1, 0);
                    }
                    f.counts[cpu] = count;
                }
            }
            if let Some(rest) = line.split("[hv] scheduler: ").nth(1) {
                if let Some(n) = rest.strip_suffix(" vCPU move(s) between CPUs") {
                    f.moves = n.trim().parse().ok();
                }
            }
        }
        f
    }

    /// Each vCPU's share relative to an equal one (1.0 = equal).
    pub fn shares(&self) -> Vec<f64> {
        let total: u64 = self.counts.iter().sum();
        let n = self.counts.len() as f64;
        self.counts
            .iter()
            .map(|&c| {
                if total == 0 {
                    0.0
                } else {
                    c as f64 * n / total as f64
                }
            })
            .collect()
    }

    /// Largest share over smallest (infinite if one vCPU got nothing).
    pub fn max_over_min(&self) -> f64 {
        let max = self.counts.iter().copied().max().unwrap_or(0) as f64;
        let min = self.counts.iter().copied().min().unwrap_or(0) as f64;
        max / min
    }

    /// Jain's fairness index: (sum x)^2 / (n * sum x^2), 1 when all are equal, 1/n when one
    /// vCPU gets everything.
    pub fn jain(&self) -> f64 {
        let sum: f64 = self.counts.iter().map(|&c| c as f64).sum();
        let squares: f64 = self.counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
        if squares == 0.0 {
            0.0
        } else {
            sum * sum / (self.counts.len() as f64 * squares)
        }
    }

    /// The share furthest from equal.
    pub fn worst(&self) -> f64 {
        self.shares()
            .into_iter()
            .max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()))
            .unwrap_or(0.0)
    }

    /// Every vCPU counted and every share within [`FAIR_TOLERANCE`] of equal.
    pub fn fair(&self) -> bool {
        self.counts.len() == FAIR_VCPUS as usize && (self.worst() - 1.0).abs() <= FAIR_TOLERANCE
    }
}

/// Builds the `smp` guest and its `fair` package into `dir`, runs every case of
/// [`FAIR_CASES`] in every cell of [`cells`] matching `filter` under `-icount`, and returns
/// `(cell, case, result)` per run (`None` where no share was printed).
pub fn fairness(
    ws: &Workspace,
    objcopy: &Path,
    qemu: &Path,
    dir: &Path,
    hv_bin: &Path,
    filter: Option<&str>,
) -> Result<Vec<(Cell, FairCase, Option<Fairness>)>> {
    build::build_guests(ws, objcopy, &["smp".to_string()])?;
    let plan = VmPlan {
        name: "fair".into(),
        guest: Guest::Crate("smp".into()),
        kernel: None,
        initrd: None,
        mem: DEFAULT_MEM,
        vcpus: FAIR_VCPUS,
        cmdline: "fair".into(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Aarch64,
    };
    let package = dir.join("fair.bin");
    build::write_package(&package, &build::vm_configs(ws, &[plan])?)?;
    let guest_bin = dir.join("smp.bin");
    fs::copy(ws.guest_bin("smp"), &guest_bin).io(|| "copying the smp image".into())?;
    let mut out = Vec::new();
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        for &case in FAIR_CASES {
            let args = with_hv_words(
                bench::cell_args(cell, FAIR_SMP, &guest_bin, hv_bin, &package),
                case.hv_words,
            );
            let log = dir.join(format!(
                "fair-{}-{}.log",
                cell.name().replace([' ', '/'], "-"),
                case.name.replace([' ', '+', ',', '='], "-")
            ));
            eprintln!("xtask: fairness {} {}", cell.name(), case.name);
            // A run without balancing fails its own check (SYSTEM_RESET): the shares are
            // printed before that.
            let r = match bench::run_logged(qemu, &args, &log, false) {
                Ok(text) => Some(Fairness::parse(&text)).filter(|f| !f.counts.is_empty()),
                Err(e) => {
                    eprintln!("xtask: fairness {} {}: {e}", cell.name(), case.name);
                    None
                }
            };
            out.push((cell, case, r));
        }
    }
    Ok(out)
}

/// `args` with `words` added to the hypervisor's `-append` command line.
fn with_hv_words(mut args: Vec<OsString>, words: &str) -> Vec<OsString> {
    if words.is_empty() {
        return args;
    }
    if let Some(i) = args.iter().position(|a| a == "-append") {
        if let Some(line) = args.get_mut(i + 1) {
            line.push(" ");
            line.push(words);
        }
    }
    args
}

/// Markdown table of the fairness runs: one row per (cell, case).
pub fn fairness_table(runs: &[(Cell, FairCase, Option<Fairness>)]) -> String {
    let mut s = format!(
        "fairness: {FAIR_VCPUS} spinning vCPUs on {FAIR_SMP} physical CPUs, each vCPU's progress \
         in one 1 s window of virtual time (QEMU -icount shift=0); share 1.000 = equal, \
         goal: every share within {:.0} % of equal\n\n\
         | cell | placement | shares (vCPU 0..{}) | max/min | Jain index | worst share | moves | within {:.0} % |\n\
         |---|---|---|---:|---:|---:|---:|---|\n",
        FAIR_TOLERANCE * 100.0,
        FAIR_VCPUS - 1,
        FAIR_TOLERANCE * 100.0
    );
    for (cell, case, r) in runs {
        let _ = write!(s, "| {} | {} |", cell.name(), case.name);
        match r {
            Some(f) => {
                let shares: Vec<String> = f.shares().iter().map(|v| format!("{v:.3}")).collect();
                let _ = writeln!(
                    s,
                    " {} | {:.3} | {:.4} | {:.3} | {} | {} |",
                    shares.join(" "),
                    f.max_over_min(),
                    f.jain(),
                    f.worst(),
                    f.moves.map_or("-".to_string(), |m| m.to_string()),
                    if f.fair() { "yes" } else { "no" }
                );
            }
            None => s.push_str(" - | - | - | - | - | - |\n"),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_figures_from_a_log() {
        let log = "[fair] smp: fair: cpu 0: 100 blocks, share 0.500 of equal\n\
                   smp: fair: cpu 2: 250 blocks, share 1.250 of equal\n\
                   smp: fair: cpu 1: 250 blocks, share 1.250 of equal\n\
                   [hv] scheduler: 3 vCPU move(s) between CPUs\n";
        let f = Fairness::parse(log);
        assert_eq!(f.counts, [100, 250, 250]);
        assert_eq!(f.moves, Some(3));
        assert_eq!(f.shares(), [0.5, 1.25, 1.25]);
        assert_eq!(f.max_over_min(), 2.5);
        assert!(
            (f.jain() - 360_000.0 / 405_000.0).abs() < 1e-9,
            "{}",
            f.jain()
        );
        assert_eq!(f.worst(), 0.5);
        assert!(!f.fair());
        let even = Fairness {
            counts: vec![1000, 1050, 960, 1000, 1000, 1000, 1000, 1000],
            moves: None,
        };
        assert!(even.fair());
        let t = fairness_table(&[
            (cells()[0], FAIR_CASES[1], Some(even)),
            (cells()[1], FAIR_CASES[0], None),
        ]);
        assert!(t.contains("| max/vhe gic3 | placed 5+1+1+1 |"), "{t}");
        assert!(t.contains("| 1.094 |"), "{t}");
        assert!(t.contains("| - | yes |"), "{t}");
        assert!(
            t.contains("| cortex-a57/nvhe gic2 | spread 2+2+2+2 | - |"),
            "{t}"
        );
    }

    #[test]
    fn hypervisor_words_go_on_the_append_line() {
        let args: Vec<OsString> = ["-kernel", "hv", "-append", "backend=vhe exit=semihosting"]
            .iter()
            .map(OsString::from)
            .collect();
        let a = with_hv_words(args.clone(), "place=0,0 balance=off");
        assert_eq!(a[3], "backend=vhe exit=semihosting place=0,0 balance=off");
        assert_eq!(with_hv_words(args.clone(), ""), args);
    }

    #[test]
    fn table_has_a_column_per_smp_and_dashes_for_gaps() {
        let cell = cells()[0];
        let one = bench::parse("bench: hvc 100.0\nbench: sysreg 120.5\nbench: done\n");
        let four = bench::parse(
            "bench: hvc 101.0\nbench: sysreg 121.0\nbench: ipi-roundtrip 4000.0\nbench: done\n",
        );
        let runs = vec![(cell, 1, Some(one)), (cell, 4, Some(four)), (cell, 8, None)];
        let t = table(&runs);
        assert!(
            t.contains("| max/vhe gic3 | smp 1 | smp 4 | smp 8 |"),
            "{t}"
        );
        assert!(t.contains("| hvc | 100.0 | 101.0 | - |"), "{t}");
        assert!(t.contains("| sysreg | 120.5 | 121.0 | - |"), "{t}");
        assert!(t.contains("| ipi-roundtrip | - | 4000.0 | - |"), "{t}");
        assert!(!t.contains("cortex-a57"), "{t}");
    }

    #[test]
    fn cells_are_the_two_named_ones() {
        let names: Vec<String> = cells().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["max/vhe gic3", "cortex-a57/nvhe gic2"]);
    }
}
