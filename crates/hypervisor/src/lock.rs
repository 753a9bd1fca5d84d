//! The hypervisor's spin lock: `spin`'s mutex waiting with `YIELD` instead of the default
//! `ISB`. On hardware `YIELD` is a hint for a busy-wait (as good as any); under QEMU's
//! single-threaded TCG, which runs the CPUs round robin, it hands the host thread to the
//! next CPU at once, so a CPU waiting for a lock no longer burns its whole time slice while
//! the holder, descheduled, cannot release it (a Linux boot on two CPUs spent ~90 million
//! EL2 instructions in one vGIC lock wait so).

/// Spin-wait with `YIELD`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Yield;

impl spin::RelaxStrategy for Yield {
    #[inline(always)]
    fn relax() {
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `YIELD` is a hint with no architectural effect.
        unsafe {
            core::arch::asm!("yield", options(nomem, nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "aarch64"))]
        core::hint::spin_loop();
    }
}

/// A spin lock shared between CPUs that waits with [`Yield`].
pub type Mutex<T> = spin::mutex::Mutex<T, Yield>;
