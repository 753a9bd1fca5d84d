//! Command line of `cargo xtask`: subcommands, options, value parsers and the checks that
//! need more than one option at a time.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Default guest RAM.
pub const DEFAULT_MEM: u64 = 128 << 20;
/// Memory QEMU gives the host on top of the VMs' memory, for the hypervisor itself.
pub const HOST_MEM_OVERHEAD: u64 = 256 << 20;
/// Default timeout of `cargo xtask qemu`, in seconds.
pub const DEFAULT_QEMU_TIMEOUT: u64 = 60;
/// Most CPUs QEMU `virt` supports with a GICv2.
pub const MAX_SMP_GICV2: u32 = 8;
/// Most CPUs we let QEMU `virt` start with a GICv3.
pub const MAX_SMP: u32 = 64;

/// `cargo xtask`: build, run and test the hypervisor.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Build, run and test the AArch64 hypervisor under QEMU",
    after_help = "Examples:\n  cargo xtask qemu                       boot the hello guest (VHE, GICv3)\n  cargo xtask qemu --cpu cortex-a57 --gic 2\n  cargo xtask test                       host tests + QEMU scenario matrix"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the hypervisor, the guest images and the VM package (into target/images/).
    Build(BuildArgs),
    /// Build, then boot the hypervisor and a guest under qemu-system-aarch64 (interactive).
    Qemu(QemuArgs),
    /// Run the host tests, then every QEMU scenario in tests/scenarios/ over the CPU x GIC matrix.
    Test(TestArgs),
}

/// What goes into the VM package: the guest and its memory and command line.
#[derive(Debug, Clone, Args)]
pub struct VmArgs {
    /// Guest: a crate under guests/ (hello, hostile) or a path to a raw binary or arm64 Image.
    #[arg(long, value_name = "NAME|PATH", default_value = "hello")]
    pub guest: String,
    /// Guest RAM, e.g. 128M, 1G or a number of bytes.
    #[arg(long, value_name = "SIZE", default_value = "128M", value_parser = parse_size_arg)]
    pub mem: u64,
    /// Guest kernel command line (for the test guests, e.g. `reset`).
    #[arg(
        long,
        value_name = "ARGS",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub append: String,
}

/// Options of `cargo xtask build`.
#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    /// The VM to package.
    #[command(flatten)]
    pub vm: VmArgs,
}

/// Options of `cargo xtask qemu`.
#[derive(Debug, Clone, Args)]
pub struct QemuArgs {
    /// The VM to run.
    #[command(flatten)]
    pub vm: VmArgs,
    /// CPU model: cortex-a57 (ARMv8.0, no VHE) or max (ARMv8.x with VHE).
    #[arg(long, value_enum, default_value = "max")]
    pub cpu: Cpu,
    /// GIC version of the QEMU machine.
    #[arg(long, value_enum, default_value = "3")]
    pub gic: Gic,
    /// Number of physical CPUs of the QEMU machine.
    #[arg(long, value_name = "N", default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_SMP as i64))]
    pub smp: u32,
    /// Memory of the QEMU machine [default: VM memory + 256M].
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub host_mem: Option<u64>,
    /// World-switch backend: auto (VHE when the CPU has it), vhe, or nvhe.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// Start QEMU halted with a gdb server on :1234 (-s -S).
    #[arg(long)]
    pub gdb: bool,
    /// Kill QEMU after this many seconds [default: 60; none with --gdb].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

/// Options of `cargo xtask test`.
#[derive(Debug, Clone, Args)]
pub struct TestArgs {
    /// Only run items whose name contains STR (e.g. `hello`, `gic2`, `max/nvhe`, `host-tests`).
    #[arg(long, value_name = "STR")]
    pub filter: Option<String>,
    /// Skip the host `cargo test` step.
    #[arg(long)]
    pub skip_host: bool,
}

/// QEMU CPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cpu {
    /// ARMv8.0 Cortex-A57: no VHE, so the hypervisor runs its non-VHE backend.
    #[value(name = "cortex-a57")]
    CortexA57,
    /// QEMU's `max` CPU: has VHE (with the fast `pauth-impdef` algorithm).
    Max,
}

impl Cpu {
    /// The name used on our command line and in cell names.
    pub fn name(self) -> &'static str {
        match self {
            Cpu::CortexA57 => "cortex-a57",
            Cpu::Max => "max",
        }
    }

    /// The value of QEMU's `-cpu`.
    pub fn qemu_arg(self) -> &'static str {
        match self {
            Cpu::CortexA57 => "cortex-a57",
            Cpu::Max => "max,pauth-impdef=on",
        }
    }

    /// Whether the CPU implements VHE (FEAT_VHE, `ID_AA64MMFR1_EL1.VH`).
    pub fn has_vhe(self) -> bool {
        matches!(self, Cpu::Max)
    }
}

/// GIC version of the QEMU `virt` machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Gic {
    /// GICv2 (GIC-400 style, memory-mapped CPU interface).
    #[value(name = "2")]
    V2,
    /// GICv3 (system-register CPU interface, redistributors).
    #[value(name = "3")]
    V3,
}

impl Gic {
    /// The version number, as QEMU's `gic-version=` wants it.
    pub fn number(self) -> u8 {
        match self {
            Gic::V2 => 2,
            Gic::V3 => 3,
        }
    }
}

/// World-switch backend requested on the hypervisor command line (`backend=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// VHE when the CPU has it, non-VHE otherwise.
    Auto,
    /// VHE (needs a CPU with FEAT_VHE).
    Vhe,
    /// Non-VHE, even on a VHE CPU.
    Nvhe,
}

impl Backend {
    /// The name used on the hypervisor command line.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Vhe => "vhe",
            Backend::Nvhe => "nvhe",
        }
    }

    /// The backend the hypervisor should end up with on `cpu`.
    pub fn resolved(self, cpu: Cpu) -> Backend {
        match self {
            Backend::Auto if cpu.has_vhe() => Backend::Vhe,
            Backend::Auto => Backend::Nvhe,
            other => other,
        }
    }
}

/// Checks the options of `cargo xtask qemu` that depend on each other.
pub fn validate_qemu(args: &QemuArgs) -> Result<(), String> {
    if args.backend == Backend::Vhe && !args.cpu.has_vhe() {
        return Err(format!(
            "--backend vhe needs a CPU with VHE, and --cpu {} has none (ARMv8.0); \
             use --cpu max, or --backend nvhe / auto",
            args.cpu.name()
        ));
    }
    if args.gic == Gic::V2 && args.smp > MAX_SMP_GICV2 {
        return Err(format!(
            "--smp {} is too many for --gic 2 (QEMU virt supports at most {MAX_SMP_GICV2} CPUs \
             with a GICv2); use --gic 3 or a smaller --smp",
            args.smp
        ));
    }
    validate_mem(args.vm.mem, "--mem")?;
    if let Some(host) = args.host_mem {
        if host <= args.vm.mem {
            return Err(format!(
                "--host-mem {} is not larger than the VM memory ({}); the hypervisor needs room \
                 too: give at least {}",
                format_size(host),
                format_size(args.vm.mem),
                format_size(args.vm.mem + HOST_MEM_OVERHEAD)
            ));
        }
    }
    Ok(())
}

/// Checks a VM memory size: at least 1 MiB and a whole number of 4 KiB pages.
pub fn validate_mem(bytes: u64, what: &str) -> Result<(), String> {
    if bytes < (1 << 20) {
        return Err(format!(
            "{what} {} is too small; give at least 1M",
            format_size(bytes)
        ));
    }
    if !bytes.is_multiple_of(4096) {
        return Err(format!(
            "{what} {bytes} is not a multiple of 4 KiB; use e.g. 128M"
        ));
    }
    Ok(())
}

/// Memory to give the QEMU machine: what the user asked for, or the VMs' memory plus
/// [`HOST_MEM_OVERHEAD`].
pub fn host_mem(explicit: Option<u64>, vm_mem_total: u64) -> u64 {
    explicit.unwrap_or(vm_mem_total.saturating_add(HOST_MEM_OVERHEAD))
}

/// Parses a size: a number of bytes, or a number with a binary suffix K, M, G or T
/// (optionally followed by `B` or `iB`, any case): `4096`, `128M`, `1G`, `512KiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let bad = || {
        format!("invalid size '{s}': expected a number of bytes or a number with K, M, G or T (e.g. 128M, 1G)")
    };
    if num.is_empty() {
        return Err(bad());
    }
    let n: u64 = num.parse().map_err(|_| bad())?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(bad()),
    };
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))?;
    if bytes == 0 {
        return Err(format!("size '{s}' must not be zero"));
    }
    Ok(bytes)
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    parse_size(s)
}

/// Formats a byte count the way [`parse_size`] reads it back when it is a whole number of
/// units (`128M`), with a fractional unit otherwise (`1.5 KiB`).
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift {
            return format!("{:.1} {unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("cargo xtask").chain(args.iter().copied()))
    }

    fn qemu(args: &[&str]) -> QemuArgs {
        let mut all = vec!["qemu"];
        all.extend_from_slice(args);
        match parse(&all).expect("parses").command {
            Command::Qemu(q) => q,
            other => panic!("not qemu: {other:?}"),
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("128M"), Ok(128 << 20));
        assert_eq!(parse_size("128m"), Ok(128 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512KB"), Ok(512 << 10));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size(" 64M "), Ok(64 << 20));
        for bad in [
            "",
            "M",
            "12X",
            "1.5G",
            "-1",
            "0",
            "0M",
            "99999999999999999999",
            "20000000T",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn size_formatting_round_trips() {
        for s in ["128M", "1G", "4K", "3T", "384M"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
        assert_eq!(format_size(1536), "1.5 KiB");
        assert_eq!(format_size(12), "12 B");
    }

    #[test]
    fn qemu_defaults() {
        let q = qemu(&[]);
        assert_eq!(q.cpu, Cpu::Max);
        assert_eq!(q.gic, Gic::V3);
        assert_eq!(q.smp, 1);
        assert_eq!(q.backend, Backend::Auto);
        assert_eq!(q.vm.guest, "hello");
        assert_eq!(q.vm.mem, DEFAULT_MEM);
        assert_eq!(q.vm.append, "");
        assert_eq!(q.host_mem, None);
        assert_eq!(q.timeout, None);
        assert!(!q.gdb);
        assert!(validate_qemu(&q).is_ok());
        assert_eq!(host_mem(q.host_mem, q.vm.mem), 384 << 20);
    }

    #[test]
    fn qemu_options() {
        let q = qemu(&[
            "--cpu",
            "cortex-a57",
            "--gic",
            "2",
            "--smp",
            "4",
            "--mem",
            "64M",
            "--host-mem",
            "1G",
            "--guest",
            "hostile",
            "--append",
            "reset",
            "--backend",
            "nvhe",
            "--gdb",
            "--timeout",
            "5",
        ]);
        assert_eq!(q.cpu, Cpu::CortexA57);
        assert_eq!(q.gic, Gic::V2);
        assert_eq!(q.smp, 4);
        assert_eq!(q.vm.mem, 64 << 20);
        assert_eq!(q.host_mem, Some(1 << 30));
        assert_eq!(q.vm.guest, "hostile");
        assert_eq!(q.vm.append, "reset");
        assert_eq!(q.backend, Backend::Nvhe);
        assert!(q.gdb);
        assert_eq!(q.timeout, Some(5));
        assert!(validate_qemu(&q).is_ok());
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let cases: &[&[&str]] = &[
            &["qemu", "--cpu", "cortex-a53"],
            &["qemu", "--gic", "4"],
            &["qemu", "--smp", "0"],
            &["qemu", "--smp", "many"],
            &["qemu", "--mem", "lots"],
            &["qemu", "--backend", "kvm"],
            &["qemu", "--timeout", "0"],
            &["qemu", "--frobnicate"],
            &["build", "--cpu", "max"],
            &["test", "--gic", "2"],
            &["launch"],
            &[],
        ];
        for args in cases {
            let err = parse(args).expect_err(&format!("{args:?} should fail"));
            assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
            assert_ne!(err.kind(), ErrorKind::DisplayHelp);
        }
    }

    #[test]
    fn append_may_start_with_a_dash() {
        assert_eq!(qemu(&["--append", "-v x"]).vm.append, "-v x");
    }

    #[test]
    fn vhe_on_cortex_a57_is_rejected() {
        let q = qemu(&["--cpu", "cortex-a57", "--backend", "vhe"]);
        let msg = validate_qemu(&q).unwrap_err();
        assert!(msg.contains("VHE"), "{msg}");
        assert!(validate_qemu(&qemu(&["--cpu", "cortex-a57", "--backend", "nvhe"])).is_ok());
        assert!(validate_qemu(&qemu(&["--cpu", "max", "--backend", "vhe"])).is_ok());
    }

    #[test]
    fn cross_checks() {
        assert!(validate_qemu(&qemu(&["--gic", "2", "--smp", "9"])).is_err());
        assert!(validate_qemu(&qemu(&["--gic", "3", "--smp", "9"])).is_ok());
        assert!(validate_qemu(&qemu(&["--mem", "1G", "--host-mem", "1G"])).is_err());
        assert!(validate_qemu(&qemu(&["--mem", "1000"])).is_err());
        assert!(validate_qemu(&qemu(&["--mem", "1048577"])).is_err());
    }

    #[test]
    fn backend_resolution() {
        assert_eq!(Backend::Auto.resolved(Cpu::Max), Backend::Vhe);
        assert_eq!(Backend::Auto.resolved(Cpu::CortexA57), Backend::Nvhe);
        assert_eq!(Backend::Nvhe.resolved(Cpu::Max), Backend::Nvhe);
    }

    #[test]
    fn test_args() {
        match parse(&["test", "--filter", "gic2", "--skip-host"])
            .unwrap()
            .command
        {
            Command::Test(t) => {
                assert_eq!(t.filter.as_deref(), Some("gic2"));
                assert!(t.skip_host);
            }
            other => panic!("{other:?}"),
        }
    }
}
