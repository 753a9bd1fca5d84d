//! `cargo xtask test`: the host tests as one item, then every scenario in every matrix cell
//! under QEMU, one result line each, and a closing `N passed, M failed`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::build::{self, Workspace};
use crate::cli::{host_mem, TestArgs};
use crate::config::{self, MachineConfig, MachineDefaults, VmPlan};
use crate::error::Result;
use crate::qemu::{self, QemuConfig};
use crate::scenarios::{self, Run, Scenario, ScenarioVms};
use crate::usage;

/// Packages whose tests run on the host.
pub const HOST_PACKAGES: &[&str] = &[
    "el2-core",
    "stage2",
    "vgic",
    "vtimer",
    "virtio-mmio",
    "vmpkg",
    "dbt-armv7",
    "hypervisor",
    "xtask",
];
/// Name of the host-test item in results and for `--filter`.
pub const HOST_ITEM: &str = "host-tests";
/// Most output kept per QEMU run.
pub const OUTPUT_CAP: usize = 1 << 20;
/// Lines of output shown for a failed run.
pub const TAIL_LINES: usize = 40;

/// Pass/fail counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Items that passed.
    pub passed: usize,
    /// Items that failed (or could not run).
    pub failed: usize,
}

impl Tally {
    fn record(&mut self, name: &str, ok: bool, secs: f64) {
        if ok {
            self.passed += 1;
            println!("ok {name} ({secs:.1}s)");
        } else {
            self.failed += 1;
            println!("FAILED {name} ({secs:.1}s)");
        }
    }
}

/// `cargo test -p ... ` arguments for the host packages (all test binaries run even when
/// one fails, so one report shows every failure).
pub fn host_test_args() -> Vec<String> {
    let mut args = vec!["test".to_string(), "--no-fail-fast".to_string()];
    for p in HOST_PACKAGES {
        args.push("-p".into());
        args.push((*p).into());
    }
    args
}

/// The `cargo xtask qemu` command that repeats `run` interactively.
pub fn reproduce_command(run: &Run<'_>) -> String {
    let s = run.scenario;
    let mut args: Vec<String> = [
        "qemu",
        "--cpu",
        run.cell.cpu.name(),
        "--gic",
        &run.cell.gic.number().to_string(),
        "--backend",
        run.cell.backend.name(),
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    match &s.vms {
        ScenarioVms::Guest {
            guest,
            append,
            mem,
            vcpus,
        } => {
            args.extend(["--guest".into(), guest.clone()]);
            if let Some(m) = mem {
                args.extend(["--mem".into(), crate::cli::format_size(*m)]);
            }
            if *vcpus != 1 {
                args.extend(["--vcpus".into(), vcpus.to_string()]);
            }
            if let Some(a) = append {
                args.extend(["--append".into(), a.clone()]);
            }
        }
        ScenarioVms::Config(c) => args.extend(["--config".into(), c.clone()]),
    }
    if let Some(smp) = s.smp {
        args.extend(["--smp".into(), smp.to_string()]);
    }
    if let Some(net) = s.net {
        args.extend(["--net".into(), net.name().into()]);
    }
    build::show_command("cargo xtask", &args)
}

/// The VMs and machine defaults of a scenario (paths relative to the workspace root).
pub fn scenario_plans(ws: &Workspace, s: &Scenario, crates: &[String]) -> Result<MachineConfig> {
    match &s.vms {
        ScenarioVms::Config(c) => {
            let path = ws.root.join(c);
            let cfg = config::load_config(&path)?;
            config::check_sources(&cfg.vms, crates, c)?;
            Ok(cfg)
        }
        ScenarioVms::Guest {
            guest,
            append,
            mem,
            vcpus,
        } => {
            let g = build::resolve_guest(guest, crates, &ws.root)?;
            let plan = VmPlan {
                name: g.vm_name(),
                cmdline: append
                    .clone()
                    .unwrap_or_else(|| config::default_cmdline(&g)),
                mem: mem.unwrap_or_else(|| config::default_mem(&g)),
                guest: g,
                kernel: None,
                initrd: None,
                vcpus: *vcpus,
                ends_all: true,
                mac: None,
            };
            Ok(MachineConfig {
                machine: MachineDefaults::default(),
                vms: vec![plan],
            })
        }
    }
}

/// Runs the tests; returns the tally (the caller prints nothing more than this module did).
pub fn run(ws: &Workspace, args: &TestArgs) -> Result<Tally> {
    let all = scenarios::load_dir(&ws.root.join("tests/scenarios"))?;
    let filter = args.filter.as_deref();
    let runs = scenarios::expand(&all, filter, args.full);
    let host = !args.skip_host && filter.is_none_or(|f| HOST_ITEM.contains(f));
    if !host && runs.is_empty() {
        let full_only_matches = !args.full && !scenarios::expand(&all, filter, true).is_empty();
        return Err(usage!(
            "nothing to run: --filter {:?} matches no scenario run{}{}; names look like \
             `{HOST_ITEM}` or `hello max/auto/gic3`",
            filter.unwrap_or(""),
            if args.skip_host {
                " (and --skip-host is set)"
            } else {
                ""
            },
            if full_only_matches {
                " (it matches full_only scenarios: add --full to run them)"
            } else {
                ""
            }
        ));
    }
    let mut tally = Tally::default();

    if host {
        let start = Instant::now();
        let result = build::run_cargo(ws, &host_test_args());
        tally.record(HOST_ITEM, result.is_ok(), start.elapsed().as_secs_f64());
        if let Err(e) = result {
            println!("  {e}");
        }
    }

    if !runs.is_empty() {
        match prepare(ws, &runs) {
            Ok(prepared) => run_matrix(&prepared, &runs, &mut tally),
            Err(e) => {
                println!("FAILED {} QEMU runs not run: {e}", runs.len());
                tally.failed += runs.len();
            }
        }
    }

    println!("{} passed, {} failed", tally.passed, tally.failed);
    Ok(tally)
}

/// The package of one scenario and the machine it needs.
struct Package {
    scenario: String,
    path: PathBuf,
    smp: u32,
    host_mem: u64,
    net: crate::cli::Net,
}

/// QEMU and the images, ready for the runs.
struct Prepared {
    qemu: PathBuf,
    hypervisor: PathBuf,
    packages: Vec<Package>,
}

/// Finds QEMU and builds every image the selected runs need, once.
fn prepare(ws: &Workspace, runs: &[Run<'_>]) -> Result<Prepared> {
    let qemu = qemu::ensure_qemu()?;
    let crates = ws.guest_crates();
    let mut used: Vec<&Scenario> = Vec::new();
    for r in runs {
        if !used.iter().any(|s| s.name == r.scenario.name) {
            used.push(r.scenario);
        }
    }
    let mut plans = Vec::new();
    for s in &used {
        let cfg =
            scenario_plans(ws, s, &crates).map_err(|e| crate::fail!("scenario {}: {e}", s.name))?;
        plans.push(cfg);
    }
    let all_vms: Vec<VmPlan> = plans.iter().flat_map(|c| c.vms.clone()).collect();
    let crate_names = build::crates_of(&all_vms);

    let objcopy = build::find_objcopy(ws)?;
    let hypervisor = build::build_hypervisor(ws, &objcopy)?;
    build::build_guests(ws, &objcopy, &crate_names)?;

    let mut packages = Vec::new();
    for (s, cfg) in used.iter().zip(&plans) {
        let vms = build::vm_configs(ws, &cfg.vms)
            .map_err(|e| crate::fail!("scenario {}: {e}", s.name))?;
        let path = ws
            .images_dir()
            .join("scenarios")
            .join(format!("{}.bin", s.name));
        build::write_package(&path, &vms)?;
        packages.push(Package {
            scenario: s.name.clone(),
            path,
            smp: s.smp.or(cfg.machine.smp).unwrap_or(1),
            host_mem: host_mem(cfg.machine.host_mem, cfg.vm_mem_total()),
            net: s.net.or(cfg.machine.net).unwrap_or_default(),
        });
    }
    Ok(Prepared {
        qemu,
        hypervisor,
        packages,
    })
}

/// Runs every selected (scenario, cell) under QEMU, one after the other.
fn run_matrix(p: &Prepared, runs: &[Run<'_>], tally: &mut Tally) {
    for run in runs {
        let s = run.scenario;
        let name = run.name();
        let Some(package) = p.packages.iter().find(|k| k.scenario == s.name) else {
            tally.record(&name, false, 0.0);
            continue;
        };
        let disk = s.disk_marker.as_ref().map(|_| {
            let path = package
                .path
                .with_extension(format!("{}.img", run.cell.name().replace('/', "-")));
            let _ = std::fs::write(&path, vec![0u8; 8 << 20]);
            path
        });
        let cfg = QemuConfig {
            cpu: run.cell.cpu,
            gic: run.cell.gic,
            smp: package.smp,
            host_mem: package.host_mem,
            backend: run.cell.backend,
            gdb: false,
            kernel: p.hypervisor.clone(),
            initrd: package.path.clone(),
            disk: disk.clone(),
            net: package.net,
        };
        let start = Instant::now();
        let result = qemu::run_captured(&p.qemu, &cfg, Duration::from_secs(s.timeout), OUTPUT_CAP);
        let secs = start.elapsed().as_secs_f64();
        match result {
            Err(e) => {
                tally.record(&name, false, secs);
                println!("  {e}");
            }
            Ok(cap) => {
                let mut problems = scenarios::check(run, cap.outcome, &cap.output);
                if let (Some(marker), Some(path)) = (&s.disk_marker, &disk) {
                    let image = std::fs::read(path).unwrap_or_default();
                    if !image.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                        problems.push(format!(
                            "the disk image {} does not contain '{marker}' after the run",
                            path.display()
                        ));
                    }
                }
                tally.record(&name, problems.is_empty(), secs);
                if !problems.is_empty() {
                    for problem in &problems {
                        println!("  - {problem}");
                    }
                    println!("  ({}; output tail follows)", cap.outcome.describe());
                    if cap.truncated {
                        println!("  (output was cut at {OUTPUT_CAP} bytes)");
                    }
                    for line in scenarios::tail(&cap.output, TAIL_LINES) {
                        println!("  | {}", line.trim_end_matches('\r'));
                    }
                    println!("  reproduce: {}", reproduce_command(run));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_args() {
        assert_eq!(
            host_test_args().join(" "),
            "test --no-fail-fast -p el2-core -p stage2 -p vgic -p vtimer -p virtio-mmio -p vmpkg -p dbt-armv7 \
             -p hypervisor -p xtask"
        );
    }

    #[test]
    fn reproduce() {
        let s = scenarios::parse_scenario(
            "hello-reset",
            "guest = \"hello\"\nexit = \"nonzero\"\nappend = \"reset now\"",
        )
        .unwrap();
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[4],
        };
        assert_eq!(
            reproduce_command(&run),
            "cargo xtask qemu --cpu max --gic 2 --backend nvhe --guest hello \
             --append \"reset now\""
        );
        let s = scenarios::parse_scenario(
            "smp",
            "guest = \"hello\"\nexit = \"zero\"\nvcpus = 2\nsmp = 2\nmem = \"64M\"",
        )
        .unwrap();
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[0],
        };
        assert_eq!(
            reproduce_command(&run),
            "cargo xtask qemu --cpu cortex-a57 --gic 2 --backend auto --guest hello --mem 64M \
             --vcpus 2 --smp 2"
        );
        let s = scenarios::parse_scenario(
            "two-vms",
            "config = \"configs/two-vms.toml\"\nexit = \"zero\"\nsmp = 1",
        )
        .unwrap();
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[3],
        };
        assert_eq!(
            reproduce_command(&run),
            "cargo xtask qemu --cpu max --gic 3 --backend auto --config configs/two-vms.toml \
             --smp 1"
        );
    }

    #[test]
    fn scenario_plans_resolve() {
        let ws = Workspace::locate();
        let crates = ws.guest_crates();
        let s = scenarios::parse_scenario("h", "guest = \"hello\"\nexit = \"zero\"\nvcpus = 2")
            .unwrap();
        let cfg = scenario_plans(&ws, &s, &crates).unwrap();
        assert_eq!(cfg.vms.len(), 1);
        assert_eq!(cfg.vms[0].vcpus, 2);
        assert_eq!(cfg.vms[0].mem, crate::cli::DEFAULT_MEM);
        assert_eq!(cfg.vms[0].cmdline, "");
        let s =
            scenarios::parse_scenario("t", "config = \"configs/two-vms.toml\"\nexit = \"zero\"")
                .unwrap();
        let cfg = scenario_plans(&ws, &s, &crates).unwrap();
        let names: Vec<&str> = cfg.vms.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["hello", "hostile"]);
        let s = scenarios::parse_scenario("x", "config = \"configs/nosuch.toml\"\nexit = \"zero\"")
            .unwrap();
        assert!(scenario_plans(&ws, &s, &crates).is_err());
    }
}
