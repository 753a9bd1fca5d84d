//! Saving and restoring the FP/SIMD register file. EL2 code is built soft-float, so these
//! routines are the only EL2 code that touches V0..V31; the caller must have disabled the
//! FP trap (`CPTR_EL2.TFP` / `CPTR_EL2.FPEN`) first.

use crate::vcpu::FpState;

/// Stores V0..V31, FPSR and FPCR into `fp`.
pub(crate) fn save(fp: &mut FpState) {
    let base = fp as *mut FpState;
    // SAFETY: `base` points at a valid, 16-byte aligned FpState (32 x 16 bytes of V
    // registers followed by FPSR and FPCR); FP access at EL2 is enabled by the caller.
    unsafe {
        core::arch::asm!(
            ".arch_extension fp",
            ".arch_extension simd",
            "stp q0, q1, [{b}, #0]",
            "stp q2, q3, [{b}, #32]",
            "stp q4, q5, [{b}, #64]",
            "stp q6, q7, [{b}, #96]",
            "stp q8, q9, [{b}, #128]",
            "stp q10, q11, [{b}, #160]",
            "stp q12, q13, [{b}, #192]",
            "stp q14, q15, [{b}, #224]",
            "stp q16, q17, [{b}, #256]",
            "stp q18, q19, [{b}, #288]",
            "stp q20, q21, [{b}, #320]",
            "stp q22, q23, [{b}, #352]",
            "stp q24, q25, [{b}, #384]",
            "stp q26, q27, [{b}, #416]",
            "stp q28, q29, [{b}, #448]",
            "stp q30, q31, [{b}, #480]",
            "mrs {t}, fpsr",
            "str {t}, [{b}, #512]",
            "mrs {t}, fpcr",
            "str {t}, [{b}, #520]",
            b = in(reg) base,
            t = out(reg) _,
            options(nostack, preserves_flags),
        );
    }
}

/// Loads V0..V31, FPSR and FPCR from `fp`.
pub(crate) fn restore(fp: &FpState) {
    let base = fp as *const FpState;
    // SAFETY: as in `save`; the registers loaded are guest state only (EL2 code never
    // uses FP/SIMD registers, so nothing of the hypervisor's is overwritten).
    unsafe {
        core::arch::asm!(
            ".arch_extension fp",
            ".arch_extension simd",
            "ldp q0, q1, [{b}, #0]",
            "ldp q2, q3, [{b}, #32]",
            "ldp q4, q5, [{b}, #64]",
            "ldp q6, q7, [{b}, #96]",
            "ldp q8, q9, [{b}, #128]",
            "ldp q10, q11, [{b}, #160]",
            "ldp q12, q13, [{b}, #192]",
            "ldp q14, q15, [{b}, #224]",
            "ldp q16, q17, [{b}, #256]",
            "ldp q18, q19, [{b}, #288]",
            "ldp q20, q21, [{b}, #320]",
            "ldp q22, q23, [{b}, #352]",
            "ldp q24, q25, [{b}, #384]",
            "ldp q26, q27, [{b}, #416]",
            "ldp q28, q29, [{b}, #448]",
            "ldp q30, q31, [{b}, #480]",
            "ldr {t}, [{b}, #512]",
            "msr fpsr, {t}",
            "ldr {t}, [{b}, #520]",
            "msr fpcr, {t}",
            b = in(reg) base,
            t = out(reg) _,
            options(nostack, preserves_flags),
        );
    }
}

const _: () = {
    assert!(core::mem::offset_of!(FpState, fpsr) == 512);
    assert!(core::mem::offset_of!(FpState, fpcr) == 520);
};
