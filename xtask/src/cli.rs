//! Command line of `cargo xtask`: subcommands, options, value parsers and the checks that
//! need more than one option at a time.

use std::path::PathBuf;

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
/// Most vCPUs of one VM (the hypervisor's limit).
pub const MAX_VCPUS: u32 = 64;

/// `cargo xtask`: build, run and test the hypervisor.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Build, run and test the AArch64 hypervisor under QEMU",
    after_help = "Examples:\n  cargo xtask qemu                       boot the hello guest (VHE, GICv3)\n  cargo xtask qemu --cpu cortex-a57 --gic 2\n  cargo xtask qemu --guest hello --vcpus 2 --smp 2\n  cargo xtask qemu --config configs/two-vms.toml\n  cargo xtask qemu --guest linux         Debian's kernel to a busybox shell\n  cargo xtask linux-native               the same kernel without the hypervisor, timed\n  cargo xtask bench                      micro-benchmarks, hypervisor vs. native\n  cargo xtask test                       host tests + QEMU scenario matrix\n  cargo xtask test --full                ... plus the full_only scenarios (Linux)"
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
    /// Boot the Linux guest (Debian kernel + busybox initramfs) under plain QEMU, without the
    /// hypervisor, and time it to `linux-guest: userspace up` (the native baseline).
    LinuxNative(LinuxNativeArgs),
    /// Run the `bench` guest under QEMU -icount (instructions per operation, deterministic)
    /// under the hypervisor on {cortex-a57 nVHE, max VHE, max nVHE} x {GICv2, GICv3} and
    /// natively, and the virtio-test guest's virtio-blk benchmark under the hypervisor; print
    /// the tables and write target/bench/results.json.
    Bench(BenchArgs),
    /// Check a change besides the tests: cargo fmt, clippy (host, hypervisor and guest
    /// targets), `cargo package` of every subsystem crate, and the out-of-workspace
    /// embedder crate (tests/embedder) built and run.
    Check,
    /// Write what a server needs into target/dist/: the hypervisor as an EFI application
    /// (also an arm64 Image), a VM package from a sample configuration, the configuration,
    /// an EFI system partition tree and INSTALL.txt (EFI shell, GRUB, U-Boot booti).
    Dist(DistArgs),
    /// Run the libFuzzer targets in fuzz/ (cargo-fuzz on the nightly toolchain, both
    /// installed on first use), each for --time seconds, and print executions and coverage.
    Fuzz(FuzzArgs),
}

impl Command {
    /// Whether the command compiles anything, so needs the pinned toolchain's targets and
    /// components.
    pub fn builds(&self) -> bool {
        // The fuzz targets build with the nightly toolchain, not the pinned one.
        !matches!(self, Command::LinuxNative(_) | Command::Fuzz(_))
    }
}

/// Options of `cargo xtask dist`.
#[derive(Debug, Clone, Args)]
pub struct DistArgs {
    /// VM configuration to package [default: configs/server-sample.toml].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output directory [default: target/dist].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Options of `cargo xtask bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Only run configurations whose name contains STR (e.g. `gic3`, `max/vhe`, `native`).
    #[arg(long, value_name = "STR")]
    pub filter: Option<String>,
    /// Also boot the Linux guests natively and under the hypervisor and compare the virtual
    /// time to `Run /init`: arm64 (2 vCPUs, GICv3; counted) and armhf (1 vCPU, GICv2 and
    /// GICv3: native cortex-a15, AArch32 EL1 in hardware, and the DBT on a64fx, each with
    /// `sha256sum` of 16 MiB in tmpfs). Fetches the kernels on first use; the DBT cell takes
    /// about 9 minutes.
    #[arg(long)]
    pub linux: bool,
    /// Instead: the ARMv7-A translator (crates/dbt-armv7) against its interpreter on CRC-32,
    /// sort, matrix multiply, recursion and pointer-chase kernels (host instructions per
    /// guest instruction, counted under qemu-aarch64; needs qemu-user and cc).
    #[arg(long)]
    pub dbt: bool,
    /// Instead: where the EL2 instructions of one operation (hvc, sysreg, mmio-pl011,
    /// mmio-gicd, virtio-notify, sgi-self, timer-latency, ipi-roundtrip) go, per function
    /// and run-loop phase, in each hypervisor cell (`--filter` applies; a QEMU TCG plugin
    /// counts them; needs cc).
    #[arg(long, value_name = "OP")]
    pub profile: Option<String>,
    /// Instead: hvc, sysreg and ipi-roundtrip of the 2-vCPU bench VM on machines of 1, 4
    /// and 8 physical CPUs (max/vhe gic3 and cortex-a57/nvhe gic2; `--filter` applies), as
    /// markdown tables: the cost should not grow with the core count.
    #[arg(long, conflicts_with_all = ["dbt", "profile", "linux"])]
    pub smp_scaling: bool,
}

/// What goes into the VM package: one VM from options, or a configuration file.
#[derive(Debug, Clone, Default, Args)]
pub struct VmArgs {
    /// Guest: a crate under guests/ (hello, hostile, ..., armv7-hello), `linux` (Debian's
    /// arm64 kernel with a busybox initramfs, fetched once into target/linux/), `linux-armv7`
    /// (Debian's armhf LPAE kernel, into target/linux-armv7/), or a path to a raw binary,
    /// arm64 Image or ARM zImage [default: hello].
    #[arg(long, value_name = "NAME|PATH")]
    pub guest: Option<String>,
    /// Guest RAM, e.g. 128M, 1G or a number of bytes [default: 128M; 256M for linux].
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub mem: Option<u64>,
    /// Number of vCPUs of the VM [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_VCPUS as i64))]
    pub vcpus: Option<u32>,
    /// Guest kernel command line, as QEMU's -append (e.g. `reset` for the hello guest)
    /// [default: empty; "console=ttyAMA0" for linux].
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Option<String>,
    /// Guest kernel image, as QEMU's -kernel: instead of --guest, or with --guest linux to
    /// replace Debian's kernel.
    #[arg(long, value_name = "PATH")]
    pub kernel: Option<PathBuf>,
    /// Guest initrd, as QEMU's -initrd (with --kernel, or with --guest linux to replace the
    /// built initramfs).
    #[arg(long, value_name = "PATH")]
    pub initrd: Option<PathBuf>,
    /// A RAM-disk image packed into the VM package: the hypervisor copies it into its own
    /// memory and serves it (writable, changes are lost at power-off) as the VM's virtio disk
    /// (/dev/vda), instead of a zeroed 4 MiB RAM disk or a slice of --disk; at most 64M.
    #[arg(long, value_name = "FILE")]
    pub disk_image: Option<PathBuf>,
    /// The kernel's instruction set: `armv7` runs an ARMv7-A kernel (a raw A32 binary; the
    /// armv7-* crates, linux-armv7 and zImage files are ARMv7-A anyway) at AArch32 EL1 in
    /// hardware where the CPU allows it [default: from the guest].
    #[arg(long, value_name = "ARCH", value_parser = ["aarch64", "armv7"])]
    pub arch: Option<String>,
    /// With an ARMv7-A kernel: `force` asks for the binary translator even where the CPU
    /// could run it in hardware (this build refuses such a VM, with the reason).
    #[arg(long, value_name = "auto|force", value_parser = ["auto", "force"])]
    pub dbt: Option<String>,
    /// VM configuration file (TOML: [machine] defaults and [[vm]] tables; see configs/).
    /// Replaces --guest, --mem, --vcpus, --append, --kernel, --initrd and --disk-image (a
    /// [[vm]]'s `disk` key).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["guest", "mem", "vcpus", "append", "kernel", "initrd", "disk_image", "arch", "dbt"]
    )]
    pub config: Option<PathBuf>,
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
    /// CPU model: cortex-a57 (ARMv8.0, no VHE), max (ARMv8.x with VHE) or a64fx (VHE, no
    /// AArch32 EL1: ARMv7-A guests run under the DBT) [default: max, or
    /// the config's [machine] cpu].
    #[arg(long, value_enum)]
    pub cpu: Option<Cpu>,
    /// GIC version of the QEMU machine [default: 3, or the config's [machine] gic].
    #[arg(long, value_enum)]
    pub gic: Option<Gic>,
    /// Number of physical CPUs of the QEMU machine [default: 1, or the config's [machine] smp].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_SMP as i64))]
    pub smp: Option<u32>,
    /// Memory of the QEMU machine [default: the config's [machine] host_mem, or the VMs'
    /// memory + 256M].
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub host_mem: Option<u64>,
    /// World-switch backend: auto (VHE when the CPU has it), vhe, or nvhe.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// A raw disk image attached to QEMU as a virtio-blk device, which the hypervisor drives
    /// and shares out: each VM gets an equal slice of it as its /dev/vda, and writes reach
    /// FILE (without it, VMs get RAM disks). Not --disk-image, which packs an image into the
    /// VM package as that VM's RAM disk (and wins over --disk for that VM).
    #[arg(long, value_name = "FILE")]
    pub disk: Option<std::path::PathBuf>,
    /// Network uplink: `user` gives QEMU a virtio-net card on its user-mode network (NAT,
    /// DHCP 10.0.2.15, gateway 10.0.2.2) that the hypervisor plugs into the VMs' virtual
    /// switch; `none` has no card [default: none, or the config's [machine] net].
    #[arg(long, value_enum, value_name = "none|user")]
    pub net: Option<Net>,
    /// Start QEMU halted with a gdb server on :1234 (-s -S).
    #[arg(long)]
    pub gdb: bool,
    /// Kill QEMU after this many seconds [default: 60; none with --gdb or a Linux guest,
    /// which boots to an interactive shell].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Boot the hypervisor as an EFI application under edk2 (`-bios QEMU_EFI.fd`) from a FAT
    /// drive (target/images/esp) instead of QEMU's -kernel.
    #[arg(long)]
    pub uefi: bool,
    /// With --uefi: the firmware describes the machine with ACPI tables only (QEMU
    /// `acpi=on`); without it, with the device tree only.
    #[arg(long, requires = "uefi")]
    pub acpi: bool,
    /// A server profile (implies --uefi --acpi): seattle (Cortex-A57 with Seattle's MIDR,
    /// GICv2, 8 CPUs) or thunderx (a64fx with ThunderX's MIDR, GICv3 + ITS, non-VHE, 8 CPUs).
    #[arg(long, value_enum)]
    pub platform: Option<crate::platform::Platform>,
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
    /// Also run the scenarios marked `full_only` (e.g. the Linux guest; fetches its packages
    /// with apt-get on first use).
    #[arg(long)]
    pub full: bool,
    /// Print the items that would run (with --full / --filter as given) and their count,
    /// without running them.
    #[arg(long)]
    pub list: bool,
}

/// Default fuzzing time of one target with `cargo xtask fuzz`, in seconds.
pub const DEFAULT_FUZZ_SECS: u64 = 60;

/// Options of `cargo xtask fuzz`.
#[derive(Debug, Clone, Args)]
pub struct FuzzArgs {
    /// The target to run (see --list); all of them, one after the other, when omitted.
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    /// Seconds of fuzzing per target (the build comes on top).
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_FUZZ_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    pub time: u64,
    /// Print the targets and what each one fuzzes, without running them.
    #[arg(long)]
    pub list: bool,
}

/// Options of `cargo xtask linux-native`.
#[derive(Debug, Clone, Args)]
pub struct LinuxNativeArgs {
    /// CPU model.
    #[arg(long, value_enum, default_value = "cortex-a57")]
    pub cpu: Cpu,
    /// GIC version of the QEMU machine.
    #[arg(long, value_enum, default_value = "3")]
    pub gic: Gic,
    /// Number of CPUs.
    #[arg(long, value_name = "N", default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_SMP as i64))]
    pub smp: u32,
    /// Memory of the QEMU machine (the same as a Linux VM gets by default).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size_arg)]
    pub mem: u64,
    /// Kernel image instead of Debian's.
    #[arg(long, value_name = "PATH")]
    pub kernel: Option<PathBuf>,
    /// Initrd instead of the built initramfs.
    #[arg(long, value_name = "PATH")]
    pub initrd: Option<PathBuf>,
    /// Kernel command line [default: "console=ttyAMA0 test=1", or "console=ttyAMA0" with --shell].
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub append: Option<String>,
    /// Boot to a shell on the console instead of the scripted check.
    #[arg(long)]
    pub shell: bool,
    /// Kill QEMU after this many seconds [default: 120; none with --shell].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

/// QEMU CPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cpu {
    /// ARMv8.0 Cortex-A57: no VHE, so the hypervisor runs its non-VHE backend.
    #[value(name = "cortex-a57")]
    CortexA57,
    /// QEMU's `max` CPU: has VHE (with the fast `pauth-impdef` algorithm).
    Max,
    /// Fujitsu A64FX (ARMv8.2, VHE, SVE): EL0 and EL1 are AArch64 only, so ARMv7-A guests
    /// run under the DBT (the stand-in for ThunderX).
    #[value(name = "a64fx")]
    A64fx,
}

impl Cpu {
    /// The name used on our command line and in cell names.
    pub fn name(self) -> &'static str {
        match self {
            Cpu::CortexA57 => "cortex-a57",
            Cpu::Max => "max",
            Cpu::A64fx => "a64fx",
        }
    }

    /// The value of QEMU's `-cpu`.
    pub fn qemu_arg(self) -> &'static str {
        match self {
            Cpu::CortexA57 => "cortex-a57",
            Cpu::Max => "max,pauth-impdef=on",
            Cpu::A64fx => "a64fx",
        }
    }

    /// Whether the CPU implements VHE (FEAT_VHE, `ID_AA64MMFR1_EL1.VH`).
    pub fn has_vhe(self) -> bool {
        matches!(self, Cpu::Max | Cpu::A64fx)
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

/// The physical network QEMU gives the machine (the uplink of the VMs' virtual switch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Net {
    /// No network card (`-nic none`): the VMs only reach each other.
    #[default]
    None,
    /// A virtio-mmio net card on QEMU's user-mode network (`-netdev user`).
    User,
}

impl Net {
    /// The name used on our command line and in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Net::None => "none",
            Net::User => "user",
        }
    }

    /// Parses a configuration file's value (`what` names the key in the message).
    pub fn parse(s: &str, what: &str) -> Result<Net, String> {
        match s {
            "none" => Ok(Net::None),
            "user" => Ok(Net::User),
            other => Err(format!(
                "{what} = \"{other}\": must be \"user\" (QEMU's user-mode network as the \
                 uplink) or \"none\""
            )),
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

/// The QEMU machine `cargo xtask qemu` starts, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// CPU model.
    pub cpu: Cpu,
    /// GIC version.
    pub gic: Gic,
    /// Physical CPUs.
    pub smp: u32,
    /// Memory in bytes.
    pub host_mem: u64,
    /// Network uplink.
    pub net: Net,
}

/// Resolves the machine from the command line, then a config's `[machine]` defaults, then
/// the built-in defaults, and checks the options that depend on each other.
pub fn resolve_machine(
    args: &QemuArgs,
    defaults: &crate::config::MachineDefaults,
    vm_mem_total: u64,
) -> Result<Machine, String> {
    let m = Machine {
        cpu: args.cpu.or(defaults.cpu).unwrap_or(Cpu::Max),
        gic: args.gic.or(defaults.gic).unwrap_or(Gic::V3),
        smp: args.smp.or(defaults.smp).unwrap_or(1),
        host_mem: host_mem(args.host_mem.or(defaults.host_mem), vm_mem_total),
        net: args.net.or(defaults.net).unwrap_or_default(),
    };
    if args.backend == Backend::Vhe && !m.cpu.has_vhe() {
        return Err(format!(
            "--backend vhe needs a CPU with VHE, and --cpu {} has none (ARMv8.0); \
             use --cpu max, or --backend nvhe / auto",
            m.cpu.name()
        ));
    }
    if m.gic == Gic::V2 && m.smp > MAX_SMP_GICV2 {
        return Err(format!(
            "--smp {} is too many for --gic 2 (QEMU virt supports at most {MAX_SMP_GICV2} CPUs \
             with a GICv2); use --gic 3 or a smaller --smp",
            m.smp
        ));
    }
    if m.host_mem <= vm_mem_total {
        return Err(format!(
            "--host-mem {} is not larger than the VM memory ({}); the hypervisor needs room \
             too: give at least {}",
            format_size(m.host_mem),
            format_size(vm_mem_total),
            format_size(vm_mem_total + HOST_MEM_OVERHEAD)
        ));
    }
    Ok(m)
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

    fn machine(q: &QemuArgs) -> Result<Machine, String> {
        resolve_machine(q, &crate::config::MachineDefaults::default(), DEFAULT_MEM)
    }

    #[test]
    fn qemu_defaults() {
        let q = qemu(&[]);
        assert_eq!(q.cpu, None);
        assert_eq!(q.gic, None);
        assert_eq!(q.smp, None);
        assert_eq!(q.backend, Backend::Auto);
        assert_eq!(q.vm.guest, None);
        assert_eq!(q.vm.mem, None);
        assert_eq!(q.vm.vcpus, None);
        assert_eq!(q.vm.append, None);
        assert_eq!(q.vm.config, None);
        assert_eq!(q.host_mem, None);
        assert_eq!(q.timeout, None);
        assert!(!q.gdb);
        let m = machine(&q).unwrap();
        assert_eq!(
            m,
            Machine {
                cpu: Cpu::Max,
                gic: Gic::V3,
                smp: 1,
                host_mem: 384 << 20,
                net: Net::None,
            }
        );
        assert_eq!(q.net, None);
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
            "--vcpus",
            "3",
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
            "--net",
            "user",
        ]);
        assert_eq!(q.cpu, Some(Cpu::CortexA57));
        assert_eq!(q.gic, Some(Gic::V2));
        assert_eq!(q.smp, Some(4));
        assert_eq!(q.vm.mem, Some(64 << 20));
        assert_eq!(q.vm.vcpus, Some(3));
        assert_eq!(q.host_mem, Some(1 << 30));
        assert_eq!(q.vm.guest.as_deref(), Some("hostile"));
        assert_eq!(q.vm.append.as_deref(), Some("reset"));
        assert_eq!(q.backend, Backend::Nvhe);
        assert!(q.gdb);
        assert_eq!(q.timeout, Some(5));
        assert_eq!(q.net, Some(Net::User));
        assert_eq!(machine(&q).unwrap().net, Net::User);
        let q = qemu(&[
            "--kernel",
            "Image",
            "--initrd",
            "rd",
            "--append",
            "console=ttyAMA0",
        ]);
        assert_eq!(q.vm.kernel.as_deref(), Some(std::path::Path::new("Image")));
        assert_eq!(q.vm.initrd.as_deref(), Some(std::path::Path::new("rd")));
        // --disk (QEMU's disk, driven by the hypervisor) and --disk-image (packed into the
        // VM package) are different things and go together.
        let q = qemu(&["--disk", "host.img", "--disk-image", "vm.img"]);
        assert_eq!(q.disk.as_deref(), Some(std::path::Path::new("host.img")));
        assert_eq!(
            q.vm.disk_image.as_deref(),
            Some(std::path::Path::new("vm.img"))
        );
    }

    #[test]
    fn config_excludes_vm_options() {
        for other in [
            &["--guest", "hello"][..],
            &["--mem", "64M"],
            &["--vcpus", "2"],
            &["--append", "x"],
            &["--kernel", "Image"],
            &["--initrd", "rd"],
            &["--disk-image", "disk.img"],
        ] {
            for cmd in ["qemu", "build"] {
                let mut args = vec![cmd, "--config", "configs/two-vms.toml"];
                args.extend_from_slice(other);
                let err = parse(&args).expect_err(&format!("{args:?}"));
                assert_eq!(err.kind(), ErrorKind::ArgumentConflict, "{args:?}");
                assert!(err.to_string().contains("--config"), "{err}");
            }
        }
        // Machine options go with a config: they override its [machine] table.
        let q = qemu(&["--config", "c.toml", "--smp", "1", "--cpu", "cortex-a57"]);
        let defaults = crate::config::MachineDefaults {
            smp: Some(2),
            gic: Some(Gic::V2),
            cpu: Some(Cpu::Max),
            host_mem: Some(1 << 30),
            net: Some(Net::User),
        };
        let m = resolve_machine(&q, &defaults, 128 << 20).unwrap();
        assert_eq!(m.net, Net::User);
        let q2 = qemu(&["--config", "c.toml", "--net", "none"]);
        assert_eq!(
            resolve_machine(&q2, &defaults, 128 << 20).unwrap().net,
            Net::None
        );
        assert_eq!(m.smp, 1);
        assert_eq!(m.cpu, Cpu::CortexA57);
        assert_eq!(m.gic, Gic::V2);
        assert_eq!(m.host_mem, 1 << 30);
        let q = qemu(&["--config", "c.toml"]);
        let m = resolve_machine(&q, &Default::default(), 3 << 30).unwrap();
        assert_eq!(m.host_mem, (3 << 30) + HOST_MEM_OVERHEAD);
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let cases: &[&[&str]] = &[
            &["qemu", "--cpu", "cortex-a53"],
            &["qemu", "--gic", "4"],
            &["qemu", "--smp", "0"],
            &["qemu", "--smp", "many"],
            &["qemu", "--mem", "lots"],
            &["qemu", "--vcpus", "0"],
            &["qemu", "--vcpus", "65"],
            &["qemu", "--backend", "kvm"],
            &["qemu", "--timeout", "0"],
            &["qemu", "--net", "tap"],
            &["qemu", "--net"],
            &["build", "--net", "user"],
            &["qemu", "--frobnicate"],
            &["build", "--cpu", "max"],
            &["test", "--gic", "2"],
            &["linux-native", "--backend", "vhe"],
            &["linux-native", "--smp", "0"],
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
    fn unknown_net_values_say_what_is_possible() {
        let err = parse(&["qemu", "--net", "bridge"]).unwrap_err().to_string();
        assert!(err.contains("bridge"), "{err}");
        assert!(err.contains("user") && err.contains("none"), "{err}");
        let err = Net::parse("tap", "[machine] net").unwrap_err();
        assert!(
            err.contains("[machine] net") && err.contains("\"user\""),
            "{err}"
        );
        assert_eq!(Net::parse("user", "x"), Ok(Net::User));
        assert_eq!(Net::parse("none", "x"), Ok(Net::None));
    }

    #[test]
    fn append_may_start_with_a_dash() {
        assert_eq!(
            qemu(&["--append", "-v x"]).vm.append.as_deref(),
            Some("-v x")
        );
    }

    #[test]
    fn vhe_on_cortex_a57_is_rejected() {
        let q = qemu(&["--cpu", "cortex-a57", "--backend", "vhe"]);
        let msg = machine(&q).unwrap_err();
        assert!(msg.contains("VHE"), "{msg}");
        assert!(machine(&qemu(&["--cpu", "cortex-a57", "--backend", "nvhe"])).is_ok());
        assert!(machine(&qemu(&["--cpu", "max", "--backend", "vhe"])).is_ok());
        // A config's cpu counts too.
        let q = qemu(&["--backend", "vhe"]);
        let d = crate::config::MachineDefaults {
            cpu: Some(Cpu::CortexA57),
            ..Default::default()
        };
        assert!(resolve_machine(&q, &d, DEFAULT_MEM).is_err());
    }

    #[test]
    fn cross_checks() {
        assert!(machine(&qemu(&["--gic", "2", "--smp", "9"])).is_err());
        assert!(machine(&qemu(&["--gic", "3", "--smp", "9"])).is_ok());
        let q = qemu(&["--host-mem", "1G"]);
        assert!(resolve_machine(&q, &Default::default(), 1 << 30).is_err());
        assert!(validate_mem(1000, "--mem").is_err());
        assert!(validate_mem(1048577, "--mem").is_err());
    }

    #[test]
    fn linux_native_args() {
        match parse(&["linux-native"]).unwrap().command {
            Command::LinuxNative(a) => {
                assert_eq!(a.cpu, Cpu::CortexA57);
                assert_eq!(a.smp, 1);
                assert_eq!(a.mem, 256 << 20);
                assert!(!a.shell);
                assert_eq!(a.append, None);
            }
            other => panic!("{other:?}"),
        }
        match parse(&["linux-native", "--cpu", "max", "--smp", "2", "--shell"])
            .unwrap()
            .command
        {
            Command::LinuxNative(a) => {
                assert_eq!(a.cpu, Cpu::Max);
                assert_eq!(a.smp, 2);
                assert!(a.shell);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backend_resolution() {
        assert_eq!(Backend::Auto.resolved(Cpu::Max), Backend::Vhe);
        assert_eq!(Backend::Auto.resolved(Cpu::CortexA57), Backend::Nvhe);
        assert_eq!(Backend::Nvhe.resolved(Cpu::Max), Backend::Nvhe);
    }

    #[test]
    fn test_args() {
        match parse(&["test", "--filter", "gic2", "--skip-host", "--full"])
            .unwrap()
            .command
        {
            Command::Test(t) => {
                assert_eq!(t.filter.as_deref(), Some("gic2"));
                assert!(t.skip_host);
                assert!(t.full);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bench_smp_scaling_flag() {
        match parse(&["bench", "--smp-scaling", "--filter", "gic3"])
            .expect("parses")
            .command
        {
            Command::Bench(b) => {
                assert!(b.smp_scaling);
                assert_eq!(b.filter.as_deref(), Some("gic3"));
            }
            other => panic!("{other:?}"),
        }
        match parse(&["bench"]).expect("parses").command {
            Command::Bench(b) => assert!(!b.smp_scaling),
            other => panic!("{other:?}"),
        }
        let err = parse(&["bench", "--smp-scaling", "--dbt"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    }
}
