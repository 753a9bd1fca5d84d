//! The runtime's own diagnostics on the VM's PL011 (the same console the guest prints on):
//! only fatal errors and the counters line at power-off.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU64, Ordering};

/// The PL011's data register (from the guest's device tree; 0: none).
static UART: AtomicU64 = AtomicU64::new(0);

/// Uses the PL011 at `base` (an IPA in the device range, reached through the physical
/// window: the guest's MMU may map anything at `base`).
pub fn init(base: u64) {
    UART.store(crate::mmu::WINDOW + base, Ordering::Relaxed);
}

struct Pl011;

impl Write for Pl011 {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let base = UART.load(Ordering::Relaxed);
        if base == 0 {
            return Ok(());
        }
        for b in s.bytes() {
            // SAFETY: UARTDR of the VM's PL011 (device memory, emulated by the hypervisor).
            unsafe { core::ptr::write_volatile(base as *mut u32, b as u32) };
        }
        Ok(())
    }
}

/// Prints a line prefixed with `[dbt-runtime] `.
pub fn line(args: fmt::Arguments<'_>) {
    let _ = writeln!(Pl011, "[dbt-runtime] {args}");
}

/// Reports a fatal runtime error and ends the VM (PSCI `SYSTEM_RESET`: a failure).
pub fn fatal_args(args: fmt::Arguments<'_>) -> ! {
    line(format_args!("FATAL: {args}"));
    crate::calls::system_reset()
}

/// [`fatal_args`] with a plain message.
pub fn fatal(msg: &str) -> ! {
    fatal_args(format_args!("{msg}"))
}
