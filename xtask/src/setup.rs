//! What this machine needs before a command can do its work, made present before it is
//! needed and said aloud while it happens:
//!
//! - the pinned toolchain's targets and components (`rust-toolchain.toml`): rustup installs
//!   a missing toolchain with them, but not what is missing from a toolchain already there,
//!   so xtask checks the sysroot and runs `rustup component add` / `rustup target add`;
//! - the Debian packages of the emulators (`qemu-system-arm`, `qemu-user`), installed with
//!   `apt-get install --no-install-recommends` (recommends would pull in GTK, GStreamer and
//!   ~800 MB that a headless run never uses).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::error::{IoContext, Result};
use crate::fail;

/// A Debian package xtask installs when the program it provides is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DebPackage {
    /// Package name (`apt-get install NAME`).
    pub name: &'static str,
    /// A program on `PATH` that shows the package is installed, or an absolute path of a
    /// file the package installs (for packages without programs, e.g. firmware).
    pub program: &'static str,
    /// What it is for, said when it is installed.
    pub purpose: &'static str,
}

/// QEMU system emulators: `qemu-system-aarch64` (the hypervisor's machine) and
/// `qemu-system-arm` (the ARMv7-A reference of dbt-armv7's system tests).
pub const QEMU_SYSTEM: DebPackage = DebPackage {
    name: "qemu-system-arm",
    program: "qemu-system-aarch64",
    purpose: "qemu-system-aarch64 runs the hypervisor; qemu-system-arm is the ARMv7-A \
              reference of dbt-armv7's system tests",
};

/// QEMU user-mode emulators: `qemu-arm`, the reference of dbt-armv7's differential tests.
pub const QEMU_USER: DebPackage = DebPackage {
    name: "qemu-user",
    program: "qemu-arm",
    purpose: "qemu-arm is the reference of dbt-armv7's differential tests",
};

/// edk2 for QEMU `virt` (`QEMU_EFI.fd`): the UEFI firmware of `--uefi` and the server
/// profiles.
pub const QEMU_EFI: DebPackage = DebPackage {
    name: "qemu-efi-aarch64",
    program: QEMU_EFI_FD,
    purpose: "edk2's QEMU_EFI.fd boots the hypervisor as an EFI application (--uefi, --platform)",
};

/// GRUB for arm64 EFI (modules for `grub-mkstandalone`): scenario `uefi-grub`.
pub const GRUB_EFI_ARM64: DebPackage = DebPackage {
    name: "grub-efi-arm64-bin",
    program: "/usr/lib/grub/arm64-efi/linux.mod",
    purpose: "grub-mkstandalone builds the GRUB that boots the hypervisor in scenario uefi-grub",
};

/// Where Debian's `qemu-efi-aarch64` puts the firmware.
pub const QEMU_EFI_FD: &str = "/usr/share/qemu-efi-aarch64/QEMU_EFI.fd";

/// Every package some test needs (`cargo xtask test` installs them before the host tests).
pub const TEST_PACKAGES: &[DebPackage] = &[QEMU_SYSTEM, QEMU_USER, QEMU_EFI];

/// Whether `p`'s program is on `PATH` (or its file, given as an absolute path, exists).
pub fn is_installed(p: &DebPackage) -> bool {
    if p.program.starts_with('/') {
        return Path::new(p.program).is_file();
    }
    find_in_path(p.program).is_some()
}

/// Searches `PATH` for `program`.
pub fn find_in_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The `[toolchain]` table of `rust-toolchain.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct PinnedToolchain {
    /// Toolchain name (`1.95.0`, `stable`, ...).
    pub channel: String,
    /// Cross targets whose standard library must be present.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Components (`rust-src`, `llvm-tools`, `clippy`, `rustfmt`, ...).
    #[serde(default)]
    pub components: Vec<String>,
}

#[derive(Deserialize)]
struct ToolchainFile {
    toolchain: PinnedToolchain,
}

impl PinnedToolchain {
    /// Parses the text of `rust-toolchain.toml`.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        toml::from_str::<ToolchainFile>(text)
            .map(|f| f.toolchain)
            .map_err(|e| e.to_string())
    }

    /// The targets and components missing from the toolchain whose sysroot is `sysroot`
    /// (`rustc --print sysroot`) on host `host` (a target triple).
    pub fn missing(&self, sysroot: &Path, host: &str) -> Missing {
        let rustlib = sysroot.join("lib").join("rustlib");
        let exe = |name: &str| {
            if cfg!(windows) {
                format!("{name}.exe")
            } else {
                name.to_string()
            }
        };
        let targets = self
            .targets
            .iter()
            .filter(|t| !rustlib.join(t).join("lib").is_dir())
            .cloned()
            .collect();
        let components = self
            .components
            .iter()
            .filter(|c| {
                let present = match c.as_str() {
                    "rust-src" => rustlib.join("src").join("rust").join("library").is_dir(),
                    "llvm-tools" | "llvm-tools-preview" => rustlib
                        .join(host)
                        .join("bin")
                        .join(exe("llvm-objcopy"))
                        .is_file(),
                    "clippy" => sysroot.join("bin").join(exe("cargo-clippy")).is_file(),
                    "rustfmt" => sysroot.join("bin").join(exe("rustfmt")).is_file(),
                    // Others cannot be told from the sysroot: rustup adds them if needed.
                    _ => true,
                };
                !present
            })
            .cloned()
            .collect();
        Missing {
            targets,
            components,
        }
    }
}

/// What a toolchain lacks of [`PinnedToolchain`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    /// Targets without their standard library.
    pub targets: Vec<String>,
    /// Components not installed.
    pub components: Vec<String>,
}

impl Missing {
    /// Whether nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.components.is_empty()
    }

    /// The rustup commands that add what is missing to toolchain `channel`.
    pub fn rustup_commands(&self, channel: &str) -> Vec<Vec<String>> {
        let mut cmds = Vec::new();
        for (what, names) in [("component", &self.components), ("target", &self.targets)] {
            if !names.is_empty() {
                let mut c: Vec<String> = vec![what.into(), "add".into(), "--toolchain".into()];
                c.push(channel.into());
                c.extend(names.iter().cloned());
                cmds.push(c);
            }
        }
        cmds
    }
}

/// `rustc -vV`'s `host:` line and `rustc --print sysroot`, from the toolchain cargo runs
/// xtask with (rustup's proxy picks it from `rust-toolchain.toml`).
fn active_rustc() -> Result<(PathBuf, String)> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = |args: &[&str]| -> Result<String> {
        let o = Command::new(&rustc)
            .args(args)
            .output()
            .io(|| format!("could not run rustc {}", args.join(" ")))?;
        if !o.status.success() {
            return Err(fail!(
                "rustc {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let sysroot = PathBuf::from(out(&["--print", "sysroot"])?);
    let host = out(&["-vV"])?
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| fail!("rustc -vV printed no host line"))?;
    Ok((sysroot, host))
}

/// Makes sure the toolchain has every target and component `rust-toolchain.toml` lists,
/// adding what is missing with rustup (and saying so first).
pub fn ensure_toolchain(root: &Path) -> Result<()> {
    let file = root.join("rust-toolchain.toml");
    let text = std::fs::read_to_string(&file).io(|| format!("reading {}", file.display()))?;
    let pinned = PinnedToolchain::parse(&text).map_err(|e| fail!("{}: {e}", file.display()))?;
    let (sysroot, host) = active_rustc()?;
    let missing = pinned.missing(&sysroot, &host);
    if missing.is_empty() {
        return Ok(());
    }
    let what: Vec<&str> = missing
        .components
        .iter()
        .chain(&missing.targets)
        .map(String::as_str)
        .collect();
    if find_in_path("rustup").is_none() {
        return Err(fail!(
            "the Rust toolchain at {} lacks {} (listed in rust-toolchain.toml) and rustup is \
             not on PATH to add them; install Rust with rustup (https://rustup.rs) or add them \
             to this toolchain yourself",
            sysroot.display(),
            what.join(", ")
        ));
    }
    eprintln!(
        "xtask: toolchain {} lacks {} (rust-toolchain.toml lists them); adding them with rustup \
         (about 520 MB on disk)",
        pinned.channel,
        what.join(", ")
    );
    for args in missing.rustup_commands(&pinned.channel) {
        eprintln!("xtask: running rustup {}", args.join(" "));
        let status = Command::new("rustup")
            .args(&args)
            .current_dir(root)
            .status()
            .io(|| "could not run rustup".into())?;
        if !status.success() {
            return Err(fail!(
                "`rustup {}` failed ({status}); run it yourself, or `rustup toolchain install` \
                 in {}",
                args.join(" "),
                root.display()
            ));
        }
    }
    let still = pinned.missing(&sysroot, &host);
    if !still.is_empty() {
        return Err(fail!(
            "rustup finished, but {} still lacks {:?} {:?}",
            sysroot.display(),
            still.components,
            still.targets
        ));
    }
    Ok(())
}

/// How to get missing packages onto this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallPlan {
    /// Debian or Ubuntu: xtask runs apt-get itself.
    Apt,
    /// Elsewhere: tell the user this command.
    Manual(String),
}

/// Picks the install plan from the text of `/etc/os-release` (None if missing), whether
/// `apt-get` exists, and whether this is macOS.
pub fn install_plan(os_release: Option<&str>, has_apt: bool, macos: bool) -> InstallPlan {
    if macos {
        return InstallPlan::Manual("brew install qemu".into());
    }
    let mut ids = Vec::new();
    for line in os_release.unwrap_or("").lines() {
        if let Some(v) = line
            .strip_prefix("ID=")
            .or_else(|| line.strip_prefix("ID_LIKE="))
        {
            ids.extend(
                v.trim_matches('"')
                    .split_whitespace()
                    .map(str::to_ascii_lowercase),
            );
        }
    }
    let is = |name: &str| ids.iter().any(|i| i == name);
    if is("debian") || is("ubuntu") {
        return InstallPlan::Apt;
    }
    let cmd = if is("fedora") || is("rhel") || is("centos") {
        "sudo dnf install -y qemu-system-aarch64 qemu-system-arm qemu-user"
    } else if is("arch") {
        "sudo pacman -S --needed qemu-system-aarch64 qemu-system-arm qemu-user"
    } else if is("opensuse") || is("suse") || is("opensuse-tumbleweed") {
        "sudo zypper install -y qemu-arm qemu-linux-user"
    } else if is("alpine") {
        "sudo apk add qemu-system-aarch64 qemu-system-arm qemu-arm"
    } else if has_apt {
        return InstallPlan::Apt;
    } else {
        "your package manager's QEMU packages for AArch64 and ARM (QEMU 7.2 or newer: \
         system and user-mode emulators), so that qemu-system-aarch64, qemu-system-arm and \
         qemu-arm are on PATH"
    };
    InstallPlan::Manual(cmd.into())
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // /proc/self/status has "Uid:\t<real>\t<effective>...".
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(uids) = status.lines().find_map(|l| l.strip_prefix("Uid:")) {
            return uids.split_whitespace().nth(1) == Some("0");
        }
    }
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Runs `args` as root (through sudo when not root), showing the command first; apt's own
/// progress goes straight to the terminal.
pub fn run_as_root(args: &[&str], what: &str) -> Result<()> {
    let sudo = !is_root();
    if sudo && find_in_path("sudo").is_none() {
        return Err(fail!(
            "{what} needs root, and sudo is missing; as root run:\n    {}",
            args.join(" ")
        ));
    }
    let (program, rest): (&str, &[&str]) = if sudo {
        ("sudo", args)
    } else {
        (args[0], &args[1..])
    };
    let shown = if sudo {
        format!("sudo {}", args.join(" "))
    } else {
        args.join(" ")
    };
    eprintln!("xtask: running {shown}");
    let status = Command::new(program)
        .args(rest)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .io(|| format!("could not run `{shown}`"))?;
    if status.success() {
        Ok(())
    } else {
        Err(fail!("`{shown}` failed ({status}) while {what}"))
    }
}

/// Runs `apt-get update` as root. A failure is reported, not returned: apt fails the whole
/// update when one index is momentarily inconsistent on a mirror ("File has unexpected
/// size ... Mirror sync in progress?") although every other list was refreshed, so the step
/// that needs the lists (install, download) runs anyway and decides.
pub fn apt_update(what: &str) {
    if let Err(e) = run_as_root(&["apt-get", "update"], what) {
        eprintln!(
            "xtask: warning: {e}; going on with the package lists as they are (the next \
             apt step fails clearly if they do not have what it needs)"
        );
    }
}

/// The `apt-get install` arguments for `packages`.
pub fn apt_install_args(packages: &[DebPackage]) -> Vec<&'static str> {
    let mut args = vec!["apt-get", "install", "-y", "--no-install-recommends"];
    args.extend(packages.iter().map(|p| p.name));
    args
}

/// Installs those of `packages` whose program is not on `PATH` (Debian/Ubuntu: apt-get;
/// elsewhere: an error naming the command to run).
pub fn ensure_packages(packages: &[DebPackage]) -> Result<()> {
    let missing: Vec<DebPackage> = packages
        .iter()
        .filter(|p| !is_installed(p))
        .copied()
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let programs: Vec<&str> = missing.iter().map(|p| p.program).collect();
    let os_release = std::fs::read_to_string("/etc/os-release").ok();
    let plan = install_plan(
        os_release.as_deref(),
        find_in_path("apt-get").is_some(),
        cfg!(target_os = "macos"),
    );
    match plan {
        InstallPlan::Manual(cmd) => Err(fail!(
            "{} not found on PATH; install with:\n    {cmd}\nthen run this command again",
            programs.join(", ")
        )),
        InstallPlan::Apt => {
            for p in &missing {
                eprintln!(
                    "xtask: {} not found; installing Debian package {} ({})",
                    p.program, p.name, p.purpose
                );
            }
            let install = apt_install_args(&missing);
            let hint = |e: crate::error::Error| {
                fail!(
                    "{e}\ninstall them yourself with `sudo apt-get update && sudo {}` and run \
                     again",
                    install.join(" ")
                )
            };
            apt_update("reading the package lists");
            run_as_root(&install, "installing QEMU").map_err(hint)?;
            let still: Vec<&str> = missing
                .iter()
                .filter(|p| !is_installed(p))
                .map(|p| p.program)
                .collect();
            if still.is_empty() {
                Ok(())
            } else {
                Err(fail!(
                    "apt-get installed {} but {} is still not on PATH",
                    missing.iter().map(|p| p.name).collect::<Vec<_>>().join(" "),
                    still.join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12\"\nID=debian\n";
        assert_eq!(install_plan(Some(debian), true, false), InstallPlan::Apt);
        let mint = "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n";
        assert_eq!(install_plan(Some(mint), true, false), InstallPlan::Apt);
        let fedora = "ID=fedora\n";
        assert!(matches!(
            install_plan(Some(fedora), false, false),
            InstallPlan::Manual(c) if c.contains("dnf")
        ));
        assert!(matches!(
            install_plan(None, false, true),
            InstallPlan::Manual(c) if c.contains("brew")
        ));
        assert!(matches!(
            install_plan(None, false, false),
            InstallPlan::Manual(c) if c.contains("qemu-arm")
        ));
        assert_eq!(install_plan(None, true, false), InstallPlan::Apt);
    }

    #[test]
    fn apt_never_pulls_recommends() {
        assert_eq!(
            apt_install_args(TEST_PACKAGES),
            [
                "apt-get",
                "install",
                "-y",
                "--no-install-recommends",
                "qemu-system-arm",
                "qemu-user",
                "qemu-efi-aarch64"
            ]
        );
    }

    #[test]
    fn the_repositorys_toolchain_file_parses() {
        let text = include_str!("../../rust-toolchain.toml");
        let t = PinnedToolchain::parse(text).unwrap();
        assert!(!t.channel.is_empty());
        assert!(t.components.iter().any(|c| c == "llvm-tools"));
        assert!(t
            .targets
            .iter()
            .any(|c| c == "aarch64-unknown-none-softfloat"));
    }

    #[test]
    fn missing_parts_are_found_in_the_sysroot() {
        let root = std::env::temp_dir().join(format!("xtask-sysroot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let host = "x86_64-unknown-linux-gnu";
        let pinned = PinnedToolchain {
            channel: "1.95.0".into(),
            targets: vec!["aarch64-unknown-none".into(), "armv7a-none-eabi".into()],
            components: vec![
                "rust-src".into(),
                "llvm-tools".into(),
                "clippy".into(),
                "rustfmt".into(),
            ],
        };
        std::fs::create_dir_all(root.join("lib/rustlib/aarch64-unknown-none/lib")).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/rustfmt"), b"").unwrap();
        let m = pinned.missing(&root, host);
        assert_eq!(m.targets, ["armv7a-none-eabi"]);
        assert_eq!(m.components, ["rust-src", "llvm-tools", "clippy"]);
        assert_eq!(
            m.rustup_commands("1.95.0"),
            [
                vec![
                    "component",
                    "add",
                    "--toolchain",
                    "1.95.0",
                    "rust-src",
                    "llvm-tools",
                    "clippy"
                ],
                vec!["target", "add", "--toolchain", "1.95.0", "armv7a-none-eabi"],
            ]
        );
        std::fs::create_dir_all(root.join("lib/rustlib/src/rust/library")).unwrap();
        std::fs::create_dir_all(root.join("lib/rustlib/armv7a-none-eabi/lib")).unwrap();
        std::fs::create_dir_all(root.join(format!("lib/rustlib/{host}/bin"))).unwrap();
        std::fs::write(
            root.join(format!("lib/rustlib/{host}/bin/llvm-objcopy")),
            b"",
        )
        .unwrap();
        std::fs::write(root.join("bin/cargo-clippy"), b"").unwrap();
        assert!(pinned.missing(&root, host).is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }
}
