//! Moving vCPUs between the run queues of physical CPUs. The decisions (which CPU pushes to
//! or steals from which) are `crate::balance`'s, over the number of runnable vCPUs of each
//! CPU; this file counts them and moves one vCPU at a time.
//!
//! A move is safe for everything a vCPU carries, because only a vCPU that is not running
//! moves (not the one its CPU picked: `Queue::running`), so it has been put:
//! - its registers, vGIC state (list registers folded back into the model) and the active
//!   state of its forwarded virtual-timer interrupt are in memory, and `vcpu_load` on the
//!   new CPU installs them there (the EL1 virtual timer then fires on the new CPU);
//! - kicks go to `Vcpu::owner`, changed before the vCPU enters its new queue (a kick that
//!   read the old owner set `wake` first, which the new CPU sees when it picks);
//! - lazy FP/SIMD: the old CPU may still hold its FP registers (`PerCpu::fp_owner`); that
//!   claim is dropped, or the vCPU coming back later would run with stale values.
//!
//! The CPU receiving a vCPU is told by `PerCpu::resched` and a kick: idle, it picks it; in
//! a `WFI` wait or running one vCPU without a time slice, it starts slicing.

use core::sync::atomic::{AtomicU64, Ordering};

use super::{kick_cpu, runnable, Scheduler, SCHED};
use crate::arch::percpu::{self, MAX_CPUS};
use crate::arch::timer;
use crate::balance as policy;

/// vCPU moves so far (reported when the machine stops; touched only by moves).
static MOVES: AtomicU64 = AtomicU64::new(0);

/// How many times a vCPU moved to another CPU.
pub fn moves() -> u64 {
    MOVES.load(Ordering::Relaxed)
}

/// The number of runnable vCPUs of every CPU (`None`: not online), in `buf`.
fn loads<'a>(s: &Scheduler, buf: &'a mut [Option<usize>; MAX_CPUS]) -> &'a mut [Option<usize>] {
    let cpus = percpu::all();
    for (slot, c) in buf.iter_mut().zip(cpus) {
        *slot = c.online.load(Ordering::Acquire).then(|| {
            let q = s.queues[c.index].queue.lock();
            q.threads.iter().filter(|t| runnable(t)).count()
        });
    }
    &mut buf[..cpus.len().min(MAX_CPUS)]
}

/// Moves one runnable vCPU that is not running from CPU `from`'s queue to CPU `to`'s (the
/// one that would run next there), and tells `to`. False when `from` has none.
fn migrate(s: &Scheduler, from: usize, to: usize) -> bool {
    let source = &s.queues[from];
    let thread = {
        let mut q = source.queue.lock();
        let n = q.threads.len();
        let start = source.cursor.load(Ordering::Relaxed);
        let found = (0..n).map(|k| (start + k) % n).find(|&i| {
            let t = &q.threads[i];
            q.running != Some(t.id()) && runnable(t)
        });
        let Some(i) = found else { return false };
        let t = q.threads.remove(i);
        if i < start {
            source.cursor.store(start - 1, Ordering::Relaxed);
        }
        t.vcpu().owner.store(to + 1, Ordering::SeqCst);
        t
    };
    if let Some(c) = percpu::all().get(from) {
        // Only `from` can hold its registers: every earlier move dropped the claim there.
        let _ = c
            .fp_owner
            .compare_exchange(thread.id(), 0, Ordering::AcqRel, Ordering::Relaxed);
    }
    MOVES.fetch_add(1, Ordering::Relaxed);
    s.queues[to].queue.lock().threads.push(thread);
    if let Some(c) = percpu::all().get(to) {
        c.resched.store(true, Ordering::Release);
    }
    kick_cpu(to);
    true
}

/// Per CPU, when it may push next (`crate::balance::PushClock`; only the CPU itself uses
/// its entry, the lock is never contended).
static PUSH_CLOCKS: [spin::Mutex<policy::PushClock>; MAX_CPUS] =
    [const { spin::Mutex::new(policy::PushClock::new()) }; MAX_CPUS];

/// At the end of a time slice of this CPU (back in its loop): pushes waiting vCPUs to less
/// loaded CPUs while that narrows the gap (`crate::balance::push_once`), at most once per
/// half slice (a yield or block ends a run too; see `crate::balance::PushClock`).
pub fn balance_after_slice() {
    let Some(s) = SCHED.get() else { return };
    if !s.balance {
        return;
    }
    let me = percpu::current().index;
    let interval = timer::us_to_ticks(super::TIME_SLICE_US / 2);
    if !PUSH_CLOCKS[me].lock().due(timer::now(), interval) {
        return;
    }
    let mut buf = [None; MAX_CPUS];
    let loads = loads(s, &mut buf);
    while let Some(to) = policy::push_once(loads, me) {
        if !migrate(s, me, to) {
            break;
        }
    }
}

/// This CPU has nothing to run: takes a waiting vCPU from the most loaded CPU if that is
/// worth it (`crate::balance::steal_victim`). True when one was moved here.
pub(super) fn steal(s: &Scheduler, me: usize) -> bool {
    let mut buf = [None; MAX_CPUS];
    let loads = loads(s, &mut buf);
    match policy::steal_victim(loads, me) {
        Some(victim) => migrate(s, victim, me),
        None => false,
    }
}

/// Whether another CPU moved a vCPU to this one since it last picked, and forgets it: the
/// running vCPU must share the CPU from now on (start a time slice).
pub fn take_resched() -> bool {
    percpu::current().resched.swap(false, Ordering::AcqRel)
}

/// Whether another CPU moved a vCPU to this one since it last picked (kept for the pick).
pub fn resched_pending() -> bool {
    percpu::current().resched.load(Ordering::Acquire)
}
