//! Loads and stores just outside the guest's RAM. Expected: a synchronous external abort
//! (Data Abort from the current EL, `ESR_EL1.EC` = 0x25, `DFSC` = 0b010000), `FAR_EL1` = the
//! address, `WnR` as the access, `ELR_EL1` = the instruction.

use guest_rt::fault::{self, Fault};
use guest_rt::probe::{load, pa_bits, store};
use guest_rt::report::Report;

/// The hole between the virtio-mmio transports and the platform bus on QEMU `virt`.
const HOLE: u64 = 0x0b00_0000;
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
pub fn ram(dtb: usize) -> Option<(u64, u64)> {
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
