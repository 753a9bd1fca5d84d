//! `virtio-test`: drives virtio-mmio devices with the `virtio-drivers` crate (an independent
//! driver-side implementation), natively under QEMU or under the hypervisor.
//!
//! It finds every `virtio,mmio` node in its device tree, probes each transport and runs one
//! check per device type it finds (the first device of each type):
//! - block: prints the first 16 bytes of sector 2 as text (`block: sector 2 starts "..."`:
//!   a disk image's marker), checks that a read past the end fails, writes a pattern to
//!   sectors 2..6, reads it back, writes `VIRTIO-TEST-MARKER` at sector 1, flushes;
//! - console: prints a line through virtio-console;
//! - entropy: reads 32 bytes and checks they are not all equal;
//! - net: sends a broadcast frame; with `net=echo` in the bootargs sends it until it comes
//!   back from an echo peer, which is another VM running this guest with `net=echo-server`.
//!
//! With `bench` in the bootargs it runs no checks but the block benchmark ([`blk_bench`]) on
//! the first block device instead.
//!
//! Lines: `virtio-test: <device>: ok (...)`, `virtio-test: <device>: skipped (...)` or
//! `virtio-test: <device>: FAIL ...`, then `virtio-test: PASS` (PSCI SYSTEM_OFF) or
//! `virtio-test: FAIL n of m checks failed` (SYSTEM_RESET). A run that found no device to
//! check fails too (`virtio-test: FAIL no check ran`): a pass must mean something was checked.
#![no_std]
#![no_main]

extern crate alloc;

mod blk;
mod blk_bench;
mod console;
mod dtb;
mod hal;
mod heap;
mod logger;
mod net;
mod rng;

use core::ptr::NonNull;

use guest_rt::{println, psci};
use virtio_drivers::transport::mmio::{MmioTransport, VirtIOHeader};
use virtio_drivers::transport::{DeviceType, Transport};

guest_rt::entry!(main);

/// Prints one line with the guest's prefix.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("virtio-test: {}", format_args!($($arg)*)) };
}

/// Outcome of one device check.
pub enum Outcome {
    /// Passed, with details.
    Ok,
    /// Failed.
    Fail,
}

fn main(dtb: usize) -> ! {
    logger::init();
    say!("start, dtb at {:#x}", dtb);
    let Some((bootargs, nodes)) = dtb::scan(dtb) else {
        say!("FAIL cannot parse the device tree");
        psci::system_reset();
    };
    say!("bootargs: \"{}\"", bootargs);
    let words = || bootargs.split_whitespace();
    let net_role = if words().any(|w| w == "net=echo-server") {
        net::Role::Server
    } else if words().any(|w| w == "net=echo") {
        net::Role::Client
    } else {
        net::Role::Send
    };

    let mut transports: [Option<MmioTransport<'static>>; 4] = [None, None, None, None];
    let mut found = 0;
    for node in nodes.iter().flatten() {
        let Some(header) = NonNull::new(node.base as *mut VirtIOHeader) else {
            continue;
        };
        // SAFETY: the device tree says a virtio-mmio register window of `size` bytes is at
        // `base`; with the MMU off it is accessed directly and nothing else in this guest
        // uses it.
        let transport = match unsafe { MmioTransport::new(header, node.size) } {
            Ok(t) => t,
            // An empty QEMU slot reports device id 0.
            Err(_) => continue,
        };
        found += 1;
        let kind = transport.device_type();
        say!(
            "found {:?} at {:#x} (size {:#x}, irq {:?}, version {:?}, vendor {:#x})",
            kind,
            node.base,
            node.size,
            node.irq,
            transport.version(),
            transport.vendor_id()
        );
        let slot = match kind {
            DeviceType::Block => 0,
            DeviceType::Console => 1,
            DeviceType::EntropySource => 2,
            DeviceType::Network => 3,
            _ => continue,
        };
        if transports[slot].is_none() {
            transports[slot] = Some(transport);
        }
    }
    say!("{} virtio-mmio devices", found);

    let [blk_t, console_t, rng_t, net_t] = transports;
    if words().any(|w| w == "bench") {
        let outcome = match blk_t {
            Some(t) => blk_bench::run(t),
            None => {
                say!("blk-bench: FAIL no block device");
                Outcome::Fail
            }
        };
        if let Outcome::Ok = outcome {
            println!("virtio-test: PASS");
            psci::system_off();
        }
        println!("virtio-test: FAIL blk-bench");
        psci::system_reset();
    }
    let mut checks = 0;
    let mut failed = 0;
    let mut count = |o: Option<Outcome>| match o {
        Some(Outcome::Ok) => checks += 1,
        Some(Outcome::Fail) => {
            checks += 1;
            failed += 1
        }
        None => {}
    };
    count(run("block", blk_t, blk::check));
    count(run("console", console_t, console::check));
    count(run("rng", rng_t, rng::check));
    count(run("net", net_t, |t| net::check(t, net_role)));
    say!("dma pages used: {}", hal::dma_pages_used());

    if checks == 0 {
        println!("virtio-test: FAIL no check ran (no virtio device found)");
        psci::system_reset();
    }
    if failed == 0 {
        println!("virtio-test: PASS {} checks", checks);
        psci::system_off();
    }
    println!("virtio-test: FAIL {} of {} checks failed", failed, checks);
    psci::system_reset();
}

fn run(
    name: &str,
    transport: Option<MmioTransport<'static>>,
    check: impl FnOnce(MmioTransport<'static>) -> Outcome,
) -> Option<Outcome> {
    match transport {
        Some(t) => Some(check(t)),
        None => {
            say!("{}: skipped (no device)", name);
            None
        }
    }
}
