//! Trapped `MSR`/`MRS` instructions as the host sees them: the instruction-specific
//! syndrome of `ESR_EL2` for exception class 0x18 (Arm ARM D17.2.37, "ISS encoding for an
//! exception from MSR, MRS, or System instruction execution in AArch64 state").
//!
//! A real hypervisor gets this decoding from its exit decoder (el2-core's
//! `exit::SysRegAccess`, for instance); the toy host carries its own so that the example
//! depends on nothing but vtimer.

/// `ISS.Op0`, bits [21:20].
const OP0_SHIFT: u32 = 20;
/// `ISS.Op2`, bits [19:17].
const OP2_SHIFT: u32 = 17;
/// `ISS.Op1`, bits [16:14].
const OP1_SHIFT: u32 = 14;
/// `ISS.CRn`, bits [13:10].
const CRN_SHIFT: u32 = 10;
/// `ISS.Rt`, bits [9:5].
const RT_SHIFT: u32 = 5;
/// `ISS.CRm`, bits [4:1].
const CRM_SHIFT: u32 = 1;
/// Width mask of the 2-bit `Op0` field.
const MASK_2: u32 = 0b11;
/// Width mask of the 3-bit `Op1`/`Op2` fields.
const MASK_3: u32 = 0b111;
/// Width mask of the 4-bit `CRn`/`CRm` fields.
const MASK_4: u32 = 0xf;
/// Width mask of the 5-bit `Rt` field.
const MASK_5: u32 = 0x1f;
/// `ISS.Direction` = 1: a read (`MRS`).
const DIR_READ: u32 = 1;

/// A system register, by its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysReg {
    /// The name the guest's assembly uses.
    pub name: &'static str,
    /// `op0`, `op1`, `CRn`, `CRm`, `op2`.
    pub encoding: (u8, u8, u8, u8, u8),
}

/// `CNTP_TVAL_EL0`: the EL1 physical timer's down-counter view.
pub const CNTP_TVAL_EL0: SysReg = SysReg {
    name: "cntp_tval_el0",
    encoding: (3, 3, 14, 2, 0),
};
/// `CNTP_CTL_EL0`: the EL1 physical timer's control register.
pub const CNTP_CTL_EL0: SysReg = SysReg {
    name: "cntp_ctl_el0",
    encoding: (3, 3, 14, 2, 1),
};
/// `CNTP_CVAL_EL0`: the EL1 physical timer's compare value.
pub const CNTP_CVAL_EL0: SysReg = SysReg {
    name: "cntp_cval_el0",
    encoding: (3, 3, 14, 2, 2),
};
/// `S3_1_C15_C2_0`: an IMPLEMENTATION DEFINED register, trapped by `HCR_EL2.TIDCP`. Not a
/// timer register: the host's other trap handlers get it (here: none, so UNDEFINED).
pub const IMPDEF_S3_1_C15_C2_0: SysReg = SysReg {
    name: "s3_1_c15_c2_0",
    encoding: (3, 1, 15, 2, 0),
};

/// A decoded trapped access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysRegTrap {
    /// `Op0`.
    pub op0: u8,
    /// `Op1`.
    pub op1: u8,
    /// `CRn`.
    pub crn: u8,
    /// `CRm`.
    pub crm: u8,
    /// `Op2`.
    pub op2: u8,
    /// The general-purpose register transferred (31 = XZR).
    pub rt: u8,
    /// `MRS` (true) or `MSR` (false).
    pub is_read: bool,
}

impl SysRegTrap {
    /// Decodes the ISS of an EC 0x18 exit.
    pub fn from_iss(iss: u32) -> Self {
        let field = |shift: u32, mask: u32| ((iss >> shift) & mask) as u8;
        Self {
            op0: field(OP0_SHIFT, MASK_2),
            op1: field(OP1_SHIFT, MASK_3),
            crn: field(CRN_SHIFT, MASK_4),
            crm: field(CRM_SHIFT, MASK_4),
            op2: field(OP2_SHIFT, MASK_3),
            rt: field(RT_SHIFT, MASK_5),
            is_read: iss & DIR_READ != 0,
        }
    }
}

/// The ISS the hardware reports when the guest's `MRS Xrt, reg` (`is_read`) or
/// `MSR reg, Xrt` traps.
pub fn iss(reg: SysReg, rt: u8, is_read: bool) -> u32 {
    let (op0, op1, crn, crm, op2) = reg.encoding;
    u32::from(op0) << OP0_SHIFT
        | u32::from(op2) << OP2_SHIFT
        | u32::from(op1) << OP1_SHIFT
        | u32::from(crn) << CRN_SHIFT
        | u32::from(rt) << RT_SHIFT
        | u32::from(crm) << CRM_SHIFT
        | if is_read { DIR_READ } else { 0 }
}
