//! Field layouts `aarch64-cpu` does not describe, as `register_bitfields!` (Arm ARM
//! section D19.2 for the EL2 registers, the GICv3 architecture specification for `ICC_*`).
//! Pure definitions: the control-register values built from them are host-tested.

use tock_registers::register_bitfields;

register_bitfields! {u64,
    /// `CPTR_EL2` when `HCR_EL2.E2H` = 0: trap bits, 1 = trap. `aarch64-cpu`'s `CPTR_EL2`
    /// has only `TAM`.
    pub CPTR_EL2_E2H0 [
        /// Trap `CPACR_EL1` accesses.
        TCPAC OFFSET(31) NUMBITS(1) [],
        /// Trap activity-monitor (AMU) accesses.
        TAM OFFSET(30) NUMBITS(1) [],
        /// Trap trace-register accesses.
        TTA OFFSET(20) NUMBITS(1) [],
        /// RES1.
        RES1_13 OFFSET(13) NUMBITS(1) [],
        /// Trap SME (RES1 without FEAT_SME).
        TSM OFFSET(12) NUMBITS(1) [],
        /// Trap FP/SIMD at EL0-EL2.
        TFP OFFSET(10) NUMBITS(1) [],
        /// RES1.
        RES1_9 OFFSET(9) NUMBITS(1) [],
        /// Trap SVE (RES1 without FEAT_SVE).
        TZ OFFSET(8) NUMBITS(1) [],
        /// RES1.
        RES1_7_0 OFFSET(0) NUMBITS(8) [],
    ],

    /// `CPTR_EL2` when `HCR_EL2.E2H` = 1: the `CPACR_EL1` layout, enable fields, 0 = trap.
    pub CPTR_EL2_E2H1 [
        /// Trap `CPACR_EL1` accesses.
        TCPAC OFFSET(31) NUMBITS(1) [],
        /// Trap activity-monitor (AMU) accesses.
        TAM OFFSET(30) NUMBITS(1) [],
        /// Trap trace-register accesses.
        TTA OFFSET(28) NUMBITS(1) [],
        /// SME enable.
        SMEN OFFSET(24) NUMBITS(2) [
            /// SME trapped at EL0, EL1 and EL2.
            Trap = 0b00,
            /// SME not trapped.
            NoTrap = 0b11,
        ],
        /// FP/SIMD enable.
        FPEN OFFSET(20) NUMBITS(2) [
            /// FP/SIMD trapped at EL0, EL1 and EL2.
            Trap = 0b00,
            /// FP/SIMD not trapped.
            NoTrap = 0b11,
        ],
        /// SVE enable.
        ZEN OFFSET(16) NUMBITS(2) [
            /// SVE trapped at EL0, EL1 and EL2.
            Trap = 0b00,
            /// SVE not trapped.
            NoTrap = 0b11,
        ],
    ],

    /// `CNTHCTL_EL2` when `HCR_EL2.E2H` = 1 (`aarch64-cpu`'s `CNTHCTL_EL2` is the E2H = 0
    /// layout, where `EL1PCTEN`/`EL1PCEN` are bits 0/1).
    pub CNTHCTL_EL2_E2H1 [
        /// EL0/EL1 accesses to the EL1 physical timer registers are not trapped.
        EL1PCEN OFFSET(11) NUMBITS(1) [],
        /// EL0/EL1 accesses to the physical counter are not trapped.
        EL1PCTEN OFFSET(10) NUMBITS(1) [],
        /// EL0 accesses to the physical timer are not trapped (EL2&0 regime).
        EL0PTEN OFFSET(9) NUMBITS(1) [],
        /// EL0 accesses to the virtual timer are not trapped (EL2&0 regime).
        EL0VTEN OFFSET(8) NUMBITS(1) [],
        /// EL0 accesses to the virtual counter are not trapped (EL2&0 regime).
        EL0VCTEN OFFSET(1) NUMBITS(1) [],
        /// EL0 accesses to the physical counter are not trapped (EL2&0 regime).
        EL0PCTEN OFFSET(0) NUMBITS(1) [],
    ],

    /// `PMCR_EL0`: performance monitors control.
    pub PMCR_EL0 [
        /// Number of event counters implemented.
        N OFFSET(11) NUMBITS(5) [],
    ],

    /// `ID_AA64ISAR2_EL1`: the FEAT_PAuth_QARMA3 fields.
    pub ID_AA64ISAR2_EL1 [
        /// Address authentication with QARMA3.
        APA3 OFFSET(12) NUMBITS(4) [],
        /// Generic authentication with QARMA3.
        GPA3 OFFSET(8) NUMBITS(4) [],
    ],

    /// `ICC_CTLR_EL1` (GICv3 CPU interface control; `aarch64-cpu`'s is read-only and has
    /// only `ExtRange`).
    pub ICC_CTLR_EL1 [
        /// Priority drop and deactivation are split: `ICC_EOIR1_EL1` only drops the running
        /// priority, `ICC_DIR_EL1` deactivates.
        EOImode OFFSET(1) NUMBITS(1) [],
    ],

    /// `ICC_PMR_EL1`: interrupts of lower priority (higher value) than this are masked.
    pub ICC_PMR_EL1 [
        /// Priority mask.
        Priority OFFSET(0) NUMBITS(8) [],
    ],

    /// `ICC_BPR1_EL1`: Group 1 priority grouping.
    pub ICC_BPR1_EL1 [
        /// Binary point.
        BinaryPoint OFFSET(0) NUMBITS(3) [],
    ],

    /// `ICC_IGRPEN1_EL1`: Group 1 interrupt enable.
    pub ICC_IGRPEN1_EL1 [
        /// Group 1 interrupts are signalled.
        Enable OFFSET(0) NUMBITS(1) [],
    ],

    /// `ICC_IAR1_EL1`, `ICC_EOIR1_EL1`, `ICC_DIR_EL1`: an interrupt ID.
    pub ICC_INTID [
        /// The INTID (1020..=1023: special, e.g. 1023 = spurious).
        INTID OFFSET(0) NUMBITS(24) [],
    ],

    /// `ICC_SGI1R_EL1`: generate a Group 1 SGI.
    pub ICC_SGI1R_EL1 [
        /// Affinity level 3 of the targets.
        Aff3 OFFSET(48) NUMBITS(8) [],
        /// Range selector: `TargetList` bit n is Aff0 = RS * 16 + n.
        RS OFFSET(44) NUMBITS(4) [],
        /// Interrupt routing mode: 1 = every PE but this one.
        IRM OFFSET(40) NUMBITS(1) [],
        /// Affinity level 2 of the targets.
        Aff2 OFFSET(32) NUMBITS(8) [],
        /// The SGI number.
        INTID OFFSET(24) NUMBITS(4) [],
        /// Affinity level 1 of the targets.
        Aff1 OFFSET(16) NUMBITS(8) [],
        /// One bit per target Aff0 within the range.
        TargetList OFFSET(0) NUMBITS(16) [],
    ],
}
