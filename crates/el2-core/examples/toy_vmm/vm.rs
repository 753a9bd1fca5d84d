//! The toy VM's side of PSCI: which vCPUs exist, their state, and where its RAM is.

use std::ops::Range;

use el2_core::psci::{AffinityState, PsciHost, PsciReturn};
use el2_core::switch::controls::guest_hcr;
use el2_core::vcpu::{VcpuContext, VcpuControls};

/// Guest RAM (QEMU `virt` layout): a `CPU_ON` entry point must lie in it.
pub const RAM: Range<u64> = 0x4000_0000..0x8000_0000;

/// The EL2 controls of vCPU `mpidr`: a non-VHE guest without pointer authentication.
pub fn controls(mpidr: u64) -> VcpuControls {
    VcpuControls {
        hcr_el2: guest_hcr(false, false),
        vmpidr_el2: mpidr,
        ..VcpuControls::default()
    }
}

/// A VM whose vCPU 0 runs and whose secondaries wait for `CPU_ON`. vCPU `n` has MPIDR
/// affinity `n` (Aff0).
pub struct Vm {
    /// vCPU 1.. by MPIDR - 1: `Some` once started by `CPU_ON`, with its reset state.
    pub secondaries: Vec<Option<VcpuContext>>,
}

impl Vm {
    /// A VM with `vcpus` vCPUs (at least the boot vCPU).
    pub fn new(vcpus: usize) -> Self {
        Self {
            secondaries: vec![None; vcpus.saturating_sub(1)],
        }
    }
}

impl PsciHost for Vm {
    fn cpu_on(&mut self, target_mpidr: u64, entry: u64, context_id: u64) -> PsciReturn {
        if target_mpidr == 0 {
            return PsciReturn::AlreadyOn;
        }
        let Some(slot) = usize::try_from(target_mpidr - 1)
            .ok()
            .and_then(|i| self.secondaries.get_mut(i))
        else {
            return PsciReturn::InvalidParameters;
        };
        if slot.is_some() {
            return PsciReturn::AlreadyOn;
        }
        if !RAM.contains(&entry) {
            return PsciReturn::InvalidAddress;
        }
        // A real host would now schedule the new vCPU; the toy only creates its state.
        *slot = Some(VcpuContext::new_at(
            entry,
            context_id,
            controls(target_mpidr),
        ));
        PsciReturn::Success
    }

    fn affinity_info(&self, target_mpidr: u64) -> Result<AffinityState, PsciReturn> {
        if target_mpidr == 0 {
            return Ok(AffinityState::On);
        }
        let slot = usize::try_from(target_mpidr - 1)
            .ok()
            .and_then(|i| self.secondaries.get(i))
            .ok_or(PsciReturn::InvalidParameters)?;
        Ok(if slot.is_some() {
            AffinityState::On
        } else {
            AffinityState::Off
        })
    }
}
