//! What the guest reads from the ID registers (`HCR_EL2.TID3` traps them): the hardware
//! value with every feature hidden that the hypervisor does not virtualize or
//! context-switch, so guests never use state that would leak between VMs or trap to
//! UNDEFINED.

/// Policy inputs for sanitising.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdPolicy {
    /// Pointer-authentication keys are switched per vCPU (keep PAuth visible).
    pub pauth: bool,
    /// `ID_AA64MMFR0_EL1.PARange` to report: the VM's IPA size.
    pub ipa_parange: u64,
}

/// An ID register encoding in the `op0=3, op1=0, CRn=0` space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdReg {
    /// CRm (1..=7 are trapped by TID3).
    pub crm: u8,
    /// op2.
    pub op2: u8,
}

impl IdReg {
    /// The ID register an `MRS`/`MSR` encoding names: `op0=3, op1=0, CRn=0, CRm=1..=7`, the
    /// space `HCR_EL2.TID3` traps; `None` for any other encoding.
    pub fn from_encoding(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Option<IdReg> {
        (op0 == 3 && op1 == 0 && crn == 0 && (1..=7).contains(&crm)).then_some(IdReg { crm, op2 })
    }
}

/// `ID_PFR0` (AArch32; `ID_PFR0_EL1`).
pub const ID_PFR0: IdReg = IdReg { crm: 1, op2: 0 };
/// `ID_PFR1` (AArch32).
pub const ID_PFR1: IdReg = IdReg { crm: 1, op2: 1 };
/// `ID_DFR0` (AArch32).
pub const ID_DFR0: IdReg = IdReg { crm: 1, op2: 2 };
/// `ID_AA64PFR0_EL1`.
pub const ID_AA64PFR0: IdReg = IdReg { crm: 4, op2: 0 };
/// `ID_AA64PFR1_EL1`.
pub const ID_AA64PFR1: IdReg = IdReg { crm: 4, op2: 1 };
/// `ID_AA64ZFR0_EL1`.
pub const ID_AA64ZFR0: IdReg = IdReg { crm: 4, op2: 4 };
/// `ID_AA64SMFR0_EL1`.
pub const ID_AA64SMFR0: IdReg = IdReg { crm: 4, op2: 5 };
/// `ID_AA64DFR0_EL1`.
pub const ID_AA64DFR0: IdReg = IdReg { crm: 5, op2: 0 };
/// `ID_AA64ISAR1_EL1`.
pub const ID_AA64ISAR1: IdReg = IdReg { crm: 6, op2: 1 };
/// `ID_AA64ISAR2_EL1`.
pub const ID_AA64ISAR2: IdReg = IdReg { crm: 6, op2: 2 };
/// `ID_AA64MMFR0_EL1`.
pub const ID_AA64MMFR0: IdReg = IdReg { crm: 7, op2: 0 };
/// `ID_AA64MMFR1_EL1`.
pub const ID_AA64MMFR1: IdReg = IdReg { crm: 7, op2: 1 };
/// `ID_AA64MMFR2_EL1`.
pub const ID_AA64MMFR2: IdReg = IdReg { crm: 7, op2: 2 };

/// Clears the 4-bit fields starting at each bit position in `shifts`.
fn hide(v: u64, shifts: &[u32]) -> u64 {
    shifts.iter().fold(v, |v, s| v & !(0xf << s))
}

/// The value the guest reads for `reg` given the hardware value `hw`.
pub fn sanitize(reg: IdReg, hw: u64, policy: &IdPolicy) -> u64 {
    match reg {
        // AArch32: RAS [31:28], AMU [23:20].
        ID_PFR0 => hide(hw, &[20, 28]),
        // AArch32: Virtualization [15:12] (no nested virtualization), Virt_frac [27:24].
        ID_PFR1 => hide(hw, &[12, 24]),
        // AArch32: CopTrc [15:12], MMapTrc [19:16], PerfMon [27:24] (MDCR_EL2.TPM),
        // TraceFilt [31:28].
        ID_DFR0 => hide(hw, &[12, 16, 24, 28]),
        // EL2 [11:8] (no nested virtualization), RAS [31:28], SVE [35:32], SEL2 [39:36],
        // MPAM [43:40], AMU [47:44].
        ID_AA64PFR0 => hide(hw, &[8, 28, 32, 36, 40, 44]),
        // MTE [11:8], RAS_frac [15:12], MPAM_frac [19:16], SME [27:24], NMI [39:36],
        // GCS [47:44], THE [51:48].
        ID_AA64PFR1 => hide(hw, &[8, 12, 16, 24, 36, 44, 48]),
        ID_AA64ZFR0 | ID_AA64SMFR0 => 0,
        // TraceVer [7:4], PMUVer [11:8], PMSVer [35:32], TraceFilt [43:40],
        // TraceBuffer [47:44], MTPMU [51:48], BRBE [55:52].
        ID_AA64DFR0 => hide(hw, &[4, 8, 32, 40, 44, 48, 52]),
        // APA [7:4], API [11:8], GPA [27:24], GPI [31:28] unless keys are switched.
        ID_AA64ISAR1 if !policy.pauth => hide(hw, &[4, 8, 24, 28]),
        // GPA3 [11:8], APA3 [15:12] unless keys are switched.
        ID_AA64ISAR2 if !policy.pauth => hide(hw, &[8, 12]),
        // PARange [3:0] = the VM's IPA size.
        ID_AA64MMFR0 => (hw & !0xf) | policy.ipa_parange.min(hw & 0xf),
        // VH [11:8] (no nested VHE), LO [19:16] (LORegions trapped by HCR_EL2.TLOR).
        ID_AA64MMFR1 => hide(hw, &[8, 16]),
        // NV [27:24].
        ID_AA64MMFR2 => hide(hw, &[24]),
        _ => hw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: IdPolicy = IdPolicy {
        pauth: false,
        ipa_parange: 2,
    };

    #[test]
    fn hides_unvirtualized_features() {
        // cortex-a57-like PFR0 with EL2=1 (0x1000 -> nibble at 8 = 1) and SVE=1
        let pfr0 = 0x0000_0001_0000_2222u64 | (1 << 32);
        assert_eq!(sanitize(ID_AA64PFR0, pfr0, &P), 0x0000_0000_0000_2022);
        assert_eq!(sanitize(ID_AA64ZFR0, 0x1234, &P), 0);
        // PMUVer=4, DebugVer=6 -> only DebugVer kept
        assert_eq!(sanitize(ID_AA64DFR0, 0x0000_0000_0000_0406, &P), 0x6);
        // MMFR0 PARange 48-bit -> 40-bit for the VM
        assert_eq!(sanitize(ID_AA64MMFR0, 0x0000_0000_0000_1125, &P), 0x1122);
        // MMFR1 VH=1 hidden
        assert_eq!(
            sanitize(ID_AA64MMFR1, 0x0000_0000_0011_0100, &P),
            0x0000_0000_0010_0000
        );
    }

    #[test]
    fn pauth_follows_policy() {
        let isar1 = 0x0000_0000_1100_0110;
        assert_eq!(sanitize(ID_AA64ISAR1, isar1, &P), 0);
        assert_eq!(
            sanitize(ID_AA64ISAR1, isar1, &IdPolicy { pauth: true, ..P }),
            isar1
        );
    }
}
