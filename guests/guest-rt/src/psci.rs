//! PSCI (Arm DEN 0022) function identifiers, return codes and helpers, over HVC.
//!
//! HVC is the conduit for PSCI in every environment these guests run in: QEMU `virt` without
//! EL2/EL3 (`/psci` method "hvc") and the hypervisor. Other conduits go through [`smccc::call`].

use crate::smccc::{self, Conduit};

/// `PSCI_VERSION`.
pub const PSCI_VERSION: u32 = 0x8400_0000;
/// `CPU_SUSPEND` (SMC64).
pub const CPU_SUSPEND: u32 = 0xc400_0001;
/// `CPU_OFF`.
pub const CPU_OFF: u32 = 0x8400_0002;
/// `CPU_ON` (SMC64).
pub const CPU_ON: u32 = 0xc400_0003;
/// `AFFINITY_INFO` (SMC64).
pub const AFFINITY_INFO: u32 = 0xc400_0004;
/// `MIGRATE_INFO_TYPE`.
pub const MIGRATE_INFO_TYPE: u32 = 0x8400_0006;
/// `SYSTEM_OFF`.
pub const SYSTEM_OFF: u32 = 0x8400_0008;
/// `SYSTEM_RESET`.
pub const SYSTEM_RESET: u32 = 0x8400_0009;
/// `PSCI_FEATURES`.
pub const PSCI_FEATURES: u32 = 0x8400_000a;

/// Return code `SUCCESS`.
pub const SUCCESS: i64 = 0;
/// Return code `NOT_SUPPORTED`.
pub const NOT_SUPPORTED: i64 = -1;
/// Return code `INVALID_PARAMETERS`.
pub const INVALID_PARAMETERS: i64 = -2;
/// Return code `DENIED`.
pub const DENIED: i64 = -3;
/// Return code `ALREADY_ON`.
pub const ALREADY_ON: i64 = -4;
/// Return code `ON_PENDING`.
pub const ON_PENDING: i64 = -5;
/// Return code `INVALID_ADDRESS`.
pub const INVALID_ADDRESS: i64 = -9;

/// `AFFINITY_INFO` result: the affinity instance is on.
pub const AFFINITY_ON: i64 = 0;
/// `AFFINITY_INFO` result: the affinity instance is off.
pub const AFFINITY_OFF: i64 = 1;
/// `AFFINITY_INFO` result: the affinity instance is transitioning to on.
pub const AFFINITY_ON_PENDING: i64 = 2;

/// Name of a PSCI/SMCCC return code, for reports.
pub fn return_name(ret: i64) -> &'static str {
    match ret {
        0 => "SUCCESS",
        -1 => "NOT_SUPPORTED",
        -2 => "INVALID_PARAMETERS",
        -3 => "DENIED",
        -4 => "ALREADY_ON",
        -5 => "ON_PENDING",
        -6 => "INTERNAL_FAILURE",
        -7 => "NOT_PRESENT",
        -8 => "DISABLED",
        -9 => "INVALID_ADDRESS",
        r if r > 0 => "(positive)",
        _ => "(unknown)",
    }
}

/// Calls PSCI function `fid` over HVC and returns its result, sign-extended for 32-bit ones.
pub fn call(fid: u32, a1: u64, a2: u64, a3: u64) -> i64 {
    smccc::result_of(fid, smccc::call3(Conduit::Hvc, fid, a1, a2, a3))
}

/// `PSCI_VERSION`: bits 30:16 major, 15:0 minor.
pub fn version() -> u64 {
    call(PSCI_VERSION, 0, 0, 0) as u64
}

/// `PSCI_FEATURES(fid)`: `NOT_SUPPORTED` or a non-negative feature word.
pub fn features(fid: u32) -> i64 {
    call(PSCI_FEATURES, u64::from(fid), 0, 0)
}

/// `CPU_ON(target_mpidr, entry_point, context_id)`.
pub fn cpu_on(target_mpidr: u64, entry_point: u64, context_id: u64) -> i64 {
    call(CPU_ON, target_mpidr, entry_point, context_id)
}

/// `AFFINITY_INFO(target_affinity, lowest_affinity_level)`: 0 on, 1 off, 2 on pending, or an
/// error.
pub fn affinity_info(target_affinity: u64, lowest_level: u64) -> i64 {
    call(AFFINITY_INFO, target_affinity, lowest_level, 0)
}

/// `CPU_OFF`: powers the calling CPU down; returns only on failure (`DENIED`).
pub fn cpu_off() -> i64 {
    call(CPU_OFF, 0, 0, 0)
}

/// `SYSTEM_OFF`: powers the system off (QEMU exits with status 0). Never returns.
pub fn system_off() -> ! {
    call(SYSTEM_OFF, 0, 0, 0);
    halt()
}

/// `SYSTEM_RESET`: the failure exit of a test guest (the hypervisor makes it a non-zero QEMU
/// exit status; plain QEMU reboots unless `-no-reboot`). Never returns.
pub fn system_reset() -> ! {
    call(SYSTEM_RESET, 0, 0, 0);
    halt()
}

/// Waits forever; reached only when SYSTEM_OFF/RESET returned, which they must not.
fn halt() -> ! {
    crate::println!("guest-rt: PSCI power call returned; halting");
    loop {
        aarch64_cpu::asm::wfe();
    }
}
