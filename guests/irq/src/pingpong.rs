//! SGI ping-pong between CPU 0 and CPU 1: CPU 0 sends PING and waits for PONG, CPU 1 answers
//! each PING it took with one PONG; both count, and no SGI may be lost or duplicated.

use crate::counts::{self, SGI_PING, SGI_PONG};
use crate::{fail, say};
use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::Platform;
use guest_rt::{gic, irq, psci, smp, timer};

/// Round trips.
pub const ROUND_TRIPS: u64 = 1000;
/// Time a round trip may take, in microseconds.
const TIMEOUT_US: u64 = 2_000_000;

/// CPU 1's progress: 1 = ready, 2 = done, 3 = failed.
static PARTNER: AtomicU64 = AtomicU64::new(0);

fn partner(_arg: usize) {
    if let Err(e) = gic::init_cpu() {
        say!("FAIL cpu 1 gic init: {e}");
        PARTNER.store(3, Ordering::Release);
        return;
    }
    gic::enable(SGI_PING);
    irq::enable();
    PARTNER.store(1, Ordering::Release);
    for answered in 0..ROUND_TRIPS {
        if !timer::wait_until(TIMEOUT_US, || counts::count(1, SGI_PING) > answered) {
            say!("FAIL cpu 1: PING {} did not arrive", answered + 1);
            PARTNER.store(3, Ordering::Release);
            return;
        }
        gic::send_sgi(SGI_PONG, 0);
    }
    irq::disable();
    PARTNER.store(2, Ordering::Release);
}

/// Runs the ping-pong if there is a second CPU.
pub fn run(plat: &Platform) {
    let me = smp::this_mpidr();
    let Some(&other) = plat.cpu_ids().iter().find(|&&m| m != me) else {
        say!("ping-pong: skipped (1 CPU)");
        return;
    };
    gic::enable(SGI_PONG);
    irq::enable();
    let ret = smp::start_secondary(other, partner, 0).unwrap_or(-1000);
    if ret != psci::SUCCESS {
        fail(format_args!(
            "CPU_ON({other:#x}) = {ret} ({})",
            psci::return_name(ret)
        ));
    }
    if !timer::wait_until(5_000_000, || PARTNER.load(Ordering::Acquire) != 0) {
        fail(format_args!("cpu 1 did not come up"));
    }
    let partner_cpu = smp::slot_for(other).unwrap_or(1);
    let start = timer::virtual_count();
    for trip in 0..ROUND_TRIPS {
        gic::send_sgi(SGI_PING, partner_cpu);
        if !timer::wait_until(TIMEOUT_US, || counts::count(0, SGI_PONG) > trip) {
            fail(format_args!("PONG {} did not arrive", trip + 1));
        }
    }
    let us = timer::ticks_to_us(timer::virtual_count() - start);
    if !timer::wait_until(TIMEOUT_US, || PARTNER.load(Ordering::Acquire) >= 2) {
        fail(format_args!("cpu 1 did not finish"));
    }
    irq::disable();
    let (pings, pongs) = (counts::count(1, SGI_PING), counts::count(0, SGI_PONG));
    if PARTNER.load(Ordering::Acquire) != 2 || pings != ROUND_TRIPS || pongs != ROUND_TRIPS {
        fail(format_args!(
            "ping-pong: cpu 1 took {pings} PINGs, cpu 0 took {pongs} PONGs, expected {ROUND_TRIPS}"
        ));
    }
    say!(
        "ping-pong: {} round trips, no loss ({} us per round trip)",
        ROUND_TRIPS,
        us / ROUND_TRIPS
    );
    // CPU 1 returned from its entry function: guest-rt turned it off.
    timer::wait_until(TIMEOUT_US, || {
        psci::affinity_info(other, 0) == psci::AFFINITY_OFF
    });
}
