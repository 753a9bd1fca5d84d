//! The EFI system partition xtask hands to UEFI firmware (QEMU presents a directory as a
//! FAT drive) and `cargo xtask dist` writes: the hypervisor image as the removable-media
//! boot file, the VM package and the hypervisor's command line beside it, where its EFI
//! entry (`crates/hypervisor/src/arch/uefi/`) looks for them.

use std::fs;
use std::path::Path;

use crate::error::{IoContext, Result};

/// The firmware's default boot file on removable media for AArch64 (UEFI spec 3.5.1.1).
pub const BOOT_FILE: &str = "EFI/BOOT/BOOTAA64.EFI";
/// The VM package, read by the hypervisor's EFI entry from the volume it was loaded from.
pub const PACKAGE_FILE: &str = "hypervisor/vms.pkg";
/// The hypervisor's command line (one line of text), read from the same volume.
pub const CMDLINE_FILE: &str = "hypervisor/cmdline.txt";

/// Offset of `text_offset` in the arm64 Image header.
const TEXT_OFFSET_FIELD: usize = 8;

/// Writes `dir` as an EFI system partition: `image` as [`BOOT_FILE`], `package` as
/// [`PACKAGE_FILE`] and `cmdline` as [`CMDLINE_FILE`]. Replaces what was there.
pub fn write_esp(dir: &Path, image: &Path, package: &Path, cmdline: &str) -> Result<()> {
    let boot = dir.join(BOOT_FILE);
    let boot_dir = boot.parent().expect("BOOT_FILE has a directory");
    fs::create_dir_all(boot_dir).io(|| format!("creating {}", boot_dir.display()))?;
    fs::copy(image, &boot).io(|| format!("copying {} to {}", image.display(), boot.display()))?;
    let pkg = dir.join(PACKAGE_FILE);
    let pkg_dir = pkg.parent().expect("PACKAGE_FILE has a directory");
    fs::create_dir_all(pkg_dir).io(|| format!("creating {}", pkg_dir.display()))?;
    fs::copy(package, &pkg).io(|| format!("copying {} to {}", package.display(), pkg.display()))?;
    let cmd = dir.join(CMDLINE_FILE);
    fs::write(&cmd, format!("{cmdline}\n")).io(|| format!("writing {}", cmd.display()))?;
    Ok(())
}

/// The image's name in a shell-started ESP ([`write_shell_esp`]).
pub const SHELL_IMAGE: &str = "hypervisor.efi";
/// The script edk2's EFI shell runs at start (UEFI Shell spec 2.2, 3.5).
pub const STARTUP_SCRIPT: &str = "startup.nsh";

/// Writes `dir` as a volume the firmware does not boot by itself (no removable-media boot
/// file): the EFI shell starts instead and runs [`STARTUP_SCRIPT`], which starts
/// [`SHELL_IMAGE`] with `cmdline` as its arguments (the image's `LoadOptions`); the package
/// is [`PACKAGE_FILE`]. How a person at the EFI shell would start it.
pub fn write_shell_esp(dir: &Path, image: &Path, package: &Path, cmdline: &str) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).io(|| format!("clearing {}", dir.display()))?;
    }
    let pkg = dir.join(PACKAGE_FILE);
    let pkg_dir = pkg.parent().expect("PACKAGE_FILE has a directory");
    fs::create_dir_all(pkg_dir).io(|| format!("creating {}", pkg_dir.display()))?;
    fs::copy(package, &pkg).io(|| format!("copying {} to {}", package.display(), pkg.display()))?;
    let img = dir.join(SHELL_IMAGE);
    fs::copy(image, &img).io(|| format!("copying {} to {}", image.display(), img.display()))?;
    let script = dir.join(STARTUP_SCRIPT);
    fs::write(&script, format!("fs0:\r\n{SHELL_IMAGE} {cmdline}\r\n"))
        .io(|| format!("writing {}", script.display()))?;
    Ok(())
}

/// The GRUB configuration [`write_grub_esp`] embeds: GRUB's EFI `linux` loader starts the
/// image through its PE entry with the arguments as LoadOptions and hands the package over
/// as the initrd.
pub fn grub_cfg(cmdline: &str) -> String {
    format!(
        "set timeout=0\nsearch --no-floppy --file --set=root /{SHELL_IMAGE}\n\
         linux /{SHELL_IMAGE} {cmdline}\ninitrd /vms.pkg\nboot\n"
    )
}

/// Writes `dir` as an ESP whose boot file is a standalone GRUB (Debian's
/// `grub-efi-arm64-bin`, built with `grub-mkstandalone`) that boots [`SHELL_IMAGE`] with
/// `linux` + `initrd /vms.pkg` ([`grub_cfg`]), the way a server with GRUB would.
pub fn write_grub_esp(dir: &Path, image: &Path, package: &Path, cmdline: &str) -> Result<()> {
    crate::setup::ensure_packages(&[crate::setup::GRUB_EFI_ARM64])?;
    if dir.exists() {
        fs::remove_dir_all(dir).io(|| format!("clearing {}", dir.display()))?;
    }
    let boot = dir.join(BOOT_FILE);
    let boot_dir = boot.parent().expect("BOOT_FILE has a directory");
    fs::create_dir_all(boot_dir).io(|| format!("creating {}", boot_dir.display()))?;
    fs::copy(image, dir.join(SHELL_IMAGE)).io(|| format!("copying {}", image.display()))?;
    fs::copy(package, dir.join("vms.pkg")).io(|| format!("copying {}", package.display()))?;
    let cfg = dir.with_extension("grub.cfg");
    fs::write(&cfg, grub_cfg(cmdline)).io(|| format!("writing {}", cfg.display()))?;
    let mut embed = std::ffi::OsString::from("boot/grub/grub.cfg=");
    embed.push(&cfg);
    let status = std::process::Command::new("grub-mkstandalone")
        .args([
            "-O",
            "arm64-efi",
            "--modules=part_gpt part_msdos fat search linux",
            "-o",
        ])
        .arg(&boot)
        .arg(embed)
        .status()
        .io(|| "running grub-mkstandalone".into())?;
    if !status.success() {
        return Err(crate::fail!("grub-mkstandalone failed ({status})"));
    }
    Ok(())
}

/// A copy of the arm64 Image `image` whose header asks for `text_offset` (QEMU `-kernel`
/// loads an Image at RAM base + text_offset): how scenarios place the self-relocating
/// hypervisor away from its link address.
pub fn with_text_offset(image: &[u8], text_offset: u64) -> Vec<u8> {
    let mut out = image.to_vec();
    out[TEXT_OFFSET_FIELD..TEXT_OFFSET_FIELD + 8].copy_from_slice(&text_offset.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esp_layout() {
        let dir = std::env::temp_dir().join(format!("xtask-esp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let img = dir.join("hv.bin");
        let pkg = dir.join("p.bin");
        fs::write(&img, b"MZimage").unwrap();
        fs::write(&pkg, b"HVPKG").unwrap();
        let esp = dir.join("esp");
        write_esp(&esp, &img, &pkg, "backend=nvhe exit=semihosting").unwrap();
        assert_eq!(fs::read(esp.join(BOOT_FILE)).unwrap(), b"MZimage");
        assert_eq!(fs::read(esp.join(PACKAGE_FILE)).unwrap(), b"HVPKG");
        assert_eq!(
            fs::read_to_string(esp.join(CMDLINE_FILE)).unwrap(),
            "backend=nvhe exit=semihosting\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shell_esp_layout() {
        let dir = std::env::temp_dir().join(format!("xtask-shell-esp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (img, pkg) = (dir.join("hv.bin"), dir.join("p.bin"));
        fs::write(&img, b"MZimage").unwrap();
        fs::write(&pkg, b"HVPKG").unwrap();
        let esp = dir.join("esp");
        write_shell_esp(&esp, &img, &pkg, "backend=nvhe").unwrap();
        assert!(!esp.join(BOOT_FILE).exists());
        assert_eq!(fs::read(esp.join(SHELL_IMAGE)).unwrap(), b"MZimage");
        assert_eq!(
            fs::read_to_string(esp.join(STARTUP_SCRIPT)).unwrap(),
            "fs0:\r\nhypervisor.efi backend=nvhe\r\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn grub_boots_the_image_with_the_package_as_initrd() {
        assert_eq!(
            grub_cfg("backend=nvhe"),
            "set timeout=0\nsearch --no-floppy --file --set=root /hypervisor.efi\n\
             linux /hypervisor.efi backend=nvhe\ninitrd /vms.pkg\nboot\n"
        );
    }

    #[test]
    fn text_offset_is_rewritten() {
        let image = vec![0u8; 64];
        let out = with_text_offset(&image, 0x3c30_0000);
        assert_eq!(&out[8..16], &0x3c30_0000u64.to_le_bytes());
        assert_eq!(out.len(), 64);
    }
}
