//! The image entered below EL2 (a boot loader or firmware that starts kernels at EL1, or
//! QEMU without `virtualization=on`): the boot code sends the CPU here instead of parking it
//! silently. With the MMU off and nothing of EL2 touched, this finds the console in the
//! device tree, says what is wrong and what the firmware must do, and stops: under QEMU
//! with `exit=semihosting` QEMU exits with status 3, otherwise the CPU parks so the message
//! stays on the console. (The EFI entry refuses the same way through the firmware's console
//! before calling ExitBootServices, see `uefi`.)

use super::{console, discover, power};
use crate::bootargs::{BootArgs, ExitMethod};

/// Exit status for "entered below EL2" under `exit=semihosting`.
pub const STATUS_BELOW_EL2: u32 = 3;

/// First Rust code when `_start` found `CurrentEL` below EL2 (`el` = `CurrentEL.EL`).
#[no_mangle]
pub extern "C" fn hv_refuse_below_el2(dtb_pa: u64, el: u64) -> ! {
    if let Some((info, _)) = discover::discover(dtb_pa, None) {
        if let Some(uart) = info.uart {
            let msg = if el == 1 {
                "[hv] refusing to start: entered at EL1, but this hypervisor runs at EL2: the boot loader or \
                 firmware must start it at EL2 (virtualization extensions on; QEMU: -M \
                 virt,virtualization=on).\n"
            } else {
                "[hv] refusing to start: entered below EL2 (not at EL1 either), but this hypervisor runs at \
                 EL2.\n"
            };
            // SAFETY: the only CPU running, the console is not initialised, the MMU is off
            // and the UART's registers are reachable at their physical address.
            unsafe { console::early_print(uart.base, info.uart_kind, msg) };
            let args = BootArgs::parse(info.bootargs, |_| {});
            if args.exit == ExitMethod::Semihosting {
                power::configure(args.exit, None);
                power::exit(STATUS_BELOW_EL2);
            }
        }
    }
    loop {
        // SAFETY: parks the CPU: nothing may run below EL2.
        unsafe { core::arch::asm!("wfe", options(nomem, nostack)) };
    }
}
