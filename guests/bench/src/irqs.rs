//! Interrupt benchmarks: `sgi-self` / `ack-eoi` (IRQs masked, the SGI acknowledged and ended
//! by hand), `timer-latency` (virtual timer: counter at handler entry minus `CVAL`, waiting in
//! WFI) and `ipi-roundtrip` (CPU 0 sends an SGI to CPU 1, whose handler answers with an SGI
//! back; both wait in WFI).

use crate::exits;
use crate::measure::{self, stamp};
use crate::say;
use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::Platform;
use guest_rt::timer::{self, Timer};
use guest_rt::{gic, irq, psci, smp};

/// SGI taken by hand in the EOI benchmark.
const SGI_EOI: u32 = 7;
/// SGI CPU 0 sends to CPU 1.
const SGI_PING: u32 = 1;
/// SGI CPU 1 answers with.
const SGI_PONG: u32 = 2;
/// SGI CPU 1 sends once it is up.
const SGI_READY: u32 = 3;
/// Iterations of the EOI benchmark.
const N_EOI: u64 = 1000;
/// Timer interrupts timed.
const N_TIMER: u64 = 100;
/// Counter ticks between arming the timer and its deadline.
const TIMER_AHEAD: u64 = 1000;
/// IPI round trips timed (after [`IPI_WARMUP`] untimed ones).
const N_IPI: u64 = 200;
/// Untimed round trips first.
const IPI_WARMUP: u64 = 10;

/// Waits in WFI with IRQs masked until `done()`, taking each interrupt that woke the CPU
/// (unmask, ISB, mask): no interrupt can slip in between the check and the WFI.
fn wait_irq(mut done: impl FnMut() -> bool) {
    irq::disable();
    while !done() {
        irq::wait_for_interrupt();
        irq::enable();
        // SAFETY: ISB only synchronises the context (the pending IRQ is taken here).
        unsafe { core::arch::asm!("isb", options(nostack)) };
        irq::disable();
    }
}

/// `sgi-self` (an SGI to self that stays pending) and `ack-eoi` (acknowledge + end it, the
/// cost of `sgi-self` subtracted).
pub fn eoi(freq: u64) {
    irq::disable();
    gic::enable(SGI_EOI);
    let base = measure::baseline(N_EOI);
    let before = exits::snapshot();
    let send = measure::ticks(N_EOI, || gic::send_sgi_self(SGI_EOI));
    let send_exits = exits::delta(before, exits::snapshot());
    let a = gic::ack();
    if !a.is_special() {
        gic::eoi(a);
    }
    let mut wrong = 0u64;
    let before = exits::snapshot();
    let both = measure::ticks(N_EOI, || {
        gic::send_sgi_self(SGI_EOI);
        let a = gic::ack();
        if a.intid() == SGI_EOI {
            gic::eoi(a);
        } else {
            wrong += 1;
        }
    });
    let both_exits = exits::delta(before, exits::snapshot());
    gic::disable(SGI_EOI);
    if wrong != 0 {
        say!("WARN ack-eoi: {wrong} of {N_EOI} acknowledges were not SGI {SGI_EOI}");
    }
    measure::report(
        "sgi-self",
        measure::tenths_per_op(send.saturating_sub(base), N_EOI, freq),
    );
    measure::report(
        "ack-eoi",
        measure::tenths_per_op(both.saturating_sub(send), N_EOI, freq),
    );
    exits::report("sgi-self", send_exits, N_EOI);
    exits::report(
        "ack-eoi",
        both_exits.zip(send_exits).map(|(b, s)| b.minus(s)),
        N_EOI,
    );
}

/// Counter at the virtual-timer handler's entry.
static TIMER_AT: AtomicU64 = AtomicU64::new(0);
/// Virtual-timer interrupts taken.
static TIMER_COUNT: AtomicU64 = AtomicU64::new(0);

fn timer_handler(_intid: u32) {
    TIMER_AT.store(stamp(), Ordering::Relaxed);
    Timer::Virtual.mask();
    TIMER_COUNT.store(TIMER_COUNT.load(Ordering::Relaxed) + 1, Ordering::Release);
}

/// `timer-latency`: counter at handler entry minus `CVAL`, averaged over [`N_TIMER`] shots.
pub fn timer_latency(plat: &Platform, freq: u64) {
    let ppi = plat.timer.virt;
    irq::set_handler(ppi, timer_handler);
    gic::enable(ppi);
    let mut sum = 0u64;
    let before = exits::snapshot();
    for i in 0..N_TIMER {
        let cval = stamp() + TIMER_AHEAD;
        Timer::Virtual.arm_at(cval);
        wait_irq(|| TIMER_COUNT.load(Ordering::Acquire) > i);
        sum += TIMER_AT.load(Ordering::Relaxed).saturating_sub(cval);
    }
    let shots = exits::delta(before, exits::snapshot());
    Timer::Virtual.disable();
    gic::disable(ppi);
    measure::report("timer-latency", measure::tenths_per_op(sum, N_TIMER, freq));
    exits::report("timer-latency", shots, N_TIMER);
}

/// PINGs CPU 1 took.
static PINGS: AtomicU64 = AtomicU64::new(0);
/// PONGs CPU 0 took.
static PONGS: AtomicU64 = AtomicU64::new(0);
/// CPU 1 is ready (its GIC CPU interface is up).
static READY: AtomicU64 = AtomicU64::new(0);

fn ping_handler(_intid: u32) {
    PINGS.store(PINGS.load(Ordering::Relaxed) + 1, Ordering::Release);
    gic::send_sgi(SGI_PONG, 0);
}

fn pong_handler(_intid: u32) {
    PONGS.store(PONGS.load(Ordering::Relaxed) + 1, Ordering::Release);
}

fn partner(_arg: usize) {
    if let Err(e) = gic::init_cpu() {
        say!("FAIL cpu 1 gic init: {e}");
        return;
    }
    gic::enable(SGI_PING);
    READY.store(1, Ordering::Release);
    gic::send_sgi(SGI_READY, 0);
    wait_irq(|| PINGS.load(Ordering::Acquire) >= IPI_WARMUP + N_IPI);
}

/// `ipi-roundtrip`: SGI to CPU 1, whose handler sends one back; CPU 0 waits in WFI for it.
pub fn ipi(plat: &Platform, freq: u64) {
    let me = smp::this_mpidr();
    let Some(&other) = plat.cpu_ids().iter().find(|&&m| m != me) else {
        say!("ipi-roundtrip n/a (1 CPU)");
        return;
    };
    irq::set_handler(SGI_PING, ping_handler);
    irq::set_handler(SGI_PONG, pong_handler);
    irq::set_handler(SGI_READY, |_| {});
    gic::enable(SGI_PONG);
    gic::enable(SGI_READY);
    match smp::start_secondary(other, partner, 0) {
        Ok(psci::SUCCESS) => {}
        r => {
            say!("FAIL CPU_ON({other:#x}): {r:?}");
            psci::system_reset()
        }
    }
    // Wait in WFI, not spinning: with one TCG thread a spinning CPU 0 would hold the
    // round robin; CPU 1 sends SGI_READY once it is up.
    wait_irq(|| READY.load(Ordering::Acquire) != 0);
    let cpu1 = smp::slot_for(other).unwrap_or(1);
    let trip = |i: u64| {
        gic::send_sgi(SGI_PING, cpu1);
        wait_irq(|| PONGS.load(Ordering::Acquire) > i);
    };
    for i in 0..IPI_WARMUP {
        trip(i);
    }
    let base = measure::baseline(N_IPI);
    let mut i = IPI_WARMUP;
    let before = exits::snapshot();
    let t = measure::ticks(N_IPI, || {
        trip(i);
        i += 1;
    });
    let trips = exits::delta(before, exits::snapshot());
    measure::report(
        "ipi-roundtrip",
        measure::tenths_per_op(t.saturating_sub(base), N_IPI, freq),
    );
    exits::report("ipi-roundtrip", trips, N_IPI);
    // CPU 1 returns from `partner` and guest-rt turns it off.
    timer::wait_until(100_000, || {
        psci::affinity_info(other, 0) == psci::AFFINITY_OFF
    });
}
