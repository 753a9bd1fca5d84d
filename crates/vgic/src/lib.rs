#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

pub mod backends;
mod config;
pub mod cpuif_trap;
mod error;
pub mod lr;
mod model;
mod regs;
pub mod sgi;
mod vcpuset;

pub use config::{GicVersion, VgicConfig, MAX_SPIS, MAX_VCPUS, MAX_VCPUS_V2};
pub use error::VgicError;
pub use lr::{ListRegisters, LrEntry, LrState, VcpuIfState, MAX_LRS};
pub use model::{Vgic, VgicStats};
pub use regs::offsets;
pub use regs::offsets::gicr::{GICR_FRAME_SIZE, GICR_SGI_BASE};
pub use sgi::SgiReg;
pub use vcpuset::VcpuSet;

/// INTID of the GIC maintenance interrupt: PPI 9, i.e. INTID 25.
///
/// This is the interrupt the *physical* GIC raises on the host when a maintenance condition
/// enabled through [`ListRegisters::set_maintenance`] (list-register underflow, no pending
/// entries) or an EOI-maintenance list register fires. The hypervisor enables it at its own
/// physical CPU interface; its only job is to cause an exit so that [`Vgic::sync`] and
/// [`Vgic::flush`] run. The handler needs no other action.
pub const fn maintenance_intid() -> u32 {
    25
}

/// First SPI INTID.
pub const SPI_BASE: u32 = 32;
