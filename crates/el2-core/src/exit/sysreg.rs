//! Trapped AArch64 `MSR`/`MRS`/`SYS` instructions (EC 0x18).
//!
//! ISS layout (Arm ARM, "ISS encoding for an exception from MSR, MRS, or System instruction
//! execution in AArch64 state"):
//!
//! ```text
//!  24:22  21:20 19:17 16:14 13:10  9:5  4:1   0
//!  RES0    Op0   Op2   Op1   CRn    Rt   CRm  Direction (1 = read: MRS / SYSL)
//! ```

/// Pack a system-register (or system-instruction) encoding into one `u32`, in the same layout
/// as Linux's `sys_reg()`: `op0 << 19 | op1 << 16 | crn << 12 | crm << 8 | op2 << 5`.
/// Out-of-range fields are masked to their architectural width.
pub const fn sys_reg(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> u32 {
    ((op0 as u32 & 0b11) << 19)
        | ((op1 as u32 & 0b111) << 16)
        | ((crn as u32 & 0xf) << 12)
        | ((crm as u32 & 0xf) << 8)
        | ((op2 as u32 & 0b111) << 5)
}

/// A trapped system-register access or system instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysRegAccess {
    /// `Op0` (3 for most registers, 2 for debug registers, 1 for system instructions).
    pub op0: u8,
    /// `Op1`.
    pub op1: u8,
    /// `CRn`.
    pub crn: u8,
    /// `CRm`.
    pub crm: u8,
    /// `Op2`.
    pub op2: u8,
    /// The general-purpose register transferred. 31 means XZR: a write (`MSR`) of zero, and a
    /// read (`MRS`) whose result is discarded.
    pub rt: u8,
    /// `Direction`: true for a read (`MRS`, `SYSL`), false for a write (`MSR`, `SYS`).
    pub is_read: bool,
}

impl SysRegAccess {
    /// Decode from an EC 0x18 ISS. Never fails: every bit pattern is a valid encoding.
    pub const fn from_iss(iss: u32) -> SysRegAccess {
        SysRegAccess {
            op0: ((iss >> 20) & 0b11) as u8,
            op2: ((iss >> 17) & 0b111) as u8,
            op1: ((iss >> 14) & 0b111) as u8,
            crn: ((iss >> 10) & 0xf) as u8,
            rt: ((iss >> 5) & 0x1f) as u8,
            crm: ((iss >> 1) & 0xf) as u8,
            is_read: iss & 1 != 0,
        }
    }

    /// The register's encoding in the [`sys_reg`] layout, for matching against
    /// [`regs`](crate::exit::regs) constants (the transfer register and direction are not
    /// part of it).
    pub const fn encoding(&self) -> u32 {
        sys_reg(self.op0, self.op1, self.crn, self.crm, self.op2)
    }

    /// The name of the register if it is one of the well-known ones in [`regs`](crate::exit::regs).
    pub fn name(&self) -> Option<&'static str> {
        regs::name(self.encoding())
    }
}

/// Well-known system-register encodings a hypervisor typically traps or emulates, in the
/// [`sys_reg`] layout.
pub mod regs {
    use super::sys_reg;

    macro_rules! sysregs {
        ($($(#[$doc:meta])* $name:ident = ($op0:expr, $op1:expr, $crn:expr, $crm:expr, $op2:expr);)*) => {
            $($(#[$doc])* pub const $name: u32 = sys_reg($op0, $op1, $crn, $crm, $op2);)*

            /// The name of a well-known encoding, `None` for any other.
            pub fn name(encoding: u32) -> Option<&'static str> {
                match encoding {
                    $($name => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        };
    }

    sysregs! {
        /// OS Lock Access Register.
        OSLAR_EL1 = (2, 0, 1, 0, 4);
        /// OS Lock Status Register.
        OSLSR_EL1 = (2, 0, 1, 1, 4);
        /// OS Double Lock Register.
        OSDLR_EL1 = (2, 0, 1, 3, 4);
        /// Monitor Debug System Control Register.
        MDSCR_EL1 = (2, 0, 0, 2, 2);
        /// Debug Power Control Register.
        DBGPRCR_EL1 = (2, 0, 1, 4, 4);
        /// Main ID Register.
        MIDR_EL1 = (3, 0, 0, 0, 0);
        /// Multiprocessor Affinity Register.
        MPIDR_EL1 = (3, 0, 0, 0, 5);
        /// AArch64 Processor Feature Register 0.
        ID_AA64PFR0_EL1 = (3, 0, 0, 4, 0);
        /// AArch64 Processor Feature Register 1.
        ID_AA64PFR1_EL1 = (3, 0, 0, 4, 1);
        /// AArch64 Debug Feature Register 0.
        ID_AA64DFR0_EL1 = (3, 0, 0, 5, 0);
        /// AArch64 Instruction Set Attribute Register 0.
        ID_AA64ISAR0_EL1 = (3, 0, 0, 6, 0);
        /// AArch64 Instruction Set Attribute Register 1.
        ID_AA64ISAR1_EL1 = (3, 0, 0, 6, 1);
        /// AArch64 Memory Model Feature Register 0.
        ID_AA64MMFR0_EL1 = (3, 0, 0, 7, 0);
        /// AArch64 Memory Model Feature Register 1.
        ID_AA64MMFR1_EL1 = (3, 0, 0, 7, 1);
        /// AArch64 Memory Model Feature Register 2.
        ID_AA64MMFR2_EL1 = (3, 0, 0, 7, 2);
        /// System Control Register (EL1).
        SCTLR_EL1 = (3, 0, 1, 0, 0);
        /// Auxiliary Control Register (EL1).
        ACTLR_EL1 = (3, 0, 1, 0, 1);
        /// Physical timer control.
        CNTP_CTL_EL0 = (3, 3, 14, 2, 1);
        /// Physical timer compare value.
        CNTP_CVAL_EL0 = (3, 3, 14, 2, 2);
        /// Physical timer value.
        CNTP_TVAL_EL0 = (3, 3, 14, 2, 0);
        /// Physical count.
        CNTPCT_EL0 = (3, 3, 14, 0, 1);
        /// GICv3 SGI generation, group 1.
        ICC_SGI1R_EL1 = (3, 0, 12, 11, 5);
        /// GICv3 alias SGI generation, group 0.
        ICC_ASGI1R_EL1 = (3, 0, 12, 11, 6);
        /// GICv3 SGI generation, group 0.
        ICC_SGI0R_EL1 = (3, 0, 12, 11, 7);
        /// GICv3 system register enable (EL1).
        ICC_SRE_EL1 = (3, 0, 12, 12, 5);
        /// Performance monitors control.
        PMCR_EL0 = (3, 3, 9, 12, 0);
        /// Performance monitors user enable.
        PMUSERENR_EL0 = (3, 3, 9, 14, 0);
        /// Data cache invalidate by set/way.
        DC_ISW = (1, 0, 7, 6, 2);
        /// Data cache clean by set/way.
        DC_CSW = (1, 0, 7, 10, 2);
        /// Data cache clean and invalidate by set/way.
        DC_CISW = (1, 0, 7, 14, 2);
    }
}
