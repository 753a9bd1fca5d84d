//! The register semantics of one generic timer (`CNTx_CTL`, `CNTx_CVAL`, `CNTx_TVAL`).

/// `CNTx_CTL.ENABLE`.
pub const CTL_ENABLE: u64 = 1 << 0;
/// `CNTx_CTL.IMASK`: the timer condition does not assert the interrupt.
pub const CTL_IMASK: u64 = 1 << 1;
/// `CNTx_CTL.ISTATUS` (read-only): the timer condition is met.
pub const CTL_ISTATUS: u64 = 1 << 2;

/// Control and compare value of one timer. `ctl` stores ENABLE and IMASK only; ISTATUS
/// is derived from the counter when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerState {
    /// `CNTx_CTL` writable bits.
    pub ctl: u64,
    /// `CNTx_CVAL`.
    pub cval: u64,
}

impl TimerState {
    /// The timer condition: enabled and the counter has reached `CVAL`.
    pub fn condition_met(&self, now: u64) -> bool {
        self.ctl & CTL_ENABLE != 0 && now >= self.cval
    }

    /// The interrupt output: condition met and not masked.
    pub fn asserted(&self, now: u64) -> bool {
        self.condition_met(now) && self.ctl & CTL_IMASK == 0
    }

    /// `CNTx_CTL` as read at counter value `now` (with ISTATUS).
    pub fn read_ctl(&self, now: u64) -> u64 {
        self.ctl
            | if self.condition_met(now) {
                CTL_ISTATUS
            } else {
                0
            }
    }

    /// A write to `CNTx_CTL` (ISTATUS and RES0 bits ignored).
    pub fn write_ctl(&mut self, value: u64) {
        self.ctl = value & (CTL_ENABLE | CTL_IMASK);
    }

    /// `CNTx_TVAL` as read: the low 32 bits of `CVAL - now`, a signed down-counter.
    pub fn read_tval(&self, now: u64) -> u64 {
        (self.cval.wrapping_sub(now) as u32) as u64
    }

    /// A write to `CNTx_TVAL`: `CVAL = now + SignExtend(value[31:0])`.
    pub fn write_tval(&mut self, value: u64, now: u64) {
        self.cval = now.wrapping_add(value as u32 as i32 as i64 as u64);
    }

    /// When the interrupt output will assert (compare value), if enabled and unmasked.
    pub fn deadline(&self) -> Option<u64> {
        (self.ctl & CTL_ENABLE != 0 && self.ctl & CTL_IMASK == 0).then_some(self.cval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn armed_fired_masked() {
        let mut t = TimerState::default();
        assert!(!t.asserted(u64::MAX));
        t.cval = 1000;
        t.write_ctl(CTL_ENABLE | CTL_ISTATUS | 0xf0);
        assert_eq!(t.ctl, CTL_ENABLE);
        assert!(!t.asserted(999));
        assert_eq!(t.read_ctl(999), CTL_ENABLE);
        assert!(t.asserted(1000));
        assert_eq!(t.read_ctl(1000), CTL_ENABLE | CTL_ISTATUS);
        t.write_ctl(CTL_ENABLE | CTL_IMASK);
        assert!(!t.asserted(2000));
        assert_eq!(t.read_ctl(2000), CTL_ENABLE | CTL_IMASK | CTL_ISTATUS);
        assert_eq!(t.deadline(), None);
    }

    #[test]
    fn tval_is_signed_32_bit() {
        let mut t = TimerState::default();
        t.write_tval(100, 5000);
        assert_eq!(t.cval, 5100);
        assert_eq!(t.read_tval(5000), 100);
        assert_eq!(t.read_tval(5200), (-100i32) as u32 as u64);
        t.write_tval(0xffff_ff00, 5000); // -256
        assert_eq!(t.cval, 5000 - 256);
        t.write_tval(0x1_0000_0010, 0); // upper bits ignored
        assert_eq!(t.cval, 0x10);
    }

    proptest! {
        #[test]
        fn tval_round_trips(now in 0u64..u64::MAX / 2, tval in any::<i32>()) {
            let mut t = TimerState::default();
            t.write_tval(tval as u32 as u64, now);
            prop_assert_eq!(t.read_tval(now), tval as u32 as u64);
        }

        #[test]
        fn asserted_implies_condition(ctl in 0u64..8, cval: u64, now: u64) {
            let mut t = TimerState::default();
            t.write_ctl(ctl);
            t.cval = cval;
            if t.asserted(now) {
                prop_assert!(t.condition_met(now));
                prop_assert_eq!(t.deadline(), Some(cval));
            }
        }
    }
}
