//! The timers of one vCPU while it runs, after Linux's `arch/arm64/kvm/arch_timer.c`
//! (`kvm_timer_vcpu_load`/`kvm_timer_vcpu_put`) for a non-nested guest, where
//! `get_timer_map()` makes the EL1 virtual timer direct and the EL1 physical timer
//! emulated:
//!
//! - the virtual timer is the guest's own: its registers are part of the EL1 state the world
//!   switch saves and restores, its interrupt reaches EL2 as [`VIRT_TIMER_PPI`] and is
//!   forwarded through a hardware-mapped list register, so the physical PPI stays active
//!   until the guest deactivates it; that active state moves with the vCPU
//!   ([`VcpuTimer::vcpu_put`] / [`VcpuTimer::vcpu_load`]);
//! - the physical timer is emulated ([`PhysTimer`], `CNTHCTL_EL2.EL1PCEN` = 0 traps it): its
//!   line is [`PHYS_TIMER_PPI`], reported to the host when its level changes
//!   ([`VcpuTimer::flush`]), and the host arms a timer of its own for
//!   [`VcpuTimer::emulated_deadline`].
//!
//! Everything the hardware does goes through [`TimerHost`]; the vGIC is the host's, so this
//! crate only reports line levels.

use crate::phys::{PhysTimer, PhysTimerReg};
use crate::state::TimerState;
use crate::{wake_deadline, VmCounter, PHYS_TIMER_PPI, VIRT_TIMER_PPI};

/// What the timers need from the hypervisor while a vCPU runs.
pub trait TimerHost {
    /// The physical counter `CNTPCT_EL0` now.
    fn now(&self) -> u64;
    /// The level of the vCPU's timer interrupt `intid` (a PPI) changed: the host forwards
    /// it to its virtual interrupt controller.
    fn set_irq_level(&mut self, intid: u32, level: bool);
    /// Whether the physical PPI `intid` is active on this CPU.
    fn phys_active(&self, intid: u32) -> bool;
    /// Sets or clears the active state of the physical PPI `intid` on this CPU.
    fn set_phys_active(&mut self, intid: u32, active: bool);
}

/// The generic timers of one vCPU: the emulated physical timer, the level of its line as
/// last reported, and the forwarded virtual timer's active state while the vCPU is put.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VcpuTimer {
    ptimer: PhysTimer,
    /// The level of [`PHYS_TIMER_PPI`] last reported to the host.
    ptimer_line: bool,
    /// The physical [`VIRT_TIMER_PPI`] was active (forwarded, not yet deactivated by the
    /// guest) when the vCPU was put.
    vtimer_active: bool,
}

impl VcpuTimer {
    /// `kvm_timer_vcpu_load`: the vCPU is loaded on this CPU. A forwarded virtual-timer
    /// interrupt it had not deactivated becomes active again in the physical GIC, so the
    /// guest's deactivation through the list register completes it; the emulated timer's
    /// line is brought up to date.
    pub fn vcpu_load<H: TimerHost + ?Sized>(&mut self, host: &mut H) {
        if self.vtimer_active {
            host.set_phys_active(VIRT_TIMER_PPI, true);
            self.vtimer_active = false;
        }
        self.flush(host);
    }

    /// `kvm_timer_vcpu_put`: the vCPU leaves this CPU. The active state of a forwarded
    /// virtual-timer interrupt goes with it (cleared in the physical GIC, so the next vCPU
    /// on this CPU gets its own timer's interrupts).
    pub fn vcpu_put<H: TimerHost + ?Sized>(&mut self, host: &mut H) {
        if host.phys_active(VIRT_TIMER_PPI) {
            host.set_phys_active(VIRT_TIMER_PPI, false);
            self.vtimer_active = true;
        }
    }

    /// A physical interrupt `intid` arrived while the vCPU was loaded: the virtual timer's
    /// [`VIRT_TIMER_PPI`] is forwarded (its line goes high; the physical PPI stays active
    /// until the guest deactivates it). Returns false for any other interrupt.
    pub fn on_irq<H: TimerHost + ?Sized>(&mut self, intid: u32, host: &mut H) -> bool {
        if intid != VIRT_TIMER_PPI {
            return false;
        }
        host.set_irq_level(VIRT_TIMER_PPI, true);
        true
    }

    /// Before entering the guest: reports the emulated physical timer's line if its level
    /// changed (it rises when the counter reaches `CNTP_CVAL_EL0`, falls when the guest
    /// reprograms or masks the timer).
    #[inline]
    pub fn flush<H: TimerHost + ?Sized>(&mut self, host: &mut H) {
        let level = self.ptimer.irq_level(host.now());
        if level != self.ptimer_line {
            self.ptimer_line = level;
            host.set_irq_level(PHYS_TIMER_PPI, level);
        }
    }

    /// When the host must interrupt the running vCPU for the emulated physical timer (a
    /// physical counter value after `now`), or `None`: not armed, or already fired (its
    /// level is with the host until the guest reprograms the timer; arming again would
    /// interrupt every entry).
    pub fn emulated_deadline(&self, now: u64) -> Option<u64> {
        self.ptimer.state().deadline().filter(|&d| d > now)
    }

    /// When a vCPU blocked in `WFI` must be woken for its timers (see
    /// [`wake_deadline`]): `cntv` is the virtual timer as `vcpu_put` saved it.
    pub fn wake_deadline(&self, cntv: &TimerState, counter: &VmCounter) -> Option<u64> {
        wake_deadline(cntv, counter, &self.ptimer)
    }

    /// A trapped read of physical-timer register `reg` at physical counter value `now`.
    pub fn read(&self, reg: PhysTimerReg, now: u64) -> u64 {
        self.ptimer.read(reg, now)
    }

    /// A trapped write of `value` to physical-timer register `reg` at counter value `now`
    /// (the line follows at the next [`VcpuTimer::flush`]).
    pub fn write(&mut self, reg: PhysTimerReg, value: u64, now: u64) {
        self.ptimer.write(reg, value, now);
    }

    /// The emulated physical timer.
    pub fn ptimer(&self) -> &PhysTimer {
        &self.ptimer
    }

    /// A vCPU reset (PSCI `CPU_ON`): the physical timer back to its reset state (disabled).
    /// Its line is lowered at the next [`VcpuTimer::flush`]; the interrupt controller keeps
    /// its state. After a reset of the whole VM, with a new interrupt controller, start from
    /// `VcpuTimer::default()` instead.
    pub fn reset(&mut self) {
        self.ptimer.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CTL_ENABLE, CTL_IMASK};
    use std::vec::Vec;

    /// A host with a settable counter that records what the timer asks of it.
    #[derive(Default)]
    struct Host {
        now: u64,
        lines: Vec<(u32, bool)>,
        active: bool,
    }

    impl TimerHost for Host {
        fn now(&self) -> u64 {
            self.now
        }
        fn set_irq_level(&mut self, intid: u32, level: bool) {
            self.lines.push((intid, level));
        }
        fn phys_active(&self, intid: u32) -> bool {
            intid == VIRT_TIMER_PPI && self.active
        }
        fn set_phys_active(&mut self, intid: u32, active: bool) {
            assert_eq!(intid, VIRT_TIMER_PPI);
            self.active = active;
        }
    }

    #[test]
    fn emulated_line_is_reported_on_change_only() {
        let mut h = Host::default();
        let mut t = VcpuTimer::default();
        t.write(PhysTimerReg::Cval, 100, 0);
        t.write(PhysTimerReg::Ctl, CTL_ENABLE, 0);
        assert_eq!(t.emulated_deadline(0), Some(100));
        t.flush(&mut h);
        t.flush(&mut h);
        assert!(h.lines.is_empty(), "low and unchanged: nothing to report");
        h.now = 100;
        t.flush(&mut h);
        t.flush(&mut h);
        assert_eq!(h.lines, [(PHYS_TIMER_PPI, true)]);
        // Fired: no deadline to arm any more (the level stays with the host).
        assert_eq!(t.emulated_deadline(100), None);
        // The guest masks it: the line falls once.
        t.write(PhysTimerReg::Ctl, CTL_ENABLE | CTL_IMASK, 100);
        t.flush(&mut h);
        t.flush(&mut h);
        assert_eq!(h.lines, [(PHYS_TIMER_PPI, true), (PHYS_TIMER_PPI, false)]);
    }

    #[test]
    fn reset_lowers_a_raised_line_at_the_next_flush() {
        let mut h = Host {
            now: 10,
            ..Host::default()
        };
        let mut t = VcpuTimer::default();
        t.write(PhysTimerReg::Ctl, CTL_ENABLE, 0);
        t.flush(&mut h);
        t.reset();
        t.flush(&mut h);
        assert_eq!(h.lines, [(PHYS_TIMER_PPI, true), (PHYS_TIMER_PPI, false)]);
        assert_eq!(t.read(PhysTimerReg::Ctl, 10), 0);
    }

    #[test]
    fn forwarded_virtual_timer_moves_with_the_vcpu() {
        let mut h = Host::default();
        let mut t = VcpuTimer::default();
        t.vcpu_load(&mut h);
        // The virtual timer fires while loaded: the line goes high, the PPI stays active.
        assert!(t.on_irq(VIRT_TIMER_PPI, &mut h));
        assert!(!t.on_irq(PHYS_TIMER_PPI, &mut h));
        h.active = true;
        // Put before the guest deactivated it: cleared in hardware, kept with the vCPU.
        t.vcpu_put(&mut h);
        assert!(!h.active);
        t.vcpu_load(&mut h);
        assert!(h.active, "active again on load");
        // Deactivated by the guest this time: nothing to carry.
        h.active = false;
        t.vcpu_put(&mut h);
        t.vcpu_load(&mut h);
        assert!(!h.active);
        assert_eq!(h.lines, [(VIRT_TIMER_PPI, true)]);
    }

    #[test]
    fn wake_deadline_of_both_timers() {
        let counter = VmCounter::starting_at(1000);
        let mut t = VcpuTimer::default();
        let cntv = TimerState {
            ctl: CTL_ENABLE,
            cval: 500,
        };
        assert_eq!(t.wake_deadline(&cntv, &counter), Some(1500));
        t.write(PhysTimerReg::Cval, 1200, 0);
        t.write(PhysTimerReg::Ctl, CTL_ENABLE, 0);
        assert_eq!(t.wake_deadline(&cntv, &counter), Some(1200));
        assert_eq!(t.ptimer().state().cval, 1200);
    }
}
