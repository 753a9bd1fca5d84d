//! CPU errata and platform quirks as data, matched on `MIDR_EL1` like Linux's
//! `arch/arm64/kernel/cpu_errata.c`: each entry names the erratum, the CPUs (implementer,
//! part, variant/revision range) it affects, and what this hypervisor does about it. The
//! boot log lists the entries that match the CPU it runs on ([`matching`]); the Spectre
//! workarounds guests ask about through SMCCC follow the firmware's answers and this table
//! ([`workaround_state`]).

use el2_core::smccc::{ArchWorkaround, WorkaroundState};

/// A range of CPUs: one implementer and part number, variant/revision from `min` to `max`
/// inclusive (each as `variant << 4 | revision`, i.e. `rVpR` ordered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MidrRange {
    /// `MIDR_EL1.Implementer` (0x41 Arm, 0x43 Cavium).
    pub implementer: u8,
    /// `MIDR_EL1.PartNum`.
    pub part: u16,
    /// Lowest `variant << 4 | revision`.
    pub min: u8,
    /// Highest `variant << 4 | revision`.
    pub max: u8,
}

/// Arm.
pub const ARM: u8 = 0x41;
/// Cavium.
pub const CAVIUM: u8 = 0x43;
/// Cortex-A57 part number.
pub const CORTEX_A57: u16 = 0xd07;
/// ThunderX CN88xx.
pub const THUNDERX: u16 = 0x0a1;
/// ThunderX CN81xx.
pub const THUNDERX_81XX: u16 = 0x0a2;
/// ThunderX CN83xx.
pub const THUNDERX_83XX: u16 = 0x0a3;

const fn rp(variant: u8, revision: u8) -> u8 {
    variant << 4 | revision
}

impl MidrRange {
    /// Every variant and revision of a part.
    pub const fn all(implementer: u8, part: u16) -> Self {
        MidrRange {
            implementer,
            part,
            min: 0,
            max: 0xff,
        }
    }

    /// `rVminpRmin` to `rVmaxpRmax`.
    pub const fn range(implementer: u8, part: u16, min: (u8, u8), max: (u8, u8)) -> Self {
        MidrRange {
            implementer,
            part,
            min: rp(min.0, min.1),
            max: rp(max.0, max.1),
        }
    }

    /// Whether `midr` is in the range.
    pub fn matches(&self, midr: u64) -> bool {
        let implementer = ((midr >> 24) & 0xff) as u8;
        let part = ((midr >> 4) & 0xfff) as u16;
        let vr = rp(((midr >> 20) & 0xf) as u8, (midr & 0xf) as u8);
        implementer == self.implementer && part == self.part && (self.min..=self.max).contains(&vr)
    }
}

/// What the hypervisor does about an erratum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Worked around; the text says where.
    Applied(&'static str),
    /// Passed to guests (they apply their own workaround, or ask the firmware through us).
    Guests(&'static str),
    /// Does not touch anything this hypervisor does; the text says why.
    NotApplicable(&'static str),
    /// Not worked around yet: said in the boot log; the text says what is missing.
    Missing(&'static str),
}

/// Which erratum (for code that applies one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// Cavium 23154: reads of `ICC_IAR1_EL1` need to be surrounded by NOPs and followed by a
    /// barrier, or may return a stale INTID.
    Cavium23154,
    /// Cavium 27456: a broadcast TLBI may not invalidate the instruction cache.
    Cavium27456,
    /// Cavium 30115: guest accesses to the GICv3 CPU interface (`ICV_*`) misbehave unless
    /// trapped (`ICH_HCR_EL2.TC`) and emulated.
    Cavium30115,
    /// Arm 832075: Cortex-A57 device load-acquire deadlock.
    Arm832075,
    /// Arm 834220: Cortex-A57 stage-2 fault may be reported for a stage-1 fault.
    Arm834220,
    /// Arm 1319367: Cortex-A57 speculative AT during a nVHE world switch.
    Arm1319367,
    /// Spectre v2 (CVE-2017-5715): branch predictor hardening through the firmware.
    SpectreV2,
    /// Spectre-BHB (CVE-2022-23960): branch history clearing through the firmware.
    SpectreBhb,
}

/// One table entry.
#[derive(Debug, Clone, Copy)]
pub struct Erratum {
    /// Which.
    pub id: Id,
    /// Name as vendors and Linux give it.
    pub name: &'static str,
    /// The CPUs it affects.
    pub cpus: &'static [MidrRange],
    /// What the hypervisor does.
    pub handling: Handling,
}

/// The table (Seattle: Cortex-A57 r1p2; ThunderX: CN88xx pass 1.x/2.x and its siblings).
pub static TABLE: &[Erratum] = &[
    Erratum {
        id: Id::Cavium23154,
        name: "Cavium erratum 23154 (GICv3 ICC_IAR1_EL1 read)",
        cpus: &[
            MidrRange::all(CAVIUM, THUNDERX),
            MidrRange::all(CAVIUM, THUNDERX_81XX),
            MidrRange::all(CAVIUM, THUNDERX_83XX),
        ],
        handling: Handling::Applied("host GICv3 acknowledge: NOPs around the ICC_IAR1_EL1 read, then DSB (arch/gic/v3.rs)"),
    },
    Erratum {
        id: Id::Cavium27456,
        name: "Cavium erratum 27456 (broadcast TLBI does not invalidate the I-cache)",
        cpus: &[
            MidrRange::range(CAVIUM, THUNDERX, (0, 0), (1, 1)),
            MidrRange::range(CAVIUM, THUNDERX_81XX, (0, 0), (0, 0)),
        ],
        handling: Handling::Applied("IC IALLU + DSB NSH + ISB after every VTTBR_EL2 switch in vcpu_load, both backends (el2-core switch::errata)"),
    },
    Erratum {
        id: Id::Cavium30115,
        name: "Cavium erratum 30115 (guest GICv3 CPU interface accesses)",
        cpus: &[
            MidrRange::range(CAVIUM, THUNDERX, (0, 0), (1, 2)),
            MidrRange::range(CAVIUM, THUNDERX_81XX, (0, 0), (0, 2)),
            MidrRange::range(CAVIUM, THUNDERX_83XX, (0, 0), (0, 0)),
        ],
        handling: Handling::Applied("guest ICC_* accesses trapped (ICH_HCR_EL2.TC, TALL0, TALL1) and emulated against the list registers and ICH_VMCR_EL2 (vgic cpuif_trap, arch/cpuif_trap.rs)"),
    },
    Erratum {
        id: Id::Arm832075,
        name: "Arm erratum 832075 (Cortex-A57 device load-acquire deadlock)",
        cpus: &[MidrRange::range(ARM, CORTEX_A57, (0, 0), (1, 2))],
        handling: Handling::NotApplicable("the hypervisor does no load-acquire from Device memory (its MMIO is plain LDR/STR)"),
    },
    Erratum {
        id: Id::Arm834220,
        name: "Arm erratum 834220 (Cortex-A57 stage-2 fault reported for a stage-1 fault)",
        cpus: &[MidrRange::range(ARM, CORTEX_A57, (0, 0), (1, 2))],
        handling: Handling::Applied("guest translation/access/permission aborts take their IPA from AT S1E1R + PAR_EL1, not HPFAR_EL2; the guest is re-entered when its stage 1 does not map FAR (el2-core switch::errata)"),
    },
    Erratum {
        id: Id::Arm1319367,
        name: "Arm erratum 1319367 (Cortex-A57 speculative AT in the nVHE world switch)",
        cpus: &[MidrRange::all(ARM, CORTEX_A57)],
        handling: Handling::Applied("nVHE vcpu_load and the stage-2 TLBI window block EL1 walks (TCR_EL1.EPDx, then SCTLR_EL1.M) until VTTBR_EL2 matches the EL1 context; SCTLR_EL1, then TCR_EL1 restored last"),
    },
    Erratum {
        id: Id::SpectreV2,
        name: "Spectre v2 (CVE-2017-5715): SMCCC_ARCH_WORKAROUND_1",
        cpus: &[MidrRange::all(ARM, CORTEX_A57), MidrRange::all(CAVIUM, THUNDERX)],
        handling: Handling::Guests("guests get the firmware's SMCCC_ARCH_FEATURES answer; their calls are passed to the firmware"),
    },
    Erratum {
        id: Id::SpectreBhb,
        name: "Spectre-BHB (CVE-2022-23960): SMCCC_ARCH_WORKAROUND_3",
        cpus: &[MidrRange::all(ARM, CORTEX_A57)],
        handling: Handling::Guests("guests get the firmware's SMCCC_ARCH_FEATURES answer; their calls are passed to the firmware"),
    },
];

/// The entries that affect the CPU with `midr`.
pub fn matching(midr: u64) -> impl Iterator<Item = &'static Erratum> {
    TABLE
        .iter()
        .filter(move |e| e.cpus.iter().any(|r| r.matches(midr)))
}

/// Whether erratum `id` affects the CPU with `midr`.
pub fn affects(id: Id, midr: u64) -> bool {
    matching(midr).any(|e| e.id == id)
}

/// What the firmware said about a workaround (`SMCCC_ARCH_FEATURES`), or that it could not
/// be asked (no SMCCC 1.1: `PSCI_FEATURES(SMCCC_VERSION)` failed or the version is 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirmwareAnswer {
    /// The firmware was not asked.
    NotAsked,
    /// `SMCCC_ARCH_FEATURES` returned this.
    Said(i64),
}

/// How the machine stands on `wa`, for guests: the firmware's answer when it gave one
/// (0: affected, the firmware call mitigates; 1 or -2: not affected), else the CPU's
/// `ID_AA64PFR0_EL1.CSV2`/`ID_AA64PFR0_EL1.CSV3`-style facts and this table:
/// `unaffected_by_id` says the ID registers declare the CPU safe.
pub fn workaround_state(
    wa: ArchWorkaround,
    answer: FirmwareAnswer,
    midr: u64,
    unaffected_by_id: bool,
) -> WorkaroundState {
    match answer {
        FirmwareAnswer::Said(0) => return WorkaroundState::Mitigated,
        FirmwareAnswer::Said(1) | FirmwareAnswer::Said(-2) => return WorkaroundState::NotRequired,
        _ => {}
    }
    let listed = match wa {
        ArchWorkaround::Wa1 => affects(Id::SpectreV2, midr),
        ArchWorkaround::Wa3 => affects(Id::SpectreBhb, midr),
        // Speculative store bypass: every out-of-order CPU without SSBS is exposed.
        ArchWorkaround::Wa2 => !unaffected_by_id,
    };
    if unaffected_by_id && wa != ArchWorkaround::Wa2 || !listed {
        WorkaroundState::NotRequired
    } else {
        WorkaroundState::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seattle's Cortex-A57 r1p2.
    const SEATTLE: u64 = 0x411f_d072;
    /// ThunderX CN88xx pass 1.1 (r1p1) and pass 2.2 (r1p2... as Linux numbers passes).
    const THUNDERX_P11: u64 = 0x431f_0a11;
    const THUNDERX_R1P3: u64 = 0x431f_0a13;
    /// QEMU's `max` CPU.
    const QEMU_MAX: u64 = 0x000f_0510;

    fn ids(midr: u64) -> Vec<Id> {
        matching(midr).map(|e| e.id).collect()
    }

    #[test]
    fn seattle_matches_the_a57_entries() {
        assert_eq!(
            ids(SEATTLE),
            [
                Id::Arm832075,
                Id::Arm834220,
                Id::Arm1319367,
                Id::SpectreV2,
                Id::SpectreBhb
            ]
        );
        // r1p3 is past 832075/834220's range.
        assert!(!affects(Id::Arm834220, 0x411f_d073));
        assert!(affects(Id::Arm1319367, 0x411f_d073));
    }

    #[test]
    fn thunderx_passes() {
        assert_eq!(
            ids(THUNDERX_P11),
            [
                Id::Cavium23154,
                Id::Cavium27456,
                Id::Cavium30115,
                Id::SpectreV2
            ]
        );
        // r1p3: 27456 (to r1p1) and 30115 (to r1p2) are fixed, 23154 is not.
        assert_eq!(ids(THUNDERX_R1P3), [Id::Cavium23154, Id::SpectreV2]);
        // CN81xx pass 1.0 has 27456; CN83xx has 23154 and 30115.
        assert!(affects(Id::Cavium27456, 0x430f_0a20));
        assert!(!affects(Id::Cavium27456, 0x430f_0a21));
        assert!(affects(Id::Cavium30115, 0x430f_0a30));
        assert!(!affects(Id::Cavium30115, 0x430f_0a31));
    }

    #[test]
    fn other_cpus_match_nothing() {
        assert!(ids(QEMU_MAX).is_empty());
        // Same part number, other implementer.
        assert!(ids(0x421f_d072).is_empty());
    }

    #[test]
    fn firmware_answers_win() {
        use ArchWorkaround::*;
        let said = FirmwareAnswer::Said;
        assert_eq!(
            workaround_state(Wa1, said(0), QEMU_MAX, true),
            WorkaroundState::Mitigated
        );
        assert_eq!(
            workaround_state(Wa1, said(1), SEATTLE, false),
            WorkaroundState::NotRequired
        );
        assert_eq!(
            workaround_state(Wa2, said(-2), SEATTLE, false),
            WorkaroundState::NotRequired
        );
        // The firmware does not know the call: an affected CPU stays unmitigated.
        assert_eq!(
            workaround_state(Wa1, said(-1), SEATTLE, false),
            WorkaroundState::Unknown
        );
        assert_eq!(
            workaround_state(Wa3, FirmwareAnswer::NotAsked, SEATTLE, false),
            WorkaroundState::Unknown
        );
        // Unlisted CPUs or CPUs whose ID registers say they are safe need nothing.
        assert_eq!(
            workaround_state(Wa1, FirmwareAnswer::NotAsked, QEMU_MAX, false),
            WorkaroundState::NotRequired
        );
        assert_eq!(
            workaround_state(Wa1, FirmwareAnswer::NotAsked, SEATTLE, true),
            WorkaroundState::NotRequired
        );
        assert_eq!(
            workaround_state(Wa2, FirmwareAnswer::NotAsked, QEMU_MAX, false),
            WorkaroundState::Unknown
        );
        assert_eq!(
            workaround_state(Wa2, FirmwareAnswer::NotAsked, QEMU_MAX, true),
            WorkaroundState::NotRequired
        );
    }

    #[test]
    fn seattle_and_thunderx_errata_are_all_handled() {
        // Every erratum of the two server CPUs is worked around, passed to guests or does
        // not apply: none is left for the boot log to call "NOT worked around".
        for midr in [SEATTLE, THUNDERX_P11, 0x430f_0a20, 0x430f_0a30] {
            for e in matching(midr) {
                assert!(!matches!(e.handling, Handling::Missing(_)), "{e:?}");
            }
        }
        for id in [
            Id::Cavium27456,
            Id::Cavium30115,
            Id::Arm834220,
            Id::Arm1319367,
        ] {
            let e = TABLE.iter().find(|e| e.id == id).unwrap();
            assert!(matches!(e.handling, Handling::Applied(_)), "{e:?}");
        }
    }

    #[test]
    fn every_entry_is_reachable_and_described() {
        for e in TABLE {
            assert!(!e.cpus.is_empty() && !e.name.is_empty(), "{e:?}");
            let (min, max) = (e.cpus[0].min, e.cpus[0].max);
            assert!(min <= max, "{e:?}");
            let midr = u64::from(e.cpus[0].implementer) << 24
                | u64::from(min >> 4) << 20
                | 0xf << 16
                | u64::from(e.cpus[0].part) << 4
                | u64::from(min & 0xf);
            assert!(
                affects(e.id, midr),
                "{e:?} does not match its own first CPU"
            );
        }
    }
}
