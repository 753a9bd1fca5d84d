//! The bootable hypervisor. The host-testable parts (boot arguments, platform discovery
//! from the device tree, guest loading, ID-register policy, device models, guest
//! device-tree generation, the exit handlers and their counters) are plain modules; `arch`
//! holds the AArch64-only boot, MMU, console, scheduler and run-loop code, and implements
//! what the exit handlers need from the hardware. The binary `main.rs` only links this
//! library.
#![cfg_attr(not(test), no_std)]

extern crate alloc;

pub mod balance;
pub mod bootargs;
pub mod dbt_runtime;
pub mod devices;
pub mod errata;
pub mod exits;
pub mod firmware;
pub mod guest_arch;
pub mod guest_fdt;
pub mod idregs;
pub mod last_ran;
pub mod layout;
pub mod loader;
pub mod lock;
pub mod memmap;
pub mod platform;
pub mod stats;

#[cfg(target_arch = "aarch64")]
pub mod arch;
