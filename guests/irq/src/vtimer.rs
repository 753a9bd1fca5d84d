//! The virtual timer's PPI: armed 1 ms ahead it fires once; the handler masks the timer
//! (`CNTV_CTL_EL0.IMASK`) so the level drops before EOI and it is not taken again.

use crate::counts;
use crate::{fail, say};
use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::Platform;
use guest_rt::timer::{self, Timer, CTL_ISTATUS};
use guest_rt::{gic, irq};

/// `CNTV_CTL_EL0` as the handler saw it.
static CTL_SEEN: AtomicU64 = AtomicU64::new(0);
/// `CNTVCT_EL0` when the handler ran.
static FIRED_AT: AtomicU64 = AtomicU64::new(0);

/// Handler of the virtual-timer PPI.
pub fn handler(intid: u32) {
    CTL_SEEN.store(Timer::Virtual.ctl(), Ordering::Relaxed);
    FIRED_AT.store(timer::virtual_count(), Ordering::Relaxed);
    Timer::Virtual.mask();
    counts::record(intid);
}

/// Arms the virtual timer 1 ms ahead and checks exactly one interrupt arrives, not early.
pub fn run(plat: &Platform) {
    let ppi = plat.timer.virt;
    gic::enable(ppi);
    let armed = timer::virtual_count();
    let deadline = armed + timer::us_to_ticks(1000);
    Timer::Virtual.arm_at(deadline);
    irq::enable();
    let fired = timer::wait_until(1_000_000, || counts::count(0, ppi) >= 1);
    // A level interrupt not quietened by the handler would be taken again at once.
    timer::wait_until(5_000, || false);
    irq::disable();
    Timer::Virtual.disable();
    gic::disable(ppi);
    let n = counts::count(0, ppi);
    if !fired || n != 1 {
        fail(format_args!(
            "virtual timer: PPI {ppi} taken {n} times, expected 1"
        ));
    }
    let at = FIRED_AT.load(Ordering::Relaxed);
    if at < deadline {
        fail(format_args!(
            "virtual timer: handler ran at {at}, before CVAL {deadline}"
        ));
    }
    if CTL_SEEN.load(Ordering::Relaxed) & CTL_ISTATUS == 0 {
        fail(format_args!("virtual timer: ISTATUS clear in the handler"));
    }
    say!(
        "virtual timer: PPI {} fired once, {} us after arming (1000 us), EOIed ok",
        ppi,
        timer::ticks_to_us(at - armed)
    );
}
