//! The EL2 control-register values the hypervisor runs guests with, built from named fields
//! (`aarch64-cpu`'s `HCR_EL2`, `CNTHCTL_EL2`; [`crate::sysreg::fields`] for the layouts it
//! lacks), each with the reason it is set. Pure values, so they are host-tested and shown in
//! logs; the world switch writes them with `HCR_EL2.set(..)`.

use aarch64_cpu::registers::{CNTHCTL_EL2, HCR_EL2};

use crate::sysreg::fields::{CNTHCTL_EL2_E2H1, CPTR_EL2_E2H0, CPTR_EL2_E2H1};

/// `HCR_EL2` for running a guest.
///
/// `pauth`: the CPU implements pointer authentication and the world switch switches the
/// keys (`HCR_EL2.API`/`APK` set); otherwise pointer-authentication instructions trap and
/// the guest sees them hidden.
pub fn guest_hcr(vhe: bool, pauth: bool) -> u64 {
    use HCR_EL2::*;
    // VM: enable stage-2 translation for EL1&0 — each VM sees only its own RAM.
    let mut v = VM::Enable
        // SWIO: data-cache invalidate by set/way is upgraded to clean+invalidate, so a guest
        // cannot discard another VM's dirty lines (set/way ops are not trapped).
        + SWIO::SET
        // FMO: physical FIQs go to EL2; enables virtual FIQs.
        + FMO::EnableVirtualFIQ
        // IMO: physical IRQs go to EL2; enables virtual IRQs.
        + IMO::EnableVirtualIRQ
        // AMO: physical SErrors go to EL2; enables virtual SErrors.
        + AMO::SET
        // FB: TLB and I-cache maintenance by the guest is broadcast to the Inner Shareable
        // domain, so a vCPU that migrates never misses an invalidation.
        + FB::SET
        // BSU = Inner Shareable: guest barriers are upgraded accordingly.
        + BSU::InnerShareable
        // TWI: trap WFI, so an idle vCPU gives its CPU back. (TWE stays clear: spin-wait
        // loops on WFE are cheaper natively.)
        + TWI::SET
        // TID3: trap reads of the ID group 3 registers (`ID_AA64*_EL1`), so the guest sees
        // only features the hypervisor context-switches (no SVE, SME, MTE, AMU...).
        + TID3::SET
        // TSC: trap SMC; the guest's firmware calls (PSCI, SMCCC) are emulated and never
        // reach the real firmware.
        + TSC::EnableTrapEl1SmcToEl2
        // TIDCP: trap implementation-defined system registers (`S3_x_C15_*`), which get an
        // UNDEFINED exception.
        + TIDCP::SET
        // TACR: trap `ACTLR_EL1`, which is IMPLEMENTATION DEFINED and may control errata
        // workarounds the guest must not turn off.
        + TACR::SET
        // TLOR: trap the LORegion registers (LOR is hidden from guests).
        + TLOR::SET
        // RW: EL1 is AArch64.
        + RW::EL1IsAarch64;
    if pauth {
        // API/APK: do not trap pointer-authentication instructions and key registers (the
        // world switch switches the keys).
        v += API::DisableTrapPointerAuthInstToEl2 + APK::DisableTrapPointerAuthKeyRegsToEl2;
    }
    if vhe {
        // E2H: the hypervisor runs with Virtualization Host Extensions.
        v += E2H::EnableOsAtEl2;
    }
    v.value
}

/// `HCR_EL2` while the non-VHE hypervisor handles an exit or runs no vCPU: guest traps and
/// stage 2 off, EL1 AArch64 (`HCR_EL2.RW`).
pub const HOST_HCR_NVHE: u64 = HCR_EL2::RW::EL1IsAarch64.value;

/// `HCR_EL2` of the VHE hypervisor outside any vCPU: `E2H` (the host runs in the EL2&0
/// regime), `TGE` (EL1 is disabled and EL0 exceptions go to EL2), `RW`.
pub const HOST_HCR_VHE: u64 = HCR_EL2::RW::EL1IsAarch64.value
    | HCR_EL2::E2H::EnableOsAtEl2.value
    | HCR_EL2::TGE::EnableTrapGeneralExceptionsToEl2.value;

/// `HCR_EL2` of the hypervisor outside any vCPU, for the backend (`vhe`).
pub const fn host_hcr(vhe: bool) -> u64 {
    if vhe {
        HOST_HCR_VHE
    } else {
        HOST_HCR_NVHE
    }
}

/// `CPTR_EL2` for a guest: FP trapped until first use (lazy switch, `fp_loaded` = false),
/// SVE, SME and AMU trapped. The layout moves with `HCR_EL2.E2H`.
pub fn guest_cptr(vhe: bool, fp_loaded: bool) -> u64 {
    if vhe {
        use CPTR_EL2_E2H1::*;
        // TAM: activity monitors are hidden from guests. ZEN = SMEN = 0b00 trap SVE and
        // SME; FPEN = 0b00 traps FP/SIMD until the guest's state is loaded.
        let fp = if fp_loaded { FPEN::NoTrap } else { FPEN::Trap };
        (TAM::SET + ZEN::Trap + SMEN::Trap + fp).value
    } else {
        use CPTR_EL2_E2H0::*;
        // The RES1 bits, TZ and TSM (trap SVE and SME; RES1 without them), TAM (activity
        // monitors are hidden from guests); TFP traps FP/SIMD until the guest's state is
        // loaded.
        let fixed = RES1_13::SET + RES1_9::SET + RES1_7_0.val(0xff) + TZ::SET + TSM::SET;
        let fp = if fp_loaded { TFP::CLEAR } else { TFP::SET };
        (fixed + TAM::SET + fp).value
    }
}

/// `CNTHCTL_EL2` for a guest: physical counter readable (`EL1PCTEN`), physical timer
/// trapped (`EL1PCEN` = 0, emulated by the hypervisor). The bit positions move with E2H
/// (seed `002`): bits 0/1 without VHE, bits 10/11 with VHE.
pub fn guest_cnthctl(vhe: bool) -> u64 {
    if vhe {
        (CNTHCTL_EL2_E2H1::EL1PCTEN::SET + CNTHCTL_EL2_E2H1::EL1PCEN::CLEAR).value
    } else {
        (CNTHCTL_EL2::EL1PCTEN::SET + CNTHCTL_EL2::EL1PCEN::CLEAR).value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value the world switch and the boot path program, bit for bit.
    #[test]
    fn exact_values() {
        // VM|SWIO|FMO|IMO|AMO|FB|BSU=IS|TWI|TID3|TSC|TIDCP|TACR|RW|TLOR (+API|APK, +E2H)
        assert_eq!(guest_hcr(false, false), 0x0000_0008_803c_263b);
        assert_eq!(guest_hcr(false, true), 0x0000_0308_803c_263b);
        assert_eq!(guest_hcr(true, false), 0x0000_000c_803c_263b);
        assert_eq!(guest_hcr(true, true), 0x0000_030c_803c_263b);
        assert_eq!(HOST_HCR_NVHE, 0x0000_0000_8000_0000);
        assert_eq!(HOST_HCR_VHE, 0x0000_0004_8800_0000);
        assert_eq!(guest_cptr(false, false), 0x4000_37ff);
        assert_eq!(guest_cptr(false, true), 0x4000_33ff);
        assert_eq!(guest_cptr(true, false), 0x4000_0000);
        assert_eq!(guest_cptr(true, true), 0x4030_0000);
        assert_eq!(guest_cnthctl(false), 0x1);
        assert_eq!(guest_cnthctl(true), 0x400);
    }
}
