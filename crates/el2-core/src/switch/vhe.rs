//! VHE (ARMv8.1 FEAT_VHE) world switch, `HCR_EL2.E2H = 1`.
//!
//! Follows seed `002`: the hypervisor runs in the EL2&0 regime, the guest's EL1 registers
//! are reached through the `*_EL12` aliases and stay loaded from `vcpu_load` to
//! `vcpu_put`; `HCR_EL2`, `VTTBR_EL2`, `CPTR_EL2` and `CNTHCTL_EL2` keep the guest's values
//! across exits ("leave virtualization features enabled"), so an exit costs only the
//! general registers and the syndrome reads.

use super::{controls, entry, fp, sysreg, El1Reg, RawExit, WorldSwitch};
use crate::vcpu::VcpuContext;
use crate::{read_sysreg, write_sysreg};

/// The ARMv8.1 VHE backend.
#[derive(Debug, Clone, Copy)]
pub struct Vhe {
    /// The CPU implements pointer authentication: switch the keys.
    pub pauth: bool,
}

impl WorldSwitch for Vhe {
    fn backend(&self) -> super::Backend {
        super::Backend::Vhe
    }

    unsafe fn vcpu_load(&self, vcpu: &mut VcpuContext) {
        let c = &vcpu.controls;
        write_sysreg!("vmpidr_el2", c.vmpidr_el2);
        write_sysreg!("vpidr_el2", c.vpidr_el2);
        write_sysreg!("cntvoff_el2", c.cntvoff_el2);
        write_sysreg!("vttbr_el2", c.vttbr_el2);
        write_sysreg!("cptr_el2", controls::guest_cptr(true, vcpu.fp_loaded));
        write_sysreg!("cnthctl_el2", controls::guest_cnthctl(true));
        write_sysreg!("hcr_el2", c.hcr_el2);
        sysreg::restore_el1_vhe(&vcpu.el1);
        if self.pauth {
            sysreg::restore_pauth(&vcpu.pauth);
        }
        // SAFETY: ISB synchronises the context changes above; no memory effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }

    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit {
        // SAFETY: vcpu_load configured EL2 for this vCPU and nothing has changed it since;
        // `vcpu.regs` outlives the call.
        let kind = unsafe { entry::enter_guest(&mut vcpu.regs) };
        RawExit {
            kind: super::nvhe::exit_kind(kind),
            esr: read_sysreg!("esr_el2"),
            far: read_sysreg!("far_el2"),
            hpfar: read_sysreg!("hpfar_el2"),
        }
    }

    unsafe fn vcpu_put(&self, vcpu: &mut VcpuContext) {
        sysreg::save_el1_vhe(&mut vcpu.el1);
        // Stop the guest's virtual timer (CNTV_CTL_EL02) while the vCPU is not loaded; a
        // software timer stands in for it.
        write_sysreg!("s3_5_c14_c3_1", 0);
        if self.pauth {
            sysreg::save_pauth(&mut vcpu.pauth);
        }
        if vcpu.fp_loaded {
            fp::save(&mut vcpu.fp);
            vcpu.fp_loaded = false;
        }
        write_sysreg!("cptr_el2", controls::guest_cptr(true, false));
        write_sysreg!("hcr_el2", controls::HOST_HCR_VHE);
        // SAFETY: ISB synchronises the context changes above; no memory effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }

    unsafe fn fp_trap(&self, vcpu: &mut VcpuContext) {
        write_sysreg!("cptr_el2", controls::guest_cptr(true, true));
        // SAFETY: ISB makes the CPTR_EL2 write visible before the FP accesses below.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
        fp::restore(&vcpu.fp);
        vcpu.fp_loaded = true;
    }

    fn el1_read(&self, _vcpu: &VcpuContext, reg: El1Reg) -> u64 {
        match reg {
            El1Reg::Sctlr => read_sysreg!("s3_5_c1_c0_0"),
            El1Reg::Esr => read_sysreg!("s3_5_c5_c2_0"),
            El1Reg::Far => read_sysreg!("s3_5_c6_c0_0"),
            El1Reg::Elr => read_sysreg!("s3_5_c4_c0_1"),
            El1Reg::Spsr => read_sysreg!("s3_5_c4_c0_0"),
            El1Reg::Vbar => read_sysreg!("s3_5_c12_c0_0"),
            El1Reg::Tcr => read_sysreg!("s3_5_c2_c0_2"),
            El1Reg::Ttbr0 => read_sysreg!("s3_5_c2_c0_0"),
            El1Reg::Ttbr1 => read_sysreg!("s3_5_c2_c0_1"),
            El1Reg::Mair => read_sysreg!("s3_5_c10_c2_0"),
            El1Reg::SpEl1 => read_sysreg!("sp_el1"),
        }
    }

    fn el1_write(&self, _vcpu: &mut VcpuContext, reg: El1Reg, value: u64) {
        match reg {
            El1Reg::Sctlr => write_sysreg!("s3_5_c1_c0_0", value),
            El1Reg::Esr => write_sysreg!("s3_5_c5_c2_0", value),
            El1Reg::Far => write_sysreg!("s3_5_c6_c0_0", value),
            El1Reg::Elr => write_sysreg!("s3_5_c4_c0_1", value),
            El1Reg::Spsr => write_sysreg!("s3_5_c4_c0_0", value),
            El1Reg::Vbar => write_sysreg!("s3_5_c12_c0_0", value),
            El1Reg::Tcr => write_sysreg!("s3_5_c2_c0_2", value),
            El1Reg::Ttbr0 => write_sysreg!("s3_5_c2_c0_0", value),
            El1Reg::Ttbr1 => write_sysreg!("s3_5_c2_c0_1", value),
            El1Reg::Mair => write_sysreg!("s3_5_c10_c2_0", value),
            El1Reg::SpEl1 => write_sysreg!("sp_el1", value),
        }
    }
}
