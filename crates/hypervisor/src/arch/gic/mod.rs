//! Host GIC driver: what the hypervisor itself needs from the physical interrupt
//! controller — SGIs for cross-CPU kicks, the EL2 timer PPI, the vGIC maintenance PPI and
//! forwarded (hardware-mapped) guest PPIs. Priority drop and deactivation are split
//! (`ICC_CTLR_EL1.EOImode` / `GICC_CTLR.EOImodeNS` = 1), so a forwarded interrupt stays
//! active until the guest deactivates it through a hardware-mapped list register.
//!
//! (The `arm-gic` crate was considered; it configures EOImode 0 and has no separate
//! deactivation, which hardware-mapped forwarding requires.)

pub mod v2;
pub mod v3;

use crate::platform::HostGic;
use spin::Once;

/// SGI used to kick another physical CPU (re-evaluate what it runs).
pub const SGI_KICK: u32 = 0;
/// PPI of the vGIC maintenance interrupt (defined by the `vgic` crate).
pub const PPI_MAINTENANCE: u32 = vgic::maintenance_intid();
/// PPI of the EL2 physical timer (`CNTHP_*_EL2`), as the `vtimer` crate defines it.
pub use vtimer::HYP_TIMER_PPI as PPI_HYP_TIMER;
/// PPI of the EL1 virtual timer (forwarded to the running guest), as `vtimer` defines it.
pub use vtimer::VIRT_TIMER_PPI as PPI_VIRT_TIMER;
/// INTID meaning "no pending interrupt".
pub const SPURIOUS: u32 = 1023;

/// An acknowledged interrupt: the raw `IAR` value (GICv2 keeps the SGI source in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked(pub u32);

impl Acked {
    /// The interrupt ID.
    pub fn intid(self) -> u32 {
        self.0 & 0x3ff
    }
}

/// The host GIC, either version.
pub enum Gic {
    /// GICv2 (GIC-400).
    V2(v2::GicV2),
    /// GICv3.
    V3(v3::GicV3),
}

static GIC: Once<Gic> = Once::new();

/// Initialises the distributor (boot CPU, once).
pub fn init(desc: &HostGic) {
    GIC.call_once(|| match *desc {
        HostGic::V2 { dist, cpu, .. } => Gic::V2(v2::GicV2::new(dist.base, cpu.base)),
        HostGic::V3 { dist, redist } => {
            Gic::V3(v3::GicV3::new(dist.base, redist.base, redist.size))
        }
    });
    match GIC.get() {
        Some(Gic::V2(g)) => g.init_distributor(),
        Some(Gic::V3(g)) => g.init_distributor(),
        None => {}
    }
}

pub use super::percpu::CpuGic;

/// Per-CPU interface setup: enables the hypervisor's private interrupts on this CPU.
pub fn init_cpu(mpidr: u64) -> CpuGic {
    let ppis = [SGI_KICK, PPI_MAINTENANCE, PPI_HYP_TIMER, PPI_VIRT_TIMER];
    match GIC.get() {
        Some(Gic::V2(g)) => CpuGic {
            cpu_if: g.init_cpu(&ppis),
            redist_frame: 0,
        },
        Some(Gic::V3(g)) => CpuGic {
            cpu_if: 0,
            redist_frame: g.init_cpu(mpidr, &ppis),
        },
        None => CpuGic::default(),
    }
}

/// Whether private interrupt `intid` is active on this CPU.
pub fn private_active(intid: u32) -> bool {
    match GIC.get() {
        Some(Gic::V2(g)) => g.private_active(intid),
        Some(Gic::V3(_)) => {
            v3::GicV3::private_active(crate::arch::percpu::current().gic().redist_frame, intid)
        }
        None => false,
    }
}

/// Sets or clears the active state of private interrupt `intid` on this CPU (used to keep
/// a forwarded interrupt's physical active state with the vCPU it belongs to).
pub fn set_private_active(intid: u32, active: bool) {
    match GIC.get() {
        Some(Gic::V2(g)) => g.set_private_active(intid, active),
        Some(Gic::V3(_)) => v3::GicV3::set_private_active(
            crate::arch::percpu::current().gic().redist_frame,
            intid,
            active,
        ),
        None => {}
    }
}

/// Acknowledges the highest-priority pending interrupt, if any.
pub fn ack() -> Option<Acked> {
    let iar = match GIC.get()? {
        Gic::V2(g) => g.ack(),
        Gic::V3(g) => g.ack(),
    };
    (iar & 0x3ff < 1020).then_some(Acked(iar))
}

/// Priority drop (the interrupt stays active until [`deactivate`]).
pub fn eoi(a: Acked) {
    match GIC.get() {
        Some(Gic::V2(g)) => g.eoi(a.0),
        Some(Gic::V3(g)) => g.eoi(a.0),
        None => {}
    }
}

/// Deactivates an interrupt the hypervisor handled itself.
pub fn deactivate(a: Acked) {
    match GIC.get() {
        Some(Gic::V2(g)) => g.deactivate(a.0),
        Some(Gic::V3(g)) => g.deactivate(a.0),
        None => {}
    }
}

/// Sends [`SGI_KICK`] to the physical CPU with `mpidr` / GICv2 interface `cpu_if`.
pub fn kick(mpidr: u64, cpu_if: u8) {
    match GIC.get() {
        Some(Gic::V2(g)) => g.send_sgi(cpu_if, SGI_KICK),
        Some(Gic::V3(_)) => v3::GicV3::send_sgi(mpidr, SGI_KICK),
        None => {}
    }
}

/// Enables SPI `intid` (a host device's interrupt) routed to the calling CPU.
pub fn enable_spi_here(intid: u32) {
    let me = crate::arch::percpu::current();
    match GIC.get() {
        Some(Gic::V2(g)) => g.enable_spi(intid, me.gic().cpu_if),
        Some(Gic::V3(g)) => g.enable_spi(intid, me.mpidr),
        None => {}
    }
}

/// The GIC version in use (2 or 3), 0 before [`init`].
pub fn version() -> u8 {
    match GIC.get() {
        Some(Gic::V2(_)) => 2,
        Some(Gic::V3(_)) => 3,
        None => 0,
    }
}
