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

/// CPUs whose FP/SIMD registers changed while they spun (see [`fp_state_survives`]).
static FP_CORRUPTED: AtomicU64 = AtomicU64::new(0);
/// Spin iterations of the FP/SIMD check: long enough to span several 10 ms time slices when
/// vCPUs outnumber physical CPUs.
const FP_SPIN: u64 = 20_000_000;

/// Loads a pattern unique to `cpu` into v16..v23 and FPCR, spins [`FP_SPIN`] times in the
/// same asm block (so the compiler cannot touch the registers), and checks the registers
/// still hold it: whatever ran on the physical CPU meanwhile (other vCPUs, other VMs, the
/// hypervisor) must not change a vCPU's FP/SIMD state.
fn fp_state_survives(cpu: usize) -> bool {
    let pattern = 0x0101_0101_0101_0101u64.wrapping_mul(cpu as u64 + 1) ^ 0x5a5a_0000_0000_a5a5;
    // FPCR.RMode (bits 23:22) = cpu % 4, FPCR.FZ (bit 24) = 1.
    let fpcr = ((cpu as u64 % 4) << 22) | (1 << 24);
    let diff: u64;
    // SAFETY: only FP/SIMD registers v16..v23 (declared clobbered), FPCR (restored to 0,
    // guest-rt's value, before the block ends) and the named general registers are used.
    unsafe {
        core::arch::asm!(
            "msr fpcr, {fpcr}",
            "dup v16.2d, {p}", "add {t}, {p}, #1", "dup v17.2d, {t}",
            "add {t}, {p}, #2", "dup v18.2d, {t}", "add {t}, {p}, #3", "dup v19.2d, {t}",
            "add {t}, {p}, #4", "dup v20.2d, {t}", "add {t}, {p}, #5", "dup v21.2d, {t}",
            "add {t}, {p}, #6", "dup v22.2d, {t}", "add {t}, {p}, #7", "dup v23.2d, {t}",
            "mov {n}, {iters}",
            "2: subs {n}, {n}, #1",
            "b.ne 2b",
            "mrs {acc}, fpcr",
            "eor {acc}, {acc}, {fpcr}",
            "umov {t}, v16.d[0]", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v16.d[1]", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v17.d[1]", "sub {t}, {t}, #1", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v18.d[0]", "sub {t}, {t}, #2", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v19.d[1]", "sub {t}, {t}, #3", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v20.d[0]", "sub {t}, {t}, #4", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v21.d[1]", "sub {t}, {t}, #5", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v22.d[0]", "sub {t}, {t}, #6", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "umov {t}, v23.d[1]", "sub {t}, {t}, #7", "eor {t}, {t}, {p}", "orr {acc}, {acc}, {t}",
            "msr fpcr, xzr",
            p = in(reg) pattern,
            fpcr = in(reg) fpcr,
            iters = in(reg) FP_SPIN,
            t = out(reg) _,
            n = out(reg) _,
            acc = out(reg) diff,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            options(nostack),
        );
    }
    diff == 0
}

/// The work of CPU index `cpu`.
pub fn work(cpu: usize) {
    if !fp_state_survives(cpu) {
        FP_CORRUPTED.fetch_or(1 << cpu, Ordering::AcqRel);
    }
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
    let corrupted = FP_CORRUPTED.load(Ordering::Acquire);
    if corrupted != 0 {
        fail(format_args!(
            "workload: FP/SIMD registers or FPCR changed under CPUs {corrupted:#b} while they spun"
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
        "workload: {} CPUs x {} iterations ok: shared atomic {}, locked sum {}, FP/SIMD state \
         kept by every CPU, {} ms",
        ncpus,
        ITERATIONS,
        shared,
        locked,
        ms
    );
}
