//! Hardware debug registers must not leak between VMs. The first read of `DBGBVR0_EL1` must
//! see 0 (a fresh vCPU's value, not what another VM left in the hardware); then the guest
//! arms a breakpoint value and a watchpoint value of its own (`dbg_pattern=N` on the command
//! line picks them), gives the CPU away with `HV_YIELD` a number of times (another VM on the
//! same physical CPU does the same with its own values), and must read its own values back.
//! The values are never enabled (`DBGBCR`/`DBGWCR` stay 0), so nothing fires.

use core::arch::asm;
use guest_rt::report::Report;

/// Vendor service: give the physical CPU to the next runnable vCPU.
const HV_YIELD: u32 = 0x8600_0001;
/// Rounds of yielding.
const ROUNDS: u32 = 20;

fn read_bvr0() -> u64 {
    let v: u64;
    // SAFETY: reading a breakpoint value register at EL1 has no side effects.
    unsafe { asm!("mrs {}, dbgbvr0_el1", out(reg) v, options(nomem, nostack)) };
    v
}

fn read_wvr0() -> u64 {
    let v: u64;
    // SAFETY: as in `read_bvr0`.
    unsafe { asm!("mrs {}, dbgwvr0_el1", out(reg) v, options(nomem, nostack)) };
    v
}

fn write_values(bvr: u64, wvr: u64) {
    // SAFETY: only the value registers are written; the control registers (DBGBCR0/DBGWCR0)
    // stay 0, so no breakpoint or watchpoint is enabled.
    unsafe {
        asm!("msr dbgbvr0_el1, {}", "msr dbgwvr0_el1, {}", "isb", in(reg) bvr, in(reg) wvr,
            options(nomem, nostack));
    }
}

/// Runs the check with this VM's `pattern` (1.. from the command line; 0 when absent).
pub fn run(report: &mut Report, pattern: u64) {
    let first = read_bvr0();
    report.check(
        "debug registers: first DBGBVR0_EL1 read",
        first == 0,
        format_args!("{first:#x}, 0 expected (nothing of another VM)"),
    );
    let bvr = 0x4000_0000 + pattern * 0x1000;
    let wvr = 0x4800_0000 + pattern * 0x2000;
    write_values(bvr, wvr);
    for _ in 0..ROUNDS {
        guest_rt::psci::call(HV_YIELD, 0, 0, 0);
    }
    let (b, w) = (read_bvr0(), read_wvr0());
    report.check(
        format_args!("debug registers: own values after {ROUNDS} yields"),
        b == bvr && w == wvr,
        format_args!("DBGBVR0 {b:#x} (wrote {bvr:#x}), DBGWVR0 {w:#x} (wrote {wvr:#x})"),
    );
    write_values(0, 0);
}
