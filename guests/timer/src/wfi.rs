//! (b) WFI with the timer armed 10 ms ahead (through `TVAL`): the CPU wakes, takes the
//! interrupt, and at least 10 ms and at most 12 ms (or 10 ms + `wfi_slack_us`) of counter
//! time have passed.

use crate::state::{self, Mode, COUNT, LAST_AT};
use crate::{fail, say};
use core::sync::atomic::Ordering;
use guest_rt::irq;
use guest_rt::timer::{self, Timer};

/// How far ahead the timer is armed, in microseconds.
const DELAY_US: u64 = 10_000;
/// How late the wake-up may be, in microseconds, unless the command line says
/// `wfi_slack_us=N` (configurations that run several VMs on a loaded emulator host).
pub const SLACK_US: u64 = 2_000;

/// Runs the WFI check on timer `t`, allowing a wake-up up to `slack_us` late.
pub fn run(t: Timer, slack_us: u64) {
    let delay = state::us(DELAY_US);
    state::arm(t, Mode::OneShot, None, 0, 0);
    let armed = t.count();
    t.set_tval(delay as i32);
    t.set_ctl(timer::CTL_ENABLE);
    let mut wakeups = 0u64;
    // Masked WFI: an interrupt arriving between the check and WFI still ends WFI.
    irq::disable();
    while COUNT.load(Ordering::Acquire) == 0 {
        irq::wait_for_interrupt();
        wakeups += 1;
        irq::enable();
        irq::disable();
    }
    let woke = t.count();
    state::stop(t);
    let elapsed = woke - armed;
    let fired = LAST_AT.load(Ordering::Relaxed) - armed;
    say!(
        "{} timer: WFI armed {} us ahead (TVAL): woke after {} us (handler at {} us), {} WFI \
         wake-up(s)",
        t.name(),
        DELAY_US,
        timer::ticks_to_us(elapsed),
        timer::ticks_to_us(fired),
        wakeups
    );
    if fired < delay || elapsed < delay {
        fail(format_args!(
            "{} timer: woke after {} us, before {} us",
            t.name(),
            timer::ticks_to_us(elapsed),
            DELAY_US
        ));
    }
    if elapsed > delay + state::us(slack_us) {
        fail(format_args!(
            "{} timer: woke after {} us, more than {} us",
            t.name(),
            timer::ticks_to_us(elapsed),
            DELAY_US + slack_us
        ));
    }
}
