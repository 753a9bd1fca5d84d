//! The world switch: one trait, two backends, one body.
//!
//! - `nvhe::NonVhe` (ARMv8.0, e.g. Cortex-A57): the hypervisor runs in the EL2 regime
//!   (`HCR_EL2.E2H=0`). The guest's EL1 system registers, pointer-auth keys, traps and
//!   stage 2 are loaded in `vcpu_load` and switched back in `vcpu_put`, not on every exit:
//!   unlike KVM's split mode (seed `000`) no host runs at EL1 between exits. An embedder
//!   that runs code at EL1 between exits needs the per-exit switch of seed `000`.
//! - `vhe::Vhe` (ARMv8.1 FEAT_VHE, `HCR_EL2.E2H=1`): after seed `002`, the guest's EL1
//!   registers stay loaded across exits and are saved only on `vcpu_put`; traps and stage 2
//!   stay enabled while the hypervisor handles an exit.
//!
//! Both are `Switch<VHE>` (`backend.rs`): one save/restore sequence, with what differs
//! chosen by `VHE` at compile time — the guest's EL1 register names (`el1.rs`: EL1 names or
//! `*_EL12` aliases) and the E2H-dependent control values ([`controls`]).
//!
//! The run loop is the same for both:
//! `vcpu_load; loop { let exit = run(vcpu); handle(exit) }; vcpu_put`.
//! Between `vcpu_load` and `vcpu_put`, guest EL1 registers are read and written through
//! [`WorldSwitch::el1_read`] / [`WorldSwitch::el1_write`], which know where the live copy is.

pub mod controls;
pub mod errata;

#[cfg(target_arch = "aarch64")]
mod aarch32;
#[cfg(target_arch = "aarch64")]
mod backend;
#[cfg(target_arch = "aarch64")]
mod el1;
#[cfg(target_arch = "aarch64")]
mod entry;
#[cfg(target_arch = "aarch64")]
mod fp;
#[cfg(target_arch = "aarch64")]
pub mod nvhe;
#[cfg(target_arch = "aarch64")]
pub mod vhe;

#[cfg(target_arch = "aarch64")]
pub use backend::{run_loaded, Switch};
#[cfg(target_arch = "aarch64")]
pub use entry::{vector_table_address, HostExceptionFrame};

use crate::vcpu::VcpuContext;

/// Which world-switch backend runs the guests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// ARMv8.0 split-regime world switch (`HCR_EL2.E2H=0`).
    NonVhe,
    /// ARMv8.1 Virtualization Host Extensions (`HCR_EL2.E2H=1`).
    Vhe,
}

impl Backend {
    /// Short name used in logs and on the command line ("nvhe" / "vhe").
    pub fn name(self) -> &'static str {
        match self {
            Backend::NonVhe => "nvhe",
            Backend::Vhe => "vhe",
        }
    }

    /// Picks the backend: VHE when the CPU has it (`ID_AA64MMFR1_EL1.VH`) unless the user
    /// forced non-VHE. Forcing VHE on a CPU without it falls back to non-VHE.
    pub fn choose(cpu_has_vhe: bool, request: BackendRequest) -> Backend {
        match (request, cpu_has_vhe) {
            (BackendRequest::NonVhe, _) | (_, false) => Backend::NonVhe,
            (BackendRequest::Vhe | BackendRequest::Auto, true) => Backend::Vhe,
        }
    }
}

/// What the user asked for (`backend=auto|vhe|nvhe` on the hypervisor command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendRequest {
    /// Use VHE if the CPU has it.
    #[default]
    Auto,
    /// Use VHE (falls back to non-VHE, with a warning, if the CPU lacks it).
    Vhe,
    /// Use non-VHE even on a VHE CPU.
    NonVhe,
}

impl BackendRequest {
    /// Parses "auto", "vhe" or "nvhe".
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "vhe" => Some(Self::Vhe),
            "nvhe" | "non-vhe" => Some(Self::NonVhe),
            _ => None,
        }
    }
}

/// How the guest left: the exception kind plus the syndrome registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawExit {
    /// Synchronous exception, IRQ, FIQ or SError.
    pub kind: ExitKind,
    /// `ESR_EL2` (meaningful for synchronous exits).
    pub esr: u64,
    /// `FAR_EL2`.
    pub far: u64,
    /// `HPFAR_EL2`.
    pub hpfar: u64,
}

/// The vector through which the guest left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// Synchronous exception (trap, abort, HVC, SMC...): decode `ESR_EL2`.
    Sync,
    /// A physical IRQ routed to EL2 (`HCR_EL2.IMO`).
    Irq,
    /// A physical FIQ routed to EL2 (`HCR_EL2.FMO`).
    Fiq,
    /// An SError routed to EL2 (`HCR_EL2.AMO`).
    SError,
}

/// Guest EL1 registers the exit handlers need to read or change (exception injection,
/// emulation). Where the live copy is depends on the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // each variant is the register of the same name
pub enum El1Reg {
    Sctlr,
    Esr,
    Far,
    Elr,
    Spsr,
    Vbar,
    Tcr,
    Ttbr0,
    Ttbr1,
    Mair,
    SpEl1,
    /// `CNTV_CTL_EL0`: the guest's virtual timer control (live while loaded).
    CntvCtl,
    /// `CNTV_CVAL_EL0`: the guest's virtual timer compare value.
    CntvCval,
    // AArch32 EL1 vCPUs only (`HCR_EL2.RW` = 0).
    SpsrAbt,
    SpsrUnd,
    SpsrIrq,
    SpsrFiq,
    Dacr32,
    Ifsr32,
}

/// The world switch. A backend is a stateless strategy; all state lives in
/// [`VcpuContext`]. Methods are `unsafe` where they program EL2 hardware: they must run at
/// EL2 on the CPU that runs the vCPU, with the vCPU loaded (between `vcpu_load` and
/// `vcpu_put`) where stated.
pub trait WorldSwitch: Sync {
    /// Which backend this is.
    fn backend(&self) -> Backend;

    /// Makes `vcpu` the current vCPU of this physical CPU: installs its per-VM EL2
    /// controls, and (VHE) its EL1 registers.
    ///
    /// # Safety
    /// At EL2 on the CPU that will run `vcpu`; no other vCPU loaded.
    unsafe fn vcpu_load(&self, vcpu: &mut VcpuContext);

    /// Runs the loaded vCPU until it exits to EL2.
    ///
    /// # Safety
    /// `vcpu` must be the vCPU last loaded on this CPU by `vcpu_load`.
    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit;

    /// Saves everything still live in hardware into `vcpu` (EL1 registers on VHE, FP/SIMD
    /// state when loaded) so it can move to another CPU or be inspected.
    ///
    /// # Safety
    /// `vcpu` must be the loaded vCPU.
    unsafe fn vcpu_put(&self, vcpu: &mut VcpuContext);

    /// Handles the guest's first FP/SIMD access (`ESR_EL2.EC == 0x07`): loads its FP state
    /// and stops trapping until `vcpu_put`.
    ///
    /// # Safety
    /// `vcpu` must be the loaded vCPU.
    unsafe fn fp_trap(&self, vcpu: &mut VcpuContext);

    /// Reads a guest EL1 register wherever it currently lives.
    fn el1_read(&self, vcpu: &VcpuContext, reg: El1Reg) -> u64;

    /// Writes a guest EL1 register wherever it currently lives.
    fn el1_write(&self, vcpu: &mut VcpuContext, reg: El1Reg, value: u64);
}

/// Field of [`crate::vcpu::El1SysRegs`] that holds `reg`.
pub fn el1_field(regs: &mut crate::vcpu::El1SysRegs, reg: El1Reg) -> &mut u64 {
    match reg {
        El1Reg::Sctlr => &mut regs.sctlr_el1,
        El1Reg::Esr => &mut regs.esr_el1,
        El1Reg::Far => &mut regs.far_el1,
        El1Reg::Elr => &mut regs.elr_el1,
        El1Reg::Spsr => &mut regs.spsr_el1,
        El1Reg::Vbar => &mut regs.vbar_el1,
        El1Reg::Tcr => &mut regs.tcr_el1,
        El1Reg::Ttbr0 => &mut regs.ttbr0_el1,
        El1Reg::Ttbr1 => &mut regs.ttbr1_el1,
        El1Reg::Mair => &mut regs.mair_el1,
        El1Reg::SpEl1 => &mut regs.sp_el1,
        El1Reg::CntvCtl => &mut regs.cntv_ctl_el0,
        El1Reg::CntvCval => &mut regs.cntv_cval_el0,
        El1Reg::SpsrAbt => &mut regs.spsr_abt,
        El1Reg::SpsrUnd => &mut regs.spsr_und,
        El1Reg::SpsrIrq => &mut regs.spsr_irq,
        El1Reg::SpsrFiq => &mut regs.spsr_fiq,
        El1Reg::Dacr32 => &mut regs.dacr32_el2,
        El1Reg::Ifsr32 => &mut regs.ifsr32_el2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_choice() {
        assert_eq!(Backend::choose(true, BackendRequest::Auto), Backend::Vhe);
        assert_eq!(
            Backend::choose(false, BackendRequest::Auto),
            Backend::NonVhe
        );
        assert_eq!(
            Backend::choose(true, BackendRequest::NonVhe),
            Backend::NonVhe
        );
        assert_eq!(Backend::choose(false, BackendRequest::Vhe), Backend::NonVhe);
        assert_eq!(BackendRequest::parse("nvhe"), Some(BackendRequest::NonVhe));
        assert_eq!(BackendRequest::parse("bogus"), None);
    }
}
