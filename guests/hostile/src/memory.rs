//! Loads and stores to addresses with nothing behind them. Expected: a synchronous external
//! abort, i.e. a Data Abort from the current EL (`ESR_EL1.EC` = 0x25) with
//! `DFSC` = 0b010000, and `FAR_EL1` = the address.

use crate::report::Report;
use aarch64_cpu::registers::{Readable, ID_AA64MMFR0_EL1};
use core::arch::asm;
use guest_rt::fault::{self, Fault};

/// A hole in the `virt` map below RAM, between the virtio-mmio transports (0x0a00_0000) and
/// the platform bus (0x0c00_0000). (0x1000_0000..0x3eff_0000 is not a hole natively: it is
/// the PCIe MMIO window, where QEMU's PCI master abort reads all-ones without an abort.)
const UNMAPPED_LOW: u64 = 0x0b00_0000;
/// Far above RAM (64 GiB), inside every supported PA size.
const UNMAPPED_HIGH: u64 = 0x10_0000_0000;
/// Value an aborted load leaves in its destination (the load is skipped).
const SENTINEL: u64 = 0x5a5a;

/// Runs the load/store checks.
pub fn run(report: &mut Report) {
    let pa_bits = pa_bits();
    for addr in [UNMAPPED_LOW, UNMAPPED_HIGH] {
        if addr >> pa_bits != 0 {
            crate::say!("skip {addr:#x}: beyond the {pa_bits}-bit PA size");
            continue;
        }
        let ((value, pc), f) = fault::catch(|| load(addr));
        expect_abort(report, "load", addr, pc, f, Some(value));
        let (pc, f) = fault::catch(|| store(addr));
        expect_abort(report, "store", addr, pc, f, None);
    }
}

/// Checks `f` is a synchronous external abort for the access at `pc` to `addr`.
fn expect_abort(
    report: &mut Report,
    what: &str,
    addr: u64,
    pc: u64,
    f: Option<Fault>,
    value: Option<u64>,
) {
    let name = format_args!("{what} unmapped {addr:#x}");
    match f {
        Some(f) => report.check(
            name,
            f.is_sync_external_abort()
                && f.far == addr
                && f.elr == pc
                && f.is_write() == (what == "store"),
            format_args!("synchronous external abort expected: {f}"),
        ),
        None => match value {
            Some(v) => report.check(name, false, format_args!("no exception, read {v:#x}")),
            None => report.check(name, false, format_args!("no exception")),
        },
    }
}

/// `ID_AA64MMFR0_EL1.PARange` in bits.
fn pa_bits() -> u32 {
    match ID_AA64MMFR0_EL1.read(ID_AA64MMFR0_EL1::PARange) {
        0 => 32,
        1 => 36,
        2 => 40,
        3 => 42,
        4 => 44,
        5 => 48,
        _ => 52,
    }
}

/// Loads from `addr`; returns the value (SENTINEL if aborted) and the `ldr`'s address.
fn load(addr: u64) -> (u64, u64) {
    let (value, pc): (u64, u64);
    // SAFETY: a fault is expected (fault::catch): if the `ldr` aborts, the handler skips it
    // and `value` keeps SENTINEL. Nothing is at `addr`, so nothing can change there.
    unsafe {
        asm!(
            "mov {v}, #{s}",
            "adr {pc}, 2f",
            "2: ldr {v}, [{a}]",
            v = out(reg) value, pc = out(reg) pc, a = in(reg) addr, s = const SENTINEL,
            options(nostack),
        );
    }
    (value, pc)
}

/// Stores to `addr`; returns the `str`'s address.
fn store(addr: u64) -> u64 {
    let pc: u64;
    // SAFETY: as in `load`; a skipped `str` has no effect.
    unsafe {
        asm!(
            "adr {pc}, 2f",
            "2: str {v}, [{a}]",
            pc = out(reg) pc, v = in(reg) SENTINEL, a = in(reg) addr,
            options(nostack),
        );
    }
    pc
}
