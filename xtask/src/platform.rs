//! Server profiles (`--platform seattle|thunderx`): the closest QEMU `virt` gets to AMD's
//! Opteron A1100 "Seattle" and Cavium's ThunderX CN88xx — CPU model with the real MIDR (the
//! hypervisor's errata table matches on it), GIC version, CPU count, and UEFI + ACPI
//! firmware. What they still lack compared with the real machines is in the README
//! ("Server profiles").

use crate::cli::{Backend, Gic};

/// A server profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    /// AMD Opteron A1100 "Seattle": 8 Cortex-A57 r1p2, GIC-400 (GICv2), UEFI + ACPI.
    Seattle,
    /// Cavium ThunderX CN88xx pass 1.1: AArch64-only ARMv8.1-class cores, GICv3 + ITS,
    /// UEFI + ACPI; the hypervisor runs non-VHE as on the real (ARMv8.0) ThunderX.
    #[value(name = "thunderx")]
    ThunderX,
}

/// `MIDR_EL1` of Seattle's Cortex-A57 (implementer 0x41 Arm, variant 1, part 0xd07,
/// revision 2: r1p2).
pub const SEATTLE_MIDR: u32 = 0x411f_d072;
/// `MIDR_EL1` of ThunderX CN88xx pass 1.1 (implementer 0x43 Cavium, variant 1, part 0x0a1,
/// revision 1), as in Linux's `MIDR_THUNDERX` errata entries.
pub const THUNDERX_MIDR: u32 = 0x431f_0a11;

impl Platform {
    /// Parses a profile name as written in a scenario file.
    pub fn parse(name: &str) -> Result<Platform, String> {
        match name {
            "seattle" => Ok(Platform::Seattle),
            "thunderx" => Ok(Platform::ThunderX),
            other => Err(format!("unknown platform '{other}': seattle or thunderx")),
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Seattle => "seattle",
            Platform::ThunderX => "thunderx",
        }
    }

    /// QEMU's `-cpu` value: the nearest CPU model with the real MIDR.
    pub fn qemu_cpu(self) -> String {
        match self {
            Platform::Seattle => format!("cortex-a57,midr={SEATTLE_MIDR:#x}"),
            // a64fx: AArch64 only at EL0/EL1 like ThunderX (it has SVE, which guests do
            // not get).
            Platform::ThunderX => format!("a64fx,midr={THUNDERX_MIDR:#x}"),
        }
    }

    /// The GIC of the real machine.
    pub fn gic(self) -> Gic {
        match self {
            Platform::Seattle => Gic::V2,
            Platform::ThunderX => Gic::V3,
        }
    }

    /// Physical CPUs (Seattle has 8; one ThunderX socket has 48, QEMU `virt` with GICv3
    /// allows many, but 8 keeps the emulation affordable).
    pub fn smp(self) -> u32 {
        8
    }

    /// The scenario-matrix cell whose backend and GIC the profile has (its CPU model and
    /// MIDR replace the cell's on QEMU's command line).
    pub fn cell(self) -> String {
        match self {
            Platform::Seattle => "cortex-a57/auto/gic2".into(),
            Platform::ThunderX => "max/nvhe/gic3".into(),
        }
    }

    /// The world-switch backend: ThunderX (ARMv8.0-class) has no VHE, so the stand-in CPU
    /// (which has it) is forced to the non-VHE backend.
    pub fn backend(self) -> Backend {
        match self {
            Platform::Seattle => Backend::Auto,
            Platform::ThunderX => Backend::Nvhe,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_carry_the_real_midrs() {
        assert!(Platform::Seattle.qemu_cpu().contains("midr=0x411fd072"));
        assert!(Platform::ThunderX
            .qemu_cpu()
            .starts_with("a64fx,midr=0x431f0a11"));
        assert_eq!(Platform::ThunderX.backend(), Backend::Nvhe);
        assert_eq!(Platform::Seattle.gic(), Gic::V2);
        assert_eq!(Platform::parse("thunderx"), Ok(Platform::ThunderX));
        assert!(Platform::parse("x-gene").is_err());
    }
}
