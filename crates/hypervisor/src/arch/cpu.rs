//! CPU feature discovery and per-CPU EL2 setup.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    Readable, Writeable, CNTVOFF_EL2, ID_AA64ISAR1_EL1, ID_AA64MMFR0_EL1, ID_AA64MMFR1_EL1,
    ID_AA64PFR0_EL1, MDCR_EL2, MIDR_EL1, VTCR_EL2,
};
use el2_core::sysreg::{fields, IdReg, ID_AA64ISAR2_EL1, PMCR_EL0};

/// Features of this CPU that shape the hypervisor's configuration.
#[derive(Debug, Clone, Copy)]
pub struct CpuFeatures {
    /// `MIDR_EL1`.
    pub midr: u64,
    /// `ID_AA64MMFR0_EL1`.
    pub mmfr0: u64,
    /// `ID_AA64MMFR1_EL1`.
    pub mmfr1: u64,
    /// FEAT_VHE (`ID_AA64MMFR1_EL1.VH` != 0).
    pub vhe: bool,
    /// FEAT_PAuth (`ID_AA64ISAR1_EL1.{APA,API,GPA,GPI}` or `ID_AA64ISAR2_EL1.{APA3,GPA3}`).
    pub pauth: bool,
    /// `ID_AA64PFR0_EL1` (its `EL1` field says whether ARMv7-A guests can run in hardware).
    pub pfr0: u64,
}

/// Reads this CPU's ID registers.
pub fn detect() -> CpuFeatures {
    use fields::ID_AA64ISAR2_EL1 as ISAR2;
    use ID_AA64ISAR1_EL1 as ISAR1;
    let mmfr1 = ID_AA64MMFR1_EL1.get();
    let isar1 = ID_AA64ISAR1_EL1.extract();
    let isar2 = ID_AA64ISAR2_EL1.extract();
    CpuFeatures {
        midr: MIDR_EL1.get(),
        mmfr0: ID_AA64MMFR0_EL1.get(),
        mmfr1,
        vhe: ID_AA64MMFR1_EL1::VH.read(mmfr1) != 0,
        pauth: isar1.read(ISAR1::APA)
            | isar1.read(ISAR1::API)
            | isar1.read(ISAR1::GPA)
            | isar1.read(ISAR1::GPI)
            | isar2.read(ISAR2::APA3)
            | isar2.read(ISAR2::GPA3)
            != 0,
        pfr0: ID_AA64PFR0_EL1.get(),
    }
}

/// Per-CPU EL2 configuration that does not change while guests run.
///
/// `MDCR_EL2`: `HPMN` = all counters (`PMCR_EL0.N`), `TPM` and `TPMCR` set, so the
/// performance monitors (hidden from guests in `ID_AA64DFR0_EL1`) trap and are answered
/// UNDEFINED instead of being shared between VMs. `VTCR_EL2` comes from the stage-2 config.
pub fn init_el2(vtcr: u64) {
    let counters = PMCR_EL0.read(fields::PMCR_EL0::N);
    MDCR_EL2.write(MDCR_EL2::HPMN.val(counters) + MDCR_EL2::TPM::SET + MDCR_EL2::TPMCR::SET);
    VTCR_EL2.set(vtcr);
    CNTVOFF_EL2.set(0);
    barrier::isb(barrier::SY);
}

/// Reads the hardware value of the ID register `op0=3, op1=0, CRn=0, CRm=crm, op2`.
/// Unallocated encodings in CRm 1..=7 read as zero architecturally.
// Always inlined into the trapped-ID-read exit path: left to the inliner, the typed reads
// below changed how the compiler allocates that path's registers, 6 more instructions per
// trapped ID read (`cargo xtask bench`'s `sysreg`: 507 instead of 501).
#[inline(always)]
pub fn read_id_register(crm: u8, op2: u8) -> u64 {
    macro_rules! id {
        ($($crm:literal => [$($op2:literal),*];)*) => {
            match (crm, op2) {
                $($(($crm, $op2) => IdReg::<$crm, $op2>.get(),)*)*
                _ => 0,
            }
        };
    }
    // CRm => the op2 values read from the hardware (the allocated ID registers).
    id! {
        1 => [0, 1, 2, 3, 4, 5, 6, 7];
        2 => [0, 1, 2, 3, 4, 5, 6, 7];
        3 => [0, 1, 2, 4, 5, 6];
        4 => [0, 1, 2, 4, 5];
        5 => [0, 1, 4, 5];
        6 => [0, 1, 2];
        7 => [0, 1, 2];
    }
}
