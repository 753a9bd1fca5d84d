//! The syndrome registers the hardware reports for the exits the toy guest causes: the
//! inverse of `el2_core::exit::decode`, field by field (Arm ARM D17.2.37 "ESR_EL2",
//! D17.2.62 "HPFAR_EL2").

use el2_core::exit::{ec, SysRegAccess};
use el2_core::inject::ESR_IL;
use el2_core::mmio::AccessSize;
use el2_core::switch::{ExitKind, RawExit};

/// `ESR_EL2.EC` occupies bits [31:26].
const ESR_EC_SHIFT: u32 = 26;

/// Data abort `ISS.ISV`: the syndrome fields below are valid.
const DABT_ISV: u64 = 1 << 24;
/// Data abort `ISS.SAS`, log2 of the access size, bits [23:22].
const DABT_SAS_SHIFT: u32 = 22;
/// Data abort `ISS.SRT`, the transfer register, bits [20:16].
const DABT_SRT_SHIFT: u32 = 16;
/// Data abort `ISS.SF`: the transfer register is 64 bits wide.
const DABT_SF: u64 = 1 << 15;
/// Data abort `ISS.WnR`: the access was a write.
const DABT_WNR: u64 = 1 << 6;
/// `ISS.DFSC` for a translation fault at level 3: stage 2 maps nothing at that page.
const DFSC_TRANSLATION_L3: u64 = 0x07;

/// `HPFAR_EL2.FIPA` (bits [47:4]) holds IPA[51:12].
const HPFAR_FIPA_SHIFT: u32 = 4;
/// `HPFAR_EL2` reports the faulting IPA at 4 KiB granularity.
const PAGE_SHIFT: u32 = 12;

/// MSR/MRS `ISS.Op0`, bits [21:20].
const SYS_OP0_SHIFT: u32 = 20;
/// MSR/MRS `ISS.Op2`, bits [19:17].
const SYS_OP2_SHIFT: u32 = 17;
/// MSR/MRS `ISS.Op1`, bits [16:14].
const SYS_OP1_SHIFT: u32 = 14;
/// MSR/MRS `ISS.CRn`, bits [13:10].
const SYS_CRN_SHIFT: u32 = 10;
/// MSR/MRS `ISS.Rt`, bits [9:5].
const SYS_RT_SHIFT: u32 = 5;
/// MSR/MRS `ISS.CRm`, bits [4:1].
const SYS_CRM_SHIFT: u32 = 1;
/// MSR/MRS `ISS.Direction` = 1: a read (`MRS`).
const SYS_DIR_READ: u64 = 1;

/// A synchronous exit with exception class `ec` and syndrome `iss` of a 32-bit instruction.
fn sync(ec: u8, iss: u64, far: u64, hpfar: u64) -> RawExit {
    RawExit {
        kind: ExitKind::Sync,
        esr: (u64::from(ec) << ESR_EC_SHIFT) | ESR_IL | iss,
        far,
        hpfar,
    }
}

/// `HVC #imm` from AArch64.
pub fn hvc(imm: u16) -> RawExit {
    sync(ec::HVC64, u64::from(imm), 0, 0)
}

/// A single-register load or store at guest virtual address `va` (IPA `ipa`) that stage 2
/// does not map, with a valid instruction syndrome.
pub fn data_abort(
    ipa: u64,
    va: u64,
    size: AccessSize,
    rt: u8,
    sf: bool,
    is_write: bool,
) -> RawExit {
    let sas = u64::from(size.bytes().trailing_zeros());
    let mut iss = DABT_ISV | sas << DABT_SAS_SHIFT | u64::from(rt) << DABT_SRT_SHIFT;
    if sf {
        iss |= DABT_SF;
    }
    if is_write {
        iss |= DABT_WNR;
    }
    let hpfar = (ipa >> PAGE_SHIFT) << HPFAR_FIPA_SHIFT;
    sync(ec::DABT_LOW, iss | DFSC_TRANSLATION_L3, va, hpfar)
}

/// A trapped `MSR`/`MRS`.
pub fn sysreg(access: SysRegAccess) -> RawExit {
    let iss = u64::from(access.op0) << SYS_OP0_SHIFT
        | u64::from(access.op2) << SYS_OP2_SHIFT
        | u64::from(access.op1) << SYS_OP1_SHIFT
        | u64::from(access.crn) << SYS_CRN_SHIFT
        | u64::from(access.rt) << SYS_RT_SHIFT
        | u64::from(access.crm) << SYS_CRM_SHIFT
        | if access.is_read { SYS_DIR_READ } else { 0 };
    sync(ec::SYS64, iss, 0, 0)
}

/// A physical IRQ taken to EL2 while the guest ran (`HCR_EL2.IMO`).
pub fn irq() -> RawExit {
    RawExit {
        kind: ExitKind::Irq,
        esr: 0,
        far: 0,
        hpfar: 0,
    }
}
