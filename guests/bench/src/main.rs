//! `bench`: micro-benchmarks of the operations a hypervisor makes expensive, in a unit that is
//! identical from run to run under QEMU `-icount shift=0` (instructions; see [`measure`]).
//!
//! Each operation runs many times between two `CNTVCT_EL0` reads (ISBs around them), the
//! same loop with an empty body is subtracted, and the result is printed as
//! `bench: <op> <instructions per op>`, then (under the hypervisor) `bench: <op> exits/op ...`,
//! the exits one operation costs by reason (see [`exits`]). Operations: `hvc` (SMCCC_VERSION), `sysreg`
//! (`ID_AA64PFR0_EL1`, trapped by `HCR_EL2.TID3`), `mmio-pl011` (`UARTFR`), `mmio-gicd`
//! (`GICD_TYPER`), `virtio-notify` (a `QueueNotify` write), `sgi-self` and `ack-eoi`,
//! `timer-latency` (handler entry minus `CVAL`) and `ipi-roundtrip` (needs 2 CPUs). Then
//! `bench: done` and PSCI SYSTEM_OFF. Runs at EL1 under the hypervisor or directly under QEMU.
#![no_std]
#![no_main]

mod exits;
mod irqs;
mod measure;
mod virtio;

use core::arch::asm;
use guest_rt::platform::{GicInfo, Platform};
use guest_rt::{gic, mmu, psci, timer};

/// Iterations of the trapping single-instruction operations.
const N_TRAP: u64 = 2000;
/// PL011 flag register (`UARTFR`) on QEMU `virt`.
const PL011_FR: usize = 0x0900_0018;
/// `GICD_TYPER` offset.
const GICD_TYPER: usize = 0x4;
/// SMCCC_VERSION function id.
const SMCCC_VERSION: u64 = 0x8000_0000;

/// Prints one line prefixed with `bench: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("bench: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

guest_rt::entry!(main);

/// The hypervisor's vendor-specific yield call (SMCCC owner 6, function 1).
const HV_YIELD: u64 = 0x8600_0001;

fn main(dtb: usize) -> ! {
    mmu::enable();
    let plat = match Platform::from_dtb(dtb) {
        Ok(p) => p,
        Err(e) => {
            say!("FAIL device tree: {e}");
            psci::system_reset()
        }
    };
    if let Err(e) = gic::init(&plat.gic) {
        say!("FAIL gic init: {e}");
        psci::system_reset()
    }
    let freq = timer::frequency();
    let gicd = match plat.gic {
        GicInfo::V2 { gicd, .. } | GicInfo::V3 { gicd, .. } => gicd,
    };
    say!(
        "freq {freq} Hz, cpus {}, gic v{}; unit: instructions per op under -icount shift=0 \
         (ticks * 1e9 / freq)",
        plat.ncpus,
        if matches!(plat.gic, GicInfo::V2 { .. }) {
            2
        } else {
            3
        }
    );

    if plat.bootargs.split_whitespace().any(|w| w == "vmswitch") {
        // Two VMs on one physical CPU, both in this loop: each HV_YIELD hands the CPU to the
        // other VM, which yields straight back, so one iteration is two VM-to-VM switches.
        measure::run_timed_only("vm-switch-pair", N_TRAP, freq, || {
            // SAFETY: HV_YIELD (vendor hypervisor service 1) has no side effects on guest
            // memory; clobbers as for any SMCCC call.
            unsafe {
                asm!("hvc #0", inout("x0") HV_YIELD => _, clobber_abi("C"), options(nostack))
            };
        });
        say!("done");
        psci::system_off()
    }
    // `only=<op>` on the command line (`cargo xtask bench --profile`): run that operation
    // alone (`only=none`: none at all, the profile's baseline).
    let only = plat
        .bootargs
        .split_whitespace()
        .find_map(|w| w.strip_prefix("only="));
    let want = |op: &str| only.is_none_or(|o| o == op || (o == "ack-eoi" && op == "sgi-self"));
    if want("hvc") {
        measure::run("hvc", N_TRAP, freq, hvc_op);
    }
    if want("sysreg") {
        measure::run("sysreg", N_TRAP, freq, sysreg_op);
    }
    if want("mmio-pl011") {
        measure::run("mmio-pl011", N_TRAP, freq, pl011_op);
    }
    if want("mmio-gicd") {
        measure::run("mmio-gicd", N_TRAP, freq, || gicd_op(gicd));
    }
    if want("virtio-notify") {
        virtio::run(dtb, N_TRAP, freq);
    }
    if want("sgi-self") {
        irqs::eoi(freq);
    }
    if want("timer-latency") {
        irqs::timer_latency(&plat, freq);
    }
    if want("ipi-roundtrip") {
        irqs::ipi(&plat, freq);
    }
    say!("done");
    psci::system_off()
}

/// `hvc`: one SMCCC_VERSION call.
#[inline(always)]
fn hvc_op() {
    // SAFETY: SMCCC_VERSION is a query with no side effects; the SMCCC clobbers are
    // declared by the C ABI clobber set (x0..x17).
    unsafe { asm!("hvc #0", inout("x0") SMCCC_VERSION => _, clobber_abi("C"), options(nostack)) };
}

/// `sysreg`: one read of a trapped ID register.
#[inline(always)]
fn sysreg_op() {
    // SAFETY: reading an ID register has no side effects.
    unsafe { asm!("mrs {v}, id_aa64pfr0_el1", v = out(reg) _, options(nomem, nostack)) };
}

/// `mmio-pl011`: one read of `UARTFR`.
#[inline(always)]
fn pl011_op() {
    // SAFETY: UARTFR is a read-only status register of the PL011 at its fixed address.
    unsafe { core::ptr::read_volatile(PL011_FR as *const u32) };
}

/// `mmio-gicd`: one read of `GICD_TYPER` of the distributor at `gicd`.
#[inline(always)]
fn gicd_op(gicd: usize) {
    // SAFETY: GICD_TYPER is a read-only register of the distributor from the DTB.
    unsafe { core::ptr::read_volatile((gicd + GICD_TYPER) as *const u32) };
}
