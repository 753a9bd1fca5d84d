//! Logging macros: every hypervisor line starts with `[hv] `.

/// Prints one `[hv] ` line on the hypervisor console.
#[macro_export]
macro_rules! hv_log {
    ($($arg:tt)*) => {
        $crate::arch::console::write_fmt(format_args!("[hv] {}\n", format_args!($($arg)*)))
    };
}

/// Logs a guest-caused event that the hypervisor answered architecturally.
#[macro_export]
macro_rules! hv_warn {
    ($($arg:tt)*) => {
        $crate::arch::console::write_fmt(format_args!("[hv] warn: {}\n", format_args!($($arg)*)))
    };
}
