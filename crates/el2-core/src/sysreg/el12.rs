//! The `*_EL12` and `*_EL02` names of VHE (FEAT_VHE, `HCR_EL2.E2H` = 1): with E2H set, EL2's
//! accesses to `SCTLR_EL1`, `TCR_EL1`, ... are redirected to its own `*_EL2` registers, and
//! the guest's EL1 (and EL0 virtual timer) registers are reached through these aliases.
//! Each is typed with the fields of the register it aliases. `aarch64-cpu` does not define
//! them; the assembler knows their names only with FEAT_VHE enabled, hence the encodings.

use aarch64_cpu::registers::{
    CNTKCTL_EL1, CNTV_CTL_EL0, CONTEXTIDR_EL1, CPACR_EL1, ESR_EL1, MAIR_EL1, SCTLR_EL1, SPSR_EL1,
    TCR_EL1, TTBR0_EL1, TTBR1_EL1,
};

sys_regs! {
    /// `SCTLR_EL12`: the guest's `SCTLR_EL1`.
    SCTLR_EL12: "s3_5_c1_c0_0", SCTLR_EL1::Register, R W;
    /// `CPACR_EL12`: the guest's `CPACR_EL1`.
    CPACR_EL12: "s3_5_c1_c0_2", CPACR_EL1::Register, R W;
    /// `TTBR0_EL12`: the guest's `TTBR0_EL1`.
    TTBR0_EL12: "s3_5_c2_c0_0", TTBR0_EL1::Register, R W;
    /// `TTBR1_EL12`: the guest's `TTBR1_EL1`.
    TTBR1_EL12: "s3_5_c2_c0_1", TTBR1_EL1::Register, R W;
    /// `TCR_EL12`: the guest's `TCR_EL1`.
    TCR_EL12: "s3_5_c2_c0_2", TCR_EL1::Register, R W;
    /// `SPSR_EL12`: the guest's `SPSR_EL1`.
    SPSR_EL12: "s3_5_c4_c0_0", SPSR_EL1::Register, R W;
    /// `ELR_EL12`: the guest's `ELR_EL1`.
    ELR_EL12: "s3_5_c4_c0_1", (), R W;
    /// `AFSR0_EL12`: the guest's `AFSR0_EL1`.
    AFSR0_EL12: "s3_5_c5_c1_0", (), R W;
    /// `AFSR1_EL12`: the guest's `AFSR1_EL1`.
    AFSR1_EL12: "s3_5_c5_c1_1", (), R W;
    /// `ESR_EL12`: the guest's `ESR_EL1`.
    ESR_EL12: "s3_5_c5_c2_0", ESR_EL1::Register, R W;
    /// `FAR_EL12`: the guest's `FAR_EL1`.
    FAR_EL12: "s3_5_c6_c0_0", (), R W;
    /// `MAIR_EL12`: the guest's `MAIR_EL1`.
    MAIR_EL12: "s3_5_c10_c2_0", MAIR_EL1::Register, R W;
    /// `AMAIR_EL12`: the guest's `AMAIR_EL1`.
    AMAIR_EL12: "s3_5_c10_c3_0", (), R W;
    /// `VBAR_EL12`: the guest's `VBAR_EL1`.
    VBAR_EL12: "s3_5_c12_c0_0", (), R W;
    /// `CONTEXTIDR_EL12`: the guest's `CONTEXTIDR_EL1`.
    CONTEXTIDR_EL12: "s3_5_c13_c0_1", CONTEXTIDR_EL1::Register, R W;
    /// `CNTKCTL_EL12`: the guest's `CNTKCTL_EL1`.
    CNTKCTL_EL12: "s3_5_c14_c1_0", CNTKCTL_EL1::Register, R W;
    /// `CNTV_CTL_EL02`: the guest's virtual timer control, `CNTV_CTL_EL0`.
    CNTV_CTL_EL02: "s3_5_c14_c3_1", CNTV_CTL_EL0::Register, R W;
    /// `CNTV_CVAL_EL02`: the guest's virtual timer compare value, `CNTV_CVAL_EL0`.
    CNTV_CVAL_EL02: "s3_5_c14_c3_2", (), R W;
}
