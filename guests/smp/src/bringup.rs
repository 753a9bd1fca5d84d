//! Starting every CPU with PSCI `CPU_ON`, stopping them with `CPU_OFF` (the secondary's
//! entry function returns) and restarting one.

use crate::shared::{self, Phase, DONE, UP};
use crate::{fail, say, workload};
use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::{Platform, MAX_DT_CPUS};
use guest_rt::{psci, smp, timer};

/// How long a CPU gets to come up or go down, in microseconds.
const TIMEOUT_US: u64 = 10_000_000;

/// The secondaries started, by MPIDR, with their guest-rt CPU index.
pub struct Started {
    /// (MPIDR, CPU index) of each started secondary.
    pub cpus: [(u64, usize); MAX_DT_CPUS],
    /// Number of valid entries.
    pub n: usize,
}

impl Started {
    /// Number of CPUs taking part, boot CPU included.
    pub fn count(&self) -> usize {
        self.n + 1
    }

    /// The started secondaries.
    pub fn iter(&self) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.cpus[..self.n].iter().copied()
    }
}

/// Entry function of a secondary: report, count in, then follow the boot CPU's phases.
fn secondary(_arg: usize) {
    say!("cpu {} up, MPIDR={:#x}", smp::this_cpu(), smp::this_mpidr());
    UP.fetch_add(1, Ordering::AcqRel);
    shared::wait_phase(Phase::Work);
    if crate::fairness::ENABLED.load(Ordering::Acquire) {
        crate::fairness::spin(smp::this_cpu());
    } else {
        workload::work(smp::this_cpu());
    }
    DONE.fetch_add(1, Ordering::AcqRel);
    shared::wait_phase(Phase::Off);
}

/// Starts every `/cpus` entry except the boot CPU and waits until all reported in.
pub fn start_all(plat: &Platform) -> Started {
    let me = smp::this_mpidr();
    let mut started = Started {
        cpus: [(0, 0); MAX_DT_CPUS],
        n: 0,
    };
    for &mpidr in plat.cpu_ids().iter().filter(|&&m| m != me) {
        let ret = match smp::start_secondary(mpidr, secondary, 0) {
            Ok(r) => r,
            Err(e) => fail(format_args!("no slot for MPIDR {mpidr:#x}: {e:?}")),
        };
        if ret != psci::SUCCESS {
            fail(format_args!(
                "CPU_ON({mpidr:#x}) = {ret} ({}), expected SUCCESS",
                psci::return_name(ret)
            ));
        }
        let index = smp::slot_for(mpidr).unwrap_or(0);
        started.cpus[started.n] = (mpidr, index);
        started.n += 1;
    }
    let n = started.n as u64;
    if !timer::wait_until(TIMEOUT_US, || UP.load(Ordering::Acquire) == n) {
        fail(format_args!(
            "only {} of {} secondaries came up",
            UP.load(Ordering::Acquire),
            n
        ));
    }
    say!("all {} CPUs up", started.count());
    started
}

/// Lets the secondaries return (guest-rt calls `CPU_OFF`) and polls `AFFINITY_INFO` until
/// each is OFF.
pub fn stop_all(started: &Started) {
    shared::set_phase(Phase::Off);
    for (mpidr, index) in started.iter() {
        wait_off(mpidr, index);
    }
    say!("all secondaries OFF (CPU_OFF, AFFINITY_INFO = OFF)");
}

fn wait_off(mpidr: u64, index: usize) {
    let mut last = 0;
    let off = timer::wait_until(TIMEOUT_US, || {
        last = psci::affinity_info(mpidr, 0);
        last == psci::AFFINITY_OFF
    });
    if !off {
        fail(format_args!(
            "cpu {index} (MPIDR {mpidr:#x}) not OFF after CPU_OFF: AFFINITY_INFO = {last}"
        ));
    }
}

static AGAIN: AtomicU64 = AtomicU64::new(0);

fn secondary_again(arg: usize) {
    say!(
        "cpu {} up again, MPIDR={:#x}, context {:#x}",
        smp::this_cpu(),
        smp::this_mpidr(),
        arg
    );
    AGAIN.store(arg as u64, Ordering::Release);
}

/// Restarts the first secondary (CPU_ON after CPU_OFF, new context id), waits for it to
/// report and turn itself off again.
pub fn restart_one(started: &Started) {
    let Some((mpidr, index)) = started.iter().next() else {
        say!("restart: skipped (no secondary CPU)");
        return;
    };
    const CONTEXT: usize = 0x5eed_0001;
    let ret = smp::start_secondary(mpidr, secondary_again, CONTEXT).unwrap_or(-1000);
    if ret != psci::SUCCESS {
        fail(format_args!(
            "CPU_ON({mpidr:#x}) after CPU_OFF = {ret} ({}), expected SUCCESS",
            psci::return_name(ret)
        ));
    }
    if !timer::wait_until(TIMEOUT_US, || {
        AGAIN.load(Ordering::Acquire) == CONTEXT as u64
    }) {
        fail(format_args!("cpu {index} did not come up again"));
    }
    wait_off(mpidr, index);
    say!("restart: cpu {index} ran again with its context id and went OFF");
}
