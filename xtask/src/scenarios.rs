//! QEMU scenarios (`tests/scenarios/*.toml`), the CPU x backend x GIC matrix they run over,
//! and checking a run's output against a scenario. See `tests/README.md` for the format.

use std::fs;
use std::path::Path;

use serde::Deserialize;

use crate::cli::{parse_size, validate_mem, Backend, Cpu, Gic, Net};
use crate::error::{IoContext, Result};
use crate::fail;
use crate::qemu::Outcome;

/// Longest `disk_image_marker` (the virtio-test guest prints 16 bytes of sector 2).
pub const DISK_IMAGE_MARKER_MAX: usize = 16;

/// Default per-run timeout of a scenario, in seconds.
pub const DEFAULT_SCENARIO_TIMEOUT: u64 = 30;

/// The line the hypervisor prints before it stops on a fatal error (an unexpected exception
/// at EL2, a Rust panic, a failed boot step: `crates/hypervisor/src/arch/fatal.rs`,
/// `arch/start.rs`). Every scenario forbids it unless it sets `allow_fatal = true`.
pub const FATAL_LINE: &str = "[hv] FATAL";

/// Largest exit status a process can report.
const MAX_EXIT_CODE: i64 = 255;

/// The exit status a run must end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectExit {
    /// QEMU exits 0 (the guest did PSCI SYSTEM_OFF).
    Zero,
    /// QEMU exits with a non-zero status (SYSTEM_RESET, crash, fatal error); a timeout or a
    /// kill by signal never counts.
    Nonzero,
    /// QEMU exits with exactly this status (the hypervisor's codes: 0 every VM powered off,
    /// 1 a VM reset, 2 a VM crashed, 3 an exception at EL2, 4 a hypervisor panic).
    Code(i32),
}

/// `exit` as written: `"zero"`, `"nonzero"` or an exact status.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ExitField {
    Code(i64),
    Word(String),
}

impl ExpectExit {
    /// Parses the `exit` field.
    fn from_field(f: ExitField) -> std::result::Result<ExpectExit, String> {
        match f {
            ExitField::Word(w) if w == "zero" => Ok(ExpectExit::Zero),
            ExitField::Word(w) if w == "nonzero" => Ok(ExpectExit::Nonzero),
            ExitField::Word(w) => Err(format!(
                "`exit` = {w:?}: give \"zero\", \"nonzero\" or an exact status 0..={MAX_EXIT_CODE}"
            )),
            ExitField::Code(c) if (0..=MAX_EXIT_CODE).contains(&c) => {
                Ok(ExpectExit::Code(c as i32))
            }
            ExitField::Code(c) => Err(format!("`exit` = {c}: must be 0..={MAX_EXIT_CODE}")),
        }
    }

    /// Why exit status `code` does not meet this expectation (`None`: it does).
    pub fn mismatch(self, code: i32) -> Option<String> {
        match self {
            ExpectExit::Zero if code != 0 => Some(format!("exit status {code}, expected 0")),
            ExpectExit::Nonzero if code == 0 => Some("exit status 0, expected non-zero".into()),
            ExpectExit::Code(want) if code != want => {
                Some(format!("exit status {code}, expected exactly {want}"))
            }
            _ => None,
        }
    }
}

/// A scenario file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    description: Option<String>,
    guest: Option<String>,
    config: Option<String>,
    append: Option<String>,
    mem: Option<String>,
    vcpus: Option<u32>,
    smp: Option<u32>,
    timeout: Option<u64>,
    exit: ExitField,
    #[serde(default)]
    expect: Vec<String>,
    #[serde(default)]
    expect_any_order: Vec<String>,
    #[serde(default)]
    forbid: Vec<String>,
    cells: Option<Vec<String>>,
    #[serde(default)]
    full_only: bool,
    disk_marker: Option<String>,
    disk_image_marker: Option<String>,
    net: Option<String>,
    #[serde(default)]
    allow_fatal: bool,
    load_offset: Option<String>,
    host_mem: Option<String>,
    #[serde(default)]
    uefi: bool,
    #[serde(default)]
    uefi_shell: bool,
    #[serde(default)]
    uefi_grub: bool,
    acpi: Option<bool>,
    platform: Option<String>,
    #[serde(default)]
    el1: bool,
    hv_append: Option<String>,
    #[serde(default)]
    icount: bool,
}

/// How the machine starts the hypervisor in a scenario (the default: QEMU `-kernel` at the
/// image's link address, device tree from QEMU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScenarioBoot {
    /// Load the image this far above the start of RAM instead of its link address (QEMU
    /// `-kernel` honours the arm64 header's text_offset, which xtask rewrites in a copy of
    /// the image; the image relocates itself).
    pub load_offset: Option<u64>,
    /// The machine's RAM (`None`: what the VMs need plus the hypervisor's share).
    pub host_mem: Option<u64>,
    /// Boot through UEFI firmware (edk2's QEMU_EFI.fd) from a FAT drive.
    pub uefi: bool,
    /// With `uefi`: the drive has no boot file; the EFI shell starts the image from
    /// `startup.nsh`, passing the command line as its arguments.
    pub uefi_shell: bool,
    /// With `uefi`: the boot file is a standalone GRUB whose `linux` + `initrd` start the
    /// image with the package as initrd.
    pub uefi_grub: bool,
    /// With `uefi`: firmware tables as ACPI only (`-M virt,acpi=on`), or the device tree
    /// only (`acpi=off`).
    pub acpi: bool,
    /// A server profile (`seattle`, `thunderx`): CPU model, MIDR, GIC, CPUs and UEFI.
    pub platform: Option<crate::platform::Platform>,
    /// QEMU `-kernel` without `virtualization=on`: the image is entered at EL1 (and must
    /// refuse to start).
    pub el1: bool,
    /// Words added to the hypervisor's command line (e.g. `place=0,0,0 balance=off`).
    pub hv_append: Option<String>,
    /// Run QEMU deterministically (`-icount shift=0`, one TCG thread: the bench's
    /// `DETERMINISM_ARGS`), so virtual time counts instructions and a guest's measurements
    /// in virtual time do not depend on the load of the machine running the test.
    pub icount: bool,
}

/// What a scenario boots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioVms {
    /// One VM.
    Guest {
        /// Guest crate name, `linux`, or image path relative to the workspace root.
        guest: String,
        /// Guest command line (`None`: the guest's default).
        append: Option<String>,
        /// Guest RAM in bytes (`None`: the guest's default).
        mem: Option<u64>,
        /// vCPUs.
        vcpus: u32,
    },
    /// The VMs of a configuration file (path relative to the workspace root).
    Config(String),
}

/// A checked scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// Name: the file name without `.toml`.
    pub name: String,
    /// What it tests (free text).
    pub description: String,
    /// What it boots.
    pub vms: ScenarioVms,
    /// Physical CPUs of the QEMU machine (`None`: the config's `[machine] smp`, or 1).
    pub smp: Option<u32>,
    /// Timeout of one run, in seconds.
    pub timeout: u64,
    /// Exit status expectation.
    pub exit: ExpectExit,
    /// Substrings that must appear in the output, in this order.
    pub expect: Vec<String>,
    /// Substrings that must appear in the output, in any order.
    pub expect_any_order: Vec<String>,
    /// Substrings that must not appear anywhere in the output.
    pub forbid: Vec<String>,
    /// The hypervisor's [`FATAL_LINE`] may appear (forbidden by default).
    pub allow_fatal: bool,
    /// Cells to run in (names from [`matrix`]); all when `None`.
    pub cells: Option<Vec<String>>,
    /// Only `cargo xtask test --full` runs it.
    pub full_only: bool,
    /// Attach a fresh 8 MiB virtio disk image to QEMU and require this string in the image
    /// file after the run (data the guest wrote reached the host's disk).
    pub disk_marker: Option<String>,
    /// Pack a 64 KiB RAM-disk image with this text at sector 2 into the VM's package
    /// (`--disk-image`); the virtio-test guest prints the start of sector 2, so the scenario
    /// can `expect` it.
    pub disk_image_marker: Option<String>,
    /// QEMU's network card (`None`: the config's `[machine] net`, else none).
    pub net: Option<Net>,
    /// How the machine starts the hypervisor.
    pub boot: ScenarioBoot,
}

/// Parses one scenario from TOML text; `name` is used in messages and as the scenario name.
pub fn parse_scenario(name: &str, text: &str) -> std::result::Result<Scenario, String> {
    let f: ScenarioFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let exit = ExpectExit::from_field(f.exit)?;
    let vms = match (f.guest, f.config) {
        (Some(_), Some(_)) => {
            return Err("give `guest` or `config`, not both".into());
        }
        (None, None) => {
            return Err(
                "missing `guest` (a guest crate, \"linux\" or an image path) or `config` \
                 (a VM configuration file)"
                    .into(),
            )
        }
        (None, Some(config)) => {
            if f.append.is_some() || f.mem.is_some() || f.vcpus.is_some() {
                return Err(
                    "`append`, `mem` and `vcpus` go with `guest`; with `config` the \
                     configuration file describes the VMs"
                        .into(),
                );
            }
            if config.trim().is_empty() {
                return Err("`config` must name a configuration file".into());
            }
            ScenarioVms::Config(config)
        }
        (Some(guest), None) => {
            if guest.trim().is_empty() {
                return Err("`guest` must name a guest crate or an image path".into());
            }
            let mem = match &f.mem {
                Some(s) => {
                    let m = parse_size(s).map_err(|e| format!("`mem`: {e}"))?;
                    validate_mem(m, "`mem`")?;
                    Some(m)
                }
                None => None,
            };
            let vcpus = f.vcpus.unwrap_or(1);
            crate::config::validate_vcpus(vcpus, "`vcpus`")?;
            ScenarioVms::Guest {
                guest,
                append: f.append,
                mem,
                vcpus,
            }
        }
    };
    if let Some(smp) = f.smp {
        if !(1..=crate::cli::MAX_SMP_GICV2).contains(&smp) {
            return Err(format!(
                "`smp` = {smp}: must be 1..={} (every scenario also runs on GICv2)",
                crate::cli::MAX_SMP_GICV2
            ));
        }
    }
    let timeout = f.timeout.unwrap_or(DEFAULT_SCENARIO_TIMEOUT);
    if timeout == 0 {
        return Err("`timeout` must be at least 1 second".into());
    }
    if f.expect
        .iter()
        .chain(&f.expect_any_order)
        .chain(&f.forbid)
        .any(String::is_empty)
    {
        return Err(
            "`expect`, `expect_any_order` and `forbid` must not contain empty strings".into(),
        );
    }
    if let Some(cells) = &f.cells {
        let known: Vec<String> = all_cells().iter().map(Cell::name).collect();
        if let Some(bad) = cells.iter().find(|c| !known.contains(c)) {
            return Err(format!(
                "`cells`: unknown cell '{bad}'; known cells: {}",
                known.join(", ")
            ));
        }
    }
    let net = match f.net.as_deref() {
        Some(n) => Some(Net::parse(n, "`net`")?),
        None => None,
    };
    if let Some(m) = &f.disk_image_marker {
        if !matches!(vms, ScenarioVms::Guest { .. }) {
            return Err("`disk_image_marker` goes with `guest` (one VM), not `config`".into());
        }
        if m.is_empty()
            || m.len() > DISK_IMAGE_MARKER_MAX
            || !m.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        {
            return Err(format!(
                "`disk_image_marker` = {m:?}: give 1..={DISK_IMAGE_MARKER_MAX} printable ASCII \
                 characters (the guest prints the first {DISK_IMAGE_MARKER_MAX} bytes of sector 2)"
            ));
        }
    }
    let load_offset = match &f.load_offset {
        Some(t) => {
            let v = match t.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16)
                    .map_err(|_| format!("`load_offset` = {t}: not a hexadecimal number"))?,
                None => parse_size(t).map_err(|e| format!("`load_offset`: {e}"))?,
            };
            if v % 0x1000 != 0 || v < 0x8_0000 {
                return Err(format!(
                    "`load_offset` = {t}: must be a multiple of 4 KiB and at least 0x80000"
                ));
            }
            Some(v)
        }
        None => None,
    };
    let host_mem = match &f.host_mem {
        Some(t) => Some(parse_size(t).map_err(|e| format!("`host_mem`: {e}"))?),
        None => None,
    };
    let platform = match f.platform.as_deref() {
        Some(p) => {
            Some(crate::platform::Platform::parse(p).map_err(|e| format!("`platform`: {e}"))?)
        }
        None => None,
    };
    if f.acpi.is_some() && !f.uefi && !f.uefi_shell && !f.uefi_grub && platform.is_none() {
        return Err("`acpi` goes with `uefi = true` (the firmware chooses the tables)".into());
    }
    if load_offset.is_some() && (f.uefi || f.uefi_shell || f.uefi_grub || platform.is_some()) {
        return Err(
            "`load_offset` is for QEMU -kernel; under UEFI the firmware places the image".into(),
        );
    }
    if f.el1
        && (f.uefi || f.uefi_shell || f.uefi_grub || platform.is_some() || load_offset.is_some())
    {
        return Err("`el1` is for QEMU -kernel at the link address (the firmware paths have their own EL checks)".into());
    }
    let cells = match (platform, f.cells) {
        (Some(p), None) => Some(vec![p.cell()]),
        (Some(p), Some(c)) if c != [p.cell()] => {
            return Err(format!(
                "`cells`: a {} scenario runs in the profile's cell {} only",
                p.name(),
                p.cell()
            ))
        }
        (_, c) => c,
    };
    let boot = ScenarioBoot {
        el1: f.el1,
        load_offset,
        host_mem,
        uefi: f.uefi || f.uefi_shell || f.uefi_grub || platform.is_some(),
        uefi_shell: f.uefi_shell,
        uefi_grub: f.uefi_grub,
        acpi: f.acpi.unwrap_or(platform.is_some()),
        platform,
        hv_append: f.hv_append.filter(|a| !a.trim().is_empty()),
        icount: f.icount,
    };
    Ok(Scenario {
        boot,
        name: name.to_string(),
        description: f.description.unwrap_or_default(),
        vms,
        smp: f.smp,
        timeout,
        exit,
        expect: f.expect,
        expect_any_order: f.expect_any_order,
        forbid: f.forbid,
        allow_fatal: f.allow_fatal,
        cells,
        full_only: f.full_only,
        disk_marker: f.disk_marker.filter(|m| !m.is_empty()),
        disk_image_marker: f.disk_image_marker,
        net,
    })
}

/// Loads every `*.toml` in `dir`, sorted by name. Any bad file is an error naming the file.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>> {
    let entries =
        fs::read_dir(dir).io(|| format!("reading scenario directory {}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    // By name, so `hello` comes before `hello-reset`.
    paths.sort_by_key(|p| p.file_stem().map(|s| s.to_os_string()));
    let mut out = Vec::new();
    for path in paths {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = fs::read_to_string(&path).io(|| format!("reading {}", path.display()))?;
        let scenario = parse_scenario(&name, &text).map_err(|e| {
            fail!(
                "bad scenario file {}: {e}\n(the format is described in tests/README.md)",
                path.display()
            )
        })?;
        out.push(scenario);
    }
    if out.is_empty() {
        return Err(fail!("no scenarios (*.toml) in {}", dir.display()));
    }
    Ok(out)
}

/// One cell of the test matrix: a CPU, a requested backend and a GIC version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// CPU model.
    pub cpu: Cpu,
    /// Requested backend.
    pub backend: Backend,
    /// GIC version.
    pub gic: Gic,
}

impl Cell {
    /// `cortex-a57/auto/gic2`, `max/nvhe/gic3`, ...
    pub fn name(&self) -> String {
        format!(
            "{}/{}/gic{}",
            self.cpu.name(),
            self.backend.name(),
            self.gic.number()
        )
    }

    /// The line the hypervisor must print for this cell, e.g. `[hv] backend: nvhe`.
    pub fn backend_line(&self) -> String {
        format!("[hv] backend: {}", self.backend.resolved(self.cpu).name())
    }
}

/// The matrix: {cortex-a57 + auto (non-VHE), max + auto (VHE), max + nvhe forced} x {GICv2, GICv3}.
pub fn matrix() -> Vec<Cell> {
    let rows = [
        (Cpu::CortexA57, Backend::Auto),
        (Cpu::Max, Backend::Auto),
        (Cpu::Max, Backend::Nvhe),
    ];
    let mut cells = Vec::new();
    for (cpu, backend) in rows {
        for gic in [Gic::V2, Gic::V3] {
            cells.push(Cell { cpu, backend, gic });
        }
    }
    cells
}

/// Cells a scenario runs in only when its `cells` name them: the A64FX (ARMv8.2, VHE, no
/// AArch32 at EL0/EL1), where ARMv7-A guests run under the DBT: VHE and forced non-VHE on
/// GICv3 (ThunderX's GIC), and VHE on GICv2.
pub fn opt_in_cells() -> Vec<Cell> {
    [
        (Backend::Auto, Gic::V3),
        (Backend::Nvhe, Gic::V3),
        (Backend::Auto, Gic::V2),
    ]
    .into_iter()
    .map(|(backend, gic)| Cell {
        cpu: Cpu::A64fx,
        backend,
        gic,
    })
    .collect()
}

/// [`matrix`] and [`opt_in_cells`].
pub fn all_cells() -> Vec<Cell> {
    let mut cells = matrix();
    cells.extend(opt_in_cells());
    cells
}

/// One QEMU run: a scenario in a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The cell.
    pub cell: Cell,
}

impl Run<'_> {
    /// `hello max/auto/gic3`: what `--filter` matches and what result lines show.
    pub fn name(&self) -> String {
        format!("{} {}", self.scenario.name, self.cell.name())
    }
}

/// Every (scenario, cell) pair the scenarios allow whose name contains `filter`; scenarios
/// marked `full_only` only when `full`.
pub fn expand<'a>(scenarios: &'a [Scenario], filter: Option<&str>, full: bool) -> Vec<Run<'a>> {
    let cells = all_cells();
    let opt_in = opt_in_cells();
    let mut runs = Vec::new();
    for scenario in scenarios.iter().filter(|s| full || !s.full_only) {
        for &cell in &cells {
            let allowed = match scenario.cells.as_ref() {
                Some(only) => only.contains(&cell.name()),
                None => !opt_in.contains(&cell),
            };
            let run = Run { scenario, cell };
            if allowed && filter.is_none_or(|f| run.name().contains(f)) {
                runs.push(run);
            }
        }
    }
    runs
}

/// Checks a finished run; returns what was wrong (empty when it passed).
pub fn check(run: &Run<'_>, outcome: Outcome, output: &str) -> Vec<String> {
    let s = run.scenario;
    let mut problems = Vec::new();
    match outcome {
        Outcome::TimedOut => problems.push(format!(
            "timed out after {} s (QEMU killed); the guest or hypervisor hung or never ended the run",
            s.timeout
        )),
        Outcome::Signaled(sig) => problems.push(format!("QEMU was killed by signal {sig}")),
        Outcome::Exited(code) => problems.extend(s.exit.mismatch(code)),
    }
    let backend_line = run.cell.backend_line();
    // Entered at EL1 the image refuses before it chooses a backend.
    if !s.boot.el1 && !output.contains(&backend_line) {
        problems.push(format!("missing \"{backend_line}\""));
    }
    let mut pos = 0;
    for want in &s.expect {
        match output[pos..].find(want.as_str()) {
            Some(i) => pos += i + want.len(),
            None if output.contains(want.as_str()) => problems.push(format!(
                "\"{want}\" appears, but not after the previous expected line"
            )),
            None => problems.push(format!("missing \"{want}\"")),
        }
    }
    for want in &s.expect_any_order {
        if !output.contains(want.as_str()) {
            problems.push(format!("missing \"{want}\""));
        }
    }
    for bad in &s.forbid {
        if let Some(line) = output.lines().find(|l| l.contains(bad.as_str())) {
            problems.push(format!("forbidden \"{bad}\" in: {}", line.trim_end()));
        }
    }
    if !s.allow_fatal && !s.forbid.iter().any(|f| FATAL_LINE.contains(f.as_str())) {
        if let Some(line) = output.lines().find(|l| l.contains(FATAL_LINE)) {
            problems.push(format!("hypervisor fatal error: {}", line.trim_end()));
        }
    }
    problems
}

/// The last `n` lines of `output`.
pub fn tail(output: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = output.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = r#"
        description = "hello boots"
        guest = "hello"
        exit = "zero"
        expect = ["hello: PASS"]
        forbid = ["panic"]
    "#;

    fn hello() -> Scenario {
        parse_scenario("hello", HELLO).unwrap()
    }

    #[test]
    fn parses_with_defaults() {
        let s = hello();
        assert_eq!(s.name, "hello");
        assert_eq!(
            s.vms,
            ScenarioVms::Guest {
                guest: "hello".into(),
                append: None,
                mem: None,
                vcpus: 1
            }
        );
        assert_eq!(s.smp, None);
        assert!(!s.full_only);
        assert!(s.expect_any_order.is_empty());
        assert_eq!(s.timeout, DEFAULT_SCENARIO_TIMEOUT);
        assert_eq!(s.exit, ExpectExit::Zero);
        assert_eq!(s.expect, ["hello: PASS"]);
        assert_eq!(s.forbid, ["panic"]);
        assert_eq!(s.cells, None);
        assert_eq!((s.boot.hv_append.as_deref(), s.boot.icount), (None, false));
    }

    #[test]
    fn hypervisor_words_and_icount() {
        let s = parse_scenario(
            "fair",
            "guest = \"smp\"\nexit = \"zero\"\nhv_append = \"place=0,0 balance=off\"\nicount = true",
        )
        .unwrap();
        assert_eq!(s.boot.hv_append.as_deref(), Some("place=0,0 balance=off"));
        assert!(s.boot.icount);
    }

    #[test]
    fn parses_everything() {
        let s = parse_scenario(
            "r",
            r#"
            guest = "path/to/Image"
            append = "reset"
            mem = "64M"
            vcpus = 3
            smp = 2
            timeout = 10
            exit = "nonzero"
            expect = ["a", "b"]
            expect_any_order = ["c"]
            cells = ["max/nvhe/gic3"]
            full_only = true
            "#,
        )
        .unwrap();
        assert_eq!(
            s.vms,
            ScenarioVms::Guest {
                guest: "path/to/Image".into(),
                append: Some("reset".into()),
                mem: Some(64 << 20),
                vcpus: 3
            }
        );
        assert_eq!(s.smp, Some(2));
        assert_eq!(s.expect_any_order, ["c"]);
        assert!(s.full_only);
        assert_eq!(s.timeout, 10);
        assert_eq!(s.exit, ExpectExit::Nonzero);
        assert_eq!(s.cells.as_deref(), Some(&["max/nvhe/gic3".to_string()][..]));
    }

    #[test]
    fn rejects_bad_files() {
        let bad = [
            ("missing guest", "exit = \"zero\""),
            ("missing exit", "guest = \"hello\""),
            ("bad exit", "guest = \"hello\"\nexit = \"maybe\""),
            ("exit too big", "guest = \"hello\"\nexit = 256"),
            ("negative exit", "guest = \"hello\"\nexit = -1"),
            ("float exit", "guest = \"hello\"\nexit = 1.0"),
            ("bool exit", "guest = \"hello\"\nexit = true"),
            (
                "allow_fatal type",
                "guest = \"hello\"\nexit = 0\nallow_fatal = \"yes\"",
            ),
            (
                "typo",
                "guest = \"hello\"\nexit = \"zero\"\nexpected = [\"x\"]",
            ),
            (
                "bad mem",
                "guest = \"hello\"\nexit = \"zero\"\nmem = \"lots\"",
            ),
            (
                "zero timeout",
                "guest = \"hello\"\nexit = \"zero\"\ntimeout = 0",
            ),
            ("smp", "guest = \"hello\"\nexit = \"zero\"\nsmp = 9"),
            (
                "cell",
                "guest = \"hello\"\nexit = \"zero\"\ncells = [\"max/vhe/gic2\"]",
            ),
            (
                "empty expect",
                "guest = \"hello\"\nexit = \"zero\"\nexpect = [\"\"]",
            ),
            ("not toml", "guest = "),
            (
                "guest and config",
                "guest = \"hello\"\nconfig = \"c.toml\"\nexit = \"zero\"",
            ),
            (
                "mem with config",
                "config = \"c.toml\"\nmem = \"64M\"\nexit = \"zero\"",
            ),
            (
                "vcpus with config",
                "config = \"c.toml\"\nvcpus = 2\nexit = \"zero\"",
            ),
            (
                "zero vcpus",
                "guest = \"hello\"\nexit = \"zero\"\nvcpus = 0",
            ),
            (
                "full_only type",
                "guest = \"hello\"\nexit = \"zero\"\nfull_only = \"yes\"",
            ),
            (
                "disk_image_marker with config",
                "config = \"c.toml\"\nexit = \"zero\"\ndisk_image_marker = \"X\"",
            ),
            (
                "empty disk_image_marker",
                "guest = \"hello\"\nexit = \"zero\"\ndisk_image_marker = \"\"",
            ),
            (
                "long disk_image_marker",
                "guest = \"hello\"\nexit = \"zero\"\ndisk_image_marker = \"12345678901234567\"",
            ),
            (
                "unprintable disk_image_marker",
                "guest = \"hello\"\nexit = \"zero\"\ndisk_image_marker = \"a\\nb\"",
            ),
        ];
        for (what, text) in bad {
            assert!(
                parse_scenario("x", text).is_err(),
                "{what} should be rejected"
            );
        }
        let msg = parse_scenario(
            "x",
            "guest = \"hello\"\nexit = \"zero\"\nexpected = [\"x\"]",
        )
        .unwrap_err();
        assert!(msg.contains("expected"), "{msg}");
    }

    #[test]
    fn entered_at_el1() {
        let s = parse_scenario("e", "guest = \"hello\"\nexit = 3\nel1 = true").unwrap();
        assert!(s.boot.el1 && !s.boot.uefi);
        for extra in [
            "uefi = true",
            "platform = \"seattle\"",
            "load_offset = \"0x100000\"",
        ] {
            let text = format!("guest = \"hello\"\nexit = 3\nel1 = true\n{extra}");
            assert!(parse_scenario("e", &text).is_err(), "{extra}");
        }
    }

    #[test]
    fn disk_image_marker() {
        let s = parse_scenario(
            "d",
            "guest = \"virtio-test\"\nexit = \"zero\"\ndisk_image_marker = \"PKG DISK-1\"",
        )
        .unwrap();
        assert_eq!(s.disk_image_marker.as_deref(), Some("PKG DISK-1"));
        assert_eq!(hello().disk_image_marker, None);
    }

    #[test]
    fn config_scenarios() {
        let s = parse_scenario(
            "two",
            "config = \"configs/two-vms.toml\"\nsmp = 1\nexit = \"zero\"",
        )
        .unwrap();
        assert_eq!(s.vms, ScenarioVms::Config("configs/two-vms.toml".into()));
        assert_eq!(s.smp, Some(1));
    }

    #[test]
    fn full_only_needs_full() {
        let mut full = hello();
        full.name = "linux".into();
        full.full_only = true;
        let all = [hello(), full];
        assert_eq!(expand(&all, None, false).len(), 6);
        assert_eq!(expand(&all, None, true).len(), 12);
        assert!(expand(&all, Some("linux"), false).is_empty());
    }

    #[test]
    fn any_order_expectations() {
        let mut s = hello();
        s.expect = vec![];
        s.expect_any_order = vec!["[a] PASS".into(), "[b] PASS".into()];
        let run = Run {
            scenario: &s,
            cell: matrix()[0],
        };
        let out = "[hv] backend: nvhe\n[b] PASS\n[a] PASS\n";
        assert!(check(&run, Outcome::Exited(0), out).is_empty());
        let p = check(&run, Outcome::Exited(0), "[hv] backend: nvhe\n[b] PASS\n");
        assert_eq!(p, ["missing \"[a] PASS\""]);
    }

    #[test]
    fn matrix_has_six_cells() {
        let names: Vec<String> = matrix().iter().map(Cell::name).collect();
        assert_eq!(
            names,
            [
                "cortex-a57/auto/gic2",
                "cortex-a57/auto/gic3",
                "max/auto/gic2",
                "max/auto/gic3",
                "max/nvhe/gic2",
                "max/nvhe/gic3"
            ]
        );
        let lines: Vec<String> = matrix().iter().map(Cell::backend_line).collect();
        assert_eq!(lines[0], "[hv] backend: nvhe");
        assert_eq!(lines[2], "[hv] backend: vhe");
        assert_eq!(lines[4], "[hv] backend: nvhe");
        let a64fx: Vec<String> = opt_in_cells().iter().map(Cell::name).collect();
        assert_eq!(
            a64fx,
            ["a64fx/auto/gic3", "a64fx/nvhe/gic3", "a64fx/auto/gic2"]
        );
        assert_eq!(opt_in_cells()[0].backend_line(), "[hv] backend: vhe");
    }

    #[test]
    fn a64fx_cells_only_when_named() {
        let mut dbt = parse_scenario("dbt", HELLO).unwrap();
        dbt.cells = Some(vec!["a64fx/nvhe/gic3".into(), "max/auto/gic3".into()]);
        let all = [hello(), dbt];
        assert_eq!(expand(&all, Some("a64fx"), false).len(), 1);
        assert_eq!(expand(&all, None, false).len(), 8);
    }

    #[test]
    fn expansion_and_filter() {
        let mut only = parse_scenario("only", HELLO).unwrap();
        only.cells = Some(vec!["max/auto/gic3".into()]);
        let all = [hello(), only];
        assert_eq!(expand(&all, None, false).len(), 7);
        assert_eq!(expand(&all, Some("hello"), false).len(), 6);
        assert_eq!(expand(&all, Some("gic2"), false).len(), 3);
        assert_eq!(expand(&all, Some("max/auto"), false).len(), 3);
        assert_eq!(expand(&all, Some("only max"), false).len(), 1);
        assert!(expand(&all, Some("nothing"), false).is_empty());
        assert_eq!(
            expand(&all, None, false)[0].name(),
            "hello cortex-a57/auto/gic2"
        );
    }

    #[test]
    fn checking_output() {
        let s = hello();
        let cell = matrix()[3]; // max/auto/gic3: VHE
        let run = Run { scenario: &s, cell };
        let good = "[hv] backend: vhe\r\nhello: PASS\r\n";
        assert!(check(&run, Outcome::Exited(0), good).is_empty());
        assert_eq!(check(&run, Outcome::Exited(1), good).len(), 1);
        assert_eq!(check(&run, Outcome::TimedOut, good).len(), 1);
        assert_eq!(check(&run, Outcome::Signaled(9), good).len(), 1);
        let wrong_backend = "[hv] backend: nvhe\nhello: PASS\n";
        assert_eq!(check(&run, Outcome::Exited(0), wrong_backend).len(), 1);
        let panicked = "[hv] backend: vhe\nhello: PASS\n[hv] panic at x\n";
        let p = check(&run, Outcome::Exited(0), panicked);
        assert!(p[0].contains("[hv] panic at x"), "{p:?}");
        assert_eq!(
            check(&run, Outcome::Exited(0), "[hv] backend: vhe\n").len(),
            1
        );
    }

    #[test]
    fn expected_lines_in_order() {
        let mut s = hello();
        s.expect = vec!["one".into(), "two".into()];
        s.exit = ExpectExit::Nonzero;
        let run = Run {
            scenario: &s,
            cell: matrix()[0],
        };
        let out = "[hv] backend: nvhe\none\ntwo\n";
        assert!(check(&run, Outcome::Exited(1), out).is_empty());
        assert_eq!(check(&run, Outcome::Exited(0), out).len(), 1);
        let swapped = "[hv] backend: nvhe\ntwo\none\n";
        let p = check(&run, Outcome::Exited(1), swapped);
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("not after"), "{p:?}");
    }

    #[test]
    fn exact_exit_codes() {
        let mut s = parse_scenario("r", "guest = \"hello\"\nexit = 1").unwrap();
        assert_eq!(s.exit, ExpectExit::Code(1));
        s.expect = vec![];
        let run = Run {
            scenario: &s,
            cell: matrix()[0],
        };
        let out = "[hv] backend: nvhe\n";
        assert!(check(&run, Outcome::Exited(1), out).is_empty());
        // Any other status fails, including other non-zero ones (a crash is not a reset).
        for wrong in [0, 2, 3, 4] {
            let p = check(&run, Outcome::Exited(wrong), out);
            assert_eq!(p, [format!("exit status {wrong}, expected exactly 1")]);
        }
        let zero = parse_scenario("z", "guest = \"hello\"\nexit = 0").unwrap();
        assert_eq!(zero.exit, ExpectExit::Code(0));
        assert_eq!(ExpectExit::Code(0).mismatch(0), None);
        assert_eq!(ExpectExit::Nonzero.mismatch(4), None);
        assert!(ExpectExit::Zero.mismatch(1).is_some());
        let msg = parse_scenario("x", "guest = \"hello\"\nexit = 300").unwrap_err();
        assert!(msg.contains("0..=255"), "{msg}");
    }

    #[test]
    fn fatal_line_forbidden_by_default() {
        let s = hello();
        assert!(!s.allow_fatal);
        assert!(!s.forbid.iter().any(|f| f.contains("FATAL")));
        let run = Run {
            scenario: &s,
            cell: matrix()[3],
        };
        // A hypervisor that printed its fatal line fails even with the right exit status
        // and every expected line.
        let fatal =
            "[hv] backend: vhe\nhello: PASS\n[hv] FATAL: unexpected exception at EL2 (EL2h sync)\n";
        let p = check(&run, Outcome::Exited(0), fatal);
        assert_eq!(
            p,
            ["hypervisor fatal error: [hv] FATAL: unexpected exception at EL2 (EL2h sync)"]
        );
        // Listed in `forbid` too: reported once.
        let mut listed = hello();
        listed.forbid.push(FATAL_LINE.into());
        let run = Run {
            scenario: &listed,
            cell: matrix()[3],
        };
        assert_eq!(check(&run, Outcome::Exited(0), fatal).len(), 1);
        // A scenario may allow it explicitly.
        let allowed = parse_scenario(
            "f",
            "guest = \"hello\"\nexit = 4\nallow_fatal = true\nexpect = [\"[hv] FATAL\"]",
        )
        .unwrap();
        let run = Run {
            scenario: &allowed,
            cell: matrix()[3],
        };
        assert!(check(&run, Outcome::Exited(4), fatal).is_empty());
    }

    #[test]
    fn repository_verdicts() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
        let all = load_dir(&dir).unwrap();
        for s in &all {
            assert!(!s.allow_fatal, "{} allows the fatal line", s.name);
            assert!(
                !matches!(s.exit, ExpectExit::Nonzero),
                "{}: give the exact non-zero status",
                s.name
            );
        }
        let reset = all.iter().find(|s| s.name == "hello-reset").unwrap();
        assert_eq!(reset.exit, ExpectExit::Code(1));
        assert!(
            reset.expect.iter().any(|e| e.contains("PSCI SYSTEM_RESET")),
            "{:?}",
            reset.expect
        );
    }

    #[test]
    fn repository_scenarios_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
        let all = load_dir(&dir).unwrap();
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        for want in [
            "hello",
            "hello-reset",
            "hostile",
            "two-vms",
            "two-vms-smp1",
            "linux",
        ] {
            assert!(names.contains(&want), "{names:?}");
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for s in &all {
            assert!(
                !expand(std::slice::from_ref(s), None, true).is_empty(),
                "{} runs nowhere",
                s.name
            );
            if let ScenarioVms::Config(c) = &s.vms {
                crate::config::load_config(&root.join(c))
                    .unwrap_or_else(|e| panic!("scenario {}: {e}", s.name));
            }
        }
        // Linux runs in the default matrix on the two cells issue 8 names only; every cell
        // and two Linux VMs at once only with --full.
        let full = all.iter().find(|s| s.name == "linux-full").unwrap();
        assert!(full.full_only);
        let linux = all.iter().find(|s| s.name == "linux").unwrap();
        assert!(!linux.full_only);
    }

    #[test]
    fn tails() {
        assert_eq!(tail("a\nb\nc\n", 2), ["b", "c"]);
        assert_eq!(tail("a", 5), ["a"]);
        assert!(tail("", 5).is_empty());
    }
}
