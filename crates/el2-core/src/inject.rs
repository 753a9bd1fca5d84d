//! Injecting synchronous exceptions into a guest's EL1, as the architecture would take them
//! (Arm ARM D1.10 "Exception entry"): the architectural answer to a guest access the
//! hypervisor refuses (UNDEFINED instruction, external abort).

use crate::aarch32::{self, Exception};
use crate::switch::{El1Reg, WorldSwitch};
use crate::vcpu::VcpuContext;

/// `ESR_ELx.IL`: the trapped instruction was 32 bits long.
pub const ESR_IL: u64 = 1 << 25;
/// `ESR_ELx.EC` for an instruction abort from a lower EL.
pub const EC_IABT_LOWER: u64 = 0x20;
/// `ESR_ELx.EC` for an instruction abort from the same EL.
pub const EC_IABT_CUR: u64 = 0x21;
/// `ESR_ELx.EC` for a data abort from a lower EL.
pub const EC_DABT_LOWER: u64 = 0x24;
/// `ESR_ELx.EC` for a data abort from the same EL.
pub const EC_DABT_CUR: u64 = 0x25;
/// Fault status code "synchronous external abort, not on a translation table walk".
pub const FSC_SYNC_EXTERNAL: u64 = 0x10;
/// `ESR_ELx.ISS.WnR` for data aborts.
pub const ISS_WNR: u64 = 1 << 6;

/// PSTATE.M[4] (SPSR): the interrupted context was AArch32.
const PSTATE_NRW: u64 = 1 << 4;
/// PSTATE.PAN as saved in SPSR.
const PSTATE_PAN: u64 = 1 << 22;
/// PSTATE.SSBS as saved in SPSR (AArch64).
const PSTATE_SSBS: u64 = 1 << 12;
/// `SCTLR_EL1.SPAN`: 0 means "set PSTATE.PAN on exception entry to EL1".
const SCTLR_SPAN: u64 = 1 << 23;
/// `SCTLR_EL1.DSSBS`: PSTATE.SSBS on exception entry.
const SCTLR_DSSBS: u64 = 1 << 44;

/// True when the guest context described by `pstate` was executing at EL0.
pub fn from_el0(pstate: u64) -> bool {
    pstate & PSTATE_NRW != 0 || (pstate >> 2) & 3 == 0
}

/// Computes where a synchronous exception taken to EL1 goes: returns `(pc, pstate)` after
/// entry, given the interrupted `pstate` and the guest's `VBAR_EL1` and `SCTLR_EL1`.
pub fn exception_entry(pstate: u64, vbar: u64, sctlr: u64) -> (u64, u64) {
    let offset = if pstate & PSTATE_NRW != 0 {
        0x600 // lower EL using AArch32
    } else if (pstate >> 2) & 3 == 0 {
        0x400 // lower EL using AArch64
    } else if pstate & 1 != 0 {
        0x200 // current EL with SP_ELx
    } else {
        0x000 // current EL with SP_EL0
    };
    let mut new = 0x3c5; // EL1h, D, A, I, F masked
    if sctlr & SCTLR_SPAN == 0 {
        new |= PSTATE_PAN;
    } else if pstate & PSTATE_NRW == 0 {
        new |= pstate & PSTATE_PAN;
    }
    if sctlr & SCTLR_DSSBS != 0 {
        new |= PSTATE_SSBS;
    }
    ((vbar & !0x7ff) + offset, new)
}

/// `ESR_EL1` for an UNDEFINED instruction (EC = 0, "unknown reason").
pub fn esr_undefined() -> u64 {
    ESR_IL
}

/// `ESR_EL1` for a synchronous external abort on a data access.
pub fn esr_data_external_abort(from_el0: bool, is_write: bool) -> u64 {
    let ec = if from_el0 { EC_DABT_LOWER } else { EC_DABT_CUR };
    (ec << 26) | ESR_IL | FSC_SYNC_EXTERNAL | if is_write { ISS_WNR } else { 0 }
}

/// `ESR_EL1` for a synchronous external abort on an instruction fetch.
pub fn esr_instruction_external_abort(from_el0: bool) -> u64 {
    let ec = if from_el0 { EC_IABT_LOWER } else { EC_IABT_CUR };
    (ec << 26) | ESR_IL | FSC_SYNC_EXTERNAL
}

/// Delivers a synchronous exception with syndrome `esr` (and `far` for aborts) to the
/// guest's EL1: sets `ESR_EL1`, `FAR_EL1`, `ELR_EL1`, `SPSR_EL1`, and moves the vCPU to its
/// EL1 vector with interrupts masked.
pub fn inject_sync(sw: &dyn WorldSwitch, vcpu: &mut VcpuContext, esr: u64, far: Option<u64>) {
    let vbar = sw.el1_read(vcpu, El1Reg::Vbar);
    let sctlr = sw.el1_read(vcpu, El1Reg::Sctlr);
    let (pc, pstate) = exception_entry(vcpu.regs.pstate, vbar, sctlr);
    sw.el1_write(vcpu, El1Reg::Esr, esr);
    if let Some(far) = far {
        sw.el1_write(vcpu, El1Reg::Far, far);
    }
    sw.el1_write(vcpu, El1Reg::Elr, vcpu.regs.pc);
    sw.el1_write(vcpu, El1Reg::Spsr, vcpu.regs.pstate);
    vcpu.regs.pc = pc;
    vcpu.regs.pstate = pstate;
}

/// Injects an UNDEFINED exception for the instruction at the guest's PC.
pub fn inject_undefined(sw: &dyn WorldSwitch, vcpu: &mut VcpuContext) {
    if vcpu.controls.el1_is_aarch32() {
        return inject_aarch32(sw, vcpu, Exception::Undefined);
    }
    inject_sync(sw, vcpu, esr_undefined(), None);
}

/// Injects a synchronous external abort for a data access to virtual address `far`.
pub fn inject_data_abort(sw: &dyn WorldSwitch, vcpu: &mut VcpuContext, far: u64, is_write: bool) {
    if vcpu.controls.el1_is_aarch32() {
        // DFSR (ESR_EL1[31:0]) and DFAR (FAR_EL1[31:0]); IFAR (the high word) is kept.
        let ttbcr = sw.el1_read(vcpu, El1Reg::Tcr);
        sw.el1_write(vcpu, El1Reg::Esr, aarch32::fsr_external(ttbcr, is_write));
        let ifar = sw.el1_read(vcpu, El1Reg::Far) & !u64::from(u32::MAX);
        sw.el1_write(vcpu, El1Reg::Far, ifar | (far & u64::from(u32::MAX)));
        return inject_aarch32(sw, vcpu, Exception::DataAbort);
    }
    let esr = esr_data_external_abort(from_el0(vcpu.regs.pstate), is_write);
    inject_sync(sw, vcpu, esr, Some(far));
}

/// Injects a synchronous external abort for an instruction fetch from `far`.
pub fn inject_instruction_abort(sw: &dyn WorldSwitch, vcpu: &mut VcpuContext, far: u64) {
    if vcpu.controls.el1_is_aarch32() {
        // IFSR (IFSR32_EL2) and IFAR (FAR_EL1[63:32]); DFAR (the low word) is kept.
        let ttbcr = sw.el1_read(vcpu, El1Reg::Tcr);
        sw.el1_write(vcpu, El1Reg::Ifsr32, aarch32::fsr_external(ttbcr, false));
        let dfar = sw.el1_read(vcpu, El1Reg::Far) & u64::from(u32::MAX);
        let ifar = (far & u64::from(u32::MAX)) << aarch32::IFAR_SHIFT;
        sw.el1_write(vcpu, El1Reg::Far, ifar | dfar);
        return inject_aarch32(sw, vcpu, Exception::PrefetchAbort);
    }
    let esr = esr_instruction_external_abort(from_el0(vcpu.regs.pstate));
    inject_sync(sw, vcpu, esr, Some(far));
}

/// Takes exception `exc` in an AArch32 EL1 guest (`AArch32.EnterMode`): the target mode's
/// `SPSR` and `LR`, then its vector. The fault status registers are the caller's.
fn inject_aarch32(sw: &dyn WorldSwitch, vcpu: &mut VcpuContext, exc: Exception) {
    let sctlr = sw.el1_read(vcpu, El1Reg::Sctlr);
    let vbar = sw.el1_read(vcpu, El1Reg::Vbar);
    let entry = aarch32::exception_entry(exc, vcpu.regs.pstate, vcpu.regs.pc, sctlr, vbar);
    let spsr = match exc {
        Exception::Undefined => El1Reg::SpsrUnd,
        Exception::PrefetchAbort | Exception::DataAbort => El1Reg::SpsrAbt,
    };
    sw.el1_write(vcpu, spsr, vcpu.regs.pstate);
    vcpu.regs.x[entry.lr_index] = entry.lr;
    vcpu.regs.pc = entry.pc;
    vcpu.regs.pstate = entry.cpsr;
}

/// Steps the guest PC over the trapped instruction (`ESR_EL2.IL` gives its length: 4 bytes,
/// or 2 for a 16-bit T32 instruction). In AArch32 state the PC wraps at 32 bits and a T32
/// instruction inside an IT block advances the `IT` state.
#[inline]
pub fn skip_instruction(vcpu: &mut VcpuContext, esr: u64) {
    let len = if esr & ESR_IL != 0 { 4 } else { 2 };
    vcpu.regs.pc = vcpu.regs.pc.wrapping_add(len);
    if vcpu.regs.pstate & PSTATE_NRW != 0 {
        vcpu.regs.pc &= u64::from(u32::MAX);
        vcpu.regs.pstate = aarch32::advance_it(vcpu.regs.pstate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::{el1_field, Backend, RawExit};

    /// A backend whose EL1 registers live in the context (like non-VHE between exits).
    struct MemBackend;
    impl WorldSwitch for MemBackend {
        fn backend(&self) -> Backend {
            Backend::NonVhe
        }
        unsafe fn vcpu_load(&self, _: &mut VcpuContext) {}
        unsafe fn run(&self, _: &mut VcpuContext) -> RawExit {
            unreachable!()
        }
        unsafe fn vcpu_put(&self, _: &mut VcpuContext) {}
        unsafe fn fp_trap(&self, _: &mut VcpuContext) {}
        fn el1_read(&self, v: &VcpuContext, r: El1Reg) -> u64 {
            *el1_field(&mut v.el1.clone(), r)
        }
        fn el1_write(&self, v: &mut VcpuContext, r: El1Reg, val: u64) {
            *el1_field(&mut v.el1, r) = val;
        }
    }

    #[test]
    fn vector_offsets() {
        let span = SCTLR_SPAN;
        assert_eq!(exception_entry(0x3c5, 0x1000, span).0, 0x1200); // EL1h
        assert_eq!(exception_entry(0x3c4, 0x1000, span).0, 0x1000); // EL1t
        assert_eq!(exception_entry(0x0, 0x1000, span).0, 0x1400); // EL0 AArch64
        assert_eq!(exception_entry(0x10, 0x1000, span).0, 0x1600); // EL0 AArch32

        // SPAN = 0 sets PAN on entry
        assert_eq!(exception_entry(0x0, 0, 0).1, 0x3c5 | PSTATE_PAN);
        assert_eq!(exception_entry(0x0, 0, span).1, 0x3c5);
    }

    #[test]
    fn syndromes() {
        // EC=0x25 (DABT same EL), IL, DFSC=0x10, WnR
        assert_eq!(esr_data_external_abort(false, true), 0x9600_0050);
        assert_eq!(esr_data_external_abort(true, false), 0x9200_0010);
        assert_eq!(esr_instruction_external_abort(false), 0x8600_0010);
        assert_eq!(esr_undefined(), 0x0200_0000);
    }

    #[test]
    fn inject_undefined_at_el1() {
        let mut v = VcpuContext::new_at(0x4008_0000, 0, Default::default());
        v.el1.vbar_el1 = 0x4010_0000;
        v.regs.pstate = 0x3c5;
        v.regs.pc = 0x4008_1234;
        inject_undefined(&MemBackend, &mut v);
        assert_eq!(v.regs.pc, 0x4010_0200);
        assert_eq!(v.el1.elr_el1, 0x4008_1234);
        assert_eq!(v.el1.spsr_el1, 0x3c5);
        assert_eq!(v.el1.esr_el1, 0x0200_0000);
    }

    #[test]
    fn inject_into_aarch32_el1() {
        let controls = crate::vcpu::VcpuControls {
            el1_aarch32: true,
            ..Default::default()
        };
        let mut v = VcpuContext::new_for_boot(0x4000_8000, 0x4800_0000, controls);
        assert_eq!((v.regs.pc, v.regs.pstate), (0x4000_8000, 0x1d3));
        assert_eq!(&v.regs.x[..3], &[0, 0xffff_ffff, 0x4800_0000]);
        v.el1.vbar_el1 = 0xc000_0000;
        v.el1.far_el1 = 0x1234_5678_0000_0000;
        inject_data_abort(&MemBackend, &mut v, 0x0a00_0004, true);
        assert_eq!(v.regs.pc, 0xc000_0010);
        assert_eq!(v.regs.pstate, 0x1d7);
        assert_eq!(v.regs.x[20], 0x4000_8008); // LR_abt
        assert_eq!(v.el1.spsr_abt, 0x1d3);
        assert_eq!(v.el1.esr_el1, 0x808); // DFSR: short-descriptor external abort, WnR
        assert_eq!(v.el1.far_el1, 0x1234_5678_0a00_0004);
        inject_undefined(&MemBackend, &mut v);
        assert_eq!((v.regs.pc, v.regs.pstate), (0xc000_0004, 0x1db));
        assert_eq!(v.regs.x[22], 0xc000_0014); // LR_und
        assert_eq!(v.el1.spsr_und, 0x1d7);
    }

    #[test]
    fn skip() {
        let mut v = VcpuContext::default();
        v.regs.pc = 100;
        skip_instruction(&mut v, ESR_IL);
        assert_eq!(v.regs.pc, 104);
        skip_instruction(&mut v, 0);
        assert_eq!(v.regs.pc, 106);
    }
}
