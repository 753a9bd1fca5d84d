//! The VM package: one flat blob that describes every VM the hypervisor should start and
//! carries their kernel images, initrds, command lines and RAM-disk images.
//!
//! A boot loader hands the package to the hypervisor the way it hands an initrd to Linux
//! (QEMU `-initrd`, U-Boot `booti`'s second argument, GRUB `initrd`); the hypervisor finds it
//! through `/chosen/linux,initrd-start` in the host device tree. The reader is zero-copy and
//! validates every offset and length, so a truncated or corrupt package is an error, never a
//! panic or an out-of-bounds read.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header   : magic "HVPKG\0\0\x01" (8) | total_len u64 | vm_count u32 | flags u32
//! vm[i]    : name (off u32, len u32) | mem_bytes u64 | vcpus u32 | vm_flags u32
//!            | kernel (off u64, len u64) | initrd (off u64, len u64)
//!            | cmdline (off u32, len u32)              -- 64 bytes per VM
//! vm_ext[i] : mac [6] | ext_flags u8 | reserved [9]      -- 16 bytes per VM, only when
//!            the header's flags have PKG_FLAG_VM_EXT
//! vm_disk[i]: disk (off u64, len u64)                    -- 16 bytes per VM, only when
//!            the header's flags have PKG_FLAG_VM_DISK (after vm_ext when both are set);
//!            len 0: no disk image for that VM
//! payload  : the bytes the offsets point at (offsets are from the package start)
//! ```
//!
//! Compatibility: the optional tables sit between the descriptors and the payload and every
//! offset is absolute, so a reader that predates them (and ignores the header flags, which
//! were reserved, or knows only `PKG_FLAG_VM_EXT`, whose table stays right after the
//! descriptors) still reads such a package; a package without the flags is exactly the
//! original format, and this reader gives its VMs no extension values (`mac: None`,
//! `disk: None`). The builder writes each table only when some VM needs it.
#![cfg_attr(not(test), no_std)]

#[cfg(any(test, feature = "alloc"))]
extern crate alloc;

mod reader;
#[cfg(any(test, feature = "alloc"))]
mod writer;

pub use reader::{Package, PackageError, VmEntries, VmSpec};
#[cfg(any(test, feature = "alloc"))]
pub use writer::{PackageBuilder, VmImage};

/// Magic bytes at the start of every package.
pub const MAGIC: [u8; 8] = *b"HVPKG\0\0\x01";
/// Size of the fixed package header.
pub const HEADER_LEN: usize = 24;
/// Size of one VM descriptor.
pub const VM_DESC_LEN: usize = 64;
/// Size of one VM extension record (see [`PKG_FLAG_VM_EXT`]).
pub const VM_EXT_LEN: usize = 16;
/// Largest number of VMs one package may describe.
pub const MAX_VMS: u32 = 64;

/// `vm_flags` bit: when this VM powers off, the whole system powers off even if other VMs
/// still run.
pub const VM_FLAG_SYSTEM_OFF_ENDS_ALL: u32 = 1 << 0;

/// `vm_flags` bit: when the VM calls PSCI `SYSTEM_RESET`, reload and restart it (like a
/// reboot on hardware) instead of ending it with a failure status.
pub const VM_FLAG_RESTART_ON_RESET: u32 = 1 << 1;

/// `vm_flags` bit: the kernel is ARMv7-A (AArch32): a zImage or raw A32 binary, booted with
/// the ARM boot protocol; it runs in hardware at AArch32 EL1 where the CPU allows it, else
/// under the dynamic binary translator.
pub const VM_FLAG_ARCH_ARMV7: u32 = 1 << 2;

/// `vm_flags` bit (with [`VM_FLAG_ARCH_ARMV7`]): run the kernel under the dynamic binary
/// translator even where the CPU could run it in hardware.
pub const VM_FLAG_DBT_FORCE: u32 = 1 << 3;

/// Package `flags` bit: a table of `vm_count` [`VM_EXT_LEN`]-byte extension records follows the
/// VM descriptors.
pub const PKG_FLAG_VM_EXT: u32 = 1 << 0;

/// Package `flags` bit: a table of `vm_count` [`VM_DISK_LEN`]-byte disk records (offset and
/// length of each VM's RAM-disk image) follows the descriptors (and the extension table).
pub const PKG_FLAG_VM_DISK: u32 = 1 << 1;

/// Size of one VM disk record (see [`PKG_FLAG_VM_DISK`]).
pub const VM_DISK_LEN: usize = 16;

/// Largest RAM-disk image one VM may carry (the hypervisor copies it into its own memory).
pub const MAX_DISK_IMAGE: u64 = 64 << 20;

/// `ext_flags` bit of an extension record: its `mac` is set (the VM's virtio-net address).
pub const VM_EXT_HAS_MAC: u8 = 1 << 0;

/// Whether `mac` can be a network device's own address: not a group (multicast or
/// broadcast) address, and not all zero. Locally administered addresses are fine.
pub fn valid_unicast_mac(mac: &[u8; 6]) -> bool {
    mac[0] & 1 == 0 && *mac != [0; 6]
}
