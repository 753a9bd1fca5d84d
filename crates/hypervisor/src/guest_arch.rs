//! How a VM's kernel runs: AArch64, or an ARMv7-A (AArch32) kernel in hardware
//! (`HCR_EL2.RW` = 0, where `ID_AA64PFR0_EL1.EL1` says EL1 can be AArch32: Cortex-A57,
//! QEMU `max`) or under the dynamic binary translator (`dbt-armv7`; where EL1 is AArch64
//! only, e.g. ThunderX, QEMU `a64fx`, or when the package asks for it with
//! `VM_FLAG_DBT_FORCE`). Decided once per VM at creation, logged with the reason; a VM
//! that cannot run is refused with the reason, and the others still start.

use core::fmt;

/// `ID_AA64PFR0_EL1.EL1`, bits \[7:4\].
const PFR0_EL1_SHIFT: u32 = 4;
/// A 4-bit ID register field.
const FIELD_MASK: u64 = 0xf;
/// `ID_AA64PFR0_EL1.EL1` = 0b0010: EL1 can be AArch64 or AArch32.
const PFR0_EL1_AARCH32: u64 = 0b0010;

/// Whether the DBT engine can run VMs in this build: the image embeds the ARMv7-A VM
/// runtime (`crate::dbt_runtime`, built by `cargo xtask build`).
pub const DBT_AVAILABLE: bool = crate::dbt_runtime::AVAILABLE;

/// How a VM runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution {
    /// An AArch64 kernel at EL1.
    Aarch64,
    /// An ARMv7-A kernel at AArch32 EL1 in hardware (`HCR_EL2.RW` = 0).
    Aarch32Hardware,
    /// An ARMv7-A kernel under the dynamic binary translator: the VM's vCPU runs the
    /// AArch64 runtime (`crate::dbt_runtime`) at EL1, which translates the guest.
    Aarch32Dbt,
}

/// Why a VM cannot run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The VM is ARMv7-A, the CPU has no AArch32 EL1 and the DBT is not available.
    NoAarch32El1 {
        /// `ID_AA64PFR0_EL1.EL1`.
        el1: u64,
    },
    /// The package asks for the DBT, which this build cannot run.
    DbtUnavailable {
        /// `ID_AA64PFR0_EL1.EL1`.
        el1: u64,
    },
}

/// `ID_AA64PFR0_EL1.EL1` of `pfr0`.
pub fn el1_field(pfr0: u64) -> u64 {
    (pfr0 >> PFR0_EL1_SHIFT) & FIELD_MASK
}

/// What `ID_AA64PFR0_EL1.EL1` = `el1` means.
fn el1_meaning(el1: u64) -> &'static str {
    match el1 {
        0b0001 => "AArch64 only",
        PFR0_EL1_AARCH32 => "AArch64 and AArch32",
        _ => "unknown encoding",
    }
}

/// Decides how a VM with package flags `flags` runs on a CPU with `ID_AA64PFR0_EL1` =
/// `pfr0`, when the DBT is `dbt_available`.
pub fn choose(flags: u32, pfr0: u64, dbt_available: bool) -> Result<Execution, Refusal> {
    if flags & vmpkg::VM_FLAG_ARCH_ARMV7 == 0 {
        return Ok(Execution::Aarch64);
    }
    let el1 = el1_field(pfr0);
    let force_dbt = flags & vmpkg::VM_FLAG_DBT_FORCE != 0;
    match (force_dbt, el1 == PFR0_EL1_AARCH32, dbt_available) {
        (false, true, _) => Ok(Execution::Aarch32Hardware),
        (_, _, true) => Ok(Execution::Aarch32Dbt),
        (true, _, false) => Err(Refusal::DbtUnavailable { el1 }),
        (false, false, false) => Err(Refusal::NoAarch32El1 { el1 }),
    }
}

/// The log line of a decision, with its reason: `hardware AArch32 (ID_AA64PFR0_EL1.EL1 =
/// 0b0010: AArch64 and AArch32)`.
pub struct Decision {
    /// What was decided.
    pub result: Result<Execution, Refusal>,
    /// `ID_AA64PFR0_EL1` it was decided on.
    pub pfr0: u64,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let el1 = el1_field(self.pfr0);
        let why = el1_meaning(el1);
        match self.result {
            Ok(Execution::Aarch64) => write!(f, "AArch64"),
            Ok(Execution::Aarch32Hardware) => write!(
                f,
                "ARMv7-A guest: hardware AArch32 (ID_AA64PFR0_EL1.EL1 = {el1:#06b}: {why})"
            ),
            Ok(Execution::Aarch32Dbt) => write!(
                f,
                "ARMv7-A guest: dynamic binary translation (ID_AA64PFR0_EL1.EL1 = {el1:#06b}: {why})"
            ),
            Err(Refusal::NoAarch32El1 { .. }) => write!(
                f,
                "ARMv7-A guest refused: this CPU has no AArch32 EL1 (ID_AA64PFR0_EL1.EL1 = \
                 {el1:#06b}: {why}) and the DBT engine is not available in this build"
            ),
            Err(Refusal::DbtUnavailable { .. }) => write!(
                f,
                "ARMv7-A guest refused: the DBT was forced (dbt = \"force\") but the DBT engine \
                 is not available in this build (ID_AA64PFR0_EL1.EL1 = {el1:#06b}: {why})"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use vmpkg::{VM_FLAG_ARCH_ARMV7, VM_FLAG_DBT_FORCE};

    /// `ID_AA64PFR0_EL1` of a Cortex-A57 (EL0..EL3 AArch64 and AArch32).
    const A57: u64 = 0x2222;
    /// `ID_AA64PFR0_EL1` of an A64FX (AArch64 only).
    const A64FX: u64 = 0x1111;

    #[test]
    fn choices() {
        assert_eq!(choose(0, A64FX, false), Ok(Execution::Aarch64));
        assert_eq!(
            choose(VM_FLAG_ARCH_ARMV7, A57, false),
            Ok(Execution::Aarch32Hardware)
        );
        assert_eq!(
            choose(VM_FLAG_ARCH_ARMV7, A64FX, false),
            Err(Refusal::NoAarch32El1 { el1: 1 })
        );
        assert_eq!(
            choose(VM_FLAG_ARCH_ARMV7, A64FX, true),
            Ok(Execution::Aarch32Dbt)
        );
        let forced = VM_FLAG_ARCH_ARMV7 | VM_FLAG_DBT_FORCE;
        assert_eq!(choose(forced, A57, true), Ok(Execution::Aarch32Dbt));
        assert_eq!(
            choose(forced, A57, false),
            Err(Refusal::DbtUnavailable { el1: 2 })
        );
    }

    #[test]
    fn log_lines() {
        let d = Decision {
            result: choose(VM_FLAG_ARCH_ARMV7, A57, false),
            pfr0: A57,
        };
        assert_eq!(
            d.to_string(),
            "ARMv7-A guest: hardware AArch32 (ID_AA64PFR0_EL1.EL1 = 0b0010: AArch64 and AArch32)"
        );
        let d = Decision {
            result: choose(VM_FLAG_ARCH_ARMV7, A64FX, false),
            pfr0: A64FX,
        };
        assert!(d
            .to_string()
            .contains("no AArch32 EL1 (ID_AA64PFR0_EL1.EL1 = 0b0001: AArch64 only)"));
    }
}
