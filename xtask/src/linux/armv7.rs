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
use std::path::PathBuf;

use super::debs::Flavour;
use super::{unpack, write_if_changed, LinuxAssets};
use crate::build::{is_zimage, Workspace};
use crate::error::{IoContext, Result};
use crate::fail;

/// The armhf guest's Debian packages: the LPAE kernel the `linux-image-armmp-lpae`
/// metapackage depends on (a zImage) and `busybox-static:armhf`.
pub const ARMHF: Flavour = Flavour {
    arch: "armhf",
    guest: "armhf Linux guest",
    metapackage: "linux-image-armmp-lpae",
    depends_suffix: "-armmp-lpae",
    package_suffix: "",
    kernel_is: "the LPAE kernel, a zImage",
};

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
    let (kernel_deb, busybox_deb) = ARMHF.ensure(&dir.join("debs"))?;
    let kernel_tree = unpack(&kernel_deb, &dir.join("kernel"))?;
    let busybox_tree = unpack(&busybox_deb, &dir.join("busybox"))?;
    let (vmlinuz, release) = super::find_vmlinuz(&kernel_tree)?;
    let zimage_bytes = fs::read(&vmlinuz).io(|| format!("reading {}", vmlinuz.display()))?;
    if !is_zimage(&zimage_bytes) {
        return Err(fail!(
            "{} is not an ARM zImage (no 0x016F2818 magic at 0x24); xtask expects Debian's \
             {} kernel",
            vmlinuz.display(),
            ARMHF.metapackage
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert!(ARMHF.is_kernel_deb("linux-image-6.1.0-50-armmp-lpae_6.1.176-1_armhf.deb"));
        assert!(!ARMHF.is_kernel_deb("linux-image-6.1.0-50-armmp_6.1.176-1_armhf.deb"));
        assert!(!ARMHF.is_kernel_deb("linux-image-6.1.0-50-arm64-unsigned_6.1.176-1_arm64.deb"));
        assert_eq!(
            ARMHF.kernel_package_from_depends(
                "linux-image-armmp-lpae:armhf\n  Depends: linux-image-6.1.0-50-armmp-lpae:armhf\n"
            ),
            Some("linux-image-6.1.0-50-armmp-lpae".into())
        );
        assert!(ARMHF.commands().contains("dpkg --add-architecture armhf"));
    }
}
