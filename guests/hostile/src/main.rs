//! `hostile`: a guest that does what a guest must not be able to hurt anyone with, and checks
//! that it gets exactly the architectural answer real hardware (or plain QEMU) gives:
//! external aborts for unbacked addresses, UNDEFINED for unknown system registers,
//! NOT_SUPPORTED for unknown SMCCC functions, INVALID_PARAMETERS for bad PSCI arguments.
//!
//! Each check prints `hostile: <check>: ok (<details>)` or `hostile: FAIL <check> ...`.
//! All checks run; then `hostile: PASS` and SYSTEM_OFF, or a failure summary and
//! SYSTEM_RESET.
#![no_std]
#![no_main]

mod debug;
mod memory;
mod smc;
mod smccc_calls;
mod sysreg;

use guest_rt::platform::Platform;
use guest_rt::psci;
use guest_rt::report::Report;

/// Prints one line prefixed with `hostile: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("hostile: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    say!("start: probing unbacked memory, unknown system registers, bad SMCCC/PSCI calls");
    let mut report = Report::new("hostile");
    let plat = Platform::from_dtb(dtb);
    if let Err(e) = &plat {
        report.check(format_args!("device tree"), false, format_args!("{e}"));
    }
    memory::run(&mut report);
    sysreg::run(&mut report);
    smccc_calls::run(&mut report);
    smc::run();
    let pattern = plat
        .as_ref()
        .ok()
        .and_then(|p| {
            p.bootargs
                .split_whitespace()
                .find_map(|w| w.strip_prefix("dbg_pattern=")?.parse().ok())
        })
        .unwrap_or(0);
    debug::run(&mut report, pattern);
    // Last: its many aborts fill the hypervisor's warning budget (rate limit).
    if let Ok(p) = &plat {
        memory::sweep_above_ram(&mut report, p.ram.0 + p.ram.1);
    }

    if report.failures() == 0 {
        say!("PASS");
        psci::system_off()
    }
    say!(
        "FAIL {} of {} checks failed",
        report.failures(),
        report.checks()
    );
    psci::system_reset()
}
