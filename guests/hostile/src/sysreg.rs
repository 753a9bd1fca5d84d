//! Accesses to system registers that do not exist for EL1. Expected: UNDEFINED, i.e. a
//! synchronous exception at EL1 with `ESR_EL1` = EC 0x00 (Unknown reason), IL = 1, ISS = 0,
//! and `ELR_EL1` = the instruction.

use core::arch::asm;
use guest_rt::fault::{self, Fault};
use guest_rt::report::Report;

/// `ESR_EL1` of an UNDEFINED A64 instruction: EC = 0x00, IL = 1 (32-bit), ISS = 0.
const ESR_UNDEFINED_A64: u64 = 1 << 25;
/// Value an UNDEFINED `mrs` leaves in its destination (the instruction is skipped).
const SENTINEL: u64 = 0x5a5a;

/// Runs `$insn` (operand `{v}`: an `mrs` destination or `msr` source) under `fault::catch`;
/// yields `((value, address of $insn), fault)`.
macro_rules! probe {
    ($insn:literal) => {
        fault::catch(|| {
            let (v, pc): (u64, u64);
            // SAFETY: the instruction is expected to be UNDEFINED: the handler records it and
            // skips it. Were it implemented, reading it has no effect and the value written
            // (SENTINEL) only goes to a register that does not exist for EL1.
            unsafe {
                asm!(
                    "mov {v}, #{s}",
                    "adr {pc}, 2f",
                    concat!("2: ", $insn),
                    v = out(reg) v, pc = out(reg) pc, s = const SENTINEL,
                    options(nostack),
                );
            }
            (v, pc)
        })
    };
}

/// Runs the system-register checks.
pub fn run(report: &mut Report) {
    let (r, f) = probe!("mrs {v}, s3_1_c15_c15_7");
    expect_undef(report, "read IMPDEF S3_1_C15_C15_7", r, f);
    let (r, f) = probe!("msr s3_1_c15_c15_7, {v}");
    expect_undef(report, "write IMPDEF S3_1_C15_C15_7", r, f);
    // The PMU is hidden (ID_AA64DFR0_EL1.PMUVer = 0) and trapped (MDCR_EL2.TPM): the
    // hypervisor answers UNDEFINED and logs it.
    let (r, f) = probe!("mrs {v}, pmccntr_el0");
    expect_undef(report, "read PMCCNTR_EL0 (PMU hidden)", r, f);
    let (r, f) = probe!("mrs {v}, hcr_el2");
    expect_undef(report, "read EL2 register HCR_EL2 at EL1", r, f);
    let (r, f) = probe!("msr vttbr_el2, {v}");
    expect_undef(report, "write EL2 register VTTBR_EL2 at EL1", r, f);
}

/// Checks `f` is an UNDEFINED exception taken on the instruction at `pc`.
fn expect_undef(report: &mut Report, name: &str, (value, pc): (u64, u64), f: Option<Fault>) {
    match f {
        Some(f) => report.check(
            name,
            f.esr == ESR_UNDEFINED_A64 && f.elr == pc,
            format_args!("UNDEFINED expected at {pc:#x}: {f}"),
        ),
        None => report.check(name, false, format_args!("no exception (value {value:#x})")),
    }
}
