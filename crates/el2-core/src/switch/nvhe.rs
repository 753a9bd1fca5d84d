//! Non-VHE (ARMv8.0) world switch, `HCR_EL2.E2H = 0`.
//!
//! Seed `000`'s split mode switches the guest's EL1 registers, traps and stage 2 on every
//! exit because KVM's host kernel runs at EL1 between exits. This hypervisor has nothing at
//! EL1: its own code runs at EL2 in the EL2 translation regime, and nothing it does depends on
//! the EL1 registers, `HCR_EL2`'s guest traps, `VTTBR_EL2` or `CNTHCTL_EL2` (stage-2 TLB
//! maintenance loads the VTTBR it needs itself). So, like the VHE backend (seed `002`'s
//! "leave virtualization features enabled"), it loads the guest's EL1 registers, pointer-auth
//! keys and EL2 controls in `vcpu_load` and saves them in `vcpu_put`; an exit costs only the
//! general registers and the syndrome reads. FP/SIMD is switched lazily (`CPTR_EL2.TFP`).

use super::{controls, entry, fp, sysreg, El1Reg, ExitKind, RawExit, WorldSwitch};
use crate::vcpu::VcpuContext;
use crate::{read_sysreg, write_sysreg};

/// The ARMv8.0 backend.
#[derive(Debug, Clone, Copy)]
pub struct NonVhe {
    /// The CPU implements pointer authentication: switch the keys.
    pub pauth: bool,
}

impl WorldSwitch for NonVhe {
    fn backend(&self) -> super::Backend {
        super::Backend::NonVhe
    }

    unsafe fn vcpu_load(&self, vcpu: &mut VcpuContext) {
        let c = &vcpu.controls;
        write_sysreg!("vmpidr_el2", c.vmpidr_el2);
        write_sysreg!("vpidr_el2", c.vpidr_el2);
        write_sysreg!("cntvoff_el2", c.cntvoff_el2);
        sysreg::restore_el1_nvhe(&vcpu.el1);
        if self.pauth {
            sysreg::restore_pauth(&vcpu.pauth);
        }
        write_sysreg!("vttbr_el2", c.vttbr_el2);
        write_sysreg!("cptr_el2", controls::guest_cptr(false, vcpu.fp_loaded));
        write_sysreg!("cnthctl_el2", controls::guest_cnthctl(false));
        write_sysreg!("hcr_el2", c.hcr_el2);
        // SAFETY: ISB synchronises the context changes above; no memory effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }

    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit {
        // SAFETY: vcpu_load configured EL1 and EL2 for this vCPU and nothing has changed them
        // since; VBAR_EL2 points at the vectors (set at boot); `vcpu.regs` outlives the call.
        let kind = unsafe { entry::enter_guest(&mut vcpu.regs) };
        RawExit {
            kind: exit_kind(kind),
            esr: read_sysreg!("esr_el2"),
            far: read_sysreg!("far_el2"),
            hpfar: read_sysreg!("hpfar_el2"),
        }
    }

    unsafe fn vcpu_put(&self, vcpu: &mut VcpuContext) {
        sysreg::save_el1_nvhe(&mut vcpu.el1);
        // Stop the guest's virtual timer while the vCPU is not loaded; a software timer
        // stands in for it.
        write_sysreg!("cntv_ctl_el0", 0);
        if self.pauth {
            sysreg::save_pauth(&mut vcpu.pauth);
        }
        if vcpu.fp_loaded {
            fp::save(&mut vcpu.fp);
            vcpu.fp_loaded = false;
        }
        write_sysreg!("cptr_el2", controls::guest_cptr(false, false));
        write_sysreg!("hcr_el2", controls::HOST_HCR_NVHE);
        // SAFETY: ISB synchronises the context changes above; no memory effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }

    unsafe fn fp_trap(&self, vcpu: &mut VcpuContext) {
        write_sysreg!("cptr_el2", controls::guest_cptr(false, true));
        // SAFETY: ISB makes the CPTR_EL2 write visible before the FP accesses below.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
        fp::restore(&vcpu.fp);
        vcpu.fp_loaded = true;
    }

    // Between vcpu_load and vcpu_put the live registers are authoritative (plain EL1 names
    // at EL2 without E2H).
    fn el1_read(&self, _vcpu: &VcpuContext, reg: El1Reg) -> u64 {
        match reg {
            El1Reg::Sctlr => read_sysreg!("sctlr_el1"),
            El1Reg::Esr => read_sysreg!("esr_el1"),
            El1Reg::Far => read_sysreg!("far_el1"),
            El1Reg::Elr => read_sysreg!("elr_el1"),
            El1Reg::Spsr => read_sysreg!("spsr_el1"),
            El1Reg::Vbar => read_sysreg!("vbar_el1"),
            El1Reg::Tcr => read_sysreg!("tcr_el1"),
            El1Reg::Ttbr0 => read_sysreg!("ttbr0_el1"),
            El1Reg::Ttbr1 => read_sysreg!("ttbr1_el1"),
            El1Reg::Mair => read_sysreg!("mair_el1"),
            El1Reg::SpEl1 => read_sysreg!("sp_el1"),
        }
    }

    fn el1_write(&self, _vcpu: &mut VcpuContext, reg: El1Reg, value: u64) {
        match reg {
            El1Reg::Sctlr => write_sysreg!("sctlr_el1", value),
            El1Reg::Esr => write_sysreg!("esr_el1", value),
            El1Reg::Far => write_sysreg!("far_el1", value),
            El1Reg::Elr => write_sysreg!("elr_el1", value),
            El1Reg::Spsr => write_sysreg!("spsr_el1", value),
            El1Reg::Vbar => write_sysreg!("vbar_el1", value),
            El1Reg::Tcr => write_sysreg!("tcr_el1", value),
            El1Reg::Ttbr0 => write_sysreg!("ttbr0_el1", value),
            El1Reg::Ttbr1 => write_sysreg!("ttbr1_el1", value),
            El1Reg::Mair => write_sysreg!("mair_el1", value),
            El1Reg::SpEl1 => write_sysreg!("sp_el1", value),
        }
    }
}

/// Maps the entry path's exit code to [`ExitKind`].
pub(crate) fn exit_kind(code: u64) -> ExitKind {
    match code {
        entry::EXIT_SYNC => ExitKind::Sync,
        entry::EXIT_IRQ => ExitKind::Irq,
        entry::EXIT_FIQ => ExitKind::Fiq,
        entry::EXIT_SERROR => ExitKind::SError,
        _ => ExitKind::SError,
    }
}
