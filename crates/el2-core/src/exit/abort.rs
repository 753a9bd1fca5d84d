//! Data and instruction aborts from the guest (EC 0x24 / 0x20).
//!
//! Data abort ISS (Arm ARM, "ISS encoding for an exception from a Data Abort"):
//!
//! ```text
//!  24  23:22 21  20:16 15  14  13    12:11 10  9  8  7     6   5:0
//! ISV  SAS  SSE  SRT  SF  AR  VNCR  SET  FnV EA CM S1PTW WnR DFSC
//! ```
//!
//! Instruction abort ISS: `SET` [12:11], `FnV` [10], `EA` [9], `S1PTW` [7], `IFSC` [5:0].

use super::ExitInfo;

/// Classified fault status code (`DFSC`/`IFSC`, ISS bits \[5:0\]).
///
/// `level` is the translation-table level the fault was reported at: 0..=3, or -1 for the
/// extra level of 52-bit (FEAT_LPA2) tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultStatus {
    /// Address size fault.
    AddressSize {
        /// Table level.
        level: i8,
    },
    /// Translation fault: no valid mapping (at stage 2 for a guest: unmapped IPA, e.g. MMIO).
    Translation {
        /// Table level.
        level: i8,
    },
    /// Access flag fault.
    AccessFlag {
        /// Table level.
        level: i8,
    },
    /// Permission fault.
    Permission {
        /// Table level.
        level: i8,
    },
    /// Synchronous external abort, not on a translation table walk.
    SyncExternal,
    /// Synchronous external abort on a translation table walk.
    SyncExternalOnWalk {
        /// Table level.
        level: i8,
    },
    /// Synchronous parity or ECC error, not on a translation table walk.
    SyncParity,
    /// Synchronous parity or ECC error on a translation table walk.
    SyncParityOnWalk {
        /// Table level.
        level: i8,
    },
    /// Synchronous tag check fault (MTE).
    TagCheck,
    /// Alignment fault.
    Alignment,
    /// Granule protection fault (RME), not on a walk.
    GranuleProtection,
    /// Granule protection fault on a translation table walk.
    GranuleProtectionOnWalk {
        /// Table level.
        level: i8,
    },
    /// TLB conflict abort.
    TlbConflict,
    /// Unsupported atomic hardware update (FEAT_HAFDBS).
    UnsupportedAtomicUpdate,
    /// IMPLEMENTATION DEFINED fault (0x34 lockdown, 0x35 unsupported exclusive or atomic).
    ImplementationDefined(u8),
    /// Reserved encoding.
    Reserved(u8),
}

impl FaultStatus {
    /// Classify a 6-bit fault status code. Bits above \[5:0\] are ignored.
    pub const fn from_code(code: u8) -> FaultStatus {
        let code = code & 0x3f;
        let level = (code & 0b11) as i8;
        match code {
            0x00..=0x03 => FaultStatus::AddressSize { level },
            0x04..=0x07 => FaultStatus::Translation { level },
            0x08..=0x0b => FaultStatus::AccessFlag { level },
            0x0c..=0x0f => FaultStatus::Permission { level },
            0x10 => FaultStatus::SyncExternal,
            0x11 => FaultStatus::TagCheck,
            0x13 => FaultStatus::SyncExternalOnWalk { level: -1 },
            0x14..=0x17 => FaultStatus::SyncExternalOnWalk { level },
            0x18 => FaultStatus::SyncParity,
            0x1b => FaultStatus::SyncParityOnWalk { level: -1 },
            0x1c..=0x1f => FaultStatus::SyncParityOnWalk { level },
            0x21 => FaultStatus::Alignment,
            0x23 => FaultStatus::GranuleProtectionOnWalk { level: -1 },
            0x24..=0x27 => FaultStatus::GranuleProtectionOnWalk { level },
            0x28 => FaultStatus::GranuleProtection,
            0x29 => FaultStatus::AddressSize { level: -1 },
            0x2b => FaultStatus::Translation { level: -1 },
            0x30 => FaultStatus::TlbConflict,
            0x31 => FaultStatus::UnsupportedAtomicUpdate,
            0x34 | 0x35 => FaultStatus::ImplementationDefined(code),
            _ => FaultStatus::Reserved(code),
        }
    }

    /// True for the faults `HPFAR_EL2` is valid for on a stage-2 abort: translation, access
    /// flag and permission faults, and address size faults.
    pub const fn is_translation_related(&self) -> bool {
        matches!(
            self,
            FaultStatus::Translation { .. }
                | FaultStatus::AccessFlag { .. }
                | FaultStatus::Permission { .. }
                | FaultStatus::AddressSize { .. }
        )
    }

    /// True for synchronous external aborts and parity/ECC errors (on a walk or not).
    pub const fn is_external(&self) -> bool {
        matches!(
            self,
            FaultStatus::SyncExternal
                | FaultStatus::SyncExternalOnWalk { .. }
                | FaultStatus::SyncParity
                | FaultStatus::SyncParityOnWalk { .. }
        )
    }
}

/// Compute the faulting IPA: `HPFAR_EL2.FIPA` holds IPA[51:12] in bits [47:4] (bits [47:44]
/// are RES0 without 52-bit IPAs, so masking [47:4] is right for both); the page offset comes
/// from `FAR_EL2[11:0]`.
pub(crate) const fn fault_ipa(far: u64, hpfar: u64) -> u64 {
    ((hpfar & 0x0000_ffff_ffff_fff0) << 8) | (far & 0xfff)
}

const fn bit(iss: u32, n: u32) -> bool {
    iss & (1 << n) != 0
}

/// A decoded data abort from the guest (EC 0x24).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataAbort {
    /// Faulting IPA, `(HPFAR_EL2.FIPA << 12) | FAR_EL2[11:0]`. Only meaningful when the fault
    /// is a stage-2 fault ([`FaultStatus::is_translation_related`]) or `s1ptw` is set; its low
    /// 12 bits are meaningless when `fnv` is set.
    pub ipa: u64,
    /// `FAR_EL2`: the faulting virtual address (invalid when `fnv`).
    pub far: u64,
    /// `ISV`: the syndrome fields `sas`, `sse`, `srt`, `sf`, `ar` are valid (a single
    /// general-purpose register load/store without writeback).
    pub isv: bool,
    /// `SAS`: access size as log2 of bytes (0 = byte .. 3 = doubleword). Valid when `isv`.
    pub sas: u8,
    /// `SSE`: the load sign-extends. Valid when `isv`.
    pub sse: bool,
    /// `SRT`: the transfer register number (31 = XZR/WZR). Valid when `isv`.
    pub srt: u8,
    /// `SF`: the register is 64 bits wide (X, not W). Valid when `isv`.
    pub sf: bool,
    /// `AR`: acquire/release semantics. Valid when `isv`.
    pub ar: bool,
    /// `VNCR`: fault from a `VNCR_EL2`-relative access (nested virtualization).
    pub vncr: bool,
    /// `FnV`: `FAR_EL2` is not valid.
    pub fnv: bool,
    /// `EA`: IMPLEMENTATION DEFINED external abort type.
    pub ea: bool,
    /// `CM`: the fault came from a cache maintenance or address translation instruction.
    pub cm: bool,
    /// `S1PTW`: the fault was a stage-2 fault on a stage-1 translation table walk.
    pub s1ptw: bool,
    /// `WnR`: the access was a write (for `CM`, always reported as a write).
    pub wnr: bool,
    /// Raw `DFSC`.
    pub dfsc: u8,
    /// Classified `DFSC`.
    pub status: FaultStatus,
}

impl DataAbort {
    /// Decode from the syndrome registers. Does not check that `EC` is 0x24.
    pub const fn from_info(info: &ExitInfo) -> DataAbort {
        let iss = info.iss();
        let dfsc = (iss & 0x3f) as u8;
        DataAbort {
            ipa: fault_ipa(info.far, info.hpfar),
            far: info.far,
            isv: bit(iss, 24),
            sas: ((iss >> 22) & 0b11) as u8,
            sse: bit(iss, 21),
            srt: ((iss >> 16) & 0x1f) as u8,
            sf: bit(iss, 15),
            ar: bit(iss, 14),
            vncr: bit(iss, 13),
            fnv: bit(iss, 10),
            ea: bit(iss, 9),
            cm: bit(iss, 8),
            s1ptw: bit(iss, 7),
            wnr: bit(iss, 6),
            dfsc,
            status: FaultStatus::from_code(dfsc),
        }
    }

    /// Access size in bytes (1, 2, 4 or 8). Valid when `isv`.
    pub const fn access_bytes(&self) -> u8 {
        1 << (self.sas & 0b11)
    }
}

/// A decoded instruction abort from the guest (EC 0x20).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionAbort {
    /// Faulting IPA (see [`DataAbort::ipa`] for when it is meaningful).
    pub ipa: u64,
    /// `FAR_EL2`: the faulting virtual address (invalid when `fnv`).
    pub far: u64,
    /// `FnV`: `FAR_EL2` is not valid.
    pub fnv: bool,
    /// `EA`: IMPLEMENTATION DEFINED external abort type.
    pub ea: bool,
    /// `S1PTW`: stage-2 fault on a stage-1 translation table walk.
    pub s1ptw: bool,
    /// Raw `IFSC`.
    pub ifsc: u8,
    /// Classified `IFSC`.
    pub status: FaultStatus,
}

impl InstructionAbort {
    /// Decode from the syndrome registers. Does not check that `EC` is 0x20.
    pub const fn from_info(info: &ExitInfo) -> InstructionAbort {
        let iss = info.iss();
        let ifsc = (iss & 0x3f) as u8;
        InstructionAbort {
            ipa: fault_ipa(info.far, info.hpfar),
            far: info.far,
            fnv: iss & (1 << 10) != 0,
            ea: iss & (1 << 9) != 0,
            s1ptw: iss & (1 << 7) != 0,
            ifsc,
            status: FaultStatus::from_code(ifsc),
        }
    }
}
