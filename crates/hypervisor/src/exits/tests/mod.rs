//! Host tests of the exit handlers: at least one per exception class (with the
//! architectural answer for bad input), and a property test that throws random syndromes,
//! registers and MMIO accesses at the whole table.

mod aarch32;
mod classes;
mod fast;
use super::mock;
mod props;

use el2_core::exit::ec;

/// `ESR_EL2.IL`: a 32-bit instruction.
pub const IL: u64 = 1 << 25;

/// `ESR_EL2` of class `ec` with syndrome `iss` and a 32-bit instruction.
pub fn esr(ec: u8, iss: u32) -> u64 {
    (u64::from(ec) << 26) | IL | u64::from(iss)
}

/// `ESR_EL2.ISS` of a trapped `MSR`/`MRS` (Direction 1 = read).
pub fn sysreg_iss(op0: u32, op1: u32, crn: u32, crm: u32, op2: u32, rt: u32, read: bool) -> u32 {
    (op0 << 20) | (op2 << 17) | (op1 << 14) | (crn << 10) | (rt << 5) | (crm << 1) | u32::from(read)
}

/// The syndrome of a data abort with a valid instruction syndrome at `ipa`: (`ESR_EL2`,
/// `FAR_EL2`, `HPFAR_EL2`), translation fault at level 3.
pub fn dabt(ipa: u64, sas: u32, srt: u32, sf: bool, write: bool) -> (u64, u64, u64) {
    let iss = (1 << 24)
        | (sas << 22)
        | (srt << 16)
        | (u32::from(sf) << 15)
        | (u32::from(write) << 6)
        | DFSC_TRANSLATION_L3;
    (esr(ec::DABT_LOW, iss), ipa, hpfar(ipa))
}

/// `HPFAR_EL2` for `ipa` (`FIPA` = IPA[51:12] in bits [47:4]).
pub fn hpfar(ipa: u64) -> u64 {
    (ipa >> 12) << 4
}

/// `DFSC`: translation fault, level 3.
pub const DFSC_TRANSLATION_L3: u32 = 0x07;
/// `DFSC`: permission fault, level 3.
pub const DFSC_PERMISSION_L3: u32 = 0x0f;
