//! VM configuration files (`cargo xtask qemu --config FILE`): the QEMU machine's defaults and
//! the VMs that go into the package. See `configs/*.toml` for examples.
//!
//! ```toml
//! [machine]              # optional; command-line flags override these
//! smp = 2                # physical CPUs of the QEMU machine
//! gic = 3                # 2 or 3
//! cpu = "max"            # "max", "cortex-a57" or "a64fx"
//! host_mem = "1G"        # default: the VMs' memory + 256M
//! net = "user"           # uplink: QEMU's user-mode network ("none": VMs only see each other)
//!
//! [[vm]]
//! name = "web"           # console prefix `[web] `; unique
//! guest = "hello"        # a guests/ crate, or "linux"; or instead:
//! # kernel = "path/Image"  (relative to this file) with optional initrd = "path"
//! mem = "128M"
//! vcpus = 2
//! cmdline = ""
//! ends_all = false       # true: when this VM powers off, the whole machine stops
//! mac = "52:54:00:12:34:60"  # virtio-net address (default 52:54:00:12:34:56 + VM index)
//! disk = "images/disk.img"   # RAM-disk image packed into the package (relative to this file)
//! arch = "armv7"         # the kernel is ARMv7-A (implied by armv7-* crates, "linux-armv7"
//!                        # and zImage files): hardware AArch32 EL1 where the CPU has it
//! dbt = "force"          # with arch = "armv7": the binary translator even where it has
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::build::Guest as GuestSource;
use crate::build::VmArch;
use crate::cli::{
    parse_size, validate_mem, Cpu, Gic, Net, DEFAULT_MEM, HOST_MEM_OVERHEAD, MAX_SMP, MAX_VCPUS,
};
use crate::error::Result;
use crate::linux;

pub mod storm;

/// Longest VM name (it prefixes every console line).
pub const MAX_NAME_LEN: usize = 32;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    machine: Option<MachineSection>,
    #[serde(default)]
    vm: Vec<VmSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineSection {
    smp: Option<u32>,
    gic: Option<u8>,
    cpu: Option<String>,
    host_mem: Option<String>,
    net: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VmSection {
    name: String,
    guest: Option<String>,
    kernel: Option<String>,
    initrd: Option<String>,
    mem: Option<String>,
    vcpus: Option<u32>,
    cmdline: Option<String>,
    #[serde(default)]
    ends_all: bool,
    mac: Option<String>,
    disk: Option<String>,
    disk_pattern: Option<String>,
    arch: Option<String>,
    dbt: Option<String>,
}

/// One VM, resolved: everything the package needs except the image bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VmPlan {
    /// Name (console prefix).
    pub name: String,
    /// What it runs.
    pub guest: GuestSource,
    /// Replaces the guest's kernel image (a Linux guest's Debian kernel, say).
    pub kernel: Option<PathBuf>,
    /// The initrd, replacing a Linux guest's built initramfs.
    pub initrd: Option<PathBuf>,
    /// Guest RAM in bytes.
    pub mem: u64,
    /// vCPUs.
    pub vcpus: u32,
    /// Guest kernel command line.
    pub cmdline: String,
    /// PSCI SYSTEM_OFF of this VM ends the whole machine.
    pub ends_all: bool,
    /// MAC address of its virtio-net device (`None`: the hypervisor's default).
    pub mac: Option<[u8; 6]>,
    /// RAM-disk image packed into the package as its virtio disk (`None`: the hypervisor's
    /// default, a zeroed RAM disk or a slice of QEMU's disk).
    pub disk_image: Option<PathBuf>,
    /// The kernel's instruction set ([`VmArch::of`] the guest unless the file says).
    pub arch: VmArch,
}

/// Defaults for the QEMU machine (each `None` when the file does not set it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineDefaults {
    /// Physical CPUs.
    pub smp: Option<u32>,
    /// GIC version.
    pub gic: Option<Gic>,
    /// CPU model.
    pub cpu: Option<Cpu>,
    /// Host memory in bytes.
    pub host_mem: Option<u64>,
    /// Network uplink.
    pub net: Option<Net>,
}

/// A parsed configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineConfig {
    /// Machine defaults.
    pub machine: MachineDefaults,
    /// The VMs, in file order.
    pub vms: Vec<VmPlan>,
}

impl MachineConfig {
    /// Memory of all VMs together.
    pub fn vm_mem_total(&self) -> u64 {
        total_mem(&self.vms)
    }
}

/// Memory of `vms` together.
pub fn total_mem(vms: &[VmPlan]) -> u64 {
    vms.iter().map(|v| v.mem).fold(0, u64::saturating_add)
}

/// Default memory of a VM running `guest`.
pub fn default_mem(guest: &GuestSource) -> u64 {
    match guest {
        GuestSource::Linux | GuestSource::LinuxArmv7 => linux::DEFAULT_MEM,
        _ => DEFAULT_MEM,
    }
}

/// Default command line of a VM running `guest`.
pub fn default_cmdline(guest: &GuestSource) -> String {
    match guest {
        GuestSource::Linux | GuestSource::LinuxArmv7 => linux::DEFAULT_CMDLINE.into(),
        _ => String::new(),
    }
}

/// Whether `name` is a usable VM name: 1..=32 of `A-Za-z0-9_.-`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Parses a MAC address: six two-digit hex bytes separated by `:` (or `-`), a unicast
/// address (bit 0 of the first byte clear), not all zero. Locally administered or not.
pub fn parse_mac(s: &str) -> std::result::Result<[u8; 6], String> {
    let bad =
        || format!("\"{s}\" is not a MAC address; write six hex bytes, e.g. \"52:54:00:12:34:60\"");
    let sep = if s.contains('-') { '-' } else { ':' };
    let parts: Vec<&str> = s.split(sep).collect();
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut mac = [0u8; 6];
    for (b, p) in mac.iter_mut().zip(parts) {
        if p.len() != 2 || !p.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    if mac[0] & 1 != 0 {
        return Err(format!(
            "\"{s}\" is a multicast (group) address: bit 0 of the first byte must be 0 for a \
             device's own address (e.g. 52:..., 02:..., 00:...)"
        ));
    }
    if mac == [0; 6] {
        return Err(format!(
            "\"{s}\": the all-zero address is not a device address"
        ));
    }
    Ok(mac)
}

/// Formats a MAC address as `52:54:00:12:34:56`.
pub fn format_mac(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Checks a vCPU count.
pub fn validate_vcpus(n: u32, what: &str) -> std::result::Result<(), String> {
    if (1..=MAX_VCPUS).contains(&n) {
        Ok(())
    } else {
        Err(format!("{what} = {n}: must be 1..={MAX_VCPUS}"))
    }
}

/// Parses a configuration; relative `kernel`/`initrd` paths are taken from `base` (the
/// directory of the file). Guest crate names are checked later, against the workspace.
pub fn parse_config(text: &str, base: &Path) -> std::result::Result<MachineConfig, String> {
    let f: ConfigFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut machine = MachineDefaults::default();
    if let Some(m) = f.machine {
        if let Some(smp) = m.smp {
            if !(1..=MAX_SMP).contains(&smp) {
                return Err(format!("[machine] smp = {smp}: must be 1..={MAX_SMP}"));
            }
            machine.smp = Some(smp);
        }
        machine.gic = match m.gic {
            None => None,
            Some(2) => Some(Gic::V2),
            Some(3) => Some(Gic::V3),
            Some(g) => return Err(format!("[machine] gic = {g}: must be 2 or 3")),
        };
        machine.cpu = match m.cpu.as_deref() {
            None => None,
            Some("max") => Some(Cpu::Max),
            Some("cortex-a57") => Some(Cpu::CortexA57),
            Some("a64fx") => Some(Cpu::A64fx),
            Some(c) => {
                return Err(format!(
                    "[machine] cpu = \"{c}\": must be \"max\", \"cortex-a57\" or \"a64fx\""
                ))
            }
        };
        if let Some(h) = &m.host_mem {
            machine.host_mem = Some(parse_size(h).map_err(|e| format!("[machine] host_mem: {e}"))?);
        }
        if let Some(n) = &m.net {
            machine.net = Some(Net::parse(n, "[machine] net")?);
        }
    }
    if f.vm.is_empty() {
        return Err("no VMs: add at least one [[vm]] table".into());
    }
    if f.vm.len() > vmpkg::MAX_VMS as usize {
        return Err(format!(
            "{} VMs: a package holds at most {}",
            f.vm.len(),
            vmpkg::MAX_VMS
        ));
    }
    let mut vms: Vec<VmPlan> = Vec::new();
    for v in f.vm {
        let at = format!("[[vm]] \"{}\"", v.name);
        if !valid_name(&v.name) {
            return Err(format!(
                "{at}: a name is 1..={MAX_NAME_LEN} characters of A-Z a-z 0-9 _ . -"
            ));
        }
        if vms.iter().any(|o| o.name == v.name) {
            return Err(format!(
                "{at}: the name is used twice; VM names must be unique"
            ));
        }
        let guest = match (&v.guest, &v.kernel) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{at}: give `guest` (a guests/ crate or \"linux\") or `kernel` (an image \
                     path), not both"
                ))
            }
            (None, None) => {
                return Err(format!(
                "{at}: missing `guest` (a guests/ crate or \"linux\") or `kernel` (an image path)"
            ))
            }
            (Some(g), None) if g.trim().is_empty() => {
                return Err(format!("{at}: `guest` is empty"))
            }
            (Some(g), None) if g == "linux" => GuestSource::Linux,
            (Some(g), None) if g == crate::build::LINUX_ARMV7_GUEST => GuestSource::LinuxArmv7,
            (Some(g), None) => GuestSource::Crate(g.clone()),
            (None, Some(k)) => GuestSource::File(base.join(k)),
        };
        if v.initrd.is_some() && matches!(guest, GuestSource::Crate(_)) {
            return Err(format!(
                "{at}: `initrd` goes with `kernel` or guest = \"linux\", not with a guest crate"
            ));
        }
        let mem = match &v.mem {
            Some(s) => parse_size(s).map_err(|e| format!("{at}: `mem`: {e}"))?,
            None => default_mem(&guest),
        };
        validate_mem(mem, "`mem`").map_err(|e| format!("{at}: {e}"))?;
        let vcpus = v.vcpus.unwrap_or(1);
        validate_vcpus(vcpus, "`vcpus`").map_err(|e| format!("{at}: {e}"))?;
        let mac = match &v.mac {
            Some(m) => {
                let mac = parse_mac(m.trim()).map_err(|e| format!("{at}: `mac`: {e}"))?;
                if let Some(o) = vms.iter().find(|o| o.mac == Some(mac)) {
                    return Err(format!(
                        "{at}: `mac` {} is also VM \"{}\"'s; addresses must be unique",
                        format_mac(&mac),
                        o.name
                    ));
                }
                Some(mac)
            }
            None => None,
        };
        if v.disk.as_deref().is_some_and(|d| d.trim().is_empty()) {
            return Err(format!("{at}: `disk` is empty; give an image path"));
        }
        let pattern = match &v.disk_pattern {
            _ if v.disk.is_some() && v.disk_pattern.is_some() => {
                return Err(format!(
                    "{at}: `disk` and `disk_pattern` exclude each other"
                ))
            }
            Some(s) => {
                let size = parse_size(s).map_err(|e| format!("{at}: `disk_pattern`: {e}"))?;
                if !(4096..=storm::MAX_PATTERN).contains(&size) {
                    return Err(format!("{at}: `disk_pattern` = {s}: give 4K..=64M"));
                }
                Some(storm::pattern_image_path(
                    &crate::build::Workspace::locate().images_dir(),
                    size,
                ))
            }
            None => None,
        };
        let arch = parse_arch(&guest, v.arch.as_deref(), v.dbt.as_deref())
            .map_err(|e| format!("{at}: {e}"))?;
        vms.push(VmPlan {
            arch,
            name: v.name,
            cmdline: v.cmdline.unwrap_or_else(|| default_cmdline(&guest)),
            guest,
            kernel: None,
            initrd: v.initrd.map(|i| base.join(i)),
            mem,
            vcpus,
            ends_all: v.ends_all,
            mac,
            disk_image: v.disk.map(|d| base.join(d)).or(pattern),
        });
    }
    let cfg = MachineConfig { machine, vms };
    if let Some(h) = machine.host_mem {
        if h <= cfg.vm_mem_total() {
            return Err(format!(
                "[machine] host_mem = {} is not larger than the VMs' memory ({}); give at least {}",
                crate::cli::format_size(h),
                crate::cli::format_size(cfg.vm_mem_total()),
                crate::cli::format_size(cfg.vm_mem_total() + HOST_MEM_OVERHEAD)
            ));
        }
    }
    Ok(cfg)
}

/// Reads and parses a configuration file (errors name the file).
pub fn load_config(path: &Path) -> Result<MachineConfig> {
    let text = fs::read_to_string(path)
        .map_err(|e| crate::usage!("--config {}: cannot read it: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse_config(&text, base).map_err(|e| crate::usage!("config file {}: {e}", path.display()))
}

/// Checks that the files a plan names exist, and that crate guests are crates.
pub fn check_sources(vms: &[VmPlan], crates: &[String], origin: &str) -> Result<()> {
    for vm in vms {
        let at = format!("{origin}: VM '{}'", vm.name);
        match &vm.guest {
            GuestSource::Crate(c) if !crates.contains(c) => {
                return Err(crate::usage!(
                    "{at}: no guest crate '{c}' under guests/ (available: {}, or \"linux\")",
                    crates.join(", ")
                ))
            }
            GuestSource::File(p) if !p.is_file() => {
                return Err(crate::usage!("{at}: kernel {} not found", p.display()))
            }
            _ => {}
        }
        for p in vm.kernel.iter().chain(&vm.initrd) {
            if !p.is_file() {
                return Err(crate::usage!("{at}: {} not found", p.display()));
            }
        }
        if let Some(d) = &vm.disk_image {
            if let Some(size) = storm::pattern_size(d) {
                storm::ensure_pattern_image(d, size)
                    .map_err(|e| crate::usage!("{at}: writing {}: {e}", d.display()))?;
            }
            crate::build::check_disk_image(d).map_err(|e| crate::usage!("{at}: {e}"))?;
        }
    }
    Ok(())
}

/// The architecture of a VM from its guest and the `arch`/`dbt` keys of its table (or the
/// `--arch`/`--dbt` options).
fn parse_arch(
    guest: &GuestSource,
    arch: Option<&str>,
    dbt: Option<&str>,
) -> std::result::Result<VmArch, String> {
    let implied = VmArch::of(guest);
    let armv7 = match arch {
        None => implied != VmArch::Aarch64,
        Some("armv7") => true,
        Some("aarch64") if implied == VmArch::Aarch64 => false,
        Some("aarch64") => return Err("`arch` = \"aarch64\" for an ARMv7-A guest".into()),
        Some(a) => {
            return Err(format!(
                "`arch` = \"{a}\": must be \"aarch64\" or \"armv7\""
            ))
        }
    };
    let dbt_force = match dbt {
        None | Some("auto") => false,
        Some("force") if armv7 => true,
        Some("force") => return Err("`dbt` = \"force\" needs arch = \"armv7\"".into()),
        Some(d) => return Err(format!("`dbt` = \"{d}\": must be \"auto\" or \"force\"")),
    };
    Ok(if armv7 {
        VmArch::Armv7 { dbt_force }
    } else {
        VmArch::Aarch64
    })
}

/// Whether any of `vms` is a Linux guest (so the Linux assets are needed).
pub fn needs_linux(vms: &[VmPlan]) -> bool {
    vms.iter().any(|v| v.guest == GuestSource::Linux)
}

/// The VMs (and machine defaults) `cargo xtask build|qemu` options ask for: the config file,
/// or one VM from --guest/--kernel/--initrd/--mem/--vcpus/--append. Relative paths on the
/// command line are taken from `cwd`.
pub fn plans_from_args(
    vm: &crate::cli::VmArgs,
    crates: &[String],
    cwd: &Path,
) -> Result<MachineConfig> {
    if let Some(path) = &vm.config {
        let path = cwd.join(path);
        let cfg = load_config(&path)?;
        check_sources(&cfg.vms, crates, &path.display().to_string())?;
        return Ok(cfg);
    }
    let guest = match (&vm.guest, &vm.kernel) {
        (None, Some(k)) => GuestSource::File(cwd.join(k)),
        (g, _) => crate::build::resolve_guest(g.as_deref().unwrap_or("hello"), crates, cwd)?,
    };
    let kernel = match (&guest, &vm.kernel) {
        (GuestSource::Linux | GuestSource::LinuxArmv7, Some(k)) => Some(cwd.join(k)),
        (GuestSource::File(_), _) | (_, None) => None,
        (GuestSource::Crate(c), Some(_)) => {
            return Err(crate::usage!(
                "--kernel replaces the guest image: give it alone (or with --guest linux to \
                 keep the Linux initramfs), not with --guest {c}"
            ))
        }
    };
    if vm.initrd.is_some() && matches!(guest, GuestSource::Crate(_)) {
        return Err(crate::usage!(
            "--initrd goes with --kernel or --guest linux, not with a guest crate"
        ));
    }
    let mem = vm.mem.unwrap_or_else(|| default_mem(&guest));
    validate_mem(mem, "--mem").map_err(crate::error::Error::Usage)?;
    let arch = parse_arch(&guest, vm.arch.as_deref(), vm.dbt.as_deref())
        .map_err(|e| crate::usage!("--arch/--dbt: {e}"))?;
    let plan = VmPlan {
        arch,
        name: guest.vm_name(),
        cmdline: vm.append.clone().unwrap_or_else(|| default_cmdline(&guest)),
        guest,
        kernel,
        initrd: vm.initrd.as_ref().map(|p| cwd.join(p)),
        mem,
        vcpus: vm.vcpus.unwrap_or(1),
        ends_all: true,
        mac: None,
        disk_image: vm.disk_image.as_ref().map(|p| cwd.join(p)),
    };
    let vms = vec![plan];
    check_sources(&vms, crates, "command line")?;
    Ok(MachineConfig {
        machine: MachineDefaults::default(),
        vms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
        [machine]
        smp = 2
        gic = 2
        cpu = "cortex-a57"
        host_mem = "1G"
        net = "user"

        [[vm]]
        name = "web"
        guest = "hello"
        mem = "64M"
        vcpus = 2
        cmdline = "reset"
        ends_all = true
        mac = "02:00:00:AB:cd:01"

        [[vm]]
        name = "db"
        kernel = "images/Image"
        initrd = "../initrd.img"
        disk = "images/db.img"
    "#;

    fn parse(text: &str) -> std::result::Result<MachineConfig, String> {
        parse_config(text, Path::new("/repo/configs"))
    }

    #[test]
    fn parses_everything() {
        let c = parse(TWO).unwrap();
        assert_eq!(c.machine.smp, Some(2));
        assert_eq!(c.machine.gic, Some(Gic::V2));
        assert_eq!(c.machine.cpu, Some(Cpu::CortexA57));
        assert_eq!(c.machine.host_mem, Some(1 << 30));
        assert_eq!(c.machine.net, Some(Net::User));
        assert_eq!(c.vms.len(), 2);
        assert_eq!(c.vms[0].mac, Some([0x02, 0, 0, 0xab, 0xcd, 0x01]));
        assert_eq!(c.vms[1].mac, None);
        let web = &c.vms[0];
        assert_eq!(web.name, "web");
        assert_eq!(web.guest, GuestSource::Crate("hello".into()));
        assert_eq!(web.mem, 64 << 20);
        assert_eq!(web.vcpus, 2);
        assert_eq!(web.cmdline, "reset");
        assert!(web.ends_all);
        let db = &c.vms[1];
        assert_eq!(
            db.guest,
            GuestSource::File("/repo/configs/images/Image".into())
        );
        assert_eq!(db.initrd, Some("/repo/configs/../initrd.img".into()));
        assert_eq!(db.disk_image, Some("/repo/configs/images/db.img".into()));
        assert_eq!(web.disk_image, None);
        assert_eq!(db.mem, DEFAULT_MEM);
        assert_eq!(db.vcpus, 1);
        assert_eq!(db.cmdline, "");
        assert!(!db.ends_all);
        assert_eq!(c.vm_mem_total(), (64 << 20) + DEFAULT_MEM);
    }

    #[test]
    fn absolute_paths_stay_absolute() {
        let c = parse("[[vm]]\nname = \"a\"\nkernel = \"/abs/Image\"\n").unwrap();
        assert_eq!(c.vms[0].guest, GuestSource::File("/abs/Image".into()));
    }

    #[test]
    fn linux_defaults() {
        let c = parse("[[vm]]\nname = \"lx\"\nguest = \"linux\"\n").unwrap();
        assert_eq!(c.vms[0].guest, GuestSource::Linux);
        assert_eq!(c.vms[0].mem, linux::DEFAULT_MEM);
        assert_eq!(c.vms[0].cmdline, linux::DEFAULT_CMDLINE);
        assert_eq!(c.machine, MachineDefaults::default());
        assert!(needs_linux(&c.vms));
    }

    #[test]
    fn rejects_bad_files() {
        let cases = [
            ("no vm", "", "no VMs"),
            (
                "unknown top key",
                "foo = 1\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "foo",
            ),
            (
                "unknown vm key",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmemory=\"1G\"",
                "memory",
            ),
            (
                "unknown machine key",
                "[machine]\nsmpp=2\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "smpp",
            ),
            (
                "duplicate",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\n[[vm]]\nname=\"a\"\nguest=\"hostile\"",
                "unique",
            ),
            (
                "both",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nkernel=\"x\"",
                "not both",
            ),
            ("neither", "[[vm]]\nname=\"a\"", "missing `guest`"),
            ("missing name", "[[vm]]\nguest=\"hello\"", "name"),
            ("bad name", "[[vm]]\nname=\"a b\"\nguest=\"hello\"", "name"),
            ("empty name", "[[vm]]\nname=\"\"\nguest=\"hello\"", "name"),
            (
                "bad mem",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmem=\"lots\"",
                "mem",
            ),
            (
                "tiny mem",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmem=\"4K\"",
                "too small",
            ),
            (
                "zero vcpus",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nvcpus=0",
                "vcpus",
            ),
            (
                "many vcpus",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nvcpus=65",
                "vcpus",
            ),
            (
                "initrd with crate",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\ninitrd=\"x\"",
                "initrd",
            ),
            (
                "gic",
                "[machine]\ngic=4\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "gic",
            ),
            (
                "cpu",
                "[machine]\ncpu=\"a53\"\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "cpu",
            ),
            (
                "smp",
                "[machine]\nsmp=0\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "smp",
            ),
            (
                "host_mem",
                "[machine]\nhost_mem=\"128M\"\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "host_mem",
            ),
            (
                "wrong type",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nvcpus=\"two\"",
                "vcpus",
            ),
            (
                "net",
                "[machine]\nnet=\"tap\"\n[[vm]]\nname=\"a\"\nguest=\"hello\"",
                "[machine] net = \"tap\": must be \"user\"",
            ),
            (
                "mac syntax",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmac=\"52:54:00:12:34\"",
                "`mac`",
            ),
            (
                "mac hex",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmac=\"52:54:00:12:34:zz\"",
                "six hex bytes",
            ),
            (
                "mac multicast",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmac=\"01:00:5e:00:00:01\"",
                "multicast",
            ),
            (
                "mac broadcast",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmac=\"ff:ff:ff:ff:ff:ff\"",
                "multicast",
            ),
            (
                "mac twice",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nmac=\"52:54:00:00:00:01\"\n[[vm]]\nname=\"b\"\nguest=\"hello\"\nmac=\"52:54:00:00:00:01\"",
                "unique",
            ),
            (
                "ends_all type",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\nends_all=1",
                "ends_all",
            ),
            (
                "empty disk",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\ndisk=\" \"",
                "`disk` is empty",
            ),
            (
                "disk type",
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\ndisk=1",
                "disk",
            ),
        ];
        for (what, text, needle) in cases {
            let err = parse(text).expect_err(what);
            assert!(
                err.contains(needle),
                "{what}: {err:?} should mention {needle:?}"
            );
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-cfg-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn plans_from_command_line() {
        let crates = vec!["hello".to_string(), "hostile".to_string()];
        let dir = scratch("args");
        fs::write(dir.join("Image"), b"k").unwrap();
        fs::write(dir.join("initrd"), b"i").unwrap();
        let plan = |vm: crate::cli::VmArgs| plans_from_args(&vm, &crates, &dir);

        let c = plan(Default::default()).unwrap();
        assert_eq!(c.vms.len(), 1);
        let v = &c.vms[0];
        assert_eq!((v.name.as_str(), v.mem, v.vcpus), ("hello", DEFAULT_MEM, 1));
        assert!(v.ends_all);

        let c = plan(crate::cli::VmArgs {
            guest: Some("hostile".into()),
            vcpus: Some(4),
            append: Some("x".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.vms[0].vcpus, 4);
        assert_eq!(c.vms[0].cmdline, "x");

        let c = plan(crate::cli::VmArgs {
            kernel: Some("Image".into()),
            initrd: Some("initrd".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.vms[0].guest, GuestSource::File(dir.join("Image")));
        assert_eq!(c.vms[0].initrd, Some(dir.join("initrd")));
        assert_eq!(c.vms[0].name, "vm0");
        assert_eq!(c.vms[0].disk_image, None);

        fs::write(dir.join("disk.img"), b"DISK").unwrap();
        let c = plan(crate::cli::VmArgs {
            guest: Some("hello".into()),
            disk_image: Some("disk.img".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.vms[0].disk_image, Some(dir.join("disk.img")));

        let c = plan(crate::cli::VmArgs {
            guest: Some("linux".into()),
            kernel: Some("Image".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.vms[0].guest, GuestSource::Linux);
        assert_eq!(c.vms[0].kernel, Some(dir.join("Image")));
        assert_eq!(c.vms[0].mem, linux::DEFAULT_MEM);
        assert_eq!(c.vms[0].cmdline, linux::DEFAULT_CMDLINE);

        for bad in [
            crate::cli::VmArgs {
                guest: Some("hello".into()),
                kernel: Some("Image".into()),
                ..Default::default()
            },
            crate::cli::VmArgs {
                initrd: Some("initrd".into()),
                ..Default::default()
            },
            crate::cli::VmArgs {
                kernel: Some("nosuch".into()),
                ..Default::default()
            },
            crate::cli::VmArgs {
                config: Some("nosuch.toml".into()),
                ..Default::default()
            },
            crate::cli::VmArgs {
                disk_image: Some("nosuch.img".into()),
                ..Default::default()
            },
        ] {
            let err = plan(bad.clone()).expect_err(&format!("{bad:?}"));
            assert_eq!(err.exit_code(), 2, "{err}");
        }

        fs::write(
            dir.join("c.toml"),
            "[machine]\nsmp = 2\n[[vm]]\nname = \"a\"\nkernel = \"Image\"\n",
        )
        .unwrap();
        let c = plan(crate::cli::VmArgs {
            config: Some("c.toml".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.machine.smp, Some(2));
        assert_eq!(c.vms[0].guest, GuestSource::File(dir.join("Image")));
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn macs() {
        assert_eq!(
            parse_mac("52:54:00:12:34:60"),
            Ok([0x52, 0x54, 0, 0x12, 0x34, 0x60])
        );
        assert_eq!(
            parse_mac("00-1B-21-0a-0b-0c"),
            Ok([0, 0x1b, 0x21, 10, 11, 12])
        );
        for bad in [
            "",
            "52:54:00:12:34",
            "52:54:00:12:34:60:01",
            "5:54:00:12:34:60",
            "+1:54:00:12:34:60",
            "00:00:00:00:00:00",
            "33:33:00:00:00:01",
        ] {
            assert!(parse_mac(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            format_mac(&[0x52, 0x54, 0, 0x12, 0x34, 0x60]),
            "52:54:00:12:34:60"
        );
    }

    #[test]
    fn names() {
        assert!(valid_name("web-1.a_b"));
        assert!(!valid_name("[x]"));
        assert!(!valid_name(&"x".repeat(33)));
    }

    #[test]
    fn sources_are_checked() {
        let c = parse("[[vm]]\nname=\"a\"\nguest=\"nosuch\"").unwrap();
        let err = check_sources(&c.vms, &["hello".into()], "x.toml").unwrap_err();
        assert!(err.to_string().contains("nosuch"), "{err}");
        assert_eq!(err.exit_code(), 2);
        let c = parse("[[vm]]\nname=\"a\"\nkernel=\"missing/Image\"").unwrap();
        let err = check_sources(&c.vms, &[], "x.toml").unwrap_err();
        assert!(
            err.to_string().contains("/repo/configs/missing/Image"),
            "{err}"
        );
        let c = parse("[[vm]]\nname=\"a\"\nguest=\"hello\"").unwrap();
        assert!(check_sources(&c.vms, &["hello".into()], "x.toml").is_ok());
        let c = parse("[[vm]]\nname=\"a\"\nguest=\"hello\"\ndisk=\"no/disk.img\"").unwrap();
        let err = check_sources(&c.vms, &["hello".into()], "x.toml").unwrap_err();
        assert!(
            err.to_string().contains("/repo/configs/no/disk.img"),
            "{err}"
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn disk_images_are_checked() {
        let dir = scratch("disk");
        let ok = dir.join("ok.img");
        fs::write(&ok, [1u8; 700]).unwrap();
        let empty = dir.join("empty.img");
        fs::write(&empty, b"").unwrap();
        // sparse: the size counts, not the blocks
        let big = dir.join("big.img");
        fs::File::create(&big)
            .unwrap()
            .set_len(vmpkg::MAX_DISK_IMAGE + 1)
            .unwrap();
        let max = dir.join("max.img");
        fs::File::create(&max)
            .unwrap()
            .set_len(vmpkg::MAX_DISK_IMAGE)
            .unwrap();
        let text = |p: &Path| {
            format!(
                "[[vm]]\nname=\"a\"\nguest=\"hello\"\ndisk=\"{}\"",
                p.display()
            )
        };
        let check = |p: &Path| {
            let c = parse_config(&text(p), &dir).unwrap();
            check_sources(&c.vms, &["hello".into()], "x.toml")
        };
        assert!(check(&ok).is_ok());
        assert!(check(&max).is_ok());
        let err = check(&empty).unwrap_err().to_string();
        assert!(err.contains("is empty"), "{err}");
        let err = check(&big).unwrap_err().to_string();
        assert!(err.contains("at most 64 MiB"), "{err}");
        assert!(err.contains("VM 'a'"), "{err}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn repository_configs_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = root.join("configs");
        let mut n = 0;
        for e in fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "toml") {
                let text = fs::read_to_string(&p).unwrap();
                assert!(
                    text.starts_with('#'),
                    "{}: needs a comment header",
                    p.display()
                );
                load_config(&p).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert!(n >= 2, "expected example configs in {}", dir.display());
    }

    #[test]
    fn arch_and_dbt_keys() {
        let base = Path::new("/nonexistent");
        let one = |extra: &str| {
            parse_config(
                &format!("[[vm]]\nname = \"a\"\nkernel = \"k\"\n{extra}"),
                base,
            )
            .map(|c| c.vms[0].arch)
        };
        assert_eq!(one(""), Ok(VmArch::Aarch64));
        assert_eq!(
            one("arch = \"armv7\""),
            Ok(VmArch::Armv7 { dbt_force: false })
        );
        assert_eq!(
            one("arch = \"armv7\"\ndbt = \"force\""),
            Ok(VmArch::Armv7 { dbt_force: true })
        );
        assert!(one("dbt = \"force\"").unwrap_err().contains("needs arch"));
        assert!(one("arch = \"x86\"").unwrap_err().contains("must be"));
        let linux = parse_config("[[vm]]\nname = \"b\"\nguest = \"linux-armv7\"\n", base).unwrap();
        assert_eq!(linux.vms[0].arch, VmArch::Armv7 { dbt_force: false });
        assert_eq!(linux.vms[0].guest, GuestSource::LinuxArmv7);
        assert_eq!(linux.vms[0].mem, linux::DEFAULT_MEM);
        assert_eq!(
            VmArch::Armv7 { dbt_force: true }.vm_flags(),
            vmpkg::VM_FLAG_ARCH_ARMV7 | vmpkg::VM_FLAG_DBT_FORCE
        );
    }
}
