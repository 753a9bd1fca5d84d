//! Panic handler: report the panic on the console, then request PSCI SYSTEM_RESET (the
//! failure exit of a test guest).

use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    crate::println!("guest-rt: PANIC {}", info);
    crate::psci::system_reset()
}
