//! Non-VHE (ARMv8.0) world switch, `HCR_EL2.E2H = 0`.
//!
//! Follows the split-mode design of seed `000`: on every entry the guest's EL1 system
//! registers are restored and the guest's traps and stage 2 are switched on; on every exit
//! the EL1 registers are saved and traps and stage 2 are switched off again. FP/SIMD is
//! switched lazily (`CPTR_EL2.TFP`).

use super::{controls, el1_field, entry, fp, sysreg, El1Reg, ExitKind, RawExit, WorldSwitch};
use crate::vcpu::VcpuContext;
use crate::{read_sysreg, write_sysreg};

/// The ARMv8.0 backend.
#[derive(Debug, Clone, Copy)]
pub struct NonVhe {
    /// The CPU implements pointer authentication: switch the keys.
    pub pauth: bool,
}

impl NonVhe {
    fn activate_traps(&self, vcpu: &VcpuContext) {
        let c = &vcpu.controls;
        write_sysreg!("vttbr_el2", c.vttbr_el2);
        write_sysreg!("cptr_el2", controls::guest_cptr(false, vcpu.fp_loaded));
        write_sysreg!("cnthctl_el2", controls::guest_cnthctl(false));
        write_sysreg!("hcr_el2", c.hcr_el2);
    }

    fn deactivate_traps(&self) {
        write_sysreg!("hcr_el2", controls::HOST_HCR_NVHE);
        // SAFETY: ISB only synchronises context; no memory effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }
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
    }

    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit {
        self.activate_traps(vcpu);
        sysreg::restore_el1_nvhe(&vcpu.el1);
        if self.pauth {
            sysreg::restore_pauth(&vcpu.pauth);
        }
        // SAFETY: EL2 is configured for this vCPU just above; VBAR_EL2 points at the
        // vectors (set at boot); `vcpu.regs` outlives the call.
        let kind = unsafe { entry::enter_guest(&mut vcpu.regs) };
        let exit = RawExit {
            kind: exit_kind(kind),
            esr: read_sysreg!("esr_el2"),
            far: read_sysreg!("far_el2"),
            hpfar: read_sysreg!("hpfar_el2"),
        };
        sysreg::save_el1_nvhe(&mut vcpu.el1);
        if self.pauth {
            sysreg::save_pauth(&mut vcpu.pauth);
        }
        self.deactivate_traps();
        exit
    }

    unsafe fn vcpu_put(&self, vcpu: &mut VcpuContext) {
        // The guest's CNTV_* were saved at the last exit; stop its timer so it cannot fire
        // while the vCPU is not loaded (a software timer stands in for it).
        write_sysreg!("cntv_ctl_el0", 0);
        if vcpu.fp_loaded {
            fp::save(&mut vcpu.fp);
            vcpu.fp_loaded = false;
            write_sysreg!("cptr_el2", controls::guest_cptr(false, false));
        }
    }

    unsafe fn fp_trap(&self, vcpu: &mut VcpuContext) {
        write_sysreg!("cptr_el2", controls::guest_cptr(false, true));
        // SAFETY: ISB makes the CPTR_EL2 write visible before the FP accesses below.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
        fp::restore(&vcpu.fp);
        vcpu.fp_loaded = true;
    }

    fn el1_read(&self, vcpu: &VcpuContext, reg: El1Reg) -> u64 {
        // Between exits the saved copy is authoritative on this backend.
        let mut r = vcpu.el1;
        *el1_field(&mut r, reg)
    }

    fn el1_write(&self, vcpu: &mut VcpuContext, reg: El1Reg, value: u64) {
        *el1_field(&mut vcpu.el1, reg) = value;
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
