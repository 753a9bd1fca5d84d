//! [`crate::ListRegisters`] implementations.

pub mod gicv2;
#[cfg(target_arch = "aarch64")]
pub mod gicv3;
#[cfg(target_arch = "aarch64")]
pub mod ich_cpuif;
pub mod mem;
