//! `fair` mode: every CPU spins through fixed blocks of instructions and counts the blocks
//! it starts inside one window of virtual time (the same window for all CPUs, read from the
//! VM's virtual counter), and asks the hypervisor at both ends of the window how long it has
//! held a physical CPU (`HV_RUN_TIME`). Under the hypervisor with more vCPUs than physical
//! CPUs, both are a CPU's share of the machine; the boot CPU prints every share relative to
//! an equal one, the max/min ratio and Jain's fairness index of both, and fails the run if a
//! share of the counted progress is off equal by more than [`TOLERANCE_PERMILLE`].
//!
//! Deterministic under QEMU `-icount` (virtual time counts instructions); see [`PACE_US`]
//! for what it takes to make QEMU's own round robin over its CPUs fine-grained enough.

use crate::shared::{self, Phase, DONE};
use crate::{fail, say};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use guest_rt::smp;
use guest_rt::timer::{self, Timer};

/// Time before the window opens, after all CPUs are up (lets the scheduler settle).
const WARMUP_US: u64 = 50_000;
/// Length of the counting window: 100 time slices of the hypervisor's 10 ms.
const WINDOW_US: u64 = 1_000_000;
/// Loop iterations per counted block (two instructions each).
const BLOCK: u64 = 256;
/// The virtual timer (masked: no interrupt) is kept armed this far ahead while counting. It
/// gives QEMU's `-icount` round robin over its CPUs a deadline every 50 us: without one it
/// runs each CPU for up to a quarter of its 100 ms kick period (measured: 4 vCPUs pinned
/// 1:1 then count 1.2, 1.2, 0.8, 0.8 of equal in a 500 ms window), and the hypervisor's
/// slice timers fire late by whole slices when their CPU is not the one QEMU runs. The
/// round robin's granularity is this measurement's error: with 20 us the four cells' block
/// shares spread max/min 1.09-1.25 (worst 0.888 of equal, one cell failing after an
/// unrelated change of the hypervisor image moved the schedule's phase), with 10 us
/// 1.02-1.07 (worst 0.963) while the run-time shares stay 1.02.
const PACE_US: u64 = 10;
/// Largest allowed distance of a share from an equal one, in thousandths.
pub const TOLERANCE_PERMILLE: u64 = 100;

/// The run is in `fair` mode (set by the boot CPU before starting the secondaries).
pub static ENABLED: AtomicBool = AtomicBool::new(false);
/// Virtual-counter values at which the window opens and closes.
static OPEN: AtomicU64 = AtomicU64::new(u64::MAX);
static CLOSE: AtomicU64 = AtomicU64::new(u64::MAX);

/// One CPU's count, alone in its cache line.
#[repr(align(64))]
struct Count(AtomicU64);

static COUNTS: [Count; smp::MAX_CPUS] = [const { Count(AtomicU64::new(0)) }; smp::MAX_CPUS];
/// Counter ticks each CPU held a physical CPU during the window (`HV_RUN_TIME`).
static RUN: [Count; smp::MAX_CPUS] = [const { Count(AtomicU64::new(0)) }; smp::MAX_CPUS];

/// The hypervisor's vendor call: counter ticks the calling vCPU has held a physical CPU.
const HV_RUN_TIME: u64 = 0xc600_0006;

/// This vCPU's run time so far (`HV_RUN_TIME`), `None` without the call.
fn run_time() -> Option<u64> {
    let r = guest_rt::smccc::hvc([HV_RUN_TIME, 0, 0, 0, 0, 0, 0, 0])[0];
    (r as i64 >= 0).then_some(r)
}

/// Runs [`BLOCK`] iterations of a two-instruction loop.
#[inline(always)]
fn block() {
    // SAFETY: a register-only countdown loop.
    unsafe {
        core::arch::asm!(
            "2: subs {n}, {n}, #1",
            "b.ne 2b",
            n = inout(reg) BLOCK => _,
            options(nomem, nostack),
        )
    };
}

/// Counts the blocks this CPU starts between [`OPEN`] and [`CLOSE`] (read once the boot CPU
/// published [`Phase::Work`]) and its run time in that window, into slot `cpu`.
fn count_window(cpu: usize) {
    let (open, close) = (OPEN.load(Ordering::Acquire), CLOSE.load(Ordering::Acquire));
    let mut n = 0;
    let mut run_at_open = None;
    let pace = timer::us_to_ticks(PACE_US);
    Timer::Virtual.set_cval(timer::virtual_count() + pace);
    Timer::Virtual.set_ctl(timer::CTL_ENABLE | timer::CTL_IMASK);
    loop {
        let now = timer::virtual_count();
        Timer::Virtual.set_cval(now + pace);
        if now >= close {
            Timer::Virtual.disable();
            break;
        }
        if now >= open {
            if run_at_open.is_none() {
                run_at_open = Some(run_time());
            }
            n += 1;
        }
        block();
    }
    let run = match (run_at_open.flatten(), run_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => u64::MAX,
    };
    RUN[cpu].0.store(run, Ordering::Release);
    COUNTS[cpu].0.store(n, Ordering::Release);
}

/// The work of secondary CPU `cpu` in `fair` mode.
pub fn spin(cpu: usize) {
    count_window(cpu);
}

/// Opens the window for all `ncpus` CPUs (the secondaries wait for [`Phase::Work`]), counts
/// on the boot CPU too, then prints and checks the shares.
pub fn run(ncpus: usize) {
    let open = timer::virtual_count() + timer::us_to_ticks(WARMUP_US);
    OPEN.store(open, Ordering::Release);
    CLOSE.store(open + timer::us_to_ticks(WINDOW_US), Ordering::Release);
    shared::set_phase(Phase::Work);
    count_window(0);
    let secondaries = ncpus as u64 - 1;
    if !timer::wait_until(60_000_000, || DONE.load(Ordering::Acquire) == secondaries) {
        fail(format_args!(
            "fair: only {} of {} secondaries finished",
            DONE.load(Ordering::Acquire),
            secondaries
        ));
    }
    let load = |slots: &[Count; smp::MAX_CPUS]| -> [u64; smp::MAX_CPUS] {
        core::array::from_fn(|i| slots[i].0.load(Ordering::Acquire))
    };
    let (counts, runs) = (load(&COUNTS), load(&RUN));
    let (counts, runs) = (&counts[..ncpus], &runs[..ncpus]);
    let have_run = runs.iter().all(|&r| r != u64::MAX);
    let blocks = Figures::of(counts);
    let run = Figures::of(if have_run { runs } else { counts });
    for cpu in 0..ncpus {
        say!(
            "fair: cpu {cpu}: {} blocks, share {} of equal; ran {} ticks, share {} of equal",
            counts[cpu],
            Permille(blocks.share_permille(counts[cpu])),
            if have_run { runs[cpu] } else { 0 },
            Permille(run.share_permille(runs[cpu]))
        );
    }
    let window_ms = WINDOW_US / 1000;
    say!(
        "fair: {ncpus} CPUs, window {window_ms} ms, blocks: max/min {}, Jain index {}, worst \
         share {} of equal",
        Permille(blocks.max_over_min_permille),
        Permille(blocks.jain_permille),
        Permille(blocks.worst_permille)
    );
    if have_run {
        say!(
            "fair: {ncpus} CPUs, window {window_ms} ms, run time: max/min {}, Jain index {}, \
             worst share {} of equal",
            Permille(run.max_over_min_permille),
            Permille(run.jain_permille),
            Permille(run.worst_permille)
        );
    }
    if blocks.worst_permille.abs_diff(1000) > TOLERANCE_PERMILLE {
        fail(format_args!(
            "fair: a share of the counted progress is {} of equal, more than {}.{:03} away",
            Permille(blocks.worst_permille),
            TOLERANCE_PERMILLE / 1000,
            TOLERANCE_PERMILLE % 1000
        ));
    }
    say!(
        "fair: every vCPU's share of the counted progress within {} % of equal",
        TOLERANCE_PERMILLE / 10
    );
}

/// The fairness figures of a set of counts.
struct Figures {
    total: u64,
    n: u64,
    /// Largest count over smallest, in thousandths (`u64::MAX` if one is 0).
    max_over_min_permille: u64,
    /// Jain's index (sum)^2 / (n * sum of squares), in thousandths (1000 = all equal).
    jain_permille: u64,
    /// The share furthest from equal, in thousandths of an equal share.
    worst_permille: u64,
}

impl Figures {
    fn of(counts: &[u64]) -> Self {
        let n = counts.len().max(1) as u64;
        let total: u64 = counts.iter().sum();
        let max = counts.iter().copied().max().unwrap_or(0);
        let min = counts.iter().copied().min().unwrap_or(0);
        let squares: u128 = counts.iter().map(|&c| u128::from(c) * u128::from(c)).sum();
        let jain = if squares == 0 {
            0
        } else {
            (u128::from(total) * u128::from(total) * 1000 / (u128::from(n) * squares)) as u64
        };
        let mut f = Figures {
            total,
            n,
            max_over_min_permille: (max * 1000).checked_div(min).unwrap_or(u64::MAX),
            jain_permille: jain,
            worst_permille: 1000,
        };
        f.worst_permille = counts
            .iter()
            .map(|&c| f.share_permille(c))
            .max_by_key(|s| s.abs_diff(1000))
            .unwrap_or(0);
        f
    }

    /// `count` as thousandths of an equal share.
    fn share_permille(&self, count: u64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        (u128::from(count) * u128::from(self.n) * 1000 / u128::from(self.total)) as u64
    }
}

/// A value in thousandths, printed as `1.234`.
struct Permille(u64);

impl core::fmt::Display for Permille {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0 == u64::MAX {
            return f.write_str("inf");
        }
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}
