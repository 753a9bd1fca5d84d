//! The loop every physical CPU runs once it is up: take the host's interrupts, pick a vCPU
//! from the scheduler and run it, balance the run queues after a shared CPU's slice, or
//! idle (which may steal a vCPU). The top of the run-time layers.

use super::{run, sched};

/// The scheduler loop of one physical CPU. Never returns.
pub fn cpu_loop() -> ! {
    loop {
        sched::drain_host_irqs(false);
        match sched::pick_next() {
            Some((thread, shared)) => {
                run::run_vcpu(&thread, shared);
                sched::ran(&thread);
                if shared {
                    // A slice ended (or the vCPU blocked) on a CPU with several vCPUs.
                    sched::balance_after_slice();
                }
            }
            None => sched::idle(),
        }
    }
}
