//! Panic handler: report the panic on the console, then request PSCI SYSTEM_RESET (the
//! failure exit of a test guest).

use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    match info.location() {
        Some(loc) => crate::println!("guest-rt: PANIC at {}: {}", loc, info.message()),
        None => crate::println!("guest-rt: PANIC: {}", info.message()),
    }
    crate::psci::system_reset()
}
