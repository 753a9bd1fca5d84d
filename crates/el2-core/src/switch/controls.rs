//! The EL2 control-register values the hypervisor runs guests with, one documented bit at
//! a time. Pure values, so they are host-tested and shown in logs.

/// `HCR_EL2` bits (Arm ARM D19.2.48).
pub mod hcr {
    /// `HCR_EL2.VM`: enable stage-2 translation for EL1&0 — each VM sees only its own RAM.
    pub const VM: u64 = 1 << 0;
    /// `HCR_EL2.SWIO`: data-cache invalidate by set/way is upgraded to clean+invalidate, so
    /// a guest cannot discard another VM's dirty lines (set/way ops are not trapped).
    pub const SWIO: u64 = 1 << 1;
    /// `HCR_EL2.FMO`: physical FIQs go to EL2; enables virtual FIQs.
    pub const FMO: u64 = 1 << 3;
    /// `HCR_EL2.IMO`: physical IRQs go to EL2; enables virtual IRQs.
    pub const IMO: u64 = 1 << 4;
    /// `HCR_EL2.AMO`: physical SErrors go to EL2; enables virtual SErrors.
    pub const AMO: u64 = 1 << 5;
    /// `HCR_EL2.VI`: a virtual IRQ is pending for the guest.
    pub const VI: u64 = 1 << 7;
    /// `HCR_EL2.FB`: TLB and I-cache maintenance by the guest is broadcast to the Inner
    /// Shareable domain, so a vCPU that migrates never misses an invalidation.
    pub const FB: u64 = 1 << 9;
    /// `HCR_EL2.BSU` = Inner Shareable: guest barriers are upgraded accordingly.
    pub const BSU_IS: u64 = 1 << 10;
    /// `HCR_EL2.TWI`: trap WFI, so an idle vCPU gives its CPU back.
    pub const TWI: u64 = 1 << 13;
    /// `HCR_EL2.TWE`: trap WFE (not set: spin-wait loops are cheaper natively).
    pub const TWE: u64 = 1 << 14;
    /// `HCR_EL2.TID3`: trap reads of the ID group 3 registers (`ID_AA64*_EL1`), so the
    /// guest sees only features the hypervisor context-switches (no SVE, SME, MTE, AMU...).
    pub const TID3: u64 = 1 << 18;
    /// `HCR_EL2.TSC`: trap SMC; the guest's firmware calls (PSCI, SMCCC) are emulated and
    /// never reach the real firmware.
    pub const TSC: u64 = 1 << 19;
    /// `HCR_EL2.TIDCP`: trap implementation-defined system registers (`S3_x_C15_*`),
    /// which get an UNDEFINED exception.
    pub const TIDCP: u64 = 1 << 20;
    /// `HCR_EL2.TACR`: trap `ACTLR_EL1`, which is IMPLEMENTATION DEFINED and may control
    /// errata workarounds the guest must not turn off.
    pub const TACR: u64 = 1 << 21;
    /// `HCR_EL2.RW`: EL1 is AArch64.
    pub const RW: u64 = 1 << 31;
    /// `HCR_EL2.E2H`: the hypervisor runs with Virtualization Host Extensions.
    pub const E2H: u64 = 1 << 34;
    /// `HCR_EL2.TLOR`: trap the LORegion registers (LOR is hidden from guests).
    pub const TLOR: u64 = 1 << 35;
    /// `HCR_EL2.APK`: do not trap pointer-authentication key registers (keys are switched).
    pub const APK: u64 = 1 << 40;
    /// `HCR_EL2.API`: do not trap pointer-authentication instructions.
    pub const API: u64 = 1 << 41;
    /// `HCR_EL2.TGE`: EL1 is disabled and EL0 exceptions go to EL2 (the VHE host's value).
    pub const TGE: u64 = 1 << 27;
}

/// `HCR_EL2` for running a guest.
///
/// `pauth`: the CPU implements pointer authentication and the world switch switches the
/// keys (`HCR_EL2.API`/`APK` set); otherwise pointer-authentication instructions trap and
/// the guest sees them hidden.
pub fn guest_hcr(vhe: bool, pauth: bool) -> u64 {
    use hcr::*;
    let mut v =
        VM | SWIO | FMO | IMO | AMO | FB | BSU_IS | TWI | TID3 | TSC | TIDCP | TACR | TLOR | RW;
    if pauth {
        v |= API | APK;
    }
    if vhe {
        v |= E2H;
    }
    v
}

/// `HCR_EL2` while the non-VHE hypervisor handles an exit: guest traps and stage 2 off.
pub const HOST_HCR_NVHE: u64 = hcr::RW;
/// `HCR_EL2` of the VHE hypervisor outside any vCPU.
pub const HOST_HCR_VHE: u64 = hcr::RW | hcr::E2H | hcr::TGE;

/// `CPTR_EL2` (E2H=0 layout): RES1 bits \[13:12\], \[9:0\] (bit 8 is `TZ`, trapping SVE).
pub const CPTR_NVHE_RES1: u64 = 0x33ff;
/// `CPTR_EL2.TFP` (E2H=0): trap FP/SIMD at EL0-EL2.
pub const CPTR_NVHE_TFP: u64 = 1 << 10;
/// `CPTR_EL2.TAM`: trap activity-monitor accesses (AMU is hidden from guests).
pub const CPTR_TAM: u64 = 1 << 30;
/// `CPTR_EL2.FPEN` = 0b11 (E2H=1 layout): FP/SIMD not trapped.
pub const CPTR_VHE_FPEN: u64 = 0b11 << 20;

/// `CPTR_EL2` for a guest: FP trapped until first use (lazy switch), SVE and AMU trapped.
pub fn guest_cptr(vhe: bool, fp_loaded: bool) -> u64 {
    match (vhe, fp_loaded) {
        (false, false) => CPTR_NVHE_RES1 | CPTR_NVHE_TFP | CPTR_TAM,
        (false, true) => CPTR_NVHE_RES1 | CPTR_TAM,
        // ZEN=0b00 and SMEN=0b00 trap SVE/SME; FPEN=0b00 traps FP.
        (true, false) => CPTR_TAM,
        (true, true) => CPTR_TAM | CPTR_VHE_FPEN,
    }
}

/// `CNTHCTL_EL2` for a guest: physical counter readable (`EL1PCTEN`), physical timer
/// trapped (`EL1PCEN`=0, emulated by the hypervisor). The bit positions move with E2H
/// (seed `002`): bits 0/1 without VHE, bits 10/11 with VHE.
pub fn guest_cnthctl(vhe: bool) -> u64 {
    if vhe {
        1 << 10
    } else {
        1 << 0
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
