//! The EL2 physical timer (`CNTHP_*_EL2`, PPI 26): time slices for the scheduler and
//! software timers standing in for blocked vCPUs' timers. Time is the physical counter
//! `CNTPCT_EL0` in ticks of `CNTFRQ_EL0`.

use aarch64_cpu::registers::{CNTFRQ_EL0, CNTHP_CTL_EL2, CNTPCT_EL0};
use el2_core::sysreg::CNTHP_CVAL_EL2;
use tock_registers::interfaces::{Readable, Writeable};

/// The physical counter now.
pub fn now() -> u64 {
    // SAFETY: ISB so the counter read is not speculated ahead of earlier instructions.
    unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
    CNTPCT_EL0.get()
}

/// Counter frequency in Hz.
pub fn frequency() -> u64 {
    CNTFRQ_EL0.get()
}

/// Converts microseconds to counter ticks.
pub fn us_to_ticks(us: u64) -> u64 {
    frequency().saturating_mul(us) / 1_000_000
}

/// Fires the EL2 timer interrupt at counter value `deadline`.
pub fn arm(deadline: u64) {
    CNTHP_CVAL_EL2.set(deadline);
    CNTHP_CTL_EL2.write(CNTHP_CTL_EL2::ENABLE::SET + CNTHP_CTL_EL2::IMASK::CLEAR);
}

/// Stops the EL2 timer.
pub fn disarm() {
    CNTHP_CTL_EL2.write(CNTHP_CTL_EL2::ENABLE::CLEAR + CNTHP_CTL_EL2::IMASK::SET);
}
