//! SMC Calling Convention (Arm DEN 0028) calls from EL1, over `hvc #0` or `smc #0`.
//!
//! Arguments go in x0 (function identifier) to x7, results come back in x0 to x3. Registers
//! x4 to x17 are treated as clobbered, which is correct for every SMCCC version.

use core::arch::asm;

/// The instruction used to reach the SMCCC implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conduit {
    /// `hvc #0`: the hypervisor (or QEMU's built-in PSCI when no EL2 is emulated).
    Hvc,
    /// `smc #0`: the secure monitor (trapped to EL2 under a hypervisor with `HCR_EL2.TSC`).
    Smc,
}

/// `SMCCC_VERSION`: the SMCCC version implemented (0x8000_0000).
pub const SMCCC_VERSION: u32 = 0x8000_0000;
/// `SMCCC_ARCH_FEATURES`: whether an Arm architecture service function exists (0x8000_0001).
pub const SMCCC_ARCH_FEATURES: u32 = 0x8000_0001;
/// `SMCCC_ARCH_WORKAROUND_1`: branch predictor invalidation (CVE-2017-5715) (0x8000_8000).
pub const SMCCC_ARCH_WORKAROUND_1: u32 = 0x8000_8000;

/// SMCCC return value `NOT_SUPPORTED`: unknown function identifier (-1, sign-extended).
pub const NOT_SUPPORTED: i64 = -1;

/// Function identifier bit 31: fast call (1) or yielding call (0).
pub const FID_FAST_CALL: u32 = 1 << 31;
/// Function identifier bit 30: SMC64/HVC64 calling convention (1) or SMC32/HVC32 (0).
pub const FID_SMC64: u32 = 1 << 30;

/// Makes one SMCCC call through `conduit` with arguments `args` (`args[0]` is the function
/// identifier in x0). Returns x0..x3.
pub fn call(conduit: Conduit, args: [u64; 8]) -> [u64; 4] {
    match conduit {
        Conduit::Hvc => hvc(args),
        Conduit::Smc => smc(args),
    }
}

/// Makes one SMCCC call with `hvc #0`; see [`call`].
pub fn hvc(args: [u64; 8]) -> [u64; 4] {
    let [mut x0, mut x1, mut x2, mut x3, x4, x5, x6, x7] = args;
    // SAFETY: `hvc #0` follows SMCCC: it only changes x0..x17 (all declared here). Calls that
    // never return (SYSTEM_OFF/RESET) are fine too. Without EL2 the instruction is UNDEFINED
    // and the EL1 vectors report it (or record it when a fault is expected).
    unsafe {
        asm!(
            "hvc #0",
            inout("x0") x0, inout("x1") x1, inout("x2") x2, inout("x3") x3,
            inout("x4") x4 => _, inout("x5") x5 => _, inout("x6") x6 => _, inout("x7") x7 => _,
            out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
            out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
            options(nostack),
        );
    }
    [x0, x1, x2, x3]
}

/// Makes one SMCCC call with `smc #0`; see [`call`].
pub fn smc(args: [u64; 8]) -> [u64; 4] {
    let [mut x0, mut x1, mut x2, mut x3, x4, x5, x6, x7] = args;
    // SAFETY: as for `hvc`: SMCCC changes only x0..x17. Without EL3 (and without a
    // hypervisor trapping it) `smc` is UNDEFINED at EL1 and goes to the EL1 vectors.
    unsafe {
        asm!(
            "smc #0",
            inout("x0") x0, inout("x1") x1, inout("x2") x2, inout("x3") x3,
            inout("x4") x4 => _, inout("x5") x5 => _, inout("x6") x6 => _, inout("x7") x7 => _,
            out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
            out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
            options(nostack),
        );
    }
    [x0, x1, x2, x3]
}

/// Calls function `fid` with arguments `a1`..`a3` (the rest zero) and returns x0.
pub fn call3(conduit: Conduit, fid: u32, a1: u64, a2: u64, a3: u64) -> u64 {
    call(conduit, [u64::from(fid), a1, a2, a3, 0, 0, 0, 0])[0]
}

/// Interprets x0 as returned by function `fid`: sign-extends W0 for SMC32/HVC32 functions
/// (whose result is 32 bits wide) and takes all of X0 for SMC64/HVC64 ones.
pub fn result_of(fid: u32, x0: u64) -> i64 {
    if fid & FID_SMC64 == 0 {
        i64::from(x0 as u32 as i32)
    } else {
        x0 as i64
    }
}

/// Decodes an `SMCCC_VERSION` / `PSCI_VERSION` style result: (major, minor).
pub fn version_parts(v: u64) -> (u32, u32) {
    (((v >> 16) & 0x7fff) as u32, (v & 0xffff) as u32)
}
