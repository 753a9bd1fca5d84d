//! `cargo xtask test`: the host tests as one item, then every scenario in every matrix cell
//! under QEMU, one result line each, and a closing `N passed, M failed`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::build::{self, Workspace};
use crate::cli::{host_mem, TestArgs};
use crate::config::{self, MachineConfig, MachineDefaults, VmPlan};
use crate::error::{IoContext, Result};
use crate::qemu::{self, QemuConfig};
use crate::scenarios::{self, Run, Scenario, ScenarioVms};
use crate::setup;
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
pub const OUTPUT_CAP: usize = 8 << 20;
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
    /// Counts one item and prints its result line.
    pub fn record(&mut self, name: &str, ok: bool, secs: f64) {
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
            if s.disk_image_marker.is_some() {
                // written by `cargo xtask test` (default target directory)
                args.extend([
                    "--disk-image".into(),
                    format!("target/images/scenarios/{}-disk.img", s.name),
                ]);
            }
        }
        ScenarioVms::Config(c) => args.extend(["--config".into(), c.clone()]),
    }
    match s.boot.platform {
        Some(p) => args.extend(["--platform".into(), p.name().into()]),
        None if s.boot.uefi => {
            args.push("--uefi".into());
            if s.boot.acpi {
                args.push("--acpi".into());
            }
        }
        None => {}
    }
    if let Some(smp) = s.smp {
        args.extend(["--smp".into(), smp.to_string()]);
    }
    if let Some(net) = s.net {
        args.extend(["--net".into(), net.name().into()]);
    }
    let mut extra = String::new();
    if let Some(words) = &s.boot.hv_append {
        extra.push_str(&format!(" (with hypervisor words '{words}' on -append)"));
    }
    if s.boot.icount {
        extra.push_str(" (with QEMU -icount shift=0,sleep=off -accel tcg,thread=single)");
    }
    format!(
        "{}{}{extra}",
        seed_prefix(s),
        build::show_command("cargo xtask", &args)
    )
}

/// `STORM_SEED=N ` when the scenario's command lines take the run's seed (`{seed}`), so
/// the reproduce command repeats the same storm; empty otherwise.
fn seed_prefix(s: &Scenario) -> String {
    let uses_seed = match &s.vms {
        ScenarioVms::Guest { append, .. } => append
            .as_deref()
            .is_some_and(|a| a.contains(config::storm::SEED_PLACEHOLDER)),
        ScenarioVms::Config(c) => std::fs::read_to_string(Workspace::locate().root.join(c))
            .is_ok_and(|t| t.contains(config::storm::SEED_PLACEHOLDER)),
    };
    match config::storm::seed() {
        Ok(seed) if uses_seed => format!("{}={seed} ", config::storm::SEED_ENV),
        _ => String::new(),
    }
}

/// Size of the RAM-disk image a `disk_image_marker` scenario packs into its VM: 64 KiB + 100
/// bytes, not a whole number of sectors, so the hypervisor rounds it up (to 129 sectors).
pub const MARKER_IMAGE_SIZE: usize = (64 << 10) + 100;
/// Sector of that image that starts with the marker.
pub const MARKER_IMAGE_SECTOR: usize = 2;

/// Where the RAM-disk image of a `disk_image_marker` scenario goes (generated by
/// [`write_marker_image`] when the images are built; never committed).
pub fn marker_image_path(ws: &Workspace, s: &Scenario) -> PathBuf {
    ws.images_dir()
        .join("scenarios")
        .join(format!("{}-disk.img", s.name))
}

/// The RAM-disk image of a `disk_image_marker` scenario: [`MARKER_IMAGE_SIZE`] bytes of zeros
/// with `marker` at the start of sector [`MARKER_IMAGE_SECTOR`].
pub fn marker_image(marker: &str) -> Vec<u8> {
    let mut img = vec![0u8; MARKER_IMAGE_SIZE];
    let at = MARKER_IMAGE_SECTOR * 512;
    img[at..at + marker.len()].copy_from_slice(marker.as_bytes());
    img
}

/// Writes [`marker_image`] to `path`.
pub fn write_marker_image(path: &Path, marker: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).io(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, marker_image(marker)).io(|| format!("writing {}", path.display()))
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
                arch: build::VmArch::of(&g),
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
                disk_image: s
                    .disk_image_marker
                    .as_ref()
                    .map(|_| marker_image_path(ws, s)),
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
    if args.list {
        if host {
            println!("{HOST_ITEM}");
        }
        for r in &runs {
            println!("{}", r.name());
        }
        println!(
            "{} item(s): {}{} QEMU run(s) of {} scenario(s)",
            runs.len() + usize::from(host),
            if host { "host tests + " } else { "" },
            runs.len(),
            {
                let mut names: Vec<&str> = runs.iter().map(|r| r.scenario.name.as_str()).collect();
                names.dedup();
                names.len()
            }
        );
        return Ok(Tally::default());
    }
    let mut tally = Tally::default();

    // Host tests need the emulators too (dbt-armv7's differential and system tests), so
    // every package any test needs is installed first, saying so.
    setup::ensure_packages(setup::TEST_PACKAGES)?;

    if host {
        let start = Instant::now();
        // --full: dbt-armv7's translator differential test runs 10^6 sequences (10^4 by
        // default).
        let cases = std::path::Path::new("1000000");
        let env: &[(&str, &std::path::Path)] = if args.full {
            &[("DBT_DBT_CASES", cases)]
        } else {
            &[]
        };
        let result = build::run_cargo_with_env(ws, &host_test_args(), env);
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
    /// The hypervisor image this scenario boots (a copy at another load address, or the
    /// built one).
    kernel: PathBuf,
}

/// QEMU and the images, ready for the runs.
struct Prepared {
    qemu: PathBuf,
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
        if let Some(marker) = &s.disk_image_marker {
            write_marker_image(&marker_image_path(ws, s), marker)?;
        }
        let vms = build::vm_configs(ws, &cfg.vms)
            .map_err(|e| crate::fail!("scenario {}: {e}", s.name))?;
        let path = ws
            .images_dir()
            .join("scenarios")
            .join(format!("{}.bin", s.name));
        build::write_package(&path, &vms)?;
        let kernel = match s.boot.load_offset {
            Some(offset) => {
                let image = std::fs::read(&hypervisor)
                    .io(|| format!("reading {}", hypervisor.display()))?;
                let moved = path.with_extension("hypervisor.bin");
                std::fs::write(&moved, crate::uefi::with_text_offset(&image, offset))
                    .io(|| format!("writing {}", moved.display()))?;
                moved
            }
            None => hypervisor.clone(),
        };
        let smp = match s.boot.platform {
            Some(p) => p.smp(),
            None => s.smp.or(cfg.machine.smp).unwrap_or(1),
        };
        packages.push(Package {
            scenario: s.name.clone(),
            path,
            smp,
            host_mem: s
                .boot
                .host_mem
                .unwrap_or_else(|| host_mem(cfg.machine.host_mem, cfg.vm_mem_total())),
            net: s.net.or(cfg.machine.net).unwrap_or_default(),
            kernel,
        });
    }
    Ok(Prepared { qemu, packages })
}

/// The hypervisor's command line in a scenario: the cell's, plus the scenario's `hv_append`.
fn hypervisor_cmdline(cfg: &QemuConfig, s: &Scenario) -> String {
    match &s.boot.hv_append {
        Some(extra) => format!("{} {extra}", cfg.hypervisor_cmdline()),
        None => cfg.hypervisor_cmdline(),
    }
}

/// QEMU's arguments in a scenario: the machine's, with the scenario's hypervisor words on
/// the `-append` command line and, with `icount`, the bench's determinism arguments and
/// fixed device tree.
fn scenario_args(cfg: &QemuConfig, s: &Scenario) -> Vec<std::ffi::OsString> {
    let mut args = cfg.args();
    if let Some(i) = args.iter().position(|a| a == "-append") {
        if let Some(line) = args.get_mut(i + 1) {
            *line = hypervisor_cmdline(cfg, s).into();
        }
    }
    if s.boot.icount {
        args = crate::bench::fixed_dtb(args);
        args.extend(crate::bench::DETERMINISM_ARGS.iter().map(Into::into));
    }
    args
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
        let mut cfg = QemuConfig {
            cpu: run.cell.cpu,
            gic: run.cell.gic,
            smp: package.smp,
            host_mem: package.host_mem,
            backend: run.cell.backend,
            gdb: false,
            kernel: package.kernel.clone(),
            initrd: package.path.clone(),
            disk: disk.clone(),
            net: package.net,
            boot: if s.boot.el1 {
                qemu::Boot::KernelAtEl1
            } else {
                qemu::Boot::Kernel
            },
            platform: s.boot.platform,
        };
        if s.boot.uefi {
            let esp = package
                .path
                .with_extension(format!("{}.esp", run.cell.name().replace('/', "-")));
            let cmdline = hypervisor_cmdline(&cfg, s);
            let written = if s.boot.uefi_grub {
                crate::uefi::write_grub_esp(&esp, &package.kernel, &package.path, &cmdline)
            } else if s.boot.uefi_shell {
                crate::uefi::write_shell_esp(&esp, &package.kernel, &package.path, &cmdline)
            } else {
                crate::uefi::write_esp(&esp, &package.kernel, &package.path, &cmdline)
            };
            if let Err(e) = written {
                tally.record(&name, false, 0.0);
                println!("  {e}");
                continue;
            }
            cfg.boot = qemu::Boot::Uefi {
                esp,
                acpi: s.boot.acpi,
            };
        }
        let start = Instant::now();
        let result = qemu::run_captured_args(
            &p.qemu,
            scenario_args(&cfg, s),
            Duration::from_secs(s.timeout),
            OUTPUT_CAP,
        );
        let secs = start.elapsed().as_secs_f64();
        match result {
            Err(e) => {
                tally.record(&name, false, secs);
                println!("  {e}");
            }
            Ok(cap) => {
                keep_output(&name, &cap.output);
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

/// With `XTASK_TEST_OUTPUT_DIR=DIR` in the environment, writes a run's whole output to
/// `DIR/<scenario> <cell>.log` (the cell's `/` as `-`), passing runs too: the figures a
/// guest prints (e.g. Linux's IPI counts) stay readable after the run.
fn keep_output(name: &str, output: &str) {
    let Some(dir) = std::env::var_os("XTASK_TEST_OUTPUT_DIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let path = dir.join(format!("{}.log", name.replace('/', "-")));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, output)) {
        println!("  (could not keep the output in {}: {e})", path.display());
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
    fn reproduce_repeats_the_seed() {
        let s = scenarios::parse_scenario(
            "st",
            "guest = \"hello\"\nexit = \"zero\"\nappend = \"seed={seed}\"",
        )
        .unwrap();
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[0],
        };
        assert!(reproduce_command(&run).starts_with("STORM_SEED="));
        let s = scenarios::parse_scenario(
            "storm",
            "config = \"configs/storm-neighbour.toml\"\nexit = \"zero\"",
        )
        .unwrap();
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[0],
        };
        let cmd = reproduce_command(&run);
        assert!(
            cmd.starts_with("STORM_SEED=") && cmd.contains("--config configs/storm-neighbour.toml"),
            "{cmd}"
        );
    }

    #[test]
    fn marker_images() {
        let img = marker_image("PKG-DISK");
        assert_eq!(img.len(), MARKER_IMAGE_SIZE);
        assert_ne!(
            MARKER_IMAGE_SIZE % 512,
            0,
            "exercises the round-up to whole sectors"
        );
        assert_eq!(&img[1024..1032], b"PKG-DISK");
        assert_eq!(img[1032], 0);
        assert!(img[..1024].iter().all(|&b| b == 0));
        assert!(MARKER_IMAGE_SIZE as u64 <= vmpkg::MAX_DISK_IMAGE);
        let ws = Workspace::locate();
        let crates = ws.guest_crates();
        let s = scenarios::parse_scenario(
            "dimg",
            "guest = \"virtio-test\"\nexit = \"zero\"\ndisk_image_marker = \"M\"",
        )
        .unwrap();
        let cfg = scenario_plans(&ws, &s, &crates).unwrap();
        assert_eq!(cfg.vms[0].disk_image, Some(marker_image_path(&ws, &s)));
        let run = Run {
            scenario: &s,
            cell: scenarios::matrix()[0],
        };
        assert!(
            reproduce_command(&run).contains("--disk-image target/images/scenarios/dimg-disk.img"),
            "{}",
            reproduce_command(&run)
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
