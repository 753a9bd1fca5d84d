//! Cavium ThunderX erratum 30115 on the hypervisor's side: every guest access to its GICv3
//! CPU interface is trapped (`ICH_HCR_EL2.TC`, `TALL0`, `TALL1`, set per CPU when its list
//! registers are set up) and emulated by vgic's `cpuif_trap` against this CPU's live
//! `ICH_*_EL2` registers, from the exit fast path, before the vGIC model reads the list
//! registers back — so the model sees what the hardware would have done.

use core::sync::atomic::{AtomicU64, Ordering};

use vgic::backends::ich_cpuif::IchCpuIf;
use vgic::cpuif_trap::{self, IccReg, Refused};

static EMULATED: AtomicU64 = AtomicU64::new(0);

/// Turns trapping on for every CPU whose list registers are set up from now on (boot, before
/// the CPUs come up; `lrs::init_cpu` sets the bits).
pub fn enable() {
    super::lrs::trap_guest_cpuif();
}

/// Whether guest CPU-interface accesses are trapped.
pub fn enabled() -> bool {
    super::lrs::guest_cpuif_trapped()
}

/// Emulates a trapped access of the loaded vCPU (`None`: not trapping, nothing done).
pub fn access(reg: IccReg, is_read: bool, value: u64) -> Option<Result<Option<u64>, Refused>> {
    if !enabled() {
        return None;
    }
    // SAFETY: trapping is only on with a GICv3 host (set on CPUs with ICH_* list registers);
    // the vCPU that trapped is loaded on this CPU, so the ICH_* registers hold its interface.
    let mut cpu = unsafe { IchCpuIf::new() };
    EMULATED.fetch_add(1, Ordering::Relaxed);
    Some(cpuif_trap::access(&mut cpu, reg, is_read, value))
}

/// Guest CPU-interface accesses emulated so far (all CPUs).
pub fn emulated() -> u64 {
    EMULATED.load(Ordering::Relaxed)
}
