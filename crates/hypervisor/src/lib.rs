//! The bootable hypervisor, as a library of its host-testable parts (device models, guest
//! device-tree generation, configuration) plus AArch64-only boot and run code. The binary
//! `main.rs` is only the entry point.
#![cfg_attr(not(test), no_std)]

extern crate alloc;

pub mod devices;
pub mod guest_fdt;
