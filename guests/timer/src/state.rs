//! The timer interrupt handler and the state it shares with the checks.

use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::TimerPpis;
use guest_rt::timer::{self, Timer};
use guest_rt::{gic, irq};

/// What the handler does when the timer fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Mode {
    /// Count, then move `CVAL` one period on (or mask the timer once past `END`).
    Periodic = 0,
    /// Count, record the time, mask the timer.
    OneShot = 1,
}

static MODE: AtomicU64 = AtomicU64::new(0);
/// Periodic mode: period in ticks and the last compare value to program.
static PERIOD: AtomicU64 = AtomicU64::new(0);
static END: AtomicU64 = AtomicU64::new(0);
/// Interrupts taken since [`arm`].
pub static COUNT: AtomicU64 = AtomicU64::new(0);
/// Counter value when the handler last ran.
pub static LAST_AT: AtomicU64 = AtomicU64::new(0);
/// Largest (handler time - `CVAL`) seen, in ticks.
pub static MAX_LATE: AtomicU64 = AtomicU64::new(0);
static PPIS: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// Which timer raised `intid`.
fn timer_of(intid: u32) -> Timer {
    if u64::from(intid) == PPIS[1].load(Ordering::Relaxed) {
        Timer::Physical
    } else {
        Timer::Virtual
    }
}

/// The PPI of timer `t`.
pub fn ppi(t: Timer) -> u32 {
    PPIS[(t == Timer::Physical) as usize].load(Ordering::Relaxed) as u32
}

fn handler(intid: u32) {
    let t = timer_of(intid);
    let now = t.count();
    let cval = t.cval();
    LAST_AT.store(now, Ordering::Relaxed);
    MAX_LATE.fetch_max(now.saturating_sub(cval), Ordering::Relaxed);
    COUNT.fetch_add(1, Ordering::AcqRel);
    if MODE.load(Ordering::Relaxed) == Mode::Periodic as u64 {
        let next = cval + PERIOD.load(Ordering::Relaxed);
        if next <= END.load(Ordering::Relaxed) {
            // Drift-free: the next tick is one period after the last compare value.
            t.set_cval(next);
            return;
        }
    }
    // Drop the level before EOI.
    t.mask();
}

/// Installs the handler for both timer PPIs.
pub fn install(ppis: &TimerPpis) {
    PPIS[0].store(u64::from(ppis.virt), Ordering::Relaxed);
    PPIS[1].store(u64::from(ppis.phys), Ordering::Relaxed);
    irq::set_handler(ppis.virt, handler);
    irq::set_handler(ppis.phys, handler);
}

/// Resets the counters and arms `t` at `first` (counter value) in `mode`; periodic mode
/// re-arms every `period` ticks up to and including `end`. With `first = None` the timer
/// stays disabled and the caller arms it (e.g. through `TVAL`).
///
/// Never "arm far away" with a compare value near `u64::MAX`: QEMU 7.2 computes the next
/// expiry of the virtual timer as `CVAL + CNTVOFF_EL2` without overflow checks, so a
/// wrapped sum lies in the past and its main loop re-fires that timer forever (the whole
/// emulator hangs; real hardware is unaffected).
pub fn arm(t: Timer, mode: Mode, first: Option<u64>, period: u64, end: u64) {
    irq::disable();
    t.disable();
    MODE.store(mode as u64, Ordering::Relaxed);
    PERIOD.store(period, Ordering::Relaxed);
    END.store(end, Ordering::Relaxed);
    COUNT.store(0, Ordering::Relaxed);
    MAX_LATE.store(0, Ordering::Relaxed);
    LAST_AT.store(0, Ordering::Relaxed);
    gic::enable(ppi(t));
    if let Some(first) = first {
        t.arm_at(first);
    }
}

/// Stops `t` and its interrupt.
pub fn stop(t: Timer) {
    irq::disable();
    t.disable();
    gic::disable(ppi(t));
    gic::clear_pending(ppi(t));
}

/// Counter ticks per microsecond-based helper, re-exported for the checks.
pub fn us(us: u64) -> u64 {
    timer::us_to_ticks(us)
}
