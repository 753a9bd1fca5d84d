//! The loop every physical CPU runs once it is up: take the host's interrupts, pick a vCPU
//! from the scheduler and run it, or idle. The top of the run-time layers.

use super::{run, sched};

/// The scheduler loop of one physical CPU. Never returns.
pub fn cpu_loop() -> ! {
    loop {
        sched::drain_host_irqs(false);
        match sched::pick_next() {
            Some((thread, shared)) => run::run_vcpu(&thread, shared),
            None => sched::idle(),
        }
    }
}
