//! The guest's EL1 physical timer, emulated. `CNTHCTL_EL2.EL1PCEN` = 0 traps its
//! registers; the hypervisor answers them from this model and uses its own EL2 timer to
//! deliver the expiry as PPI 30.

use crate::state::TimerState;

/// The trapped physical-timer registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhysTimerReg {
    /// `CNTP_CTL_EL0` (op0=3, op1=3, CRn=14, CRm=2, op2=1).
    Ctl,
    /// `CNTP_CVAL_EL0` (op2=2).
    Cval,
    /// `CNTP_TVAL_EL0` (op2=0).
    Tval,
}

impl PhysTimerReg {
    /// Identifies a trapped system-register encoding, if it is a physical-timer register.
    pub fn from_encoding(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Option<Self> {
        match (op0, op1, crn, crm, op2) {
            (3, 3, 14, 2, 0) => Some(Self::Tval),
            (3, 3, 14, 2, 1) => Some(Self::Ctl),
            (3, 3, 14, 2, 2) => Some(Self::Cval),
            _ => None,
        }
    }
}

/// The emulated EL1 physical timer of one vCPU. It compares against the physical counter
/// (`CNTPCT_EL0`, which the guest reads without trapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PhysTimer {
    state: TimerState,
}

impl PhysTimer {
    /// The timer's control/compare state.
    pub fn state(&self) -> &TimerState {
        &self.state
    }

    /// A guest read of `reg` at physical counter value `now`.
    pub fn read(&self, reg: PhysTimerReg, now: u64) -> u64 {
        match reg {
            PhysTimerReg::Ctl => self.state.read_ctl(now),
            PhysTimerReg::Cval => self.state.cval,
            PhysTimerReg::Tval => self.state.read_tval(now),
        }
    }

    /// A guest write of `value` to `reg` at physical counter value `now`.
    pub fn write(&mut self, reg: PhysTimerReg, value: u64, now: u64) {
        match reg {
            PhysTimerReg::Ctl => self.state.write_ctl(value),
            PhysTimerReg::Cval => self.state.cval = value,
            PhysTimerReg::Tval => self.state.write_tval(value, now),
        }
    }

    /// The level of PPI 30 at `now`.
    pub fn irq_level(&self, now: u64) -> bool {
        self.state.asserted(now)
    }

    /// Back to the reset state (disabled).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{CTL_ENABLE, CTL_IMASK, CTL_ISTATUS};

    #[test]
    fn emulated_physical_timer() {
        let mut p = PhysTimer::default();
        assert_eq!(
            PhysTimerReg::from_encoding(3, 3, 14, 2, 1),
            Some(PhysTimerReg::Ctl)
        );
        assert_eq!(PhysTimerReg::from_encoding(3, 3, 14, 3, 1), None);
        p.write(PhysTimerReg::Tval, 625, 10_000); // 10 us at 62.5 MHz
        assert_eq!(p.read(PhysTimerReg::Cval, 0), 10_625);
        p.write(PhysTimerReg::Ctl, CTL_ENABLE, 10_000);
        assert!(!p.irq_level(10_624));
        assert!(p.irq_level(10_625));
        assert_eq!(p.read(PhysTimerReg::Ctl, 10_625), CTL_ENABLE | CTL_ISTATUS);
        // rescheduled further out: the level drops again
        p.write(PhysTimerReg::Tval, 1000, 10_625);
        assert!(!p.irq_level(10_626));
        p.write(PhysTimerReg::Ctl, CTL_ENABLE | CTL_IMASK, 0);
        assert!(!p.irq_level(u64::MAX));
        p.reset();
        assert_eq!(p.read(PhysTimerReg::Ctl, 0), 0);
    }
}
