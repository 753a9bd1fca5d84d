//! The shared-memory workload: every CPU bumps its own slot, a shared atomic counter and a
//! lock-protected sum for a fixed number of iterations; the boot CPU checks the totals.

use crate::shared::{self, Phase, DONE};
use crate::{fail, say};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use guest_rt::{smp, timer};

/// Iterations per CPU (modest: a few seconds at most under TCG with 6 CPUs).
pub const ITERATIONS: u64 = 500_000;
/// Every `LOCK_EVERY`-th iteration also updates the lock-protected sum.
const LOCK_EVERY: u64 = 16;

/// One CPU's counter, alone in its cache line.
#[repr(align(64))]
struct Slot(AtomicU64);

static SLOTS: [Slot; smp::MAX_CPUS] = [const { Slot(AtomicU64::new(0)) }; smp::MAX_CPUS];
static SHARED: AtomicU64 = AtomicU64::new(0);

/// A test-and-set spinlock (makes progress under vCPU oversubscription, unlike a ticket
/// lock, whenever any waiter runs).
struct SpinLocked {
    locked: AtomicBool,
    sum: UnsafeCell<u64>,
}

// SAFETY: `sum` is only accessed between a successful acquire of `locked` and its release.
unsafe impl Sync for SpinLocked {}

static LOCKED: SpinLocked = SpinLocked {
    locked: AtomicBool::new(false),
    sum: UnsafeCell::new(0),
};

impl SpinLocked {
    fn add(&self, v: u64) {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
        // SAFETY: the lock is held (see `Sync`).
        unsafe { *self.sum.get() += v };
        self.locked.store(false, Ordering::Release);
    }

    fn get(&self) -> u64 {
        // SAFETY: called after every CPU finished (DONE counted with AcqRel), so no writer.
        unsafe { *self.sum.get() }
    }
}

/// The work of CPU index `cpu`.
pub fn work(cpu: usize) {
    let slot = &SLOTS[cpu].0;
    for i in 0..ITERATIONS {
        slot.store(slot.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        SHARED.fetch_add(1, Ordering::Relaxed);
        if i % LOCK_EVERY == 0 {
            LOCKED.add(i);
        }
    }
}

/// Expected lock-protected sum contributed by one CPU.
fn locked_per_cpu() -> u64 {
    (0..ITERATIONS).filter(|i| i % LOCK_EVERY == 0).sum()
}

/// Runs the workload on all `ncpus` CPUs (the secondaries are waiting for [`Phase::Work`])
/// and checks the result.
pub fn run(ncpus: usize) {
    let start = timer::virtual_count();
    shared::set_phase(Phase::Work);
    work(0);
    let secondaries = ncpus as u64 - 1;
    if !timer::wait_until(60_000_000, || DONE.load(Ordering::Acquire) == secondaries) {
        fail(format_args!(
            "workload: only {} of {} secondaries finished",
            DONE.load(Ordering::Acquire),
            secondaries
        ));
    }
    let ms = timer::ticks_to_us(timer::virtual_count() - start) / 1000;
    for (cpu, slot) in SLOTS.iter().enumerate().take(ncpus) {
        let v = slot.0.load(Ordering::Acquire);
        if v != ITERATIONS {
            fail(format_args!(
                "workload: cpu {cpu} slot = {v}, expected {ITERATIONS}"
            ));
        }
    }
    let n = ncpus as u64;
    let shared = SHARED.load(Ordering::Acquire);
    if shared != n * ITERATIONS {
        fail(format_args!(
            "workload: shared atomic = {shared}, expected {}",
            n * ITERATIONS
        ));
    }
    let locked = LOCKED.get();
    if locked != n * locked_per_cpu() {
        fail(format_args!(
            "workload: locked sum = {locked}, expected {}",
            n * locked_per_cpu()
        ));
    }
    say!(
        "workload: {} CPUs x {} iterations ok: shared atomic {}, locked sum {}, {} ms",
        ncpus,
        ITERATIONS,
        shared,
        locked,
        ms
    );
}
