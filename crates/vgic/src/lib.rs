//! Virtual GIC for AArch64 hypervisors: GICv2 and GICv3.
//!
//! The crate is split into a pure model and a thin hardware layer:
//!
//! - [`Vgic`] is the per-VM software model of the interrupt controller: every interrupt's
//!   pending/active/enabled state, priority, group, edge/level configuration and routing
//!   (GICv2 `ITARGETSR`, GICv3 `IROUTER` including 1-of-N), banked SGIs/PPIs per vCPU and the
//!   SPIs of the VM. It emulates the guest-visible registers (GICv2 `GICD`, GICv3 `GICD` and
//!   one `GICR` frame per vCPU) as a table of register regions, decodes virtual IPIs (GICv2
//!   `GICD_SGIR`, GICv3 `ICC_SGI1R_EL1`/`ICC_ASGI1R_EL1`/`ICC_SGI0R_EL1` traps) and offers an
//!   injection API for emulated devices and forwarded hardware interrupts.
//! - [`ListRegisters`] is the one trait behind which the virtual CPU interface hides.
//!   [`Vgic::flush`] loads the highest-priority interrupts of a vCPU into list registers before
//!   entering the guest and [`Vgic::sync`] folds the guest's acknowledge/EOI progress back into
//!   the model after the exit. Both do no list-register access at all when nothing is in flight.
//!   Backends: [`backends::mem::MemLrs`] (in memory, for tests), [`backends::gicv2::GichBackend`]
//!   (GICv2 `GICH` MMIO) and, on AArch64, `backends::gicv3::IchBackend` (`ICH_*_EL2`).
//!
//! Every state change that makes an interrupt deliverable to a vCPU records that vCPU in a kick
//! set ([`Vgic::take_kicks`]); the hypervisor drains it and sends a physical SGI to the pCPU
//! running the vCPU or wakes it from WFI. No guest input (offset, width, value) can make the
//! model panic: bad widths are reported as errors the caller turns into an external abort,
//! reserved offsets read as zero and ignore writes and are reported so they can be logged.
//!
//! ```
//! use vgic::backends::mem::MemLrs;
//! use vgic::{GicVersion, LrState, Vgic, VgicConfig};
//!
//! let mut vgic = Vgic::new(VgicConfig {
//!     version: GicVersion::V2,
//!     vcpu_mpidrs: vec![0, 1],
//!     nr_spis: 256,
//! })
//! .unwrap();
//! let mut lrs = MemLrs::new(4);
//! // The guest enables the distributor and SPI 40, routed to CPU 1.
//! vgic.gicd_write(0, 0x000, 4, 1).unwrap();
//! vgic.gicd_write(0, 0x104, 4, 1 << 8).unwrap();
//! vgic.gicd_write(0, 0x828, 1, 0b10).unwrap();
//! // A device raises it: vCPU 1 must be kicked.
//! vgic.set_spi_level(40, true).unwrap();
//! assert!(vgic.take_kicks().contains(1));
//! vgic.vcpu_load(1, &mut lrs).unwrap();
//! vgic.flush(1, &mut lrs).unwrap();
//! assert_eq!(lrs.valid().next().unwrap().state, LrState::Pending);
//! ```
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

pub mod backends;
mod config;
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
pub use regs::v3::{GICR_FRAME_SIZE, GICR_SGI_BASE};
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

/// INTID of the EL1 virtual timer PPI (PPI 11), the usual hardware-mapped interrupt.
pub const VTIMER_INTID: u32 = 27;

/// First SPI INTID.
pub const SPI_BASE: u32 = 32;
