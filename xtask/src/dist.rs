//! `cargo xtask dist`: what a server needs, in one directory (target/dist/ by default): the
//! hypervisor image (an EFI application and an arm64 Image at once), the VM package built
//! from a sample VM configuration, that configuration, and an EFI system partition tree to
//! copy onto a FAT partition. How to boot it from the EFI shell, GRUB or U-Boot is the
//! README's INSTALL section (also written as INSTALL.txt).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::uefi;

/// The sample VM configuration `dist` packages unless told otherwise.
pub const SAMPLE_CONFIG: &str = "configs/server-sample.toml";
/// The hypervisor's command line on a server: the backend by the CPU, PSCI to end a run.
pub const SERVER_CMDLINE: &str = "backend=auto";

/// The short install notes, as in the README's INSTALL section.
pub const INSTALL_TXT: &str = "\
Install the hypervisor on an arm64 server (UEFI firmware, EL2 entry):

  EFI system partition: copy esp/ onto a FAT partition (or the server's ESP), so that
  EFI/BOOT/BOOTAA64.EFI, hypervisor/vms.pkg and hypervisor/cmdline.txt are at its root.
  The firmware's removable-media boot starts it; or add a boot entry:
    efibootmgr -c -d /dev/sdX -p 1 -L hypervisor -l '\\EFI\\BOOT\\BOOTAA64.EFI'
  EFI shell:   FS0:   then   \\EFI\\BOOT\\BOOTAA64.EFI backend=auto
               (arguments are the command line; without any, hypervisor/cmdline.txt)
  GRUB:        menuentry 'hypervisor' { linux /hypervisor.efi backend=auto; initrd /vms.pkg }
               or chainloader /EFI/BOOT/BOOTAA64.EFI backend=auto
               (then the image reads hypervisor/vms.pkg from the volume it was loaded from)
  U-Boot:      load mmc 0:1 ${kernel_addr_r} hypervisor.efi
               load mmc 0:1 ${ramdisk_addr_r} vms.pkg
               booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdtcontroladdr}
               (bootargs: backend=auto)

The firmware must enter EFI applications / the Image at EL2; the hypervisor refuses to
start at EL1 and says so on the console.
";

/// Writes the distribution into `out`: `hypervisor.efi`, `vms.pkg`, `vms.toml` (a copy of
/// `config`), `esp/` and `INSTALL.txt`. Returns the files written.
pub fn write(out: &Path, hypervisor: &Path, package: &Path, config: &Path) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(out).io(|| format!("creating {}", out.display()))?;
    let copy = |from: &Path, name: &str| -> Result<PathBuf> {
        let to = out.join(name);
        fs::copy(from, &to).io(|| format!("copying {} to {}", from.display(), to.display()))?;
        Ok(to)
    };
    let mut files = vec![
        copy(hypervisor, "hypervisor.efi")?,
        copy(package, "vms.pkg")?,
        copy(config, "vms.toml")?,
    ];
    let esp = out.join("esp");
    uefi::write_esp(&esp, hypervisor, package, SERVER_CMDLINE)?;
    files.extend([
        esp.join(uefi::BOOT_FILE),
        esp.join(uefi::PACKAGE_FILE),
        esp.join(uefi::CMDLINE_FILE),
    ]);
    let install = out.join("INSTALL.txt");
    fs::write(&install, INSTALL_TXT).io(|| format!("writing {}", install.display()))?;
    files.push(install);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let dir = std::env::temp_dir().join(format!("xtask-dist-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (hv, pkg, cfg) = (dir.join("hv"), dir.join("pkg"), dir.join("c.toml"));
        fs::write(&hv, b"MZ...ARMd").unwrap();
        fs::write(&pkg, b"HVPKG").unwrap();
        fs::write(&cfg, b"[[vm]]").unwrap();
        let out = dir.join("dist");
        let files = write(&out, &hv, &pkg, &cfg).unwrap();
        assert_eq!(files.len(), 7);
        assert!(files.iter().all(|f| f.is_file()), "{files:?}");
        assert_eq!(
            fs::read(out.join("esp/EFI/BOOT/BOOTAA64.EFI")).unwrap(),
            b"MZ...ARMd"
        );
        assert_eq!(
            fs::read_to_string(out.join("esp/hypervisor/cmdline.txt")).unwrap(),
            "backend=auto\n"
        );
        assert!(fs::read_to_string(out.join("INSTALL.txt"))
            .unwrap()
            .contains("booti"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
