//! CPU feature discovery and per-CPU EL2 setup.

use el2_core::{read_sysreg, write_sysreg};

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
}

/// Reads this CPU's ID registers.
pub fn detect() -> CpuFeatures {
    let mmfr1 = read_sysreg!("id_aa64mmfr1_el1");
    let isar1 = read_sysreg!("id_aa64isar1_el1");
    let isar2 = read_sysreg!("s3_0_c0_c6_2");
    let nib = |v: u64, s: u32| (v >> s) & 0xf;
    CpuFeatures {
        midr: read_sysreg!("midr_el1"),
        mmfr0: read_sysreg!("id_aa64mmfr0_el1"),
        mmfr1,
        vhe: nib(mmfr1, 8) != 0,
        pauth: [4, 8, 24, 28].iter().any(|&s| nib(isar1, s) != 0)
            || [8, 12].iter().any(|&s| nib(isar2, s) != 0),
    }
}

/// Per-CPU EL2 configuration that does not change while guests run.
///
/// `MDCR_EL2`: `HPMN` = all counters (`PMCR_EL0.N`), `TPM` and `TPMCR` set, so the
/// performance monitors (hidden from guests in `ID_AA64DFR0_EL1`) trap and are answered
/// UNDEFINED instead of being shared between VMs. `VTCR_EL2` comes from the stage-2 config.
pub fn init_el2(vtcr: u64) {
    let pmcr_n = (read_sysreg!("pmcr_el0") >> 11) & 0x1f;
    write_sysreg!("mdcr_el2", pmcr_n | (1 << 5) | (1 << 6));
    write_sysreg!("vtcr_el2", vtcr);
    write_sysreg!("cntvoff_el2", 0);
    // SAFETY: ISB synchronises the writes above; no memory effects.
    unsafe { core::arch::asm!("isb", options(nomem, nostack)) };
}

/// Reads the hardware value of the ID register `op0=3, op1=0, CRn=0, CRm=crm, op2`.
/// Unallocated encodings in CRm 1..=7 read as zero architecturally.
pub fn read_id_register(crm: u8, op2: u8) -> u64 {
    macro_rules! id {
        ($($crm:literal, $op2:literal => $name:literal;)*) => {
            match (crm, op2) {
                $(($crm, $op2) => read_sysreg!($name),)*
                _ => 0,
            }
        };
    }
    id! {
        1,0 => "s3_0_c0_c1_0"; 1,1 => "s3_0_c0_c1_1"; 1,2 => "s3_0_c0_c1_2"; 1,3 => "s3_0_c0_c1_3";
        1,4 => "s3_0_c0_c1_4"; 1,5 => "s3_0_c0_c1_5"; 1,6 => "s3_0_c0_c1_6"; 1,7 => "s3_0_c0_c1_7";
        2,0 => "s3_0_c0_c2_0"; 2,1 => "s3_0_c0_c2_1"; 2,2 => "s3_0_c0_c2_2"; 2,3 => "s3_0_c0_c2_3";
        2,4 => "s3_0_c0_c2_4"; 2,5 => "s3_0_c0_c2_5"; 2,6 => "s3_0_c0_c2_6"; 2,7 => "s3_0_c0_c2_7";
        3,0 => "s3_0_c0_c3_0"; 3,1 => "s3_0_c0_c3_1"; 3,2 => "s3_0_c0_c3_2"; 3,4 => "s3_0_c0_c3_4";
        3,5 => "s3_0_c0_c3_5"; 3,6 => "s3_0_c0_c3_6";
        4,0 => "s3_0_c0_c4_0"; 4,1 => "s3_0_c0_c4_1"; 4,2 => "s3_0_c0_c4_2"; 4,4 => "s3_0_c0_c4_4";
        4,5 => "s3_0_c0_c4_5";
        5,0 => "s3_0_c0_c5_0"; 5,1 => "s3_0_c0_c5_1"; 5,4 => "s3_0_c0_c5_4"; 5,5 => "s3_0_c0_c5_5";
        6,0 => "s3_0_c0_c6_0"; 6,1 => "s3_0_c0_c6_1"; 6,2 => "s3_0_c0_c6_2";
        7,0 => "s3_0_c0_c7_0"; 7,1 => "s3_0_c0_c7_1"; 7,2 => "s3_0_c0_c7_2";
    }
}
