#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), no_std)]

mod phys;
mod state;
mod vcpu;

pub use phys::{PhysTimer, PhysTimerReg};
pub use state::{TimerState, CTL_ENABLE, CTL_IMASK, CTL_ISTATUS};
pub use vcpu::{TimerHost, VcpuTimer};

// The generic timers' interrupts as SBSA/BSA assign them (INTIDs; PPI n is INTID 16 + n).
// Defined here once; the hypervisor's host GIC driver, its vGIC setup and its guest device
// tree use these.

/// INTID of the EL2 physical timer's PPI (`CNTHP_*_EL2`, PPI 10): the hypervisor's own
/// timer (time slices, software timers for blocked vCPUs).
pub const HYP_TIMER_PPI: u32 = 26;
/// INTID of the EL1 virtual timer's PPI (`CNTV_*_EL0`, PPI 11).
pub const VIRT_TIMER_PPI: u32 = 27;
/// INTID of the secure EL1 physical timer's PPI (`CNTPS_*_EL1`, PPI 13).
pub const SECURE_PHYS_TIMER_PPI: u32 = 29;
/// INTID of the non-secure EL1 physical timer's PPI (`CNTP_*_EL0`, PPI 14).
pub const PHYS_TIMER_PPI: u32 = 30;

/// A VM's virtual-counter offset: `CNTVCT = CNTPCT - CNTVOFF`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmCounter {
    /// `CNTVOFF_EL2` for every vCPU of the VM.
    pub cntvoff: u64,
}

impl VmCounter {
    /// A counter that reads 0 at physical counter value `now` (VM creation).
    pub fn starting_at(now: u64) -> Self {
        Self { cntvoff: now }
    }

    /// The guest's virtual counter at physical counter value `now`.
    pub fn virtual_now(&self, now: u64) -> u64 {
        now.wrapping_sub(self.cntvoff)
    }

    /// The physical counter value at which the virtual counter reaches `vcount`, or `None`
    /// when that lies beyond the 64-bit physical counter (a guest compare value near
    /// `u64::MAX`: that timer never fires, and a wrapped sum would wake the vCPU at once).
    pub fn physical_at(&self, vcount: u64) -> Option<u64> {
        vcount.checked_add(self.cntvoff)
    }
}

/// The physical-counter time at which a vCPU waiting in WFI must be woken for its timers,
/// or `None` if neither timer can fire. `vtimer` holds the saved `CNTV_CTL_EL0`/`CVAL`
/// (compared against the virtual counter), `ptimer` the emulated physical timer.
pub fn wake_deadline(vtimer: &TimerState, counter: &VmCounter, ptimer: &PhysTimer) -> Option<u64> {
    let v = vtimer.deadline().and_then(|cval| counter.physical_at(cval));
    let p = ptimer.state().deadline();
    match (v, p) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_arithmetic() {
        let c = VmCounter::starting_at(1_000_000);
        assert_eq!(c.virtual_now(1_000_000), 0);
        assert_eq!(c.virtual_now(1_000_500), 500);
        assert_eq!(c.physical_at(500), Some(1_000_500));
        // A compare value the virtual counter only reaches past the physical counter's
        // range never fires.
        assert_eq!(c.physical_at(u64::MAX), None);
        // Two VMs created at different times have independent virtual counters.
        let d = VmCounter::starting_at(2_000_000);
        assert_eq!(c.virtual_now(2_000_000), 1_000_000);
        assert_eq!(d.virtual_now(2_000_000), 0);
    }

    #[test]
    fn deadlines() {
        let c = VmCounter::starting_at(100);
        let mut v = TimerState::default();
        let p = PhysTimer::default();
        assert_eq!(wake_deadline(&v, &c, &p), None);
        v.ctl = CTL_ENABLE;
        v.cval = 50;
        assert_eq!(wake_deadline(&v, &c, &p), Some(150));
        v.ctl |= CTL_IMASK; // masked: the interrupt cannot wake the vCPU
        assert_eq!(wake_deadline(&v, &c, &p), None);
        let mut p = PhysTimer::default();
        p.write(PhysTimerReg::Cval, 120, 0);
        p.write(PhysTimerReg::Ctl, CTL_ENABLE, 0);
        assert_eq!(wake_deadline(&v, &c, &p), Some(120));
        v.ctl = CTL_ENABLE;
        assert_eq!(wake_deadline(&v, &c, &p), Some(120));
        // "Armed at infinity" leaves only the physical timer's deadline.
        v.cval = u64::MAX;
        assert_eq!(wake_deadline(&v, &c, &p), Some(120));
        let idle = PhysTimer::default();
        assert_eq!(wake_deadline(&v, &c, &idle), None);
    }
}
