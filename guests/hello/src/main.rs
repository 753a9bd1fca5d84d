//! `hello`: the first guest. It reports what it was given (device tree, CPU identity,
//! SMCCC/PSCI versions and features), checks a little FP/NEON arithmetic, prints
//! `hello: PASS` and powers off with PSCI SYSTEM_OFF.
//!
//! With the word `reset` in `/chosen/bootargs` it instead prints
//! `hello: requesting SYSTEM_RESET` and calls SYSTEM_RESET (to test non-zero exit status).
//! Any failed check prints `hello: FAIL <what>` and calls SYSTEM_RESET.
//!
//! Two more bootargs words exercise the runtime's failure paths (both end in SYSTEM_RESET):
//! `panic` panics, `crash` executes an UNDEFINED instruction (`udf #0`) nobody expects.
#![no_std]
#![no_main]

mod cpu;
mod dtb;
mod firmware;
mod fp;

use guest_rt::psci;

/// Prints one line prefixed with `hello: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("hello: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

/// Reports a failed check and ends the run with SYSTEM_RESET.
pub(crate) fn fail(what: core::fmt::Arguments<'_>) -> ! {
    say!("FAIL {}", what);
    psci::system_reset()
}

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    say!("Hello from a bare-metal AArch64 EL1 guest (guest-rt, MMU off)");
    let facts = dtb::report(dtb);
    // `crash` comes before the CPU and firmware reports, so a crashing VM ends early: the
    // one-vm-fails scenario needs the crash to precede its neighbour's PASS.
    if facts.bootargs_word("crash") {
        say!("executing an unexpected UNDEFINED instruction");
        // SAFETY: `udf` only raises an UNDEFINED exception; with no fault expected, guest-rt's
        // vectors report it and request SYSTEM_RESET, which is the point.
        unsafe { core::arch::asm!("udf #0", options(nomem, nostack)) };
    }
    cpu::report(&facts);
    firmware::report();
    fp::check();

    if facts.bootargs_word("panic") {
        panic!("requested by bootargs");
    }
    if facts.bootargs_word("reset") {
        say!("requesting SYSTEM_RESET");
        psci::system_reset();
    }
    say!("PASS");
    psci::system_off()
}
