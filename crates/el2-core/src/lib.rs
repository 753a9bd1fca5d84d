//! EL2 core of the hypervisor: vCPU register state, the world switch (one trait, a VHE and a
//! non-VHE backend), exit decoding from `ESR_EL2`, SMCCC/PSCI dispatch and the MMIO bus.
//!
//! The pure parts (decoders, dispatch, bus, control-register values) are plain Rust and run
//! in host `cargo test`; the hardware layer (`switch` backends, entry assembly, system
//! register access) only builds for AArch64.
#![cfg_attr(not(test), no_std)]

extern crate alloc;

pub mod exit;
pub mod inject;
pub mod mmio;
pub mod mmio_decode;
pub mod psci;
pub mod s1walk;
pub mod smccc;
pub mod switch;
pub mod vcpu;
