//! `memtest`: a guest that exercises the memory paths a hypervisor has to get right.
//!
//! 1. Probes memory outside its RAM — the hole at 0x0b00_0000, one page past the end of RAM,
//!    and 2 GiB past the end of RAM — and expects synchronous external aborts
//!    (`ESR_EL1.EC` = 0x25, `DFSC` = 0x10) with `FAR_EL1` = the address, for loads and stores.
//! 2. Runs load/store pairs and writeback forms against the PL011 at 0x0900_0000, which a
//!    hypervisor emulates and must decode from the instruction when `ISV` = 0: `ldp`/`stp` of
//!    W registers (offset, pre-index, post-index), `ldr` post-index, `ldr` register offset,
//!    `ldrsh`/`ldrsb` into W and X, and 64-bit `ldp`/`stp`/`ldr`/`str`, which QEMU's PL011
//!    performs as two 32-bit register accesses and an emulated one may answer with an
//!    external abort instead (then nothing may change, the base register included).
//! 3. Turns the MMU on with its own tables that map the PL011 page also at VA 0x1_0000_0000,
//!    and repeats loads through that alias: the hypervisor sees a VA in `FAR_EL2` that is not
//!    the IPA and must use `HPFAR_EL2` (and walk the guest's tables to fetch the instruction).
//!
//! 4. Logs dirty pages through the hypervisor's dirty-log service and checks the bitmap is
//!    exactly the pages written (see `dirty.rs`).
//!
//! Every check prints `memtest: <check>: ok (...)` or `memtest: FAIL <check>: ...`; then
//! `memtest: PASS` and SYSTEM_OFF, or `memtest: FAIL N of M checks failed` and SYSTEM_RESET.
//! Natively (plain QEMU `virt`) every check passes too: the expected values are the
//! architectural answers and QEMU's PL011 r1p5 identification registers.
#![no_std]
#![no_main]

mod dirty;
mod exec;
mod mmu;
mod pl011;
mod probe;

use guest_rt::psci;
use guest_rt::report::Report;

/// Prints one line prefixed with `memtest: `.
macro_rules! say {
    ($($arg:tt)*) => { guest_rt::println!("memtest: {}", format_args!($($arg)*)) };
}
pub(crate) use say;

guest_rt::entry!(main);

fn main(dtb: usize) -> ! {
    say!("start: aborts outside RAM, ldp/stp and writeback on the PL011, MMU alias, dirty log");
    let mut report = Report::new("memtest");
    probe::run(&mut report, dtb);
    pl011::run(&mut report);
    mmu::run(&mut report);
    match probe::ram(dtb) {
        Some((base, _)) => dirty::run(&mut report, base),
        None => report.check("device tree /memory", false, format_args!("no memory node")),
    }

    if report.failures() == 0 {
        say!("PASS");
        psci::system_off()
    }
    say!(
        "FAIL {} of {} checks failed",
        report.failures(),
        report.checks()
    );
    psci::system_reset()
}
