//! VM-level configuration.

use alloc::vec::Vec;

use crate::VgicError;

/// Maximum number of vCPUs per VM (size of [`crate::VcpuSet`]).
pub const MAX_VCPUS: usize = 256;
/// Maximum number of vCPUs of a GICv2 VM (`GICD_ITARGETSR` has 8 bits).
pub const MAX_VCPUS_V2: usize = 8;
/// Maximum number of SPIs (INTIDs 32..1020, rounded to whole 32-interrupt lines).
pub const MAX_SPIS: u32 = 992;

/// The GIC architecture version presented to the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GicVersion {
    /// GICv2: memory-mapped `GICD` and `GICC`, target lists, `GICD_SGIR`.
    V2,
    /// GICv3: `GICD`, one `GICR` frame per vCPU, affinity routing, system-register interface.
    V3,
}

/// Configuration of one VM's virtual GIC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VgicConfig {
    /// Architecture version presented to the guest.
    pub version: GicVersion,
    /// Affinity (MPIDR_EL1 layout: Aff0 `[7:0]`, Aff1 `[15:8]`, Aff2 `[23:16]`, Aff3 `[39:32]`) of every
    /// vCPU; the index is the vCPU id. Other bits are ignored.
    pub vcpu_mpidrs: Vec<u64>,
    /// Number of SPIs: a multiple of 32, at most [`MAX_SPIS`]. INTIDs >= 1020 never exist.
    pub nr_spis: u32,
}

/// Affinity bits of an MPIDR value.
pub(crate) const MPIDR_AFF_MASK: u64 = 0xff_00ff_ffff;

impl VgicConfig {
    pub(crate) fn validate(&self) -> Result<(), VgicError> {
        let n = self.vcpu_mpidrs.len();
        if n == 0 {
            return Err(VgicError::BadConfig("no vCPUs"));
        }
        if n > MAX_VCPUS || (self.version == GicVersion::V2 && n > MAX_VCPUS_V2) {
            return Err(VgicError::BadConfig("too many vCPUs"));
        }
        if !self.nr_spis.is_multiple_of(32) || self.nr_spis > MAX_SPIS {
            return Err(VgicError::BadConfig(
                "nr_spis must be a multiple of 32, at most 992",
            ));
        }
        for (i, a) in self.vcpu_mpidrs.iter().enumerate() {
            let a = a & MPIDR_AFF_MASK;
            if self.vcpu_mpidrs[..i]
                .iter()
                .any(|b| b & MPIDR_AFF_MASK == a)
            {
                return Err(VgicError::BadConfig("duplicate vCPU affinity"));
            }
        }
        Ok(())
    }
}
