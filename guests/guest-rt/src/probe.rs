//! Probing addresses that are expected to abort: a load or store whose synchronous
//! exception `fault::catch` records and skips, plus the PA size the probes stay within.

use aarch64_cpu::registers::{Readable, ID_AA64MMFR0_EL1};
use core::arch::asm;

/// What a probing load leaves in its register when the access aborted (and what a probing
/// store writes).
pub const SENTINEL: u64 = 0x5a5a;

/// `ID_AA64MMFR0_EL1.PARange` in bits.
pub fn pa_bits() -> u32 {
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
pub fn load(addr: u64) -> (u64, u64) {
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
pub fn store(addr: u64) -> u64 {
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
