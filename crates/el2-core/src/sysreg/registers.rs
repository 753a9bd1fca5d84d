//! Registers `aarch64-cpu` lacks, by their assembler names, and the pointer-authentication
//! keys by encoding: `aarch64-cpu` has them, but under names the assembler accepts only with
//! FEAT_PAuth in the target features, which a v8.0 build does not have (the world switch
//! touches the keys only on CPUs that implement them).

use super::fields;

sys_regs! {
    /// `VPIDR_EL2`: the `MIDR_EL1` value EL1 reads.
    VPIDR_EL2: "vpidr_el2", (), R W;
    /// `ID_AA64ISAR2_EL1`: instruction set attributes 2 (QARMA3 pointer authentication).
    ID_AA64ISAR2_EL1: "id_aa64isar2_el1", fields::ID_AA64ISAR2_EL1::Register, R;
    /// `PMCR_EL0`: performance monitors control (`N`: counters implemented).
    PMCR_EL0: "pmcr_el0", fields::PMCR_EL0::Register, R;
    /// `CNTHP_CVAL_EL2`: compare value of the EL2 physical timer (its control register,
    /// `CNTHP_CTL_EL2`, is `aarch64-cpu`'s).
    CNTHP_CVAL_EL2: "cnthp_cval_el2", (), R W;

    /// `APIAKeyLo_EL1`: instruction key A, bits \[63:0\].
    APIAKEYLO_EL1: "s3_0_c2_c1_0", (), R W;
    /// `APIAKeyHi_EL1`: instruction key A, bits \[127:64\].
    APIAKEYHI_EL1: "s3_0_c2_c1_1", (), R W;
    /// `APIBKeyLo_EL1`: instruction key B, bits \[63:0\].
    APIBKEYLO_EL1: "s3_0_c2_c1_2", (), R W;
    /// `APIBKeyHi_EL1`: instruction key B, bits \[127:64\].
    APIBKEYHI_EL1: "s3_0_c2_c1_3", (), R W;
    /// `APDAKeyLo_EL1`: data key A, bits \[63:0\].
    APDAKEYLO_EL1: "s3_0_c2_c2_0", (), R W;
    /// `APDAKeyHi_EL1`: data key A, bits \[127:64\].
    APDAKEYHI_EL1: "s3_0_c2_c2_1", (), R W;
    /// `APDBKeyLo_EL1`: data key B, bits \[63:0\].
    APDBKEYLO_EL1: "s3_0_c2_c2_2", (), R W;
    /// `APDBKeyHi_EL1`: data key B, bits \[127:64\].
    APDBKEYHI_EL1: "s3_0_c2_c2_3", (), R W;
    /// `APGAKeyLo_EL1`: generic key, bits \[63:0\].
    APGAKEYLO_EL1: "s3_0_c2_c3_0", (), R W;
    /// `APGAKeyHi_EL1`: generic key, bits \[127:64\].
    APGAKEYHI_EL1: "s3_0_c2_c3_1", (), R W;

    /// `ICC_PMR_EL1`: GICv3 CPU interface priority mask.
    ICC_PMR_EL1: "icc_pmr_el1", fields::ICC_PMR_EL1::Register, R W;
    /// `ICC_IAR1_EL1`: acknowledges the highest-priority pending Group 1 interrupt.
    ICC_IAR1_EL1: "icc_iar1_el1", fields::ICC_INTID::Register, R;
    /// `ICC_EOIR1_EL1`: end of interrupt (a priority drop only, with `EOImode` = 1).
    ICC_EOIR1_EL1: "icc_eoir1_el1", fields::ICC_INTID::Register, W;
    /// `ICC_BPR1_EL1`: Group 1 binary point.
    ICC_BPR1_EL1: "icc_bpr1_el1", fields::ICC_BPR1_EL1::Register, R W;
    /// `ICC_CTLR_EL1`: CPU interface control.
    ICC_CTLR_EL1: "icc_ctlr_el1", fields::ICC_CTLR_EL1::Register, R W;
    /// `ICC_IGRPEN1_EL1`: Group 1 interrupt enable.
    ICC_IGRPEN1_EL1: "icc_igrpen1_el1", fields::ICC_IGRPEN1_EL1::Register, R W;
    /// `ICC_DIR_EL1`: deactivates an interrupt.
    ICC_DIR_EL1: "icc_dir_el1", fields::ICC_INTID::Register, W;
    /// `ICC_SGI1R_EL1`: generates a Group 1 SGI.
    ICC_SGI1R_EL1: "icc_sgi1r_el1", fields::ICC_SGI1R_EL1::Register, W;
}

sys_regs! {
    /// `SPSR_abt`: the saved program status of AArch32 Abort mode (AArch32 EL1 guests).
    SPSR_ABT: "spsr_abt", (), R W;
    /// `SPSR_und`: the saved program status of AArch32 Undefined mode.
    SPSR_UND: "spsr_und", (), R W;
    /// `SPSR_irq`: the saved program status of AArch32 IRQ mode.
    SPSR_IRQ: "spsr_irq", (), R W;
    /// `SPSR_fiq`: the saved program status of AArch32 FIQ mode.
    SPSR_FIQ: "spsr_fiq", (), R W;
    /// `IFSR32_EL2`: the AArch32 `IFSR` of an AArch32 EL1 guest.
    IFSR32_EL2: "ifsr32_el2", (), R W;
    /// `FPEXC32_EL2`: the AArch32 `FPEXC` of an AArch32 EL1 guest (trapped at EL2 by
    /// `CPTR_EL2` like any FP access).
    FPEXC32_EL2: "fpexc32_el2", (), R W;
}
