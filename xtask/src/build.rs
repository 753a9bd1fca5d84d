//! Building the images: the hypervisor and guest crates with cargo, ELF -> raw binary with
//! the rustup `llvm-tools` objcopy, and the VM package (`vmpkg`) the hypervisor boots from.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::format_size;
use crate::config::VmPlan;
use crate::error::{IoContext, Result};
use crate::{fail, usage};

/// Target triple of the hypervisor (EL2 code never touches FP/SIMD registers).
pub const HYPERVISOR_TARGET: &str = "aarch64-unknown-none-softfloat";
/// Target triple of the guests.
pub const GUEST_TARGET: &str = "aarch64-unknown-none";
/// Target triple of the ARMv7-A guest crates (`guests/armv7-*`).
pub const ARMV7_GUEST_TARGET: &str = "armv7a-none-eabi";
/// Name prefix of the ARMv7-A guest crates.
pub const ARMV7_CRATE_PREFIX: &str = "armv7-";

/// Whether guest crate `name` is an ARMv7-A program (built for [`ARMV7_GUEST_TARGET`]).
pub fn is_armv7_crate(name: &str) -> bool {
    name.starts_with(ARMV7_CRATE_PREFIX)
}

/// The instruction set a VM's kernel is for (`arch` in a configuration file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VmArch {
    /// An AArch64 kernel.
    #[default]
    Aarch64,
    /// An ARMv7-A (AArch32) kernel: in hardware at AArch32 EL1 where the CPU can, else
    /// under the DBT; `dbt_force` (`dbt = "force"`) asks for the DBT in any case.
    Armv7 {
        /// Run under the DBT even where the CPU could run it in hardware.
        dbt_force: bool,
    },
}

impl VmArch {
    /// The architecture a guest implies: the ARMv7-A guest crates, `linux-armv7` and zImage
    /// files are ARMv7-A; everything else AArch64.
    pub fn of(guest: &Guest) -> VmArch {
        let armv7 = match guest {
            Guest::Crate(n) => is_armv7_crate(n),
            Guest::LinuxArmv7 => true,
            Guest::Linux => false,
            Guest::File(p) => fs::read(p).map(|k| is_zimage(&k)).unwrap_or(false),
        };
        if armv7 {
            VmArch::Armv7 { dbt_force: false }
        } else {
            VmArch::Aarch64
        }
    }

    /// The package flags of this choice.
    pub fn vm_flags(self) -> u32 {
        match self {
            VmArch::Aarch64 => 0,
            VmArch::Armv7 { dbt_force: false } => vmpkg::VM_FLAG_ARCH_ARMV7,
            VmArch::Armv7 { dbt_force: true } => {
                vmpkg::VM_FLAG_ARCH_ARMV7 | vmpkg::VM_FLAG_DBT_FORCE
            }
        }
    }
}

/// Offset of the magic in an ARM Linux zImage header.
const ZIMAGE_MAGIC_OFFSET: usize = 0x24;
/// The zImage magic, as stored (little-endian `0x016F2818`).
const ZIMAGE_MAGIC: [u8; 4] = 0x016f_2818u32.to_le_bytes();

/// Whether `image` is an ARM Linux zImage.
pub fn is_zimage(image: &[u8]) -> bool {
    image.get(ZIMAGE_MAGIC_OFFSET..ZIMAGE_MAGIC_OFFSET + 4) == Some(&ZIMAGE_MAGIC[..])
}
/// Package name of the hypervisor crate.
pub const HYPERVISOR_PACKAGE: &str = "hypervisor";

/// Offset of the magic in an arm64 Linux `Image` header.
const ARM64_IMAGE_MAGIC_OFFSET: usize = 0x38;
/// `ARM\x64`, the arm64 Linux `Image` header magic.
const ARM64_IMAGE_MAGIC: &[u8; 4] = b"ARM\x64";

/// Where things are: the workspace root and cargo's target directory.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The workspace root (the directory with the virtual `Cargo.toml`).
    pub root: PathBuf,
    /// Cargo's target directory (`CARGO_TARGET_DIR` or `<root>/target`).
    pub target: PathBuf,
}

impl Workspace {
    /// The workspace xtask was built from, honouring `CARGO_TARGET_DIR`.
    pub fn locate() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) if !dir.is_empty() => root.join(dir),
            _ => root.join("target"),
        };
        Workspace { root, target }
    }

    /// `target/images/`, where every image xtask makes goes.
    pub fn images_dir(&self) -> PathBuf {
        self.target.join("images")
    }

    /// The hypervisor ELF cargo builds (load it into gdb for symbols).
    pub fn hypervisor_elf(&self) -> PathBuf {
        self.target
            .join(HYPERVISOR_TARGET)
            .join("release")
            .join(HYPERVISOR_PACKAGE)
    }

    /// The hypervisor as an arm64 `Image`, for QEMU `-kernel`.
    pub fn hypervisor_bin(&self) -> PathBuf {
        self.images_dir().join("hypervisor.bin")
    }

    /// The ELF cargo builds for guest crate `name`.
    pub fn guest_elf(&self, name: &str) -> PathBuf {
        let target = if is_armv7_crate(name) {
            ARMV7_GUEST_TARGET
        } else {
            GUEST_TARGET
        };
        self.target.join(target).join("release").join(name)
    }

    /// The raw binary of guest crate `name`.
    pub fn guest_bin(&self, name: &str) -> PathBuf {
        self.images_dir().join(format!("{name}.bin"))
    }

    /// The package `cargo xtask build` and `cargo xtask qemu` write.
    pub fn package_bin(&self) -> PathBuf {
        self.images_dir().join("package.bin")
    }

    /// Guest crates: directories under `guests/` with a `src/main.rs` (so not `guest-rt`):
    /// the AArch64 ones and the `armv7-*` programs, built for `armv7a-none-eabi`
    /// ([`is_armv7_crate`]).
    pub fn guest_crates(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.root.join("guests"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("src/main.rs").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }
}

/// A guest as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guest {
    /// A crate under `guests/`, built by xtask.
    Crate(String),
    /// Debian's stock arm64 kernel with xtask's busybox initramfs (see [`crate::linux`]).
    Linux,
    /// Debian's armhf LPAE kernel (a zImage) with an armhf busybox initramfs
    /// (see [`crate::linux::armv7`]).
    LinuxArmv7,
    /// A raw binary or arm64 `Image` file, used as is.
    File(PathBuf),
}

impl Guest {
    /// The VM name to put into the package: the crate name, `linux`, or `vm0` for a file.
    pub fn vm_name(&self) -> String {
        match self {
            Guest::Crate(name) => name.clone(),
            Guest::Linux => LINUX_GUEST.to_string(),
            Guest::LinuxArmv7 => LINUX_ARMV7_GUEST.to_string(),
            Guest::File(_) => "vm0".to_string(),
        }
    }
}

/// The `--guest` name of the Linux guest.
pub const LINUX_GUEST: &str = "linux";
/// The `--guest` name of the ARMv7-A (armhf) Linux guest.
pub const LINUX_ARMV7_GUEST: &str = "linux-armv7";

/// Resolves `--guest NAME|PATH`: a name of a crate in `crates` wins; otherwise it must be an
/// existing file (relative paths are taken from `base`).
pub fn resolve_guest(spec: &str, crates: &[String], base: &Path) -> Result<Guest> {
    if spec.is_empty() {
        return Err(usage!(
            "--guest needs a guest crate name ({}) or a path to an image file",
            crates.join(", ")
        ));
    }
    if crates.iter().any(|c| c == spec) {
        return Ok(Guest::Crate(spec.to_string()));
    }
    if spec == LINUX_GUEST {
        return Ok(Guest::Linux);
    }
    if spec == LINUX_ARMV7_GUEST {
        return Ok(Guest::LinuxArmv7);
    }
    let path = base.join(spec);
    if path.is_file() {
        return Ok(Guest::File(path));
    }
    if path.exists() {
        return Err(usage!(
            "--guest {spec}: {} is not a regular file; give a raw binary or arm64 Image file",
            path.display()
        ));
    }
    let looks_like_name = !spec.contains(['/', '\\', '.']);
    if looks_like_name {
        Err(usage!(
            "--guest {spec}: no such guest crate (available: {}, and {LINUX_GUEST}) and no such \
             file; give one of those names or a path to a raw binary or arm64 Image",
            crates.join(", ")
        ))
    } else {
        Err(usage!(
            "--guest {spec}: file not found (looked for {}); give an existing raw binary or \
             arm64 Image (or a guest crate name: {})",
            path.display(),
            crates.join(", ")
        ))
    }
}

/// The cargo to run: the one that started us (`CARGO`) or `cargo` on PATH.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Formats a command for messages: `cargo build -p hello ...`.
pub fn show_command(program: &str, args: &[String]) -> String {
    let mut s = program.to_string();
    for a in args {
        s.push(' ');
        if a.is_empty() || a.contains([' ', '"', '\'']) {
            s.push_str(&format!("{a:?}"));
        } else {
            s.push_str(a);
        }
    }
    s
}

/// Runs `cargo <args>` in the workspace root with inherited output; on failure says which
/// command failed.
pub fn run_cargo(ws: &Workspace, args: &[String]) -> Result<()> {
    run_cargo_with_env(ws, args, &[])
}

/// [`run_cargo`] with extra environment variables.
pub fn run_cargo_with_env(ws: &Workspace, args: &[String], env: &[(&str, &Path)]) -> Result<()> {
    let shown = show_command("cargo", args);
    eprintln!("xtask: running {shown}");
    let status = Command::new(cargo())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&ws.root)
        .status()
        .io(|| format!("could not start `{shown}` (is cargo installed and on PATH?)"))?;
    if status.success() {
        Ok(())
    } else {
        Err(fail!(
            "`{shown}` failed ({status}); see the compiler output above"
        ))
    }
}

/// Arguments of `cargo build --release` for `packages` on `target`.
pub fn cargo_build_args(packages: &[&str], target: &str) -> Vec<String> {
    let mut args = vec!["build".to_string()];
    for p in packages {
        args.push("-p".into());
        args.push((*p).into());
    }
    args.extend(["--release".into(), "--target".into(), target.into()]);
    args
}

/// Finds `llvm-objcopy` of the rustup `llvm-tools` component of the active toolchain.
pub fn find_objcopy(ws: &Workspace) -> Result<PathBuf> {
    let rustc = |args: &[&str]| -> Result<String> {
        let out = Command::new("rustc")
            .args(args)
            .current_dir(&ws.root)
            .output()
            .io(|| format!("could not run `rustc {}`", args.join(" ")))?;
        if !out.status.success() {
            return Err(fail!(
                "`rustc {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let sysroot = rustc(&["--print", "sysroot"])?.trim().to_string();
    let host = rustc(&["-vV"])?
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| fail!("`rustc -vV` printed no host triple"))?;
    let exe = if cfg!(windows) {
        "llvm-objcopy.exe"
    } else {
        "llvm-objcopy"
    };
    let path = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(&host)
        .join("bin")
        .join(exe);
    if path.is_file() {
        Ok(path)
    } else {
        Err(fail!(
            "{} not found; install it with `rustup component add llvm-tools` \
             (rust-toolchain.toml lists it, so `rustup toolchain install` in the repository does too)",
            path.display()
        ))
    }
}

/// `llvm-objcopy -O binary elf bin`.
pub fn objcopy(objcopy: &Path, elf: &Path, bin: &Path) -> Result<()> {
    if !elf.is_file() {
        return Err(fail!(
            "{} not found after a successful build; did the crate's name or target change?",
            elf.display()
        ));
    }
    if let Some(dir) = bin.parent() {
        fs::create_dir_all(dir).io(|| format!("creating {}", dir.display()))?;
    }
    let status = Command::new(objcopy)
        .arg("-O")
        .arg("binary")
        .arg(elf)
        .arg(bin)
        .status()
        .io(|| format!("could not run {}", objcopy.display()))?;
    if !status.success() {
        return Err(fail!(
            "`{} -O binary {} {}` failed ({status})",
            objcopy.display(),
            elf.display(),
            bin.display()
        ));
    }
    Ok(())
}

/// Whether `image` starts with an arm64 Linux `Image` header.
pub fn has_arm64_image_header(image: &[u8]) -> bool {
    image.get(ARM64_IMAGE_MAGIC_OFFSET..ARM64_IMAGE_MAGIC_OFFSET + 4) == Some(ARM64_IMAGE_MAGIC)
}

/// The ARMv7-A VM runtime (`guests/dbt-runtime`), embedded in the hypervisor image.
pub const DBT_RUNTIME_PACKAGE: &str = "dbt-runtime";

/// Builds the hypervisor (with the ARMv7-A VM runtime embedded: built first, handed to the
/// hypervisor's build script as `HV_DBT_RUNTIME`) and converts it to
/// `target/images/hypervisor.bin`.
pub fn build_hypervisor(ws: &Workspace, objcopy_path: &Path) -> Result<PathBuf> {
    let runtime = build_guests(ws, objcopy_path, &[DBT_RUNTIME_PACKAGE.to_string()])?;
    run_cargo_with_env(
        ws,
        &cargo_build_args(&[HYPERVISOR_PACKAGE], HYPERVISOR_TARGET),
        &[("HV_DBT_RUNTIME", runtime[0].as_path())],
    )?;
    let bin = ws.hypervisor_bin();
    objcopy(objcopy_path, &ws.hypervisor_elf(), &bin)?;
    let image = fs::read(&bin).io(|| format!("reading {}", bin.display()))?;
    if !has_arm64_image_header(&image) {
        eprintln!(
            "xtask: warning: {} has no arm64 Image header (\"ARM\\x64\" at 0x38); \
             QEMU will not pass it a device tree",
            bin.display()
        );
    }
    Ok(bin)
}

/// Builds guest crates `names` (one cargo run per target: the AArch64 guests, the ARMv7-A
/// ones) and converts each to `target/images/<name>.bin`.
pub fn build_guests(ws: &Workspace, objcopy_path: &Path, names: &[String]) -> Result<Vec<PathBuf>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let (armv7, aarch64): (Vec<&str>, Vec<&str>) = names
        .iter()
        .map(String::as_str)
        .partition(|n| is_armv7_crate(n));
    for (pkgs, target) in [(aarch64, GUEST_TARGET), (armv7, ARMV7_GUEST_TARGET)] {
        if !pkgs.is_empty() {
            run_cargo(ws, &cargo_build_args(&pkgs, target))?;
        }
    }
    names
        .iter()
        .map(|n| {
            let bin = ws.guest_bin(n);
            objcopy(objcopy_path, &ws.guest_elf(n), &bin)?;
            Ok(bin)
        })
        .collect()
}

/// One VM to package, with its image files.
#[derive(Debug, Clone)]
pub struct VmConfig {
    /// Console prefix / VM name.
    pub name: String,
    /// Kernel image file.
    pub kernel: PathBuf,
    /// Initrd file, if any.
    pub initrd: Option<PathBuf>,
    /// Guest RAM in bytes.
    pub mem_bytes: u64,
    /// vCPUs.
    pub vcpus: u32,
    /// Guest command line.
    pub cmdline: String,
    /// MAC address of the VM's virtio-net device (`None`: the hypervisor's default).
    pub mac: Option<[u8; 6]>,
    /// PSCI SYSTEM_OFF of this VM ends the whole machine (`VM_FLAG_SYSTEM_OFF_ENDS_ALL`).
    pub ends_all: bool,
    /// RAM-disk image file packed into the package (`None`: the hypervisor's default disk).
    pub disk_image: Option<PathBuf>,
    /// The kernel's instruction set (package flags `VM_FLAG_ARCH_ARMV7`/`VM_FLAG_DBT_FORCE`).
    pub arch: VmArch,
}

/// Checks that `path` can be a VM's RAM-disk image: a file of 1 byte to
/// [`vmpkg::MAX_DISK_IMAGE`] bytes.
pub fn check_disk_image(path: &Path) -> std::result::Result<u64, String> {
    let len = fs::metadata(path)
        .map_err(|e| format!("disk image {}: {e}", path.display()))?
        .len();
    disk_image_size_ok(path, len)?;
    Ok(len)
}

fn disk_image_size_ok(path: &Path, len: u64) -> std::result::Result<(), String> {
    if len == 0 {
        return Err(format!("disk image {} is empty", path.display()));
    }
    if len > vmpkg::MAX_DISK_IMAGE {
        return Err(format!(
            "disk image {} is {len} bytes; a RAM-disk image in the VM package may be at most \
             {} MiB ({} bytes); use --disk for a larger disk that QEMU attaches",
            path.display(),
            vmpkg::MAX_DISK_IMAGE >> 20,
            vmpkg::MAX_DISK_IMAGE
        ));
    }
    Ok(())
}

/// Builds the package bytes for `vms`.
pub fn package_bytes(vms: &[VmConfig]) -> Result<Vec<u8>> {
    let mut builder = vmpkg::PackageBuilder::new();
    for vm in vms {
        let kernel = fs::read(&vm.kernel).io(|| format!("reading {}", vm.kernel.display()))?;
        if kernel.is_empty() {
            return Err(fail!("guest image {} is empty", vm.kernel.display()));
        }
        let initrd = match &vm.initrd {
            Some(p) => Some(fs::read(p).io(|| format!("reading {}", p.display()))?),
            None => None,
        };
        let disk = match &vm.disk_image {
            Some(p) => {
                let d = fs::read(p).io(|| format!("reading {}", p.display()))?;
                disk_image_size_ok(p, d.len() as u64).map_err(|e| fail!("VM {}: {e}", vm.name))?;
                Some(d)
            }
            None => None,
        };
        builder.add_vm(vmpkg::VmImage {
            name: vm.name.clone(),
            mem_bytes: vm.mem_bytes,
            vcpus: vm.vcpus,
            // An OS guest (kernel + initrd, e.g. Linux) reboots on SYSTEM_RESET as on
            // hardware; a bare test guest's SYSTEM_RESET means failure and ends the run.
            flags: if vm.ends_all {
                vmpkg::VM_FLAG_SYSTEM_OFF_ENDS_ALL
            } else {
                0
            } | if vm.initrd.is_some() {
                vmpkg::VM_FLAG_RESTART_ON_RESET
            } else {
                0
            } | vm.arch.vm_flags(),
            kernel,
            initrd,
            cmdline: vm.cmdline.clone(),
            mac: vm.mac,
            disk,
        });
    }
    Ok(builder.build())
}

/// Writes the package for `vms` to `path`.
pub fn write_package(path: &Path, vms: &[VmConfig]) -> Result<()> {
    let bytes = package_bytes(vms)?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).io(|| format!("creating {}", dir.display()))?;
    }
    fs::write(path, bytes).io(|| format!("writing {}", path.display()))
}

/// Guest crates `plans` use, sorted, once each.
pub fn crates_of(plans: &[VmPlan]) -> Vec<String> {
    let mut names: Vec<String> = plans
        .iter()
        .filter_map(|p| match &p.guest {
            Guest::Crate(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Turns plans into package entries, once their guest crates are built (the Linux assets
/// are fetched/built here when a plan needs them).
pub fn vm_configs(ws: &Workspace, plans: &[VmPlan]) -> Result<Vec<VmConfig>> {
    let linux = if crate::config::needs_linux(plans) {
        let assets = crate::linux::ensure_assets(ws)?;
        eprintln!("xtask: {}", assets.describe());
        Some(assets)
    } else {
        None
    };
    let linux_armv7 = if plans.iter().any(|p| p.guest == Guest::LinuxArmv7) {
        let assets = crate::linux::armv7::ensure_assets(ws)?;
        eprintln!("xtask: {}", assets.describe());
        Some(assets)
    } else {
        None
    };
    plans
        .iter()
        .map(|p| {
            let (kernel, initrd) = match (&p.guest, &linux) {
                (Guest::Crate(n), _) => (ws.guest_bin(n), None),
                (Guest::File(f), _) => (f.clone(), None),
                (Guest::Linux, Some(a)) => (a.image.clone(), Some(a.initramfs.clone())),
                (Guest::Linux, None) => unreachable!("assets are fetched for Linux plans"),
                (Guest::LinuxArmv7, _) => match &linux_armv7 {
                    Some(a) => (a.image.clone(), Some(a.initramfs.clone())),
                    None => unreachable!("assets are fetched for armhf Linux plans"),
                },
            };
            Ok(VmConfig {
                name: p.name.clone(),
                kernel: p.kernel.clone().unwrap_or(kernel),
                initrd: p.initrd.clone().or(initrd),
                mem_bytes: p.mem,
                vcpus: p.vcpus,
                cmdline: crate::config::storm::substitute_seed(&p.cmdline)
                    .map_err(|e| crate::usage!("VM '{}': {e}", p.name))?,
                ends_all: p.ends_all,
                mac: p.mac,
                disk_image: p.disk_image.clone(),
                arch: p.arch,
            })
        })
        .collect()
}

/// A line `  path  size` for the build summary.
pub fn describe_file(path: &Path) -> String {
    match fs::metadata(path) {
        Ok(m) => format!(
            "  {:<48} {:>10} ({} bytes)",
            path.display(),
            format_size(m.len()),
            m.len()
        ),
        Err(_) => format!("  {:<48} (missing)", path.display()),
    }
}

/// What `cargo xtask build` and `cargo xtask qemu` produce.
#[derive(Debug, Clone)]
pub struct Built {
    /// `target/images/hypervisor.bin`.
    pub hypervisor: PathBuf,
    /// Guest images that were built or given.
    pub guests: Vec<PathBuf>,
    /// `target/images/package.bin`.
    pub package: PathBuf,
    /// What went into the package.
    pub vms: Vec<VmConfig>,
}

/// Builds the hypervisor, the guest crates `extra_guests` plus those `plans` use, the Linux
/// assets when a plan needs them, and the package of `plans`.
pub fn build_all(ws: &Workspace, plans: &[VmPlan], extra_guests: &[String]) -> Result<Built> {
    let objcopy_path = find_objcopy(ws)?;
    let hypervisor = build_hypervisor(ws, &objcopy_path)?;
    let mut names: Vec<String> = extra_guests.to_vec();
    for n in crates_of(plans) {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let mut guests = build_guests(ws, &objcopy_path, &names)?;
    let vms = vm_configs(ws, plans)?;
    for vm in &vms {
        for f in std::iter::once(&vm.kernel)
            .chain(&vm.initrd)
            .chain(&vm.disk_image)
        {
            if !guests.contains(f) {
                guests.push(f.clone());
            }
        }
    }
    let package = ws.package_bin();
    write_package(&package, &vms)?;
    Ok(Built {
        hypervisor,
        guests,
        package,
        vms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-test-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn guest_names_and_paths() {
        let dir = scratch("guests");
        fs::write(dir.join("Image"), b"x").unwrap();
        let crates = vec!["hello".to_string(), "hostile".to_string()];
        assert_eq!(
            resolve_guest("hello", &crates, &dir),
            Ok(Guest::Crate("hello".into()))
        );
        assert_eq!(
            resolve_guest("Image", &crates, &dir),
            Ok(Guest::File(dir.join("Image")))
        );
        let abs = dir.join("Image");
        assert_eq!(
            resolve_guest(abs.to_str().unwrap(), &crates, Path::new("/")),
            Ok(Guest::File(abs))
        );
        assert_eq!(resolve_guest("linux", &crates, &dir), Ok(Guest::Linux));
        assert_eq!(Guest::Linux.vm_name(), "linux");
        for bad in ["nosuch", "./nosuch.bin", "", "."] {
            let err = resolve_guest(bad, &crates, &dir).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}: {err}");
        }
        let msg = resolve_guest("helo", &crates, &dir)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("hello, hostile"), "{msg}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn workspace_lists_guest_crates() {
        let ws = Workspace::locate();
        let crates = ws.guest_crates();
        assert!(crates.contains(&"hello".to_string()), "{crates:?}");
        assert!(!crates.contains(&"guest-rt".to_string()), "{crates:?}");
    }

    #[test]
    fn build_args() {
        assert_eq!(
            cargo_build_args(&["hello", "hostile"], GUEST_TARGET).join(" "),
            "build -p hello -p hostile --release --target aarch64-unknown-none"
        );
    }

    #[test]
    fn image_header() {
        let mut img = vec![0u8; 64];
        assert!(!has_arm64_image_header(&img));
        img[0x38..0x3c].copy_from_slice(b"ARM\x64");
        assert!(has_arm64_image_header(&img));
        assert!(!has_arm64_image_header(&img[..0x3a]));
    }

    #[test]
    fn package_round_trips() {
        let dir = scratch("pkg");
        let kernel = dir.join("k.bin");
        fs::write(&kernel, [1u8, 2, 3, 4]).unwrap();
        let initrd = dir.join("initrd");
        fs::write(&initrd, [9u8; 5]).unwrap();
        let bytes = package_bytes(&[VmConfig {
            name: "hello".into(),
            kernel,
            initrd: Some(initrd),
            mem_bytes: 128 << 20,
            vcpus: 3,
            cmdline: "reset".into(),
            ends_all: false,
            mac: Some([0x52, 0x54, 0, 0x12, 0x34, 0x60]),
            disk_image: None,
            arch: VmArch::Aarch64,
        }])
        .unwrap();
        assert_eq!(&bytes[..8], &vmpkg::MAGIC);
        let pkg = vmpkg::Package::parse(&bytes).expect("valid package");
        assert_eq!(pkg.vm_count(), 1);
        let vm = pkg.vm(0).expect("valid vm");
        assert_eq!(vm.name, "hello");
        assert_eq!(vm.mem_bytes, 128 << 20);
        assert_eq!(vm.vcpus, 3);
        // kernel + initrd: an OS guest, restarted on SYSTEM_RESET
        assert_eq!(vm.flags, vmpkg::VM_FLAG_RESTART_ON_RESET);
        assert_eq!(vm.kernel, &[1, 2, 3, 4]);
        assert_eq!(vm.initrd, Some(&[9u8; 5][..]));
        assert_eq!(vm.cmdline, "reset");
        assert_eq!(vm.mac, Some([0x52, 0x54, 0, 0x12, 0x34, 0x60]));
        assert_eq!(vm.disk, None);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn disk_images_go_into_the_package() {
        let dir = scratch("pkg-disk");
        let kernel = dir.join("k.bin");
        fs::write(&kernel, [1u8; 8]).unwrap();
        let disk = dir.join("disk.img");
        fs::write(&disk, b"DISK-IMAGE").unwrap();
        let vm = |name: &str, disk_image: Option<PathBuf>| VmConfig {
            name: name.into(),
            kernel: kernel.clone(),
            initrd: None,
            mem_bytes: 64 << 20,
            vcpus: 1,
            cmdline: String::new(),
            mac: None,
            ends_all: false,
            disk_image,
            arch: VmArch::Armv7 { dbt_force: false },
        };
        let bytes = package_bytes(&[vm("a", None), vm("b", Some(disk.clone()))]).unwrap();
        let pkg = vmpkg::Package::parse(&bytes).unwrap();
        assert_eq!(pkg.vm(0).unwrap().disk, None);
        assert_eq!(pkg.vm(1).unwrap().disk, Some(&b"DISK-IMAGE"[..]));
        // too large (sparse file) or empty: a clear error naming the VM and the limit
        let big = dir.join("big.img");
        fs::File::create(&big)
            .unwrap()
            .set_len(vmpkg::MAX_DISK_IMAGE + 512)
            .unwrap();
        let err = package_bytes(&[vm("c", Some(big))])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("VM c") && err.contains("at most 64 MiB"),
            "{err}"
        );
        fs::write(&disk, b"").unwrap();
        let err = package_bytes(&[vm("d", Some(disk))])
            .unwrap_err()
            .to_string();
        assert!(err.contains("is empty"), "{err}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn commands_are_shown_quoted() {
        assert_eq!(
            show_command("cargo", &["a".into(), "b c".into(), "".into()]),
            "cargo a \"b c\" \"\""
        );
    }
}
