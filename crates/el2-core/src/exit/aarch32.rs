//! Trapped AArch32 coprocessor accesses (EC 0x03, 0x04, 0x05, 0x06, 0x08, 0x0C).
//!
//! ISS layouts (Arm ARM, ISS encodings for trapped MCR/MRC, MCRR/MRRC, LDC/STC and VMRS):
//!
//! ```text
//! MCR/MRC, VMRS:  CV[24] COND[23:20] Opc2[19:17] Opc1[16:14] CRn[13:10] Rt[9:5] CRm[4:1] Dir[0]
//! MCRR/MRRC:      CV[24] COND[23:20] Opc1[19:16] RES0[15]   Rt2[14:10] Rt[9:5] CRm[4:1] Dir[0]
//! LDC/STC:        CV[24] COND[23:20] imm8[19:12] RES0       Rn[9:5] Offset[4] AM[3:1]   Dir[0]
//! ```
//!
//! `Dir` is 1 for a read (MRC, MRRC, LDC, VMRS).

use super::ec;

/// Which kind of AArch32 coprocessor instruction trapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cp32Kind {
    /// `MCR`/`MRC` (one 32-bit register), EC 0x03 (cp15) or 0x05 (cp14).
    Mcr,
    /// `MCRR`/`MRRC` (two registers), EC 0x04 (cp15) or 0x0C (cp14).
    Mcrr,
    /// `LDC`/`STC` to cp14, EC 0x06. `rt` holds `Rn`; use `iss` for the rest.
    Ldc,
    /// `VMRS` of an ID register (cp10), EC 0x08.
    Vmrs,
}

/// A decoded AArch32 coprocessor access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cp32Access {
    /// Instruction kind.
    pub kind: Cp32Kind,
    /// Coprocessor number: 15, 14 or 10.
    pub coproc: u8,
    /// `Opc1`.
    pub opc1: u8,
    /// `Opc2` (0 for `Mcrr`/`Ldc`).
    pub opc2: u8,
    /// `CRn` (0 for `Mcrr`/`Ldc`).
    pub crn: u8,
    /// `CRm` (0 for `Ldc`).
    pub crm: u8,
    /// `Rt` (`Rn` for `Ldc`).
    pub rt: u8,
    /// `Rt2` for `Mcrr`, 0 otherwise.
    pub rt2: u8,
    /// True for a read into the general-purpose register(s) (`MRC`, `MRRC`, `LDC`, `VMRS`).
    pub is_read: bool,
    /// The condition code when the hardware reported it valid (`CV` = 1).
    pub cond: Option<u8>,
    /// The raw ISS.
    pub iss: u32,
}

impl Cp32Access {
    /// Decode an AArch32 coprocessor trap; `None` if `ec` is not one of those classes.
    pub const fn from_esr(ec: u8, iss: u32) -> Option<Cp32Access> {
        let (kind, coproc) = match ec {
            ec::CP15_32 => (Cp32Kind::Mcr, 15),
            ec::CP14_32 => (Cp32Kind::Mcr, 14),
            ec::CP15_64 => (Cp32Kind::Mcrr, 15),
            ec::CP14_64 => (Cp32Kind::Mcrr, 14),
            ec::CP14_LS => (Cp32Kind::Ldc, 14),
            ec::CP10_ID => (Cp32Kind::Vmrs, 10),
            _ => return None,
        };
        let cond = if iss & (1 << 24) != 0 {
            Some(((iss >> 20) & 0xf) as u8)
        } else {
            None
        };
        let rt = ((iss >> 5) & 0x1f) as u8;
        let is_read = iss & 1 != 0;
        let crm = ((iss >> 1) & 0xf) as u8;
        let mut access = Cp32Access {
            kind,
            coproc,
            opc1: 0,
            opc2: 0,
            crn: 0,
            crm: 0,
            rt,
            rt2: 0,
            is_read,
            cond,
            iss,
        };
        match kind {
            Cp32Kind::Mcr | Cp32Kind::Vmrs => {
                access.opc2 = ((iss >> 17) & 0b111) as u8;
                access.opc1 = ((iss >> 14) & 0b111) as u8;
                access.crn = ((iss >> 10) & 0xf) as u8;
                access.crm = crm;
            }
            Cp32Kind::Mcrr => {
                access.opc1 = ((iss >> 16) & 0xf) as u8;
                access.rt2 = ((iss >> 10) & 0x1f) as u8;
                access.crm = crm;
            }
            Cp32Kind::Ldc => {}
        }
        Some(access)
    }
}
