//! The per-CPU list-register backend of the virtual GIC (GICv2 `GICH` or GICv3
//! `ICH_*_EL2`) and how guests get a GIC on this machine, decided once from the host GIC.
//! Below the per-CPU data, which holds each CPU's backend.

use core::sync::atomic::{AtomicBool, Ordering};

use spin::Once;
use vgic::backends::gicv2::GichBackend;
use vgic::backends::gicv3::IchBackend;
use vgic::{ListRegisters, LrEntry, VcpuIfState};

use crate::platform::HostGic;

/// The list-register backend of one physical CPU.
pub enum HostLrs {
    /// GICv2 `GICH` (banked per CPU at the same address).
    V2(GichBackend),
    /// GICv3 `ICH_*_EL2`.
    V3(IchBackend),
}

// SAFETY: the backend is only ever used by the physical CPU it belongs to (it lives in that
// CPU's `PerCpu` and is locked by its run loop); moving the handle between threads never
// happens, the Send bound is only needed to keep it in a lock.
unsafe impl Send for HostLrs {}

impl ListRegisters for HostLrs {
    fn num_lrs(&self) -> usize {
        match self {
            HostLrs::V2(b) => b.num_lrs(),
            HostLrs::V3(b) => b.num_lrs(),
        }
    }
    fn read_lr(&self, i: usize) -> LrEntry {
        match self {
            HostLrs::V2(b) => b.read_lr(i),
            HostLrs::V3(b) => b.read_lr(i),
        }
    }
    fn write_lr(&mut self, i: usize, e: LrEntry) {
        match self {
            HostLrs::V2(b) => b.write_lr(i, e),
            HostLrs::V3(b) => b.write_lr(i, e),
        }
    }
    fn empty_mask(&self) -> u64 {
        match self {
            HostLrs::V2(b) => b.empty_mask(),
            HostLrs::V3(b) => b.empty_mask(),
        }
    }
    fn eoi_mask(&self) -> u64 {
        match self {
            HostLrs::V2(b) => b.eoi_mask(),
            HostLrs::V3(b) => b.eoi_mask(),
        }
    }
    fn set_maintenance(&mut self, underflow: bool, no_pending: bool) {
        match self {
            HostLrs::V2(b) => b.set_maintenance(underflow, no_pending),
            HostLrs::V3(b) => b.set_maintenance(underflow, no_pending),
        }
    }
    fn misr(&self) -> u32 {
        match self {
            HostLrs::V2(b) => b.misr(),
            HostLrs::V3(b) => b.misr(),
        }
    }
    fn set_enabled(&mut self, en: bool) {
        match self {
            HostLrs::V2(b) => b.set_enabled(en),
            HostLrs::V3(b) => b.set_enabled(en),
        }
    }
    fn read_vmcr(&self) -> u64 {
        match self {
            HostLrs::V2(b) => b.read_vmcr(),
            HostLrs::V3(b) => b.read_vmcr(),
        }
    }
    fn save(&mut self, st: &mut VcpuIfState) {
        match self {
            HostLrs::V2(b) => b.save(st),
            HostLrs::V3(b) => b.save(st),
        }
    }
    fn restore(&mut self, st: &VcpuIfState) {
        match self {
            HostLrs::V2(b) => b.restore(st),
            HostLrs::V3(b) => b.restore(st),
        }
    }
}

/// How guests get a GIC on this machine (from the host GIC).
#[derive(Debug, Clone, Copy)]
pub enum GuestGic {
    /// GICv2: the host's virtual CPU interface (`GICV`) is mapped at the guest's GICC.
    V2 {
        /// Host `GICH` (list registers).
        gich: u64,
        /// Host `GICV` (what the guest sees as its CPU interface).
        gicv: u64,
    },
    /// GICv3: system-register CPU interface through `ICH_*_EL2`.
    V3,
}

static GUEST_GIC: Once<Option<GuestGic>> = Once::new();

/// Cavium 30115: guests' GICv3 CPU-interface accesses trap (`ICH_HCR_EL2.TC`/`TALL0`/`TALL1`,
/// set in [`init_cpu`]) and are emulated (`cpuif_trap`).
static TRAP_GUEST_CPUIF: AtomicBool = AtomicBool::new(false);

/// Makes every CPU set up from now on trap its guests' GICv3 CPU-interface accesses (boot,
/// before the CPUs come up).
pub fn trap_guest_cpuif() {
    TRAP_GUEST_CPUIF.store(true, Ordering::Relaxed);
}

/// Whether guests' GICv3 CPU-interface accesses trap.
pub fn guest_cpuif_trapped() -> bool {
    TRAP_GUEST_CPUIF.load(Ordering::Relaxed)
}

/// Decides how guests get a GIC (boot CPU, once). `None` when the host GIC lacks the
/// virtualization extensions (GICv2 without GICH/GICV in the device tree).
pub fn init(host: &HostGic) -> Option<GuestGic> {
    *GUEST_GIC.call_once(|| match *host {
        HostGic::V2 {
            hyp: Some(h),
            vcpu: Some(v),
            ..
        } => Some(GuestGic::V2 {
            gich: h.base,
            gicv: v.base,
        }),
        HostGic::V2 { .. } => None,
        HostGic::V3 { .. } => Some(GuestGic::V3),
    })
}

/// The guest GIC configuration, if any.
pub fn guest_gic() -> Option<GuestGic> {
    GUEST_GIC.get().copied().flatten()
}

/// Creates this CPU's list-register backend and empties it (per CPU, at bring-up).
pub fn init_cpu() -> Option<HostLrs> {
    match guest_gic()? {
        GuestGic::V2 { gich, .. } => {
            // SAFETY: GICH is identity-mapped as device memory (mapped at boot with the
            // other GIC regions) and banked per CPU; only this CPU's run loop uses it.
            let mut b = unsafe { GichBackend::new(gich as usize) };
            b.reset();
            Some(HostLrs::V2(b))
        }
        GuestGic::V3 => {
            // SAFETY: ICC_SRE_EL2.SRE was set by the host GIC driver's per-CPU init.
            let mut b = unsafe { IchBackend::new() };
            b.reset();
            if TRAP_GUEST_CPUIF.load(Ordering::Relaxed) {
                // SAFETY: as above (GICv3 system registers enabled on this CPU).
                unsafe { vgic::backends::ich_cpuif::trap_guest_cpuif() };
            }
            Some(HostLrs::V3(b))
        }
    }
}
