//! `irq`: GIC and interrupt delivery checks on GICv2 and GICv3.
//!
//! (a) SGI ping-pong between CPU 0 and CPU 1 (skipped with one CPU): 1000 round trips, each
//! side waits for the other's SGI before sending the next; (b) priority order of two SGIs
//! made pending on self while masked, and `PMR` masking; (c) the virtual-timer PPI fires and
//! is quietened (masked) by its handler before EOI; (d) SPI routing (skipped with one CPU):
//! the emulated PL011's level-sensitive SPI 33, routed to CPU 1 then CPU 0 (GICv2
//! `ITARGETSR`, GICv3 `IROUTER`), is taken once by the CPU named and never by the other;
//! (e) IRQ counts per CPU and source.
//! Prints `irq: PASS` and calls SYSTEM_OFF, or `irq: FAIL <what>` and SYSTEM_RESET.
#![no_std]
#![no_main]

mod counts;
mod pingpong;
mod priority;
mod spi;
mod vtimer;

use guest_rt::platform::{GicInfo, Platform};
use guest_rt::{gic, mmu, psci};

/// Prints one line prefixed with `irq: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("irq: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

/// Reports a failed check and ends the run with SYSTEM_RESET.
pub(crate) fn fail(what: core::fmt::Arguments<'_>) -> ! {
    say!("FAIL {}", what);
    psci::system_reset()
}

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    mmu::enable();
    let plat = match Platform::from_dtb(dtb) {
        Ok(p) => p,
        Err(e) => fail(format_args!("device tree: {e}")),
    };
    match plat.gic {
        GicInfo::V2 { gicd, gicc } => say!("GICv2: GICD {gicd:#x}, GICC {gicc:#x}"),
        GicInfo::V3 {
            gicd,
            gicr,
            gicr_size,
        } => say!("GICv3: GICD {gicd:#x}, GICR {gicr:#x} (size {gicr_size:#x})"),
    }
    say!(
        "cpus: {}, timer PPIs: virtual {}, physical {}",
        plat.ncpus,
        plat.timer.virt,
        plat.timer.phys
    );
    if let Err(e) = gic::init(&plat.gic) {
        fail(format_args!("gic init: {e}"));
    }
    counts::install_handlers(&plat);

    pingpong::run(&plat);
    priority::order();
    priority::pmr_masking();
    vtimer::run(&plat);
    spi::run(&plat);
    counts::report();

    say!("PASS");
    psci::system_off()
}
