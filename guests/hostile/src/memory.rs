//! Loads and stores to addresses with nothing behind them. Expected: a synchronous external
//! abort, i.e. a Data Abort from the current EL (`ESR_EL1.EC` = 0x25) with
//! `DFSC` = 0b010000, and `FAR_EL1` = the address.

use guest_rt::fault::{self, Fault};
use guest_rt::probe::{load, pa_bits, store};
use guest_rt::report::Report;

/// A hole in the `virt` map below RAM, between the virtio-mmio transports (0x0a00_0000) and
/// the platform bus (0x0c00_0000). (0x1000_0000..0x3eff_0000 is not a hole natively: it is
/// the PCIe MMIO window, where QEMU's PCI master abort reads all-ones without an abort.)
const UNMAPPED_LOW: u64 = 0x0b00_0000;
/// Far above RAM (64 GiB), inside every supported PA size.
const UNMAPPED_HIGH: u64 = 0x10_0000_0000;
/// Step of the sweep over the IPA space above the guest's RAM.
const SWEEP_STEP: u64 = 16 << 20;
/// End of the sweep: the first 4 GiB hold every other VM's RAM and the hypervisor on QEMU
/// `virt` (host RAM starts at 0x4000_0000), seen as physical addresses.
const SWEEP_END: u64 = 1 << 32;

/// Loads from every [`SWEEP_STEP`] of the IPA space from the end of this VM's RAM (`ram_end`)
/// to [`SWEEP_END`]: where other VMs' memory and the hypervisor live in physical memory.
/// Every load must abort: Stage-2 maps nothing there, so nothing can leak in.
pub fn sweep_above_ram(report: &mut Report, ram_end: u64) {
    let start = ram_end.next_multiple_of(SWEEP_STEP);
    let mut probes = 0u64;
    let mut leaks = 0u64;
    let mut first_leak = None;
    let mut addr = start;
    while addr < SWEEP_END {
        let ((value, _pc), f) = fault::catch(|| load(addr));
        probes += 1;
        if !f.is_some_and(|f| f.is_sync_external_abort() && f.far == addr) {
            leaks += 1;
            first_leak.get_or_insert((addr, value, f));
        }
        addr += SWEEP_STEP;
    }
    report.check(
        format_args!("sweep {start:#x}..{SWEEP_END:#x} above RAM"),
        leaks == 0,
        format_args!(
            "{probes} loads every {} MiB, {} aborted; first other answer: {:?}",
            SWEEP_STEP >> 20,
            probes - leaks,
            first_leak.map(|(a, v, f)| (a, v, f.map(|f| f.esr)))
        ),
    );
}

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
