//! The ARMv7-A (armhf) Linux guest's assets: Debian bookworm's `linux-image-*-armmp-lpae`
//! kernel (a zImage; LPAE, so it runs with the hypervisor's 40-bit IPA space and its RAM at
//! 1 GiB) and an initramfs built from `busybox-static:armhf`, fetched with
//! `apt-get download` and cached under `target/linux-armv7/`, like the arm64 guest's
//! ([`super`]): the same `/init` script, the same virtio modules from the same package.
//!
//! ```text
//! target/linux-armv7/debs/     linux-image-6.1.0-N-armmp-lpae_*_armhf.deb, busybox-static_*_armhf.deb
//! target/linux-armv7/kernel/   the kernel package, unpacked
//! target/linux-armv7/busybox/  the busybox package, unpacked
//! target/linux-armv7/zImage    /boot/vmlinuz-* of the kernel package
//! target/linux-armv7/initramfs.cpio.gz
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{output, unpack, write_if_changed, LinuxAssets};
use crate::build::{is_zimage, Workspace};
use crate::error::{IoContext, Result};
use crate::{fail, setup};

/// Debian's name of the architecture.
pub const DEBIAN_ARCH: &str = "armhf";
/// Debian metapackage whose dependency names the current LPAE kernel package.
pub const KERNEL_METAPACKAGE: &str = "linux-image-armmp-lpae";
/// Suffix of the kernel package's name (`linux-image-6.1.0-50-armmp-lpae`).
const KERNEL_FLAVOUR: &str = "-armmp-lpae";

/// `target/linux-armv7/`.
pub fn cache_dir(ws: &Workspace) -> PathBuf {
    ws.target.join("linux-armv7")
}

/// Makes sure the armhf Linux assets exist (downloading the packages only when they are not
/// cached) and (re)builds the initramfs.
pub fn ensure_assets(ws: &Workspace) -> Result<LinuxAssets> {
    static BUILT: std::sync::OnceLock<LinuxAssets> = std::sync::OnceLock::new();
    if let Some(a) = BUILT.get() {
        return Ok(a.clone());
    }
    let assets = build_assets(ws)?;
    Ok(BUILT.get_or_init(|| assets).clone())
}

fn build_assets(ws: &Workspace) -> Result<LinuxAssets> {
    let dir = cache_dir(ws);
    let debs = dir.join("debs");
    fs::create_dir_all(&debs).io(|| format!("creating {}", debs.display()))?;
    let (kernel_deb, busybox_deb) = match find_debs(&debs)? {
        (Some(k), Some(b)) => (k, b),
        _ => {
            download_debs(&debs)?;
            match find_debs(&debs)? {
                (Some(k), Some(b)) => (k, b),
                _ => return Err(missing_debs(&debs, "apt-get download finished, but")),
            }
        }
    };
    let kernel_tree = unpack(&kernel_deb, &dir.join("kernel"))?;
    let busybox_tree = unpack(&busybox_deb, &dir.join("busybox"))?;
    let (vmlinuz, release) = super::find_vmlinuz(&kernel_tree)?;
    let zimage_bytes = fs::read(&vmlinuz).io(|| format!("reading {}", vmlinuz.display()))?;
    if !is_zimage(&zimage_bytes) {
        return Err(fail!(
            "{} is not an ARM zImage (no 0x016F2818 magic at 0x24); xtask expects Debian's \
             {KERNEL_METAPACKAGE} kernel",
            vmlinuz.display()
        ));
    }
    let image = dir.join("zImage");
    write_if_changed(&image, &zimage_bytes)?;
    super::pack_initramfs(
        &dir,
        "armhf Linux",
        super::Unpacked {
            image,
            release,
            kernel_tree,
            busybox_tree,
            kernel_deb,
            busybox_deb,
        },
    )
}

/// `linux-image-6.1.0-50-armmp-lpae_6.1.176-1_armhf.deb`
pub fn is_kernel_deb(name: &str) -> bool {
    name.starts_with("linux-image-")
        && name.ends_with("_armhf.deb")
        && name
            .split('_')
            .next()
            .is_some_and(|p| p.ends_with(KERNEL_FLAVOUR))
}

/// Finds the cached kernel and busybox packages in `debs`.
fn find_debs(debs: &Path) -> Result<(Option<PathBuf>, Option<PathBuf>)> {
    let mut names: Vec<String> = fs::read_dir(debs)
        .io(|| format!("reading {}", debs.display()))?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let kernel = names.iter().rev().find(|n| is_kernel_deb(n));
    let busybox = names
        .iter()
        .rev()
        .find(|n| n.starts_with("busybox-static_") && n.ends_with("_armhf.deb"));
    Ok((kernel.map(|n| debs.join(n)), busybox.map(|n| debs.join(n))))
}

/// The exact commands that fetch the packages by hand.
fn commands() -> String {
    format!(
        "dpkg --add-architecture {DEBIAN_ARCH} && apt-get update   (as root)\n    \
         apt-get download $(apt-cache depends {KERNEL_METAPACKAGE}:{DEBIAN_ARCH} | sed -n \
         's/.*Depends: \\(linux-image-[^:]*\\).*/\\1:{DEBIAN_ARCH}/p') busybox-static:{DEBIAN_ARCH}"
    )
}

fn missing_debs(debs: &Path, why: &str) -> crate::error::Error {
    fail!(
        "{why} the armhf Linux guest needs two Debian bookworm armhf packages in {dir}:\n  \
         linux-image-6.1.0-*{KERNEL_FLAVOUR}_*_armhf.deb  (the LPAE kernel, a zImage)\n  \
         busybox-static_*_armhf.deb\n\
         on any Debian bookworm machine run\n    {cmds}\n\
         and copy the two .deb files there",
        dir = debs.display(),
        cmds = commands()
    )
}

/// The kernel package the metapackage depends on, from `apt-cache depends` output.
pub fn kernel_package_from_depends(apt_cache_depends: &str) -> Option<String> {
    apt_cache_depends.lines().find_map(|l| {
        let dep = l.trim().strip_prefix("Depends:")?.trim();
        let dep = dep.split(':').next()?.trim();
        (dep.starts_with("linux-image-") && dep.ends_with(KERNEL_FLAVOUR)).then(|| dep.to_string())
    })
}

fn run_as_root(args: &[&str], what_for: &str) -> Result<()> {
    setup::run_as_root(args, what_for).map_err(|e| {
        fail!(
            "{e}; as root run:\n    {}\nthen run this command again",
            commands()
        )
    })
}

/// Fetches the two packages with apt-get into `debs`, adding the armhf architecture and
/// updating the package lists first when needed.
fn download_debs(debs: &Path) -> Result<()> {
    for tool in ["apt-get", "apt-cache", "dpkg"] {
        if setup::find_in_path(tool).is_none() {
            return Err(missing_debs(
                debs,
                &format!("`{tool}` is not installed (not a Debian-family host), so"),
            ));
        }
    }
    eprintln!(
        "xtask: armhf Linux guest packages not cached in {}; fetching them",
        debs.display()
    );
    let foreign = output("dpkg", &["--print-foreign-architectures"], None).unwrap_or_default();
    let mut updated = false;
    if !foreign.split_whitespace().any(|a| a == DEBIAN_ARCH) {
        run_as_root(
            &["dpkg", "--add-architecture", DEBIAN_ARCH],
            "enabling armhf packages",
        )?;
        setup::apt_update("reading the armhf package lists");
        updated = true;
    }
    let depends = format!("{KERNEL_METAPACKAGE}:{DEBIAN_ARCH}");
    let lookup = || {
        output("apt-cache", &["depends", &depends], None)
            .ok()
            .and_then(|o| kernel_package_from_depends(&o))
    };
    let mut kernel = lookup();
    if kernel.is_none() && !updated {
        setup::apt_update("reading the armhf package lists");
        kernel = lookup();
    }
    let Some(kernel) = kernel else {
        return Err(missing_debs(
            debs,
            &format!("apt knows no {depends} package (is this Debian bookworm?), so"),
        ));
    };
    let kernel_arg = format!("{kernel}:{DEBIAN_ARCH}");
    let busybox_arg = format!("busybox-static:{DEBIAN_ARCH}");
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
        return Err(missing_debs(
            debs,
            &format!("`apt-get download {kernel_arg} {busybox_arg}` failed ({status}), so"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert!(is_kernel_deb(
            "linux-image-6.1.0-50-armmp-lpae_6.1.176-1_armhf.deb"
        ));
        assert!(!is_kernel_deb(
            "linux-image-6.1.0-50-armmp_6.1.176-1_armhf.deb"
        ));
        assert!(!is_kernel_deb(
            "linux-image-6.1.0-50-arm64-unsigned_6.1.176-1_arm64.deb"
        ));
        assert_eq!(
            kernel_package_from_depends(
                "linux-image-armmp-lpae:armhf\n  Depends: linux-image-6.1.0-50-armmp-lpae:armhf\n"
            ),
            Some("linux-image-6.1.0-50-armmp-lpae".into())
        );
        assert!(commands().contains("dpkg --add-architecture armhf"));
    }
}
