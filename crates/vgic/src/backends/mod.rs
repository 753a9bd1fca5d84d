//! [`crate::ListRegisters`] implementations.

pub mod gicv2;
#[cfg(target_arch = "aarch64")]
pub mod gicv3;
pub mod mem;
