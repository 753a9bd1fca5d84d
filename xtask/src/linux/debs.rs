//! The two Debian bookworm packages a Linux guest boots from (a kernel and
//! `busybox-static`), found in a cache directory or fetched there with `apt-get download`:
//! one implementation for the arm64 guest ([`super::ARM64`]) and the armhf one
//! ([`super::armv7::ARMHF`]); a [`Flavour`] says what differs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::output;
use crate::error::{IoContext, Result};
use crate::{fail, setup};

/// What differs between the Debian packages of two Linux guests.
#[derive(Debug)]
pub struct Flavour {
    /// Debian's architecture name (`arm64`, `armhf`).
    pub arch: &'static str,
    /// How messages name the guest (`Linux guest`, `armhf Linux guest`).
    pub guest: &'static str,
    /// The metapackage whose dependency names the current kernel package.
    pub metapackage: &'static str,
    /// How the metapackage's dependency ends (`-arm64`, `-armmp-lpae`).
    pub depends_suffix: &'static str,
    /// What the kernel package adds to that dependency's name (`-unsigned`: the unsigned
    /// flavour of the same kernel; empty: the dependency itself).
    pub package_suffix: &'static str,
    /// What the kernel is, for messages.
    pub kernel_is: &'static str,
}

/// Debian package with the statically linked busybox.
pub const BUSYBOX_PACKAGE: &str = "busybox-static";

impl Flavour {
    /// How the kernel package's name ends (`-arm64-unsigned`, `-armmp-lpae`).
    fn kernel_suffix(&self) -> String {
        format!("{}{}", self.depends_suffix, self.package_suffix)
    }

    /// Whether `name` is the kernel package's file:
    /// `linux-image-6.1.0-56-arm64-unsigned_6.1.192-2_arm64.deb`.
    pub fn is_kernel_deb(&self, name: &str) -> bool {
        name.starts_with("linux-image-")
            && name.ends_with(&format!("_{}.deb", self.arch))
            && name
                .split('_')
                .next()
                .is_some_and(|p| p.ends_with(&self.kernel_suffix()))
    }

    /// The kernel package the metapackage depends on, from `apt-cache depends` output.
    pub fn kernel_package_from_depends(&self, apt_cache_depends: &str) -> Option<String> {
        apt_cache_depends.lines().find_map(|l| {
            let dep = l.trim().strip_prefix("Depends:")?.trim();
            let dep = dep.split(':').next()?.trim();
            (dep.starts_with("linux-image-") && dep.ends_with(self.depends_suffix))
                .then(|| format!("{dep}{}", self.package_suffix))
        })
    }

    /// The exact commands that fetch the packages by hand.
    pub fn commands(&self) -> String {
        let arch = self.arch;
        format!(
            "dpkg --add-architecture {arch} && apt-get update   (as root)\n    \
             apt-get download $(apt-cache depends {meta}:{arch} | sed -n \
             's/.*Depends: \\(linux-image-[^:]*\\).*/\\1{suffix}:{arch}/p') {BUSYBOX_PACKAGE}:{arch}",
            meta = self.metapackage,
            suffix = self.package_suffix,
        )
    }

    /// The error that says which packages are missing in `debs`, why (`why`), and how to
    /// get them.
    pub fn missing(&self, debs: &Path, why: &str) -> crate::error::Error {
        fail!(
            "{why} the {guest} needs two Debian bookworm {arch} packages in {dir}:\n  \
             linux-image-6.1.0-*{suffix}_*_{arch}.deb  ({kernel})\n  \
             {BUSYBOX_PACKAGE}_*_{arch}.deb\n\
             xtask fetches them with apt-get on a Debian bookworm host; elsewhere, on any \
             Debian bookworm machine run\n    {cmds}\n\
             and copy the two .deb files there (or boot your own kernel with --kernel PATH \
             --initrd PATH)",
            guest = self.guest,
            arch = self.arch,
            dir = debs.display(),
            suffix = self.kernel_suffix(),
            kernel = self.kernel_is,
            cmds = self.commands(),
        )
    }

    /// The cached kernel and busybox packages in `debs` (the newest of each by name).
    fn find(&self, debs: &Path) -> Result<(Option<PathBuf>, Option<PathBuf>)> {
        let mut names: Vec<String> = fs::read_dir(debs)
            .io(|| format!("reading {}", debs.display()))?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        let busybox_prefix = format!("{BUSYBOX_PACKAGE}_");
        let busybox_end = format!("_{}.deb", self.arch);
        let kernel = names.iter().rev().find(|n| self.is_kernel_deb(n));
        let busybox = names
            .iter()
            .rev()
            .find(|n| n.starts_with(&busybox_prefix) && n.ends_with(&busybox_end));
        Ok((kernel.map(|n| debs.join(n)), busybox.map(|n| debs.join(n))))
    }

    /// The kernel and busybox packages in `debs`, fetched there first when not cached.
    pub fn ensure(&self, debs: &Path) -> Result<(PathBuf, PathBuf)> {
        fs::create_dir_all(debs).io(|| format!("creating {}", debs.display()))?;
        if let (Some(k), Some(b)) = self.find(debs)? {
            return Ok((k, b));
        }
        self.download(debs)?;
        match self.find(debs)? {
            (Some(k), Some(b)) => Ok((k, b)),
            _ => Err(self.missing(debs, "apt-get download finished, but")),
        }
    }

    /// Runs a command that needs root (through sudo when not root); on failure says how to
    /// prepare apt by hand.
    fn run_as_root(&self, args: &[&str], what_for: &str) -> Result<()> {
        setup::run_as_root(args, what_for).map_err(|e| {
            fail!(
                "{e}; as root run:\n    {}\nthen run this command again",
                self.commands()
            )
        })
    }

    /// Fetches the two packages with apt-get into `debs`, adding the architecture (unless
    /// it is the host's) and updating the package lists first when needed.
    fn download(&self, debs: &Path) -> Result<()> {
        let arch = self.arch;
        for tool in ["apt-get", "apt-cache", "dpkg"] {
            if setup::find_in_path(tool).is_none() {
                return Err(self.missing(
                    debs,
                    &format!("`{tool}` is not installed (not a Debian-family host), so"),
                ));
            }
        }
        eprintln!(
            "xtask: {} packages not cached in {}; fetching them",
            self.guest,
            debs.display()
        );
        let native = output("dpkg", &["--print-architecture"], None).unwrap_or_default();
        let foreign = output("dpkg", &["--print-foreign-architectures"], None).unwrap_or_default();
        let lists = format!("reading the {arch} package lists");
        let mut updated = false;
        if native.trim() != arch && !foreign.split_whitespace().any(|a| a == arch) {
            self.run_as_root(
                &["dpkg", "--add-architecture", arch],
                &format!("enabling {arch} packages"),
            )?;
            setup::apt_update(&lists);
            updated = true;
        }
        let depends = format!("{}:{arch}", self.metapackage);
        let lookup = || {
            output("apt-cache", &["depends", &depends], None)
                .ok()
                .and_then(|o| self.kernel_package_from_depends(&o))
        };
        let mut kernel = lookup();
        if kernel.is_none() && !updated {
            setup::apt_update(&lists);
            kernel = lookup();
        }
        let Some(kernel) = kernel else {
            return Err(self.missing(
                debs,
                &format!("apt knows no {depends} package (is this Debian bookworm?), so"),
            ));
        };
        let kernel_arg = format!("{kernel}:{arch}");
        let busybox_arg = format!("{BUSYBOX_PACKAGE}:{arch}");
        eprintln!(
            "xtask: running apt-get download {kernel_arg} {busybox_arg} (in {})",
            debs.display()
        );
        let status = Command::new("apt-get")
            .args(["download", &kernel_arg, &busybox_arg])
            .current_dir(debs)
            .status()
            .io(|| "could not run apt-get".into())?;
        if !status.success() {
            return Err(self.missing(
                debs,
                &format!("`apt-get download {kernel_arg} {busybox_arg}` failed ({status}), so"),
            ));
        }
        Ok(())
    }
}
