//! Logging macros: every hypervisor line starts with `[hv] `. Warnings about guest-caused
//! events are rate limited, so a guest that repeats a bad access in a loop cannot flood the
//! console that every VM and the hypervisor share.

use core::sync::atomic::{AtomicU64, Ordering};

/// Warnings printed per window before further ones are only counted.
pub const WARN_BURST: u64 = 64;
/// Length of a rate-limit window in microseconds.
const WARN_WINDOW_US: u64 = 1_000_000;

static WINDOW_START: AtomicU64 = AtomicU64::new(0);
static IN_WINDOW: AtomicU64 = AtomicU64::new(0);
static SUPPRESSED: AtomicU64 = AtomicU64::new(0);

/// Whether a warning may be printed now; counts it either way. When a new window opens
/// after warnings were dropped, prints how many. Races between CPUs only blur the limit.
pub fn warn_allowed() -> bool {
    let now = super::timer::now();
    let start = WINDOW_START.load(Ordering::Relaxed);
    if now.wrapping_sub(start) >= super::timer::us_to_ticks(WARN_WINDOW_US)
        && WINDOW_START
            .compare_exchange(start, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        IN_WINDOW.store(0, Ordering::Relaxed);
        report_suppressed();
    }
    if IN_WINDOW.fetch_add(1, Ordering::Relaxed) < WARN_BURST {
        true
    } else {
        SUPPRESSED.fetch_add(1, Ordering::Relaxed);
        false
    }
}

/// Prints how many warnings the rate limit dropped since it last said so (if any).
pub fn report_suppressed() {
    let dropped = SUPPRESSED.swap(0, Ordering::Relaxed);
    if dropped != 0 {
        super::console::write_fmt(format_args!(
            "[hv] warn: {dropped} more warning(s) suppressed (over {WARN_BURST} per second)\n"
        ));
    }
}

/// Prints one `[hv] ` line on the hypervisor console.
#[macro_export]
macro_rules! hv_log {
    ($($arg:tt)*) => {
        $crate::arch::console::write_fmt(format_args!("[hv] {}\n", format_args!($($arg)*)))
    };
}

/// Logs a guest-caused event that the hypervisor answered architecturally (at most
/// [`WARN_BURST`](crate::arch::log::WARN_BURST) per second; the rest are counted).
#[macro_export]
macro_rules! hv_warn {
    ($($arg:tt)*) => {
        if $crate::arch::log::warn_allowed() {
            $crate::arch::console::write_fmt(format_args!("[hv] warn: {}\n", format_args!($($arg)*)))
        }
    };
}
