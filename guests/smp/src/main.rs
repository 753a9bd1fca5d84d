//! `smp`: brings up every CPU of the device tree with PSCI `CPU_ON`, checks the PSCI error
//! returns (`ALREADY_ON`, `INVALID_PARAMETERS`, `INVALID_ADDRESS`) and `AFFINITY_INFO`, runs
//! a shared-memory workload on all CPUs, stops the secondaries with `CPU_OFF` and restarts
//! one. Prints `smp: PASS` and calls SYSTEM_OFF, or `smp: FAIL <what>` and SYSTEM_RESET.
//!
//! Bootargs: `oversub` only changes a report line (the hypervisor runs more vCPUs than
//! physical CPUs; the guest does the same work). `fair` replaces the PSCI checks and the
//! workload with the fairness measurement (`fairness.rs`): every CPU counts its progress in
//! one window of virtual time, and each share must be within 10 % of equal.
#![no_std]
#![no_main]

mod bringup;
mod fairness;
mod psci_checks;
mod shared;
mod workload;

use guest_rt::platform::Platform;
use guest_rt::{mmu, psci, smp, timer};

/// Prints one line prefixed with `smp: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("smp: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

/// Reports a failed check and ends the run with SYSTEM_RESET.
pub(crate) fn fail(what: core::fmt::Arguments<'_>) -> ! {
    say!("FAIL {}", what);
    psci::system_reset()
}

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    mmu::enable();
    let plat = match Platform::from_dtb(dtb) {
        Ok(p) => p,
        Err(e) => fail(format_args!("device tree: {e}")),
    };
    let me = smp::this_mpidr();
    say!(
        "cpus in DTB: {}, boot CPU MPIDR={:#x}, CNTFRQ={} Hz, MMU on",
        plat.ncpus,
        me,
        timer::frequency()
    );
    if plat.bootarg("oversub") {
        say!("oversub: same workload; the hypervisor multiplexes the vCPUs");
    }
    if !plat.cpu_ids().contains(&me) {
        fail(format_args!("boot MPIDR {me:#x} is not in /cpus"));
    }

    if plat.bootarg("fair") {
        fairness::ENABLED.store(true, core::sync::atomic::Ordering::Release);
        let started = bringup::start_all(&plat);
        fairness::run(started.count());
        bringup::stop_all(&started);
        say!("PASS");
        psci::system_off()
    }
    let started = bringup::start_all(&plat);
    psci_checks::while_running(&plat, &started);
    workload::run(started.count());
    bringup::stop_all(&started);
    psci_checks::while_off(&plat, &started);
    bringup::restart_one(&started);

    say!("PASS");
    psci::system_off()
}
