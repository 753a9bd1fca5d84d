//! The AArch32 system registers (`MRC`/`MCR`/`MRRC`/`MCRR` to CP15, `VMRS` of the VFP ID
//! registers) an AArch32 EL1 guest's traps send to EL2, as a table of what each one is:
//!
//! | access | trapped by | answer |
//! |---|---|---|
//! | `MRC p15, 0, Rt, c0, c1..c7, op2`: `ID_PFR0`..`ID_ISAR6`, `MVFR0..2` | `HCR_EL2.TID3` | the sanitised hardware value (`idregs.rs`, the `CRm`/`op2` space AArch64 shares) |
//! | `VMRS Rt, MVFR0/1/2` | `HCR_EL2.TID3` | the same registers |
//! | `MRC/MCR p15, 0, Rt, c1, c0, 1`: `ACTLR` | `HCR_EL2.TACR` | its value at VM creation; writes ignored |
//! | `MRC/MCR p15, 0, Rt, c1, c0, 3`: `ACTLR2` | `HCR_EL2.TACR` | RAZ/WI |
//! | `MRC/MCR p15, 0, Rt, c14, c2, 0/1`: `CNTP_TVAL`/`CNTP_CTL` | `CNTHCTL_EL2.EL1PCEN` = 0 | the emulated physical timer |
//! | `MRRC/MCRR p15, 2, Rt, Rt2, c14`: `CNTP_CVAL` | `CNTHCTL_EL2.EL1PCEN` = 0 | the emulated physical timer |
//! | `MCRR p15, 0/1/2, Rt, Rt2, c12`: `ICC_SGI1R`/`ICC_ASGI1R`/`ICC_SGI0R` | `HCR_EL2.IMO` (GICv3) | SGIs through the virtual GIC |
//!
//! Anything else (IMPLEMENTATION DEFINED registers under `HCR_EL2.TIDCP`, the PMU under
//! `MDCR_EL2.TPM`, writes to read-only registers...) is refused: the caller injects
//! UNDEFINED and logs the encoding.

use el2_core::exit::{Cp32Access, Cp32Kind};
use vgic::SgiReg;
use vtimer::PhysTimerReg;

use crate::idregs::{self, IdReg};

/// `op0` of the AArch64 system-register space the AArch32 CP15 encodings map onto.
const OP0_SYSREG: u8 = 3;
/// `opc1`/`op1` of the generic timer's EL0 registers in AArch64 (`CNTP_*_EL0`).
const OP1_TIMER_EL0: u8 = 3;
/// `CRn` = c14: the generic timer.
const CRN_TIMER: u8 = 14;
/// `CRm` = c2: the physical timer's registers.
const CRM_PHYS_TIMER: u8 = 2;
/// `CRn` = c0: the ID registers.
const CRN_ID: u8 = 0;
/// `CRn` = c1, `CRm` = c0: the system control registers.
const CRN_SYSCTL: u8 = 1;
/// `op2` of `ACTLR`.
const OP2_ACTLR: u8 = 1;
/// `op2` of `ACTLR2`.
const OP2_ACTLR2: u8 = 3;
/// `CRm` = c12 with `MCRR`: the GICv3 SGI generation registers.
const CRM_SGI: u8 = 12;
/// `CRn` = c12, `CRm` = c11: the AArch64 SGI registers (`ICC_SGI1R_EL1`...).
const CRN_GIC: u8 = 12;
/// `CRm` = c11 of the AArch64 SGI registers.
const CRM_GIC_SGI: u8 = 11;
/// `op2` of `ICC_SGI1R_EL1`; `ICC_ASGI1R_EL1` and `ICC_SGI0R_EL1` follow.
const OP2_SGI1R: u8 = 5;
/// VFP system register numbers (`VMRS` `reg` field, reported in `ISS.CRn`).
const VFP_MVFR2: u8 = 5;
/// `MVFR1`.
const VFP_MVFR1: u8 = 6;
/// `MVFR0`.
const VFP_MVFR0: u8 = 7;
/// `CRm` of the AArch32 media/VFP feature registers (`MVFR0_EL1`... = `op0=3, CRm=3`).
const CRM_MVFR: u8 = 3;

/// What a trapped AArch32 register access is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cp15Reg {
    /// An ID register (read-only).
    Id(IdReg),
    /// `ACTLR`.
    Actlr,
    /// `ACTLR2` (RAZ/WI).
    Actlr2,
    /// A physical-timer register.
    PhysTimer(PhysTimerReg),
    /// A GICv3 SGI generation register (64-bit, write-only).
    Sgi(SgiReg),
}

impl Cp15Reg {
    /// Identifies a trapped access; `None` for a register the hypervisor does not emulate.
    pub fn from_access(a: &Cp32Access) -> Option<Cp15Reg> {
        match (a.kind, a.coproc) {
            (Cp32Kind::Mcr, 15) => Self::from_mcr(a.opc1, a.crn, a.crm, a.opc2),
            (Cp32Kind::Mcrr, 15) => Self::from_mcrr(a.opc1, a.crm),
            (Cp32Kind::Vmrs, _) => {
                let op2 = match a.crn {
                    VFP_MVFR0 => 0,
                    VFP_MVFR1 => 1,
                    VFP_MVFR2 => 2,
                    _ => return None,
                };
                Some(Cp15Reg::Id(IdReg { crm: CRM_MVFR, op2 }))
            }
            _ => None,
        }
    }

    /// `MRC`/`MCR p15, opc1, Rt, CRn, CRm, opc2`.
    fn from_mcr(opc1: u8, crn: u8, crm: u8, opc2: u8) -> Option<Cp15Reg> {
        match (opc1, crn, crm, opc2) {
            (0, CRN_ID, _, _) => {
                IdReg::from_encoding(OP0_SYSREG, 0, crn, crm, opc2).map(Cp15Reg::Id)
            }
            (0, CRN_SYSCTL, 0, OP2_ACTLR) => Some(Cp15Reg::Actlr),
            (0, CRN_SYSCTL, 0, OP2_ACTLR2) => Some(Cp15Reg::Actlr2),
            (0, CRN_TIMER, CRM_PHYS_TIMER, _) => {
                PhysTimerReg::from_encoding(OP0_SYSREG, OP1_TIMER_EL0, crn, crm, opc2)
                    .filter(|r| *r != PhysTimerReg::Cval)
                    .map(Cp15Reg::PhysTimer)
            }
            _ => None,
        }
    }

    /// `MRRC`/`MCRR p15, opc1, Rt, Rt2, CRm`.
    fn from_mcrr(opc1: u8, crm: u8) -> Option<Cp15Reg> {
        match (opc1, crm) {
            (2, CRN_TIMER) => Some(Cp15Reg::PhysTimer(PhysTimerReg::Cval)),
            (0..=2, CRM_SGI) => {
                SgiReg::from_encoding(OP0_SYSREG, opc1, CRN_GIC, CRM_GIC_SGI, OP2_SGI1R + opc1)
                    .map(Cp15Reg::Sgi)
            }
            _ => None,
        }
    }
}

/// The value a guest reads from ID register `reg`, given the hardware's `hw`, for an
/// AArch32 register ([`idregs::sanitize`] for the AArch64 ones).
pub fn id_value(reg: IdReg, hw: u64, policy: &idregs::IdPolicy) -> u64 {
    // AArch32 ID registers are 32 bits wide.
    idregs::sanitize(reg, hw, policy) & u64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcr(opc1: u8, crn: u8, crm: u8, opc2: u8) -> Cp32Access {
        let iss = (u32::from(opc2) << 17)
            | (u32::from(opc1) << 14)
            | (u32::from(crn) << 10)
            | (u32::from(crm) << 1)
            | 1;
        Cp32Access::from_esr(el2_core::exit::ec::CP15_32, iss).unwrap()
    }

    #[test]
    fn registers() {
        assert_eq!(
            Cp15Reg::from_access(&mcr(0, 0, 1, 0)),
            Some(Cp15Reg::Id(IdReg { crm: 1, op2: 0 }))
        );
        assert_eq!(Cp15Reg::from_access(&mcr(0, 1, 0, 1)), Some(Cp15Reg::Actlr));
        assert_eq!(
            Cp15Reg::from_access(&mcr(0, 14, 2, 1)),
            Some(Cp15Reg::PhysTimer(PhysTimerReg::Ctl))
        );
        // MIDR (c0, c0, 0) is not trapped; an IMPLEMENTATION DEFINED c15 register is refused.
        assert_eq!(Cp15Reg::from_access(&mcr(0, 0, 0, 0)), None);
        assert_eq!(Cp15Reg::from_access(&mcr(0, 15, 0, 0)), None);
        let mcrr = |opc1: u32, crm: u32| {
            Cp32Access::from_esr(el2_core::exit::ec::CP15_64, (opc1 << 16) | (crm << 1)).unwrap()
        };
        assert_eq!(
            Cp15Reg::from_access(&mcrr(0, 12)),
            Some(Cp15Reg::Sgi(SgiReg::Sgi1r))
        );
        assert_eq!(
            Cp15Reg::from_access(&mcrr(2, 12)),
            Some(Cp15Reg::Sgi(SgiReg::Sgi0r))
        );
        assert_eq!(
            Cp15Reg::from_access(&mcrr(2, 14)),
            Some(Cp15Reg::PhysTimer(PhysTimerReg::Cval))
        );
        assert_eq!(Cp15Reg::from_access(&mcrr(3, 14)), None);
        let vmrs = Cp32Access::from_esr(el2_core::exit::ec::CP10_ID, (7 << 10) | 1).unwrap();
        assert_eq!(
            Cp15Reg::from_access(&vmrs),
            Some(Cp15Reg::Id(IdReg { crm: 3, op2: 0 }))
        );
    }
}
