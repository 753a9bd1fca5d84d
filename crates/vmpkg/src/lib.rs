//! The VM package: one flat blob that describes every VM the hypervisor should start and
//! carries their kernel images, initrds and command lines.
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
//! payload  : the bytes the offsets point at (offsets are from the package start)
//! ```
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
/// Largest number of VMs one package may describe.
pub const MAX_VMS: u32 = 64;

/// `vm_flags` bit: when this VM powers off, the whole system powers off even if other VMs
/// still run.
pub const VM_FLAG_SYSTEM_OFF_ENDS_ALL: u32 = 1 << 0;

/// `vm_flags` bit: when the VM calls PSCI `SYSTEM_RESET`, reload and restart it (like a
/// reboot on hardware) instead of ending it with a failure status.
pub const VM_FLAG_RESTART_ON_RESET: u32 = 1 << 1;
