//! Loads and stores just outside the guest's RAM. Expected: a synchronous external abort
//! (Data Abort from the current EL, `ESR_EL1.EC` = 0x25, `DFSC` = 0b010000), `FAR_EL1` = the
//! address, `WnR` as the access, `ELR_EL1` = the instruction.

use crate::report::Report;
use aarch64_cpu::registers::{Readable, ID_AA64MMFR0_EL1};
use core::arch::asm;
use guest_rt::fault::{self, Fault};

/// The hole between the virtio-mmio transports and the platform bus on QEMU `virt`.
const HOLE: u64 = 0x0b00_0000;
/// Value an aborted load leaves in its destination (the load is skipped).
const SENTINEL: u64 = 0x5a5a;

/// Runs the probes; RAM is taken from the device tree at `dtb`.
pub fn run(report: &mut Report, dtb: usize) {
    let Some((base, size)) = ram(dtb) else {
        report.check("device tree /memory", false, format_args!("no memory node"));
        return;
    };
    let end = base + size;
    crate::say!("RAM {base:#x}..{end:#x}");
    let pa_bits = pa_bits();
    for (what, addr) in [
        ("hole", HOLE),
        ("RAM end + 4 KiB", end + 0x1000),
        ("RAM end + 2 GiB", end + (2 << 30)),
    ] {
        if addr >> pa_bits != 0 {
            crate::say!("skip {addr:#x}: beyond the {pa_bits}-bit PA size");
            continue;
        }
        let ((value, pc), f) = fault::catch(|| load(addr));
        expect_abort(report, what, "load", addr, pc, f, Some(value));
        let (pc, f) = fault::catch(|| store(addr));
        expect_abort(report, what, "store", addr, pc, f, None);
    }
}

/// The first `/memory` region of the device tree.
fn ram(dtb: usize) -> Option<(u64, u64)> {
    // SAFETY: the loader passes the address of a valid flattened device tree in x0, which
    // nothing in this guest overwrites.
    let fdt = unsafe { fdt::Fdt::from_ptr(dtb as *const u8) }.ok()?;
    let region = fdt.memory().regions().next()?;
    Some((region.starting_address as u64, region.size? as u64))
}

/// Checks `f` is a synchronous external abort for the access at `pc` to `addr`.
fn expect_abort(
    report: &mut Report,
    what: &str,
    access: &str,
    addr: u64,
    pc: u64,
    f: Option<Fault>,
    value: Option<u64>,
) {
    let name = format_args!("{access} {what} {addr:#x}");
    match f {
        Some(f) => report.check(
            name,
            f.is_sync_external_abort()
                && f.far == addr
                && f.elr == pc
                && f.is_write() == (access == "store"),
            format_args!("synchronous external abort expected: {f}"),
        ),
        None => report.check(
            name,
            false,
            format_args!("no exception, read {:#x}", value.unwrap_or(0)),
        ),
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
