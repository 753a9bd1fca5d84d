//! Virtual IPIs: GICv3 `ICC_SGI1R_EL1`/`ICC_ASGI1R_EL1`/`ICC_SGI0R_EL1` traps and the GICv2
//! `GICD_SGIR` decoder.

use crate::model::{Vgic, NR_SGIS};
use crate::{GicVersion, VcpuSet, VgicError};

pub use crate::regs::v2::GicdSgir;

/// Which SGI-generation system register the guest wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SgiReg {
    /// `ICC_SGI1R_EL1` (op0=3, op1=0, CRn=12, CRm=11, op2=5): may generate SGIs of either group.
    Sgi1r,
    /// `ICC_ASGI1R_EL1` (op0=3, op1=1, CRn=12, CRm=11, op2=6): with a single security state,
    /// generates only group-0 SGIs (like KVM).
    Asgi1r,
    /// `ICC_SGI0R_EL1` (op0=3, op1=2, CRn=12, CRm=11, op2=7): generates only group-0 SGIs.
    Sgi0r,
}

impl SgiReg {
    /// Recognises the register from the `MSR` encoding of a trapped system-register access
    /// (`ESR_EL2` ISS fields).
    pub fn from_encoding(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Option<Self> {
        match (op0, op1, crn, crm, op2) {
            (3, 0, 12, 11, 5) => Some(Self::Sgi1r),
            (3, 1, 12, 11, 6) => Some(Self::Asgi1r),
            (3, 2, 12, 11, 7) => Some(Self::Sgi0r),
            _ => None,
        }
    }
}

/// Decoded `ICC_SGI1R_EL1` value (the three registers share the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SgiRequest {
    /// TargetList `[15:0]`: bit n targets Aff0 = RS * 16 + n.
    pub target_list: u16,
    /// Aff1 `[23:16]`.
    pub aff1: u8,
    /// INTID `[27:24]`.
    pub intid: u32,
    /// Aff2 `[39:32]`.
    pub aff2: u8,
    /// IRM `[40]`: 1 = all PEs except the sender.
    pub irm: bool,
    /// RS `[47:44]`: range selector.
    pub rs: u8,
    /// Aff3 `[55:48]`.
    pub aff3: u8,
}

impl SgiRequest {
    /// Decodes a written value.
    pub fn decode(v: u64) -> Self {
        Self {
            target_list: v as u16,
            aff1: (v >> 16) as u8,
            intid: ((v >> 24) & 0xf) as u32,
            aff2: (v >> 32) as u8,
            irm: v & (1 << 40) != 0,
            rs: ((v >> 44) & 0xf) as u8,
            aff3: (v >> 48) as u8,
        }
    }

    /// Whether a PE with MPIDR affinity `mpidr` is named by the target list (IRM = 0).
    pub fn names(&self, mpidr: u64) -> bool {
        let aff0 = mpidr as u8;
        let aff1 = (mpidr >> 8) as u8;
        let aff2 = (mpidr >> 16) as u8;
        let aff3 = (mpidr >> 32) as u8;
        if aff3 != self.aff3 || aff2 != self.aff2 || aff1 != self.aff1 {
            return false;
        }
        if aff0 / 16 != self.rs {
            return false;
        }
        self.target_list & (1 << (aff0 % 16)) != 0
    }
}

impl Vgic {
    /// Emulates a guest write of `value` to an SGI-generation system register (GICv3 only):
    /// makes the SGI pending on every targeted vCPU and records them in the kick set. Targets
    /// that name no vCPU are ignored. Returns the vCPUs that received the SGI.
    pub fn write_sgi_sysreg(
        &mut self,
        vcpu: usize,
        which: SgiReg,
        value: u64,
    ) -> Result<VcpuSet, VgicError> {
        self.check_vcpu(vcpu)?;
        if self.version != GicVersion::V3 {
            return Err(VgicError::WrongVersion);
        }
        let req = SgiRequest::decode(value);
        let allow_g1 = which == SgiReg::Sgi1r;
        let mut hit = VcpuSet::new();
        for t in 0..self.nr_vcpus() {
            let named = if req.irm {
                t != vcpu
            } else {
                req.names(self.vcpus[t].mpidr)
            };
            if !named {
                continue;
            }
            let g1 = self.vcpus[t].private[req.intid as usize].group1;
            if g1 && !allow_g1 {
                continue;
            }
            self.pend_sgi(vcpu, t, req.intid);
            hit.insert(t);
        }
        Ok(hit)
    }

    /// Emulates a GICv2 `GICD_SGIR` write by `vcpu` without going through the MMIO path.
    pub fn write_gicd_sgir(&mut self, vcpu: usize, value: u32) -> Result<VcpuSet, VgicError> {
        self.check_vcpu(vcpu)?;
        if self.version != GicVersion::V2 {
            return Err(VgicError::WrongVersion);
        }
        let sgir = GicdSgir::decode(value);
        let mut hit = VcpuSet::new();
        if let Some(mut mask) = sgir.targets(vcpu, self.nr_vcpus()) {
            while mask != 0 {
                let t = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if sgir.intid < NR_SGIS {
                    self.pend_sgi(vcpu, t, sgir.intid);
                    hit.insert(t);
                }
            }
        }
        Ok(hit)
    }
}
