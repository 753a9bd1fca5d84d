//! IRQ counts per CPU and INTID, and the shared handlers that keep them.

use crate::say;
use core::sync::atomic::{AtomicU64, Ordering};
use guest_rt::platform::Platform;
use guest_rt::{irq, smp};

/// SGI CPU 0 sends to CPU 1 in the ping-pong.
pub const SGI_PING: u32 = 1;
/// SGI CPU 1 sends back to CPU 0.
pub const SGI_PONG: u32 = 2;
/// Lower-priority SGI of the priority test.
pub const SGI_LOW: u32 = 3;
/// Higher-priority SGI of the priority test.
pub const SGI_HIGH: u32 = 4;
/// SGI of the PMR test.
pub const SGI_MASKED: u32 = 5;

/// Counted INTIDs: SGIs and PPIs.
const COUNTED: usize = 32;
/// Two CPUs take part at most.
const CPUS: usize = 2;

static COUNTS: [[AtomicU64; COUNTED]; CPUS] =
    [const { [const { AtomicU64::new(0) }; COUNTED] }; CPUS];

/// Order in which the priority test's SGIs were taken (up to 4 entries).
pub static ORDER: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static ORDER_LEN: AtomicU64 = AtomicU64::new(0);

/// Number of IRQs `intid` taken on CPU index `cpu`.
pub fn count(cpu: usize, intid: u32) -> u64 {
    COUNTS
        .get(cpu)
        .and_then(|c| c.get(intid as usize))
        .map_or(0, |c| c.load(Ordering::Acquire))
}

/// Number of priority-test SGIs recorded in [`ORDER`].
pub fn order_len() -> usize {
    ORDER_LEN.load(Ordering::Acquire) as usize
}

fn bump(intid: u32) {
    if let Some(c) = COUNTS
        .get(smp::this_cpu())
        .and_then(|c| c.get(intid as usize))
    {
        c.fetch_add(1, Ordering::AcqRel);
    }
}

fn counting(intid: u32) {
    bump(intid);
}

fn ordering(intid: u32) {
    let i = ORDER_LEN.load(Ordering::Relaxed) as usize;
    if let Some(slot) = ORDER.get(i) {
        slot.store(u64::from(intid), Ordering::Relaxed);
    }
    ORDER_LEN.store(i as u64 + 1, Ordering::Release);
    bump(intid);
}

/// Installs the handlers (shared by both CPUs); the timer handler is [`crate::vtimer`]'s.
pub fn install_handlers(plat: &Platform) {
    for sgi in [SGI_PING, SGI_PONG, SGI_MASKED] {
        irq::set_handler(sgi, counting);
    }
    for sgi in [SGI_LOW, SGI_HIGH] {
        irq::set_handler(sgi, ordering);
    }
    irq::set_handler(plat.timer.virt, crate::vtimer::handler);
}

/// Counts an IRQ taken by a handler defined elsewhere.
pub fn record(intid: u32) {
    bump(intid);
}

/// Prints the non-zero counts, one line per CPU.
pub fn report() {
    for (cpu, counts) in COUNTS.iter().enumerate() {
        let mut any = false;
        guest_rt::print!("irq: counts cpu {}:", cpu);
        for (intid, c) in counts.iter().enumerate() {
            let n = c.load(Ordering::Acquire);
            if n != 0 {
                let kind = if intid < 16 { "SGI" } else { "PPI" };
                guest_rt::print!(" {}{}={}", kind, intid, n);
                any = true;
            }
        }
        guest_rt::println!("{}", if any { "" } else { " none" });
    }
    say!("counts reported");
}
