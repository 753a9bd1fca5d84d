//! `cargo xtask bench`: runs the `bench` guest under QEMU with `-icount shift=0` (one guest
//! instruction = 1 ns of virtual time, so counter deltas are instruction counts, identical
//! from run to run), under the hypervisor on {cortex-a57 nVHE, max VHE, max nVHE} x {GICv2,
//! GICv3} and natively (no hypervisor) per CPU and GIC; then the `virtio-test` guest's block
//! benchmark in the hypervisor cells ([`crate::bench_blk`]); prints the tables and writes
//! `target/bench/results.json` plus one console log per run.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::bench_blk;
use crate::build::{self, Guest, Workspace};
use crate::cli::{Backend, Cpu, Gic, DEFAULT_MEM, HOST_MEM_OVERHEAD};
use crate::config::VmPlan;
use crate::error::{IoContext, Result};
use crate::fail;
use crate::qemu::{self, QemuConfig};

/// The guest crate.
const GUEST: &str = "bench";
/// vCPUs of the bench VM, and physical CPUs of the machine.
pub const CPUS: u32 = 2;
/// Kill a run after this long (a run takes well under a second).
const TIMEOUT: Duration = Duration::from_secs(180);

/// Arguments that make a QEMU run deterministic: instruction counting with no sleeping, one
/// TCG thread for all CPUs (round robin), a fixed DTB (no random seeds), RTC and RNG seed.
pub const DETERMINISM_ARGS: &[&str] = &[
    "-icount",
    "shift=0,sleep=off",
    "-accel",
    "tcg,thread=single",
    "-rtc",
    "base=2024-01-01T00:00:00,clock=vm",
    "-seed",
    "1",
    "-no-reboot",
];

/// Operations, in the guest's order, and whether a ratio to native means something (`hvc`
/// natively is QEMU's built-in PSCI firmware, not an exception level).
const OPS: &[(&str, bool)] = &[
    ("hvc", false),
    ("sysreg", true),
    ("mmio-pl011", true),
    ("mmio-gicd", true),
    ("virtio-notify", true),
    ("sgi-self", true),
    ("ack-eoi", true),
    ("timer-latency", true),
    ("ipi-roundtrip", true),
    ("vm-switch-pair", false),
];

/// One machine configuration: a CPU, a GIC, and a backend (`None` = native, no hypervisor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// CPU model.
    pub cpu: Cpu,
    /// GIC version.
    pub gic: Gic,
    /// Hypervisor backend, or `None` for the guest directly under QEMU.
    pub backend: Option<Backend>,
}

impl Cell {
    /// `native cortex-a57 gic2`, `max/vhe gic3`, ...
    pub fn name(self) -> String {
        match self.backend {
            None => format!("native {} gic{}", self.cpu.name(), self.gic.number()),
            Some(b) => format!("{}/{} gic{}", self.cpu.name(), b.name(), self.gic.number()),
        }
    }

    /// The native cell this one is compared with.
    pub fn native(self) -> Cell {
        Cell {
            backend: None,
            ..self
        }
    }
}

/// Every cell, natives first within each GIC.
pub fn cells() -> Vec<Cell> {
    let mut v = Vec::new();
    for gic in [Gic::V2, Gic::V3] {
        for (cpu, backend) in [
            (Cpu::CortexA57, None),
            (Cpu::CortexA57, Some(Backend::Nvhe)),
            (Cpu::Max, None),
            (Cpu::Max, Some(Backend::Vhe)),
            (Cpu::Max, Some(Backend::Nvhe)),
        ] {
            v.push(Cell { cpu, gic, backend });
        }
    }
    v
}

/// What one run produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Results {
    /// `(op, instructions per op)` as the guest printed them.
    pub ops: Vec<(String, f64)>,
    /// Per vCPU: `(vcpu index, [(exit reason, count)])` from the hypervisor's summary.
    pub exits: Vec<(u32, Vec<(String, u64)>)>,
    /// Per operation: `(op, [(exit reason, exits per op)])` as the guest measured them
    /// with `HV_EXIT_COUNT` (its own vCPU; non-zero reasons only; none natively).
    pub op_exits: Vec<(String, Vec<(String, f64)>)>,
    /// The guest printed `bench: done`.
    pub done: bool,
}

impl Results {
    /// The value of `op`, if measured.
    pub fn get(&self, op: &str) -> Option<f64> {
        self.ops.iter().find(|(o, _)| o == op).map(|&(_, v)| v)
    }

    /// The exits per operation of `op`, if the guest reported them.
    pub fn exits_of(&self, op: &str) -> Option<&[(String, f64)]> {
        self.op_exits
            .iter()
            .find(|(o, _)| o == op)
            .map(|(_, kv)| kv.as_slice())
    }
}

/// Parses a run's console: `bench: <op> <number>` lines, `bench: <op> exits/op reason=x.yy
/// ..` lines (`0` when none), `bench: done`, and the hypervisor's
/// `[hv] <vm>:   vcpuN exits: total=.. reason=..` lines.
pub fn parse(output: &str) -> Results {
    let mut r = Results::default();
    for line in output.lines() {
        let line = guest_line(line);
        if let Some(rest) = line.strip_prefix("bench: ") {
            if rest == "done" {
                r.done = true;
                continue;
            }
            let mut words = rest.split_whitespace();
            if let Some((op, per_op)) = rest.split_once(" exits/op") {
                // With two VMs both print; keep the first.
                if !op.contains(' ') && r.exits_of(op).is_none() {
                    let pairs = per_op
                        .split_whitespace()
                        .filter_map(|kv| kv.split_once('='))
                        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                        .collect();
                    r.op_exits.push((op.to_string(), pairs));
                }
            } else if let (Some(op), Some(v), None) = (words.next(), words.next(), words.next()) {
                if let Ok(v) = v.parse::<f64>() {
                    r.ops.push((op.to_string(), v));
                }
            }
        } else if let (true, Some((head, counts))) =
            (line.starts_with("[hv] "), line.split_once(" exits: "))
        {
            let Some(n) = head
                .trim_end()
                .rsplit_once("vcpu")
                .and_then(|(_, n)| n.parse::<u32>().ok())
            else {
                continue;
            };
            let pairs = counts
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                .collect();
            r.exits.push((n, pairs));
        }
    }
    r
}

/// Appends `,dtb-randomness=off` to the `-M` value.
pub fn fixed_dtb(mut args: Vec<OsString>) -> Vec<OsString> {
    if let Some(i) = args.iter().position(|a| a == "-M") {
        if let Some(m) = args.get_mut(i + 1) {
            m.push(",dtb-randomness=off");
        }
    }
    args
}

/// QEMU arguments of `cell` with `smp` physical CPUs (`hypervisor` and `package` are used only under the hypervisor).
pub fn cell_args(
    cell: Cell,
    smp: u32,
    guest_bin: &Path,
    hypervisor: &Path,
    package: &Path,
) -> Vec<OsString> {
    let mut args = match cell.backend {
        Some(backend) => QemuConfig {
            cpu: cell.cpu,
            gic: cell.gic,
            smp,
            host_mem: 2 * DEFAULT_MEM + HOST_MEM_OVERHEAD,
            backend,
            gdb: false,
            kernel: hypervisor.to_path_buf(),
            initrd: package.to_path_buf(),
            disk: None,
            net: crate::cli::Net::None,
            boot: Default::default(),
            platform: None,
        }
        .args(),
        None => {
            let mut a: Vec<OsString> = [
                "-M".to_string(),
                format!("virt,gic-version={}", cell.gic.number()),
                "-cpu".into(),
                cell.cpu.qemu_arg().into(),
                "-smp".into(),
                CPUS.to_string(),
                "-m".into(),
                format!("{}M", DEFAULT_MEM >> 20),
                "-nographic".into(),
                "-nic".into(),
                "none".into(),
                // The same virtio device QEMU gets under the hypervisor.
                "-global".into(),
                "virtio-mmio.force-legacy=false".into(),
                "-device".into(),
                "virtio-rng-device".into(),
                "-kernel".into(),
            ]
            .into_iter()
            .map(OsString::from)
            .collect();
            a.push(guest_bin.as_os_str().to_owned());
            a
        }
    };
    args = fixed_dtb(args);
    args.extend(DETERMINISM_ARGS.iter().map(OsString::from));
    args
}

/// Runs QEMU with stdout and stderr into `log`, under [`TIMEOUT`]; returns the log text. With
/// `need_success`, a non-zero exit status is an error.
pub fn run_logged(
    qemu_path: &Path,
    args: &[OsString],
    log: &Path,
    need_success: bool,
) -> Result<String> {
    let file = fs::File::create(log).io(|| format!("creating {}", log.display()))?;
    let err = file.try_clone().io(|| "duplicating a file".into())?;
    let mut child = Command::new(qemu_path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .io(|| format!("could not start {}", qemu_path.display()))?;
    let status = child
        .wait_timeout(TIMEOUT)
        .io(|| "waiting for QEMU".into())?;
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let text = fs::read_to_string(log).io(|| format!("reading {}", log.display()))?;
    match status {
        None => Err(fail!(
            "timed out after {} s (log: {})",
            TIMEOUT.as_secs(),
            log.display()
        )),
        Some(s) if need_success && !s.success() => {
            Err(fail!("QEMU exited with {s} (log: {})", log.display()))
        }
        Some(_) => Ok(text),
    }
}

/// `cargo xtask bench`. Returns the exit status (1 if a run failed). With `dbt`, only the
/// translator benchmark ([`crate::bench_dbt`]); with `smp_scaling`, only the core-count
/// comparison ([`crate::bench_smp`]).
pub fn run(
    ws: &Workspace,
    filter: Option<&str>,
    linux: bool,
    dbt: bool,
    profile: Option<&str>,
    smp_scaling: bool,
) -> Result<i32> {
    if dbt {
        return crate::bench_dbt::run(ws);
    }
    let qemu_path = qemu::ensure_qemu()?;
    let plan = VmPlan {
        name: GUEST.into(),
        guest: Guest::Crate(GUEST.into()),
        kernel: None,
        initrd: None,
        mem: DEFAULT_MEM,
        vcpus: CPUS,
        cmdline: String::new(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Aarch64,
    };
    let objcopy = build::find_objcopy(ws)?;
    let hypervisor = build::build_hypervisor(ws, &objcopy)?;
    build::build_guests(
        ws,
        &objcopy,
        &[GUEST.to_string(), bench_blk::GUEST.to_string()],
    )?;
    // Private copies: other xtask runs rewrite target/images/ while ours go on.
    let out_dir = ws.root.join("target/bench");
    fs::create_dir_all(&out_dir).io(|| format!("creating {}", out_dir.display()))?;
    let package = out_dir.join("package.bin");
    build::write_package(
        &package,
        &build::vm_configs(ws, std::slice::from_ref(&plan))?,
    )?;
    // VM-to-VM switch: two 1-vCPU VMs on one physical CPU yielding to each other.
    let switch_vm = |name: &str| VmPlan {
        name: name.into(),
        guest: Guest::Crate(GUEST.into()),
        kernel: None,
        initrd: None,
        mem: DEFAULT_MEM,
        vcpus: 1,
        cmdline: "vmswitch".into(),
        ends_all: false,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Aarch64,
    };
    let switch_package = out_dir.join("vmswitch.bin");
    build::write_package(
        &switch_package,
        &build::vm_configs(ws, &[switch_vm("b1"), switch_vm("b2")])?,
    )?;
    // virtio-blk: the virtio-test guest with `bench`, 1 vCPU.
    let blk_package = out_dir.join("virtio-blk.bin");
    let blk_plan = VmPlan {
        name: bench_blk::GUEST.into(),
        guest: Guest::Crate(bench_blk::GUEST.into()),
        kernel: None,
        initrd: None,
        mem: DEFAULT_MEM,
        vcpus: 1,
        cmdline: bench_blk::CMDLINE.into(),
        ends_all: true,
        mac: None,
        disk_image: None,
        arch: build::VmArch::Aarch64,
    };
    build::write_package(&blk_package, &build::vm_configs(ws, &[blk_plan])?)?;
    let blk_bin = out_dir.join("virtio-test.bin");
    fs::copy(ws.guest_bin(bench_blk::GUEST), &blk_bin)
        .io(|| "copying the virtio-test image".into())?;
    let guest_bin = out_dir.join("bench.bin");
    fs::copy(ws.guest_bin(GUEST), &guest_bin).io(|| "copying the bench image".into())?;
    let hv_bin = out_dir.join("hypervisor.bin");
    fs::copy(&hypervisor, &hv_bin).io(|| "copying the hypervisor image".into())?;

    if let Some(op) = profile {
        let dir = out_dir.join("profile");
        fs::create_dir_all(&dir).io(|| format!("creating {}", dir.display()))?;
        let package_for = |only: &str| -> Result<std::path::PathBuf> {
            let path = dir.join(format!("only-{only}.bin"));
            let mut p = plan.clone();
            p.cmdline = format!("only={only}");
            build::write_package(&path, &build::vm_configs(ws, &[p])?)?;
            Ok(path)
        };
        let (with, without) = (package_for(op)?, package_for("none")?);
        let elf = ws
            .root
            .join("target/aarch64-unknown-none-softfloat/release/hypervisor");
        for cell in cells().into_iter().filter(|c| c.backend.is_some()) {
            if filter.is_some_and(|f| !cell.name().contains(f)) {
                continue;
            }
            eprintln!("xtask: profile {op} {}", cell.name());
            let files = crate::bench_profile::Files {
                qemu: &qemu_path,
                dir: &dir,
                guest_bin: &guest_bin,
                hv_elf: &elf,
                hv_bin: &hv_bin,
                with_op: &with,
                without: &without,
            };
            let report = crate::bench_profile::profile(&files, cell, op)?;
            println!("{report}");
        }
        return Ok(0);
    }
    if smp_scaling {
        let files = crate::bench_smp::Files {
            qemu: &qemu_path,
            dir: &out_dir,
            guest_bin: &guest_bin,
            hv_bin: &hv_bin,
            package: &package,
        };
        let runs = crate::bench_smp::run(&files, filter);
        println!("{}", crate::bench_smp::table(&runs));
        let fair = crate::bench_smp::fairness(ws, &objcopy, &qemu_path, &out_dir, &hv_bin, filter)?;
        println!("{}", crate::bench_smp::fairness_table(&fair));
        let balanced_fair = fair
            .iter()
            .all(|(_, _, r)| r.as_ref().is_some_and(|f| f.fair()));
        return Ok(
            if runs.iter().all(|(_, _, r)| r.is_some()) && balanced_fair {
                0
            } else {
                1
            },
        );
    }
    let mut results: Vec<(Cell, Results)> = Vec::new();
    let mut failed = 0;
    for cell in cells() {
        if filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        let args = cell_args(cell, CPUS, &guest_bin, &hv_bin, &package);
        let log = out_dir.join(format!("{}.log", cell.name().replace([' ', '/'], "-")));
        eprintln!("xtask: bench {}", cell.name());
        let r = run_logged(&qemu_path, &args, &log, true).map(|text| parse(&text));
        // The VM-switch row: same cell, two VMs on one CPU.
        let r = match (r, cell.backend) {
            (Ok(mut r), Some(_)) if r.done => {
                let args = cell_args(cell, 1, &guest_bin, &hv_bin, &switch_package);
                let log = out_dir.join(format!(
                    "{}-vmswitch.log",
                    cell.name().replace([' ', '/'], "-")
                ));
                if let Ok(text) = run_logged(&qemu_path, &args, &log, true) {
                    let sw = parse(&text);
                    if let Some(v) = sw.get("vm-switch-pair") {
                        r.ops.push(("vm-switch-pair".into(), v));
                    }
                    if let Some(kv) = sw.exits_of("vm-switch-pair") {
                        r.op_exits.push(("vm-switch-pair".into(), kv.to_vec()));
                    }
                }
                Ok(r)
            }
            (r, _) => r,
        };
        match r {
            Ok(r) if r.done => results.push((cell, r)),
            Ok(_) => {
                eprintln!(
                    "xtask: bench {}: no `bench: done` (log: {})",
                    cell.name(),
                    log.display()
                );
                failed += 1;
            }
            Err(e) => {
                eprintln!("xtask: bench {}: {e}", cell.name());
                failed += 1;
            }
        }
    }
    println!("{}", table(&results));
    let mut json_text = to_json(&results);
    let blk = bench_blk::run(
        &qemu_path,
        &out_dir,
        &blk_bin,
        &hv_bin,
        &blk_package,
        filter,
    );
    if !blk.is_empty() {
        failed += blk.iter().filter(|(_, r)| r.is_none()).count();
        println!("{}", bench_blk::table(&blk));
        json_text = bench_blk::add_to_json(&json_text, &blk);
    }
    if linux {
        let boots = crate::bench_linux::run(ws, &qemu_path, &out_dir, &hv_bin, filter)?;
        failed += boots.iter().filter(|b| b.count.is_none()).count();
        println!("{}", crate::bench_linux::table(&boots));
        json_text = crate::bench_linux::add_to_json(&json_text, &boots);
        let armv7 = crate::bench_linux::armv7::run(ws, &qemu_path, &out_dir, &hv_bin, filter)?;
        failed += crate::bench_linux::armv7::failures(&armv7);
        println!("{}", crate::bench_linux::armv7::table(&armv7));
        json_text = crate::bench_linux::armv7::add_to_json(&json_text, &armv7);
    }
    let json = out_dir.join("results.json");
    fs::write(&json, json_text).io(|| format!("writing {}", json.display()))?;
    println!("written: {}", json.display());
    Ok(if failed == 0 { 0 } else { 1 })
}

/// The measured value of `op` in `cell`, if that cell ran.
fn value(results: &[(Cell, Results)], cell: Cell, op: &str) -> Option<f64> {
    results
        .iter()
        .find(|(c, _)| *c == cell)
        .and_then(|(_, r)| r.get(op))
}

/// The table: one block per GIC, operations as rows, cells as columns; hypervisor cells show
/// `value (xratio)` against the native run of the same CPU and GIC.
pub fn table(results: &[(Cell, Results)]) -> String {
    let mut s = String::from(
        "instructions per operation (QEMU -icount shift=0: 1 instruction = 1 ns = 1/16 tick \
         of the 62.5 MHz counter); (xN) = ratio to native on the same CPU and GIC\n",
    );
    for gic in [Gic::V2, Gic::V3] {
        let cols: Vec<Cell> = cells().into_iter().filter(|c| c.gic == gic).collect();
        let _ = write!(
            s,
            "\n{:<14} {:>11}",
            format!("GICv{}", gic.number()),
            "goal"
        );
        for c in &cols {
            let head = match c.backend {
                None => format!("native {}", c.cpu.name()),
                Some(b) => format!("{} {}", c.cpu.name(), b.name()),
            };
            let _ = write!(s, " {head:>20}");
        }
        s.push('\n');
        for &(op, ratio_ok) in OPS {
            let goal_text = goal(op).map_or("-".into(), |(v, n)| format!("{v:.0}/{n:.0}"));
            let _ = write!(s, "{op:<14} {goal_text:>11}");
            for &c in &cols {
                let mut cell = match (value(results, c, op), value(results, c.native(), op)) {
                    (None, _) => "-".to_string(),
                    (Some(v), Some(n)) if c.backend.is_some() && ratio_ok && n > 0.0 => {
                        format!("{v:.1} (x{:.0})", v / n)
                    }
                    (Some(v), _) => format!("{v:.1}"),
                };
                if let Some(pass) = meets_goal(c, op, value(results, c, op)) {
                    cell.push_str(if pass { " ok" } else { " NO" });
                }
                let _ = write!(s, " {cell:>20}");
            }
            s.push('\n');
        }
        let _ = write!(s, "{:<14} {:>11}", "exits vcpu0/1", "");
        for &c in &cols {
            let total = |vcpu: u32| {
                results
                    .iter()
                    .find(|(x, _)| *x == c)
                    .and_then(|(_, r)| r.exits.iter().find(|(n, _)| *n == vcpu))
                    .and_then(|(_, kv)| kv.iter().find(|(k, _)| k == "total"))
                    .map_or("-".to_string(), |(_, v)| v.to_string())
            };
            let cell = if c.backend.is_some() {
                format!("{}/{}", total(0), total(1))
            } else {
                "-".into()
            };
            let _ = write!(s, " {cell:>20}");
        }
        s.push('\n');
    }
    s.push_str(&exits_table(results));
    s
}

/// The goal of issue 19 for `op` in instructions per operation: (VHE, non-VHE), or `None`
/// for rows without one.
pub fn goal(op: &str) -> Option<(f64, f64)> {
    match op {
        "hvc" | "sysreg" => Some((120.0, 150.0)),
        "mmio-pl011" | "mmio-gicd" => Some((250.0, 300.0)),
        "virtio-notify" => Some((400.0, 450.0)),
        "timer-latency" => Some((1500.0, 1800.0)),
        "ipi-roundtrip" => Some((4000.0, 4500.0)),
        _ => None,
    }
}

/// Whether `value` of `op` in hypervisor cell `c` meets its goal (`None`: native cell, no
/// goal, or not measured).
pub fn meets_goal(c: Cell, op: &str, value: Option<f64>) -> Option<bool> {
    let backend = c.backend?;
    let (vhe, nvhe) = goal(op)?;
    let limit = if backend == Backend::Vhe { vhe } else { nvhe };
    Some(value? <= limit)
}

/// Exits per operation in words: `1 hvc`, `1 mmio + 1 irq`, `0` (none), `-` (not measured).
pub fn exits_text(kv: Option<&[(String, f64)]>) -> String {
    let Some(kv) = kv else { return "-".into() };
    let parts: Vec<String> = kv
        .iter()
        .filter(|(_, v)| *v != 0.0)
        .map(|(k, v)| {
            if (v - v.round()).abs() < 0.005 {
                format!("{v:.0} {k}")
            } else {
                format!("{v:.2} {k}")
            }
        })
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

/// `line` without a trailing `\r` and without the `[vm] ` prefix the hypervisor puts on
/// guest lines when it runs several VMs (its own `[hv] ` lines are kept).
pub fn guest_line(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    match line.strip_prefix('[') {
        Some(rest) if !line.starts_with("[hv] ") => rest.split_once("] ").map_or(line, |(_, l)| l),
        _ => line,
    }
}

/// Appends the header row of a per-GIC table (`GICvN`, then one column of `width` per
/// hypervisor cell) to `s` and returns those cells in column order.
pub fn hypervisor_columns(s: &mut String, gic: Gic, width: usize) -> Vec<Cell> {
    let cols: Vec<Cell> = cells()
        .into_iter()
        .filter(|c| c.gic == gic && c.backend.is_some())
        .collect();
    let _ = write!(s, "\n{:<14}", format!("GICv{}", gic.number()));
    for c in &cols {
        let head = format!("{} {}", c.cpu.name(), c.backend.map_or("", |b| b.name()));
        let _ = write!(s, " {head:>width$}");
    }
    s.push('\n');
    cols
}

/// The second table: per GIC, the exits one operation costs in each hypervisor cell, as the
/// guest measured them on its own vCPU (`HV_EXIT_COUNT` before and after the loop).
pub fn exits_table(results: &[(Cell, Results)]) -> String {
    let mut s = String::from(
        "\nexits per operation (the guest's own vCPU, read with HV_EXIT_COUNT around each \
         loop; ipi-roundtrip: vCPU 0 only; vm-switch-pair: not attributed)\n",
    );
    for gic in [Gic::V2, Gic::V3] {
        let cols = hypervisor_columns(&mut s, gic, 26);
        for &(op, _) in OPS {
            let _ = write!(s, "{op:<14}");
            for &c in &cols {
                let kv = results
                    .iter()
                    .find(|(x, _)| *x == c)
                    .and_then(|(_, r)| r.exits_of(op));
                let _ = write!(s, " {:>26}", exits_text(kv));
            }
            s.push('\n');
        }
    }
    s
}

/// A JSON string literal (quotes and backslashes escaped; our names have nothing else).
pub fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `results.json`: `{"unit": .., "runs": [{"cell", "cpu", "gic", "backend", "ops": {..},
/// "exits": {"vcpu0": {..}, ..}, "exits_per_op": {"<op>": {"<reason>": x.yy, ..}, ..}}]}`.
pub fn to_json(results: &[(Cell, Results)]) -> String {
    let mut s = String::from(
        "{\n  \"unit\": \"instructions per operation (QEMU -icount shift=0)\",\n  \"runs\": [",
    );
    for (i, (cell, r)) in results.iter().enumerate() {
        let ops: Vec<String> = r
            .ops
            .iter()
            .map(|(o, v)| format!("{}: {v:.1}", json_str(o)))
            .collect();
        let exits: Vec<String> = r
            .exits
            .iter()
            .map(|(n, kv)| {
                let kv: Vec<String> = kv
                    .iter()
                    .map(|(k, v)| format!("{}: {v}", json_str(k)))
                    .collect();
                format!("\"vcpu{n}\": {{{}}}", kv.join(", "))
            })
            .collect();
        let per_op: Vec<String> = r
            .op_exits
            .iter()
            .map(|(op, kv)| {
                let kv: Vec<String> = kv
                    .iter()
                    .map(|(k, v)| format!("{}: {v:.2}", json_str(k)))
                    .collect();
                format!("{}: {{{}}}", json_str(op), kv.join(", "))
            })
            .collect();
        let _ = write!(
            s,
            "{}\n    {{\"cell\": {}, \"cpu\": {}, \"gic\": {}, \"backend\": {}, \"ops\": {{{}}}, \
             \"exits\": {{{}}}, \"exits_per_op\": {{{}}}}}",
            if i == 0 { "" } else { "," },
            json_str(&cell.name()),
            json_str(cell.cpu.name()),
            cell.gic.number(),
            cell.backend.map_or("null".into(), |b| json_str(b.name())),
            ops.join(", "),
            exits.join(", "),
            per_op.join(", ")
        );
    }
    s.push_str("\n  ]\n}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_guest_lines_and_exit_counters() {
        let out = "bench: freq 62500000 Hz, cpus 2\nbench: hvc 2345.5\nbench: sysreg 1.0\n\
                   bench: virtio-notify n/a (no device)\nbench: done\n\
                   [hv] bench: Some(PowerOff); exits: total=12 hvc=3\n\
                   [hv] bench:   vcpu0 exits: total=10 hvc=3 sysreg=7\n\
                   [hv] bench:   vcpu1 exits: total=2 irq=2\n";
        let r = parse(out);
        assert!(r.done);
        assert_eq!(r.ops, vec![("hvc".into(), 2345.5), ("sysreg".into(), 1.0)]);
        assert_eq!(r.exits.len(), 2);
        assert_eq!(r.exits[0].0, 0);
        assert_eq!(r.exits[0].1[2], ("sysreg".into(), 7));
        assert_eq!(r.exits[1].1, vec![("total".into(), 2), ("irq".into(), 2)]);
    }

    #[test]
    fn parses_exits_per_op() {
        let out = "bench: hvc 973.0\nbench: hvc exits/op hvc=1.00\n\
                   bench: ack-eoi exits/op 0\n\
                   bench: ipi-roundtrip exits/op sysreg=1.00 wfx=1.00 irq=0.50\n\
                   [b1] bench: vm-switch-pair exits/op hvc=1.00\n\
                   [b2] bench: vm-switch-pair exits/op hvc=2.00\nbench: done\n";
        let r = parse(out);
        assert_eq!(r.ops, vec![("hvc".into(), 973.0)]);
        assert_eq!(r.exits_of("hvc"), Some(&[("hvc".to_string(), 1.0)][..]));
        assert_eq!(r.exits_of("ack-eoi"), Some(&[][..]));
        assert_eq!(r.exits_of("vm-switch-pair").unwrap()[0].1, 1.0);
        assert_eq!(r.exits_of("sysreg"), None);
        assert_eq!(exits_text(r.exits_of("hvc")), "1 hvc");
        assert_eq!(exits_text(r.exits_of("ack-eoi")), "0");
        assert_eq!(exits_text(r.exits_of("sysreg")), "-");
        assert_eq!(
            exits_text(r.exits_of("ipi-roundtrip")),
            "1 sysreg + 1 wfx + 0.50 irq"
        );
        let cell = cells()[1];
        let json = to_json(&[(cell, r)]);
        assert!(json.contains("\"exits_per_op\": {\"hvc\": {\"hvc\": 1.00}, \"ack-eoi\": {}"));
    }

    #[test]
    fn ten_cells_with_natives() {
        let c = cells();
        assert_eq!(c.len(), 10);
        assert_eq!(c.iter().filter(|c| c.backend.is_none()).count(), 4);
        assert_eq!(c[1].name(), "cortex-a57/nvhe gic2");
    }

    #[test]
    fn goals_per_backend() {
        let cell = |backend| Cell {
            cpu: Cpu::Max,
            gic: Gic::V3,
            backend,
        };
        let (vhe, nvhe) = (cell(Some(Backend::Vhe)), cell(Some(Backend::Nvhe)));
        assert_eq!(meets_goal(vhe, "hvc", Some(120.0)), Some(true));
        assert_eq!(meets_goal(vhe, "hvc", Some(121.0)), Some(false));
        assert_eq!(meets_goal(nvhe, "hvc", Some(121.0)), Some(true));
        assert_eq!(meets_goal(nvhe, "ipi-roundtrip", Some(4600.0)), Some(false));
        assert_eq!(meets_goal(cell(None), "hvc", Some(2.0)), None);
        assert_eq!(meets_goal(vhe, "ack-eoi", Some(50.0)), None);
        assert_eq!(meets_goal(vhe, "hvc", None), None);
    }
}
