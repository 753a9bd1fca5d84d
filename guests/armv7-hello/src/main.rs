//! An ARMv7-A test guest for the hypervisor's hardware AArch32 EL1 (`HCR_EL2.RW` = 0),
//! built for `armv7a-none-eabi`: checks the ARM boot protocol's registers, calls PSCI and
//! SMCCC over `HVC` (SMC32 convention), reads CP15 registers the hypervisor traps
//! (`ID_PFR0` under `HCR_EL2.TID3`, `ACTLR` under `TACR`), takes the UNDEFINED and data
//! abort the hypervisor injects for an unknown register and unbacked MMIO, uses VFP across
//! exits (lazy FP switching, `FPEXC32_EL2`), waits in `WFI` for the virtual timer through
//! the virtual GIC (v2 or v3), and ends with PSCI `SYSTEM_OFF` (`SYSTEM_RESET` on failure).
//! Prints `armv7-hello: <check> ok` lines and `armv7-hello: PASS` on the PL011.

#![cfg_attr(target_arch = "arm", no_std, no_main)]

// On any other target (e.g. a host `cargo build --workspace`) this is an empty program.
#[cfg(not(target_arch = "arm"))]
fn main() {
    eprintln!("armv7-hello runs on armv7a-none-eabi under the hypervisor (cargo xtask qemu --guest armv7-hello)");
}

#[cfg(target_arch = "arm")]
mod checks;
#[cfg(target_arch = "arm")]
mod gic;
#[cfg(target_arch = "arm")]
mod measure;
#[cfg(target_arch = "arm")]
mod reset;
#[cfg(target_arch = "arm")]
mod rt;
#[cfg(target_arch = "arm")]
mod uart;
