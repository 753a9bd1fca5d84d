//! PSCI answers the spec prescribes: `CPU_ON` of a running CPU, of an MPIDR that does not
//! exist and with an entry point outside RAM, and `AFFINITY_INFO`.

use crate::bringup::Started;
use crate::{fail, say};
use guest_rt::platform::Platform;
use guest_rt::{psci, smp, timer};

/// Fails unless `got` is one of `want`.
fn expect(what: core::fmt::Arguments<'_>, got: i64, want: &[i64]) {
    expect_named(what, got, want, psci::return_name(got));
}

/// [`expect`] for `AFFINITY_INFO`, whose non-negative results are states.
fn expect_affinity(what: core::fmt::Arguments<'_>, got: i64, want: &[i64]) {
    let name = match got {
        psci::AFFINITY_ON => "ON",
        psci::AFFINITY_OFF => "OFF",
        psci::AFFINITY_ON_PENDING => "ON_PENDING",
        e => psci::return_name(e),
    };
    expect_named(what, got, want, name);
}

fn expect_named(what: core::fmt::Arguments<'_>, got: i64, want: &[i64], name: &str) {
    if want.contains(&got) {
        say!("{}: {} ({}) ok", what, got, name);
    } else {
        fail(format_args!("{what}: {got} ({name}), expected {want:?}"));
    }
}

/// Entry function for a CPU_ON that must not start anything.
fn must_not_run(_arg: usize) {
    fail(format_args!(
        "cpu {} started although it was already on",
        smp::this_cpu()
    ));
}

/// An MPIDR that is not in `/cpus`: Aff0 one above the highest, same upper affinity as the
/// boot CPU.
fn absent_mpidr(plat: &Platform) -> u64 {
    let me = smp::this_mpidr();
    let highest = plat.cpu_ids().iter().map(|m| m & 0xff).max().unwrap_or(0);
    (me & !0xff) | ((highest + 1) & 0xff)
}

/// Checks done while every CPU is on.
pub fn while_running(plat: &Platform, started: &Started) {
    for (mpidr, index) in started.iter() {
        // ON_PENDING is allowed while the CPU is still coming up: retry.
        let mut ret = 0;
        timer::wait_until(5_000_000, || {
            ret = smp::start_secondary(mpidr, must_not_run, 0).unwrap_or(-1000);
            ret != psci::ON_PENDING
        });
        expect(
            format_args!("CPU_ON(cpu {index}, MPIDR {mpidr:#x}) while on"),
            ret,
            &[psci::ALREADY_ON],
        );
    }
    let me = smp::this_mpidr();
    expect(
        format_args!("CPU_ON(self, MPIDR {me:#x})"),
        psci::cpu_on(me, smp::secondary_entry_point(), 0),
        &[psci::ALREADY_ON],
    );
    for absent in [absent_mpidr(plat), 0xff00] {
        expect(
            format_args!("CPU_ON(absent MPIDR {absent:#x})"),
            psci::cpu_on(absent, smp::secondary_entry_point(), 0),
            &[psci::INVALID_PARAMETERS],
        );
        expect(
            format_args!("AFFINITY_INFO(absent MPIDR {absent:#x})"),
            psci::affinity_info(absent, 0),
            &[psci::INVALID_PARAMETERS],
        );
    }
    for &mpidr in plat.cpu_ids() {
        expect_affinity(
            format_args!("AFFINITY_INFO({mpidr:#x}) while on"),
            psci::affinity_info(mpidr, 0),
            &[psci::AFFINITY_ON],
        );
    }
}

/// Checks done once the secondaries are off: `CPU_ON` with entry point 0x1 (not in RAM, not
/// 4-byte aligned) must be refused with INVALID_ADDRESS (the spec's answer; INVALID_PARAMETERS
/// is accepted too) and leave the CPU off.
pub fn while_off(_plat: &Platform, started: &Started) {
    let Some((mpidr, index)) = started.iter().next() else {
        say!("CPU_ON with a bad entry point: skipped (no secondary CPU)");
        return;
    };
    expect(
        format_args!("CPU_ON(cpu {index}, entry 0x1)"),
        psci::cpu_on(mpidr, 0x1, 0),
        &[psci::INVALID_ADDRESS, psci::INVALID_PARAMETERS],
    );
    expect_affinity(
        format_args!("AFFINITY_INFO(cpu {index}) after refused CPU_ON"),
        psci::affinity_info(mpidr, 0),
        &[psci::AFFINITY_OFF],
    );
}
