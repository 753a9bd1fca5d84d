//! State shared between the CPUs. The guest runs with guest-rt's identity map (normal
//! write-back memory), so `core::sync::atomic` read-modify-write operations work.

use core::sync::atomic::{AtomicU64, Ordering};

/// Number of secondaries that reported in (incremented by each on start).
pub static UP: AtomicU64 = AtomicU64::new(0);
/// Phase the boot CPU lets the secondaries into: see [`Phase`]; 0 = hold (the boot CPU
/// checks PSCI answers while all CPUs run).
static PHASE: AtomicU64 = AtomicU64::new(0);
/// Number of secondaries done with the workload.
pub static DONE: AtomicU64 = AtomicU64::new(0);

/// What the secondaries do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Phase {
    /// Run the workload.
    Work = 1,
    /// Return from the entry function: guest-rt calls CPU_OFF.
    Off = 2,
}

/// Publishes `p` to the secondaries.
pub fn set_phase(p: Phase) {
    PHASE.store(p as u64, Ordering::Release);
}

/// Spins until the boot CPU published at least `p`.
pub fn wait_phase(p: Phase) {
    while PHASE.load(Ordering::Acquire) < p as u64 {
        core::hint::spin_loop();
    }
}
