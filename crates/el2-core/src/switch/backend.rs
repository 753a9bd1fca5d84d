//! The world switch, written once for both backends — as Linux's
//! `hyp/include/hyp/switch.h` is shared by `hyp/vhe/switch.c` and `hyp/nvhe/switch.c`.
//!
//! [`Switch<VHE>`] is the whole backend; `vhe::Vhe` and `nvhe::NonVhe` name its two
//! instances. The sequence (which registers, in which order, when) is the same for both;
//! what `VHE` chooses, at compile time, is data:
//! - how EL2 names the guest's EL1 registers: the EL1 names, or the `*_EL12`/`*_EL02`
//!   aliases (`el1.rs`, one table with both columns);
//! - the `HCR_EL2.E2H`-dependent layouts of `CPTR_EL2` and `CNTHCTL_EL2`, and the host's
//!   `HCR_EL2` (`E2H` + `TGE` with VHE) — [`super::controls`].
//!
//! `vcpu_load` installs the guest's EL1 registers, stage 2, traps and pointer-auth keys (EL1
//! translation state before `VTTBR_EL2` and the traps, the order KVM keeps for the
//! Cortex-A57/A72 speculative-AT errata; the keys, which nothing at EL2 uses, last). They
//! stay live across exits, so an exit costs the general registers and three syndrome reads;
//! `vcpu_put` saves them and gives EL2 back its host controls.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    CNTHCTL_EL2, CNTVOFF_EL2, CPTR_EL2, ESR_EL2, FAR_EL2, HCR_EL2, HPFAR_EL2, VMPIDR_EL2, VTTBR_EL2,
};
use tock_registers::interfaces::{Readable, Writeable};

use super::{
    aarch32, controls, el1, entry, errata, fp, Backend, El1Reg, ExitKind, RawExit, WorldSwitch,
};
use crate::sysreg::VPIDR_EL2;
use crate::vcpu::VcpuContext;

/// A world-switch backend: `VHE` = true runs the hypervisor with `HCR_EL2.E2H` = 1 (ARMv8.1
/// FEAT_VHE), false in the ARMv8.0 EL2 regime. Stateless apart from `pauth`; constructing
/// one touches no hardware.
#[derive(Debug, Clone, Copy)]
pub struct Switch<const VHE: bool> {
    /// The CPU implements pointer authentication: switch the keys.
    pub pauth: bool,
}

impl<const VHE: bool> WorldSwitch for Switch<VHE> {
    fn backend(&self) -> Backend {
        if VHE {
            Backend::Vhe
        } else {
            Backend::NonVhe
        }
    }

    unsafe fn vcpu_load(&self, vcpu: &mut VcpuContext) {
        let c = &vcpu.controls;
        VMPIDR_EL2.set(c.vmpidr_el2);
        VPIDR_EL2.set(c.vpidr_el2);
        CNTVOFF_EL2.set(c.cntvoff_el2);
        // Arm 1319367 (non-VHE): EL1 walks stay blocked until stage 2 is the guest's.
        let block_walks = !VHE && errata::enabled(errata::SPECULATIVE_AT);
        if block_walks {
            let mut staged = vcpu.el1;
            staged.sctlr_el1 = errata::block_el1_walks();
            staged.tcr_el1 |= errata::TCR_EPD_BOTH;
            el1::restore::<VHE>(&staged);
        } else {
            el1::restore::<VHE>(&vcpu.el1);
        }
        VTTBR_EL2.set(c.vttbr_el2);
        if errata::enabled(errata::ICACHE_AFTER_VTTBR) {
            errata::invalidate_icache_local();
        }
        let cptr = controls::guest_cptr(VHE, vcpu.fp_loaded);
        if c.el1_is_aarch32() {
            aarch32::restore(&vcpu.el1);
            aarch32::load_fpexc::<VHE>(vcpu.fp.fpexc32, cptr);
        } else {
            CPTR_EL2.set(cptr);
        }
        CNTHCTL_EL2.set(controls::guest_cnthctl(VHE));
        HCR_EL2.set(c.hcr());
        if block_walks {
            errata::unblock_el1_walks(vcpu.el1.sctlr_el1, vcpu.el1.tcr_el1);
        }
        if self.pauth {
            el1::restore_pauth(&vcpu.pauth);
        }
        barrier::isb(barrier::SY);
    }

    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit {
        // SAFETY: as for `run` (the caller's contract).
        unsafe { run_loaded(vcpu) }
    }

    unsafe fn vcpu_put(&self, vcpu: &mut VcpuContext) {
        el1::save::<VHE>(&mut vcpu.el1);
        // Stop the guest's virtual timer while the vCPU is not loaded; a software timer
        // stands in for it.
        el1::stop_vtimer::<VHE>();
        if self.pauth {
            el1::save_pauth(&mut vcpu.pauth);
        }
        if vcpu.controls.el1_is_aarch32() {
            aarch32::save(&mut vcpu.el1);
            let cptr = controls::guest_cptr(VHE, vcpu.fp_loaded);
            vcpu.fp.fpexc32 = aarch32::save_fpexc::<VHE>(cptr);
        }
        if vcpu.fp_loaded {
            fp::save(&mut vcpu.fp);
            vcpu.fp_loaded = false;
        }
        CPTR_EL2.set(controls::guest_cptr(VHE, false));
        HCR_EL2.set(controls::host_hcr(VHE));
        barrier::isb(barrier::SY);
    }

    unsafe fn fp_trap(&self, vcpu: &mut VcpuContext) {
        CPTR_EL2.set(controls::guest_cptr(VHE, true));
        // The CPTR_EL2 write takes effect before the FP accesses below.
        barrier::isb(barrier::SY);
        fp::restore(&vcpu.fp);
        vcpu.fp_loaded = true;
    }

    fn el1_read(&self, _vcpu: &VcpuContext, reg: El1Reg) -> u64 {
        // Between vcpu_load and vcpu_put the live registers are authoritative.
        el1::read::<VHE>(reg)
    }

    fn el1_write(&self, _vcpu: &mut VcpuContext, reg: El1Reg, value: u64) {
        el1::write::<VHE>(reg, value)
    }
}

/// [`WorldSwitch::run`] of both backends (entering the guest does not depend on `E2H`: all
/// of it was set up by `vcpu_load`), callable without the trait object so a run loop can
/// have it inlined.
///
/// # Safety
/// As for [`WorldSwitch::run`]: `vcpu` is the vCPU last loaded on this CPU.
#[inline(always)]
pub unsafe fn run_loaded(vcpu: &mut VcpuContext) -> RawExit {
    // SAFETY: vcpu_load configured EL1 and EL2 for this vCPU and nothing has changed them
    // since; VBAR_EL2 points at the vectors (set at boot); `vcpu.regs` outlives the call.
    let kind = unsafe { entry::enter_guest(&mut vcpu.regs) };
    RawExit {
        kind: exit_kind(kind),
        esr: ESR_EL2.get(),
        far: FAR_EL2.get(),
        hpfar: HPFAR_EL2.get(),
    }
}

/// Maps the entry path's exit code to [`ExitKind`].
#[inline(always)]
fn exit_kind(code: u64) -> ExitKind {
    // The vectors only return 0..=3 (the low two bits of the vector's slot).
    match code & 3 {
        entry::EXIT_SYNC => ExitKind::Sync,
        entry::EXIT_IRQ => ExitKind::Irq,
        entry::EXIT_FIQ => ExitKind::Fiq,
        // entry::EXIT_SERROR
        _ => ExitKind::SError,
    }
}
