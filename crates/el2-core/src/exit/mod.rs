//! Decoding of guest exits: `ESR_EL2` (with `FAR_EL2` and `HPFAR_EL2`) into a typed [`Exit`].
//!
//! `ESR_EL2` layout (Arm ARM D17.2.37 "ESR_EL2"):
//!
//! ```text
//!  63      37 36  32 31    26 25  24                    0
//! +----------+------+--------+----+----------------------+
//! |   RES0   | ISS2 |   EC   | IL |         ISS          |
//! +----------+------+--------+----+----------------------+
//! ```
//!
//! `EC` is the exception class, `IL` is 1 for a 32-bit trapped instruction (always for A64,
//! 0 for a 16-bit T32 instruction), `ISS` is the class-specific syndrome.
//!
//! The decoder is pure: it never panics, whatever bits the hardware (or a test) hands it, and
//! every exception class it does not model becomes [`Exit::Unknown`] so that the caller can log
//! it and inject an UNDEFINED exception.
//!
//! # Advancing the PC
//!
//! For most trapped instructions (`WFx`, `MSR`/`MRS`/`SYS`, `SMC`, data aborts emulated as MMIO,
//! AArch32 coprocessor accesses) the preferred return address in `ELR_EL2` is the trapping
//! instruction itself: after emulating it, the caller must add [`ExitInfo::instruction_len`]
//! to the guest PC. `HVC` (and `SVC`) are the exception: they are not trapped but *taken*, and
//! `ELR_EL2` already points at the next instruction.

mod aarch32;
mod abort;
mod sysreg;
#[cfg(test)]
mod tests;

pub use aarch32::{Cp32Access, Cp32Kind};
pub use abort::{DataAbort, FaultStatus, InstructionAbort};
pub use sysreg::{sys_reg, SysRegAccess};

/// Well-known system-register encodings (see [`sys_reg`]) and their names.
pub mod regs {
    pub use super::sysreg::regs::*;
}

/// The raw syndrome registers read on an exit from the guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// `ESR_EL2`: exception syndrome.
    pub esr: u64,
    /// `FAR_EL2`: faulting virtual address (valid for aborts, watchpoints, PC alignment faults).
    pub far: u64,
    /// `HPFAR_EL2`: faulting IPA page (valid for stage-2 aborts and stage-1 walk aborts).
    pub hpfar: u64,
}

/// Exception classes (`ESR_EL2.EC`) a guest can cause to be taken to EL2.
pub mod ec {
    /// Unknown reason (e.g. an UNDEFINED instruction trapped by `HCR_EL2.TGE`, or a trapped
    /// instruction the hardware could not classify).
    pub const UNKNOWN: u8 = 0x00;
    /// Trapped `WFI`/`WFE`/`WFIT`/`WFET`.
    pub const WFX: u8 = 0x01;
    /// AArch32 `MCR`/`MRC` to coprocessor 15.
    pub const CP15_32: u8 = 0x03;
    /// AArch32 `MCRR`/`MRRC` to coprocessor 15.
    pub const CP15_64: u8 = 0x04;
    /// AArch32 `MCR`/`MRC` to coprocessor 14.
    pub const CP14_32: u8 = 0x05;
    /// AArch32 `LDC`/`STC` to coprocessor 14.
    pub const CP14_LS: u8 = 0x06;
    /// Access to SVE, Advanced SIMD or floating point trapped by `CPTR_EL2`/`CPACR`.
    pub const FP_ASIMD: u8 = 0x07;
    /// AArch32 `VMRS` access to an ID register (trapped by `HCR_EL2.TID0`).
    pub const CP10_ID: u8 = 0x08;
    /// Pointer authentication instruction trapped by `HCR_EL2.API`/`APK`.
    pub const PAC: u8 = 0x09;
    /// `LD64B`/`ST64B` family.
    pub const LS64: u8 = 0x0A;
    /// AArch32 `MRRC` to coprocessor 14.
    pub const CP14_64: u8 = 0x0C;
    /// Branch target exception (FEAT_BTI).
    pub const BTI: u8 = 0x0D;
    /// Illegal execution state (`PSTATE.IL` set on return).
    pub const ILLEGAL_STATE: u8 = 0x0E;
    /// AArch32 `SVC` (only with `HCR_EL2.TGE`).
    pub const SVC32: u8 = 0x11;
    /// AArch32 `HVC`.
    pub const HVC32: u8 = 0x12;
    /// AArch32 `SMC` trapped by `HCR_EL2.TSC`.
    pub const SMC32: u8 = 0x13;
    /// AArch64 `SVC` (only with `HCR_EL2.TGE`).
    pub const SVC64: u8 = 0x15;
    /// AArch64 `HVC`.
    pub const HVC64: u8 = 0x16;
    /// AArch64 `SMC` trapped by `HCR_EL2.TSC`.
    pub const SMC64: u8 = 0x17;
    /// AArch64 `MSR`/`MRS`/`SYS` instruction.
    pub const SYS64: u8 = 0x18;
    /// SVE access trapped by `CPTR_EL2.ZEN`/`TZ`.
    pub const SVE: u8 = 0x19;
    /// `ERET`/`ERETAA`/`ERETAB` (nested virtualization, FEAT_FGT).
    pub const ERET: u8 = 0x1A;
    /// Pointer authentication failure (FEAT_FPAC).
    pub const FPAC: u8 = 0x1C;
    /// SME access.
    pub const SME: u8 = 0x1D;
    /// Instruction abort from a lower exception level.
    pub const IABT_LOW: u8 = 0x20;
    /// PC alignment fault.
    pub const PC_ALIGN: u8 = 0x22;
    /// Data abort from a lower exception level.
    pub const DABT_LOW: u8 = 0x24;
    /// SP alignment fault.
    pub const SP_ALIGN: u8 = 0x26;
    /// Memory copy/set (FEAT_MOPS) exception.
    pub const MOPS: u8 = 0x27;
    /// Trapped AArch32 floating-point exception.
    pub const FP_EXC32: u8 = 0x28;
    /// Trapped AArch64 floating-point exception.
    pub const FP_EXC64: u8 = 0x2C;
    /// SError interrupt.
    pub const SERROR: u8 = 0x2F;
    /// Breakpoint from a lower exception level.
    pub const BREAKPT_LOW: u8 = 0x30;
    /// Software step from a lower exception level.
    pub const SOFTSTP_LOW: u8 = 0x32;
    /// Watchpoint from a lower exception level.
    pub const WATCHPT_LOW: u8 = 0x34;
    /// AArch32 `BKPT`.
    pub const BKPT32: u8 = 0x38;
    /// AArch32 vector catch.
    pub const VECTOR32: u8 = 0x3A;
    /// AArch64 `BRK`.
    pub const BRK64: u8 = 0x3C;
}

impl ExitInfo {
    /// Exception class, `ESR_EL2[31:26]`.
    pub const fn ec(&self) -> u8 {
        ((self.esr >> 26) & 0x3f) as u8
    }

    /// Instruction specific syndrome, `ESR_EL2[24:0]`.
    pub const fn iss(&self) -> u32 {
        (self.esr & 0x01ff_ffff) as u32
    }

    /// `ISS2`, `ESR_EL2[36:32]` (FEAT_LS64 etc.; zero on older CPUs).
    pub const fn iss2(&self) -> u8 {
        ((self.esr >> 32) & 0x1f) as u8
    }

    /// The 16-bit immediate of a trapped or taken `HVC`, `SMC`, `SVC`, `BRK` or `BKPT`,
    /// `ISS[15:0]` (what [`decode`] puts in [`Exit::Hvc`] and the others).
    pub const fn imm16(&self) -> u16 {
        (self.iss() & 0xffff) as u16
    }

    /// `IL`: true when the trapped instruction was 32 bits long.
    pub const fn il(&self) -> bool {
        self.esr & (1 << 25) != 0
    }

    /// Length in bytes of the trapped instruction (4, or 2 for a 16-bit T32 instruction): the
    /// amount to add to the guest PC after emulating a trapped instruction.
    pub const fn instruction_len(&self) -> u64 {
        if self.il() {
            4
        } else {
            2
        }
    }
}

/// Which wait instruction trapped (`ISS.TI`, bits \[1:0\], for EC 0x01).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// `WFI`.
    Wfi,
    /// `WFE`.
    Wfe,
    /// `WFIT Xt` (FEAT_WFxT): wait for interrupt with a timeout held in a register.
    Wfit,
    /// `WFET Xt` (FEAT_WFxT).
    Wfet,
}

/// Why the guest left: the typed decoding of `ESR_EL2`.
///
/// Unless stated otherwise, `ELR_EL2` points at the trapping instruction: see the module
/// documentation about advancing the PC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// Trapped `WFI` (`HCR_EL2.TWI`).
    Wfi,
    /// Trapped `WFE` (`HCR_EL2.TWE`).
    Wfe,
    /// Trapped `WFIT`/`WFET`. `reg` is the register holding the timeout (a `CNTVCT_EL0`
    /// value), `None` when the hardware did not report it (`ISS.RV` = 0).
    WfxTimeout {
        /// `WaitKind::Wfit` or `WaitKind::Wfet`.
        kind: WaitKind,
        /// Register number (0..=30, or 31 for XZR) of the timeout operand.
        reg: Option<u8>,
    },
    /// `HVC #imm` from AArch64. `ELR_EL2` already points after the `HVC`.
    Hvc {
        /// The 16-bit immediate.
        imm: u16,
    },
    /// `SMC #imm` from AArch64, trapped by `HCR_EL2.TSC`. `ELR_EL2` points **at** the `SMC`:
    /// the caller must advance the PC by 4 after handling it.
    Smc {
        /// The 16-bit immediate.
        imm: u16,
    },
    /// `HVC #imm` from AArch32. `ELR_EL2` already points after the `HVC`.
    Hvc32 {
        /// The 16-bit immediate.
        imm: u16,
    },
    /// `SMC` from AArch32, trapped by `HCR_EL2.TSC`. `ELR_EL2` points at the `SMC`.
    Smc32,
    /// `SVC` (only seen with `HCR_EL2.TGE`, i.e. never for a normal guest).
    Svc {
        /// The immediate (16 bits for A64, 8 or 16 for A32/T32).
        imm: u16,
        /// True for an AArch32 `SVC`.
        aarch32: bool,
    },
    /// Trapped AArch64 `MSR`, `MRS` or `SYS` instruction.
    SysReg(SysRegAccess),
    /// Trapped AArch32 coprocessor access (`MCR`/`MRC`/`MCRR`/`MRRC`/`LDC`/`STC`/`VMRS`).
    Cp32(Cp32Access),
    /// Data abort from the guest (stage-2 fault, MMIO access, external abort...).
    DataAbort(DataAbort),
    /// Instruction abort from the guest.
    InstructionAbort(InstructionAbort),
    /// FP/Advanced SIMD access trapped by `CPTR_EL2` (lazy FP switch).
    FpSimdAccess,
    /// SVE access trapped by `CPTR_EL2`.
    Sve,
    /// SME access trapped by `CPTR_EL2`.
    Sme,
    /// Pointer-authentication instruction or key access trapped by `HCR_EL2.API`/`APK`.
    PointerAuth,
    /// Trapped `ERET` (nested virtualization / FEAT_FGT).
    Eret,
    /// PC alignment fault; `far` is the misaligned PC.
    PcAlignment {
        /// Faulting address.
        far: u64,
    },
    /// SP alignment fault.
    SpAlignment,
    /// SError interrupt taken to EL2.
    SError {
        /// The syndrome (`ISS`), IMPLEMENTATION DEFINED or RAS-encoded.
        iss: u32,
    },
    /// `BRK #imm` (routed to EL2 by `MDCR_EL2.TDE`).
    Brk {
        /// The 16-bit immediate.
        imm: u16,
    },
    /// AArch32 `BKPT #imm`.
    Bkpt32 {
        /// The 16-bit immediate.
        imm: u16,
    },
    /// Hardware breakpoint from the guest.
    Breakpoint,
    /// Software step from the guest.
    SoftwareStep {
        /// `ISS.EX`: the stepped instruction was a load-exclusive.
        exclusive: bool,
    },
    /// Watchpoint hit by the guest at `far`.
    Watchpoint {
        /// Faulting data address.
        far: u64,
        /// True for a write.
        is_write: bool,
    },
    /// AArch32 vector catch.
    VectorCatch,
    /// Illegal execution state: the guest did an exception return with `PSTATE.IL`.
    IllegalState,
    /// Any other exception class, including EC 0x00 ("unknown reason"). Callers inject an
    /// UNDEFINED instruction exception and log `ec`/`iss`.
    Unknown {
        /// Exception class.
        ec: u8,
        /// Syndrome.
        iss: u32,
    },
}

/// Decode the syndrome registers of a guest exit into an [`Exit`].
///
/// Never panics; unknown or reserved encodings yield [`Exit::Unknown`].
pub fn decode(info: &ExitInfo) -> Exit {
    let ec_val = info.ec();
    let iss = info.iss();
    let imm16 = info.imm16();
    match ec_val {
        ec::WFX => decode_wfx(iss),
        ec::HVC64 => Exit::Hvc { imm: imm16 },
        ec::SMC64 => Exit::Smc { imm: imm16 },
        ec::HVC32 => Exit::Hvc32 { imm: imm16 },
        ec::SMC32 => Exit::Smc32,
        ec::SVC64 => Exit::Svc {
            imm: imm16,
            aarch32: false,
        },
        ec::SVC32 => Exit::Svc {
            imm: imm16,
            aarch32: true,
        },
        ec::SYS64 => Exit::SysReg(SysRegAccess::from_iss(iss)),
        ec::CP15_32 | ec::CP15_64 | ec::CP14_32 | ec::CP14_LS | ec::CP14_64 | ec::CP10_ID => {
            match Cp32Access::from_esr(ec_val, iss) {
                Some(access) => Exit::Cp32(access),
                None => Exit::Unknown { ec: ec_val, iss },
            }
        }
        ec::DABT_LOW => Exit::DataAbort(DataAbort::from_info(info)),
        ec::IABT_LOW => Exit::InstructionAbort(InstructionAbort::from_info(info)),
        ec::FP_ASIMD => Exit::FpSimdAccess,
        ec::SVE => Exit::Sve,
        ec::SME => Exit::Sme,
        ec::PAC => Exit::PointerAuth,
        ec::ERET => Exit::Eret,
        ec::PC_ALIGN => Exit::PcAlignment { far: info.far },
        ec::SP_ALIGN => Exit::SpAlignment,
        ec::SERROR => Exit::SError { iss },
        ec::BRK64 => Exit::Brk { imm: imm16 },
        ec::BKPT32 => Exit::Bkpt32 { imm: imm16 },
        ec::BREAKPT_LOW => Exit::Breakpoint,
        ec::SOFTSTP_LOW => Exit::SoftwareStep {
            exclusive: iss & (1 << 6) != 0,
        },
        ec::WATCHPT_LOW => Exit::Watchpoint {
            far: info.far,
            is_write: iss & (1 << 6) != 0,
        },
        ec::VECTOR32 => Exit::VectorCatch,
        ec::ILLEGAL_STATE => Exit::IllegalState,
        _ => Exit::Unknown { ec: ec_val, iss },
    }
}

/// EC 0x01: `ISS.TI` [1:0] selects the instruction, `ISS.RV` [2] says whether `ISS.Rn` [9:5]
/// holds the timeout register of `WFIT`/`WFET`.
fn decode_wfx(iss: u32) -> Exit {
    let reg = if iss & (1 << 2) != 0 {
        Some(((iss >> 5) & 0x1f) as u8)
    } else {
        None
    };
    match iss & 0b11 {
        0b00 => Exit::Wfi,
        0b01 => Exit::Wfe,
        0b10 => Exit::WfxTimeout {
            kind: WaitKind::Wfit,
            reg,
        },
        _ => Exit::WfxTimeout {
            kind: WaitKind::Wfet,
            reg,
        },
    }
}

impl Exit {
    /// A short, stable name for the exit reason, for per-reason exit counters (like
    /// `kvm_stat`) and log lines.
    pub const fn reason(&self) -> &'static str {
        match self {
            Exit::Wfi => "wfi",
            Exit::Wfe => "wfe",
            Exit::WfxTimeout { .. } => "wfxt",
            Exit::Hvc { .. } => "hvc",
            Exit::Smc { .. } => "smc",
            Exit::Hvc32 { .. } => "hvc32",
            Exit::Smc32 => "smc32",
            Exit::Svc { .. } => "svc",
            Exit::SysReg(_) => "sysreg",
            Exit::Cp32(_) => "cp32",
            Exit::DataAbort(_) => "dabt",
            Exit::InstructionAbort(_) => "iabt",
            Exit::FpSimdAccess => "fpsimd",
            Exit::Sve => "sve",
            Exit::Sme => "sme",
            Exit::PointerAuth => "pauth",
            Exit::Eret => "eret",
            Exit::PcAlignment { .. } => "pc-align",
            Exit::SpAlignment => "sp-align",
            Exit::SError { .. } => "serror",
            Exit::Brk { .. } => "brk",
            Exit::Bkpt32 { .. } => "bkpt32",
            Exit::Breakpoint => "breakpoint",
            Exit::SoftwareStep { .. } => "softstep",
            Exit::Watchpoint { .. } => "watchpoint",
            Exit::VectorCatch => "vector-catch",
            Exit::IllegalState => "illegal-state",
            Exit::Unknown { .. } => "unknown",
        }
    }
}
