//! Emulated devices a VM sees on its MMIO bus.
pub mod pl011;
