//! Generic timer helpers: counter frequency and values, the EL1 virtual timer (`CNTV_*`) and
//! the EL1 physical timer (`CNTP_*`). Their interrupts are PPIs; the INTIDs come from the DTB
//! ([`crate::platform::TimerPpis`]).

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    Readable, Writeable, CNTFRQ_EL0, CNTPCT_EL0, CNTP_CTL_EL0, CNTP_CVAL_EL0, CNTP_TVAL_EL0,
    CNTVCT_EL0, CNTV_CTL_EL0, CNTV_CVAL_EL0, CNTV_TVAL_EL0,
};

/// Counter frequency in Hz (`CNTFRQ_EL0`).
pub fn frequency() -> u64 {
    CNTFRQ_EL0.get()
}

/// Virtual counter (`CNTVCT_EL0`), read after an `ISB` so it is not taken early.
pub fn virtual_count() -> u64 {
    barrier::isb(barrier::SY);
    CNTVCT_EL0.get()
}

/// `CNTVCT_EL0` with an `ISB` before and after, so the read is ordered against the code
/// around it on both sides (for timing a span: `stamp()`, work, `stamp()`).
#[inline(always)]
pub fn stamp() -> u64 {
    let t: u64;
    // SAFETY: reading the virtual counter has no side effects; ISB only synchronises.
    unsafe {
        core::arch::asm!("isb", "mrs {t}, cntvct_el0", "isb", t = out(reg) t, options(nostack))
    };
    t
}

/// Physical counter (`CNTPCT_EL0`), read after an `ISB`.
pub fn physical_count() -> u64 {
    barrier::isb(barrier::SY);
    CNTPCT_EL0.get()
}

/// Converts microseconds to counter ticks at [`frequency`].
pub fn us_to_ticks(us: u64) -> u64 {
    frequency() * us / 1_000_000
}

/// Converts counter ticks to microseconds at [`frequency`].
pub fn ticks_to_us(ticks: u64) -> u64 {
    ticks * 1_000_000 / frequency().max(1)
}

/// Which EL1 timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Virtual timer: `CNTV_CTL/CVAL/TVAL_EL0`, compared against `CNTVCT_EL0`.
    Virtual,
    /// EL1 physical timer: `CNTP_CTL/CVAL/TVAL_EL0`, compared against `CNTPCT_EL0`.
    Physical,
}

/// `CNTx_CTL_EL0.ENABLE`.
pub const CTL_ENABLE: u64 = 1 << 0;
/// `CNTx_CTL_EL0.IMASK`: the timer condition does not assert the interrupt.
pub const CTL_IMASK: u64 = 1 << 1;
/// `CNTx_CTL_EL0.ISTATUS` (read-only): the timer condition is met.
pub const CTL_ISTATUS: u64 = 1 << 2;

impl Timer {
    /// Short name for reports ("virtual" / "physical").
    pub fn name(self) -> &'static str {
        match self {
            Timer::Virtual => "virtual",
            Timer::Physical => "physical",
        }
    }

    /// The counter this timer compares against.
    pub fn count(self) -> u64 {
        match self {
            Timer::Virtual => virtual_count(),
            Timer::Physical => physical_count(),
        }
    }

    /// Reads `CNTx_CTL_EL0`.
    pub fn ctl(self) -> u64 {
        match self {
            Timer::Virtual => CNTV_CTL_EL0.get(),
            Timer::Physical => CNTP_CTL_EL0.get(),
        }
    }

    /// Writes `CNTx_CTL_EL0` (then `ISB`).
    pub fn set_ctl(self, ctl: u64) {
        match self {
            Timer::Virtual => CNTV_CTL_EL0.set(ctl),
            Timer::Physical => CNTP_CTL_EL0.set(ctl),
        }
        barrier::isb(barrier::SY);
    }

    /// Reads `CNTx_CVAL_EL0`.
    pub fn cval(self) -> u64 {
        match self {
            Timer::Virtual => CNTV_CVAL_EL0.get(),
            Timer::Physical => CNTP_CVAL_EL0.get(),
        }
    }

    /// Writes `CNTx_CVAL_EL0` (absolute compare value).
    pub fn set_cval(self, cval: u64) {
        match self {
            Timer::Virtual => CNTV_CVAL_EL0.set(cval),
            Timer::Physical => CNTP_CVAL_EL0.set(cval),
        }
    }

    /// Reads `CNTx_TVAL_EL0` (signed 32-bit ticks until the condition is met).
    pub fn tval(self) -> i32 {
        (match self {
            Timer::Virtual => CNTV_TVAL_EL0.get(),
            Timer::Physical => CNTP_TVAL_EL0.get(),
        }) as u32 as i32
    }

    /// Writes `CNTx_TVAL_EL0` (compare value = counter + `ticks`).
    pub fn set_tval(self, ticks: i32) {
        let v = ticks as u32 as u64;
        match self {
            Timer::Virtual => CNTV_TVAL_EL0.set(v),
            Timer::Physical => CNTP_TVAL_EL0.set(v),
        }
    }

    /// Arms the timer to fire at absolute counter value `cval`, interrupt unmasked.
    pub fn arm_at(self, cval: u64) {
        self.set_cval(cval);
        self.set_ctl(CTL_ENABLE);
    }

    /// Masks the timer's interrupt output (keeps it enabled): what a handler does to drop the
    /// level before EOI when it does not re-arm.
    pub fn mask(self) {
        self.set_ctl(CTL_ENABLE | CTL_IMASK);
    }

    /// Disables the timer.
    pub fn disable(self) {
        self.set_ctl(0);
    }
}

/// Spins until `cond()` holds or `timeout_us` microseconds of virtual counter time passed;
/// returns whether `cond()` held.
pub fn wait_until(timeout_us: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = virtual_count() + us_to_ticks(timeout_us);
    loop {
        if cond() {
            return true;
        }
        if virtual_count() >= deadline {
            return cond();
        }
        core::hint::spin_loop();
    }
}
