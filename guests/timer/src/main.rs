//! `timer`: generic-timer checks on the virtual timer (`CNTV_*`, PPI 27 on `virt`) and the
//! EL1 physical timer (`CNTP_*`, PPI 30), PPIs taken from the DTB.
//!
//! Prints `CNTVCT at start` and `CNTFRQ_EL0` (non-zero), then for each timer: (a) a periodic
//! 1 kHz tick for 1 s of counter time delivers 1000 ± 1 interrupts; (b) a CPU in WFI with
//! the timer armed 10 ms ahead wakes after at least 10 ms and at most 12 ms (10 ms +
//! `wfi_slack_us=N` from the command line, for configurations with several VMs).
//! Prints `timer: PASS` and calls SYSTEM_OFF, or `timer: FAIL <what>` and SYSTEM_RESET.
#![no_std]
#![no_main]

mod periodic;
mod state;
mod wfi;

use guest_rt::platform::Platform;
use guest_rt::timer::{self, Timer};
use guest_rt::{gic, mmu, psci};

/// Prints one line prefixed with `timer: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("timer: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

/// Reports a failed check and ends the run with SYSTEM_RESET.
pub(crate) fn fail(what: core::fmt::Arguments<'_>) -> ! {
    say!("FAIL {}", what);
    psci::system_reset()
}

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    let start = timer::virtual_count();
    let phys_start = timer::physical_count();
    // The VM's virtual counter starts near zero when the VM is created (its own
    // CNTVOFF_EL2), while the physical counter has run since the machine started.
    let offset = phys_start.wrapping_sub(start);
    say!(
        "CNTVCT at start = {}, CNTPCT = {}: this VM's counter offset is {} ticks",
        start,
        phys_start,
        offset
    );
    mmu::enable();
    let plat = match Platform::from_dtb(dtb) {
        Ok(p) => p,
        Err(e) => fail(format_args!("device tree: {e}")),
    };
    let freq = timer::frequency();
    say!("CNTFRQ_EL0 = {} Hz", freq);
    if freq == 0 {
        fail(format_args!("CNTFRQ_EL0 is 0"));
    }
    // The VM is created after the hypervisor booted (well over 1 ms of physical time) and
    // its virtual counter starts at zero then.
    if offset < freq / 1000 {
        fail(format_args!(
            "virtual counter not offset from the physical one: CNTVCT {start}, CNTPCT \
             {phys_start}"
        ));
    }
    say!(
        "timer PPIs: virtual {}, physical {}",
        plat.timer.virt,
        plat.timer.phys
    );
    if let Err(e) = gic::init(&plat.gic) {
        fail(format_args!("gic init: {e}"));
    }
    state::install(&plat.timer);

    let slack_us = plat
        .bootargs
        .split_whitespace()
        .find_map(|w| w.strip_prefix("wfi_slack_us=")?.parse().ok())
        .unwrap_or(wfi::SLACK_US);
    for t in [Timer::Virtual, Timer::Physical] {
        periodic::run(t);
        wfi::run(t, slack_us);
    }

    say!("PASS");
    psci::system_off()
}
