//! The EL2 physical timer (`CNTHP_*_EL2`, PPI 26): time slices for the scheduler and
//! software timers standing in for blocked vCPUs' timers. Time is the physical counter
//! `CNTPCT_EL0` in ticks of `CNTFRQ_EL0`.

use el2_core::{read_sysreg, write_sysreg};

/// `CNTHP_CTL_EL2.ENABLE`.
const CTL_ENABLE: u64 = 1;
/// `CNTHP_CTL_EL2.IMASK`.
const CTL_IMASK: u64 = 1 << 1;

/// The physical counter now.
pub fn now() -> u64 {
    // SAFETY: ISB so the counter read is not speculated ahead of earlier instructions.
    unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
    read_sysreg!("cntpct_el0")
}

/// Counter frequency in Hz.
pub fn frequency() -> u64 {
    read_sysreg!("cntfrq_el0")
}

/// Converts microseconds to counter ticks.
pub fn us_to_ticks(us: u64) -> u64 {
    frequency().saturating_mul(us) / 1_000_000
}

/// Fires the EL2 timer interrupt at counter value `deadline`.
pub fn arm(deadline: u64) {
    write_sysreg!("cnthp_cval_el2", deadline);
    write_sysreg!("cnthp_ctl_el2", CTL_ENABLE);
}

/// Stops the EL2 timer.
pub fn disarm() {
    write_sysreg!("cnthp_ctl_el2", CTL_IMASK);
}
