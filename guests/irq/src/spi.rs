//! SPI routing: the interrupt of an emulated device, the hypervisor's PL011 (SPI 1 = INTID
//! 33, level-sensitive), is routed to CPU 1 (GICv2 `GICD_ITARGETSR`: CPU 1's interface bit;
//! GICv3 `GICD_IROUTER`: CPU 1's affinity), raised, and must be taken by CPU 1 exactly once
//! and never by CPU 0; then re-routed to CPU 0 and the opposite is checked. Both CPUs have
//! IRQs unmasked while the line is up, so a wrongly routed interrupt would be taken.
//!
//! How the device raises its line on demand: `UARTINTR` is the OR of `RIS & IMSC`, and the
//! PL011 sets `RIS.TXRIS` when transmitted data leaves the transmit FIFO (PL011 TRM, DDI 0183,
//! 2.8.6: the transmit interrupt follows a transition to the trigger level, it is not set by
//! an empty FIFO alone; the hypervisor's model, like QEMU's, transmits at once, so after every
//! write to `DR`) and keeps it until `ICR` clears it. The guest's console is this PL011 and
//! prints with every interrupt masked (`IMSC` = 0), so after a line is printed `TXRIS` is
//! latched while the line stays low. A round checks exactly that (`TXRIS` set, SPI not
//! pending), then unmasks `TXIM`: the line goes up and stays up until the handler masks `TXIM`
//! and clears `TXRIS` (level-sensitive: the handler also checks that the SPI reads active
//! *and* pending before it clears the cause, and not pending after). Nothing prints while
//! `TXIM` is unmasked. This needs no loopback (`CR.LBE`), which QEMU 7.2's own PL011 lacks,
//! so the check also passes natively.

use crate::{fail, say};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use guest_rt::console::PL011_BASE;
use guest_rt::gic::{self, Trigger, Version};
use guest_rt::platform::Platform;
use guest_rt::{irq, psci, smp, timer};

/// The PL011's interrupt: SPI 1.
pub const UART_SPI: u32 = 33;
/// Its priority (below the driver's PMR 0xf0).
const PRIORITY: u8 = 0x80;
/// Time the routed CPU gets to take the interrupt, in microseconds.
const TAKE_TIMEOUT_US: u64 = 1_000_000;
/// Time a misrouted copy, or a level the handler failed to lower, gets to show up.
const SETTLE_US: u64 = 20_000;

/// PL011 registers and bits (PL011 TRM 3.2).
mod uart {
    use super::PL011_BASE;

    pub const IMSC: usize = 0x038;
    pub const RIS: usize = 0x03c;
    pub const MIS: usize = 0x040;
    pub const ICR: usize = 0x044;
    /// Transmit interrupt (TXIM/TXRIS/TXMIS/TXIC).
    pub const INT_TX: u32 = 1 << 5;
    /// All 11 interrupt bits.
    pub const INT_ALL: u32 = 0x7ff;

    pub fn read(off: usize) -> u32 {
        // SAFETY: PL011_BASE is the PL011's MMIO frame on every platform the guests run on
        // (identity mapped as device memory, or MMU off); `off` is a register offset in it.
        unsafe { ((PL011_BASE + off) as *const u32).read_volatile() }
    }

    pub fn write(off: usize, value: u32) {
        // SAFETY: as in `read`.
        unsafe { ((PL011_BASE + off) as *mut u32).write_volatile(value) }
    }

    /// Masks every interrupt and clears every raw status bit: the line is low.
    pub fn quiet() {
        write(IMSC, 0);
        write(ICR, INT_ALL);
    }
}

/// Times the SPI was taken, per CPU index (0 and 1).
static TAKEN: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];
/// Per CPU: `MIS` as the handler read it on entry.
static MIS_SEEN: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];
/// Per CPU: the SPI read pending (with the line still up) before the handler cleared the
/// cause (bit 0), and pending after (bit 1).
static PEND_SEEN: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];
/// CPU 1's progress: 1 = ready, 2 = done, 3 = failed.
static PARTNER: AtomicU64 = AtomicU64::new(0);
/// Tells CPU 1 to leave.
static STOP: AtomicBool = AtomicBool::new(false);

/// Handler of [`UART_SPI`] on either CPU: quietens the PL011 (mask `TXIM`, clear `TXRIS`).
fn handler(_intid: u32) {
    let mis = uart::read(uart::MIS);
    let before = gic::is_pending(UART_SPI);
    uart::write(uart::IMSC, 0);
    uart::write(uart::ICR, uart::INT_TX);
    let after = gic::is_pending(UART_SPI);
    let cpu = smp::this_cpu();
    if let (Some(n), Some(m), Some(p)) = (TAKEN.get(cpu), MIS_SEEN.get(cpu), PEND_SEEN.get(cpu)) {
        m.store(u64::from(mis), Ordering::Relaxed);
        p.store(u64::from(before) | u64::from(after) << 1, Ordering::Relaxed);
        n.fetch_add(1, Ordering::Release);
    }
}

fn taken(cpu: usize) -> u64 {
    TAKEN.get(cpu).map_or(0, |n| n.load(Ordering::Acquire))
}

/// CPU 1: IRQs unmasked until told to stop, so it takes the SPI whenever it is routed there.
fn partner(_arg: usize) {
    if let Err(e) = gic::init_cpu() {
        say!("FAIL cpu 1 gic init: {e}");
        PARTNER.store(3, Ordering::Release);
        return;
    }
    irq::enable();
    PARTNER.store(1, Ordering::Release);
    while !STOP.load(Ordering::Acquire) {
        core::hint::spin_loop();
    }
    irq::disable();
    PARTNER.store(2, Ordering::Release);
}

/// Configures the SPI, starts CPU 1 and runs both rounds (skipped with one CPU).
pub fn run(plat: &Platform) {
    let me = smp::this_mpidr();
    let Some(&other) = plat.cpu_ids().iter().find(|&&m| m != me) else {
        say!("spi routing: skipped (1 CPU)");
        return;
    };
    irq::disable();
    uart::quiet();
    irq::set_handler(UART_SPI, handler);
    gic::set_priority(UART_SPI, PRIORITY);
    gic::set_trigger(UART_SPI, Trigger::Level);
    if gic::trigger(UART_SPI) != Trigger::Level {
        fail(format_args!(
            "spi {UART_SPI}: ICFGR does not read level-sensitive"
        ));
    }
    gic::enable(UART_SPI);
    say!(
        "spi {UART_SPI} (PL011 TXRIS, level-sensitive, prio {PRIORITY:#x}): routing to vcpu1, \
         then vcpu0"
    );

    STOP.store(false, Ordering::Release);
    PARTNER.store(0, Ordering::Release);
    let ret = smp::start_secondary(other, partner, 0).unwrap_or(-1000);
    if ret != psci::SUCCESS {
        fail(format_args!(
            "spi routing: CPU_ON({other:#x}) = {ret} ({})",
            psci::return_name(ret)
        ));
    }
    if !timer::wait_until(5_000_000, || PARTNER.load(Ordering::Acquire) != 0) {
        fail(format_args!("spi routing: cpu 1 did not come up"));
    }
    if PARTNER.load(Ordering::Acquire) != 1 {
        fail(format_args!("spi routing: cpu 1 failed to start"));
    }
    let cpu1 = smp::slot_for(other).unwrap_or(1);

    round(cpu1, 0);
    round(0, cpu1);

    STOP.store(true, Ordering::Release);
    if !timer::wait_until(1_000_000, || PARTNER.load(Ordering::Acquire) == 2) {
        fail(format_args!("spi routing: cpu 1 did not finish"));
    }
    gic::disable(UART_SPI);
    timer::wait_until(1_000_000, || {
        psci::affinity_info(other, 0) == psci::AFFINITY_OFF
    });
}

/// What one round observed, read back before the console is used again.
struct Seen {
    taken: bool,
    n_target: u64,
    n_other: u64,
    mis_in_handler: u64,
    pend_in_handler: u64,
    ris_after: u32,
    mis_after: u32,
    pending_after: bool,
}

/// Routes the SPI to CPU `target`, raises it and checks only `target` takes it, once.
fn round(target: usize, other: usize) {
    let reg = match gic::version() {
        Some(Version::V2) => "ITARGETSR",
        _ => "IROUTER",
    };
    irq::disable();
    // Everything masked; keep the TXRIS latched by the console output printed last.
    uart::write(uart::IMSC, 0);
    uart::write(uart::ICR, uart::INT_ALL & !uart::INT_TX);
    for i in 0..2 {
        TAKEN[i].store(0, Ordering::Relaxed);
        MIS_SEEN[i].store(0, Ordering::Relaxed);
        PEND_SEEN[i].store(0, Ordering::Relaxed);
    }
    let written = match gic::route_spi(UART_SPI, target) {
        Ok(v) => v,
        Err(e) => fail(format_args!("spi {UART_SPI}: route to vcpu{target}: {e}")),
    };
    let route = gic::spi_route(UART_SPI);
    if route != written {
        fail(format_args!(
            "spi {UART_SPI}: {reg}{UART_SPI} reads {route:#x} after writing {written:#x}"
        ));
    }
    let ris = uart::read(uart::RIS);
    if ris & uart::INT_TX == 0 {
        fail(format_args!(
            "spi {UART_SPI}: UARTRIS = {ris:#x} after console output, TXRIS clear"
        ));
    }
    if gic::is_pending(UART_SPI) {
        fail(format_args!(
            "spi {UART_SPI}: pending with every PL011 interrupt masked (UARTRIS = {ris:#x})"
        ));
    }

    // From here until the PL011 is quiet again nothing may print (see the module comment).
    irq::enable();
    uart::write(uart::IMSC, uart::INT_TX);
    let ok = timer::wait_until(TAKE_TIMEOUT_US, || taken(target) >= 1);
    timer::wait_until(SETTLE_US, || false);
    irq::disable();
    let seen = Seen {
        taken: ok,
        n_target: taken(target),
        n_other: taken(other),
        mis_in_handler: MIS_SEEN[target].load(Ordering::Acquire),
        pend_in_handler: PEND_SEEN[target].load(Ordering::Acquire),
        ris_after: uart::read(uart::RIS),
        mis_after: uart::read(uart::MIS),
        pending_after: gic::is_pending(UART_SPI),
    };
    uart::quiet();

    let (n_t, n_o) = (seen.n_target, seen.n_other);
    if !seen.taken || n_t != 1 || n_o != 0 {
        fail(format_args!(
            "spi {UART_SPI} routed to vcpu{target} ({reg}{UART_SPI} = {route:#04x}): taken by \
             vcpu{target} {n_t} times, by vcpu{other} {n_o} times, expected 1 and 0"
        ));
    }
    if seen.mis_in_handler & u64::from(uart::INT_TX) == 0 {
        fail(format_args!(
            "spi {UART_SPI}: handler on vcpu{target} found UARTMIS = {:#x}, TXMIS clear",
            seen.mis_in_handler
        ));
    }
    if seen.pend_in_handler != 0b01 {
        fail(format_args!(
            "spi {UART_SPI} (level): pending in the handler before/after clearing TXRIS: \
             {}/{}, expected true/false",
            seen.pend_in_handler & 1 != 0,
            seen.pend_in_handler & 2 != 0
        ));
    }
    if seen.ris_after & uart::INT_TX != 0 || seen.mis_after != 0 || seen.pending_after {
        fail(format_args!(
            "spi {UART_SPI}: after the handler UARTRIS = {:#x}, UARTMIS = {:#x}, SPI pending {}",
            seen.ris_after, seen.mis_after, seen.pending_after
        ));
    }
    say!(
        "spi {} routed to vcpu{}: taken by vcpu{} (1 time), not by vcpu{} ({}{} = {:#04x}; level held \
         until the handler cleared TXRIS)",
        UART_SPI,
        target,
        target,
        other,
        reg,
        UART_SPI,
        route
    );
}
