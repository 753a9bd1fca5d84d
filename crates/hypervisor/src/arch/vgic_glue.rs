//! Wiring the `vgic` crate into VMs: a new vGIC per VM matching the guest GIC, with the
//! virtual timer's PPI hardware-mapped. The per-CPU list registers and the choice of guest
//! GIC are in `lrs.rs` (re-exported here); kicks go to the scheduler (`sched::deliver_kicks`).

use alloc::vec::Vec;
use vgic::{GicVersion, Vgic};

pub use super::lrs::{guest_gic, init, GuestGic, HostLrs};
use crate::layout;

/// A new per-VM vGIC matching the guest GIC, with the virtual timer PPI hardware-mapped.
pub fn new_vgic(mpidrs: Vec<u64>) -> Option<Vgic> {
    let version = match guest_gic()? {
        GuestGic::V2 { .. } => GicVersion::V2,
        GuestGic::V3 => GicVersion::V3,
    };
    let n = mpidrs.len();
    let mut v = Vgic::new(vgic::VgicConfig {
        version,
        vcpu_mpidrs: mpidrs,
        nr_spis: layout::GUEST_SPIS,
    })
    .ok()?;
    for i in 0..n {
        let _ = v.set_hw_mapping(i, vtimer::VIRT_TIMER_PPI, Some(vtimer::VIRT_TIMER_PPI));
    }
    Some(v)
}
