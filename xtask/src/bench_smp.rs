//! `cargo xtask bench --smp-scaling`: the same 2-vCPU bench VM under the hypervisor on
//! machines of 1, 4 and 8 physical CPUs, to show that the cost of an exit (hvc, trapped
//! sysreg read) and of an IPI round trip does not grow with the core count. At `-smp 1` both
//! vCPUs share the one physical CPU, so the IPI round trip there includes two vCPU switches.

use std::fmt::Write as _;
use std::path::Path;

use crate::bench::{self, Cell, Results};
use crate::cli::{Backend, Cpu, Gic};

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

#[cfg(test)]
mod tests {
    use super::*;

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
