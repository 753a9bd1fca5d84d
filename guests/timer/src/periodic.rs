//! (a) A periodic 1 kHz tick for 1 s of counter time delivers 1000 ± 1 interrupts.

use crate::state::{self, Mode, COUNT, MAX_LATE};
use crate::{fail, say};
use core::sync::atomic::Ordering;
use guest_rt::irq;
use guest_rt::timer::{self, Timer};

/// Tick rate in Hz.
const HZ: u64 = 1000;
/// Length of the run in microseconds of counter time.
const RUN_US: u64 = 1_000_000;

/// Runs the periodic check on timer `t`.
pub fn run(t: Timer) {
    let period = timer::frequency() / HZ;
    let expected = RUN_US * HZ / 1_000_000;
    let start = t.count();
    let end = start + expected * period;
    state::arm(t, Mode::Periodic, Some(start + period), period, end);
    // Sleep in WFI until the counter reaches the end; each tick wakes us.
    irq::disable();
    while t.count() < end {
        irq::wait_for_interrupt();
        irq::enable();
        irq::disable();
    }
    let at_end = COUNT.load(Ordering::Acquire);
    // Let the last tick (due exactly at `end`) land, then stop.
    irq::enable();
    timer::wait_until(10_000, || COUNT.load(Ordering::Acquire) >= expected);
    state::stop(t);
    let total = COUNT.load(Ordering::Acquire);
    let late_us = timer::ticks_to_us(MAX_LATE.load(Ordering::Relaxed));
    say!(
        "{} timer: {} Hz for {} ms: {} interrupts when the counter reached the end, {} in all, \
         max latency {} us",
        t.name(),
        HZ,
        RUN_US / 1000,
        at_end,
        total,
        late_us
    );
    if at_end + 1 < expected || at_end > expected + 1 || total != expected {
        fail(format_args!(
            "{} timer: {at_end} interrupts in {} ms (total {total}), expected {expected} ± 1",
            t.name(),
            RUN_US / 1000
        ));
    }
}
