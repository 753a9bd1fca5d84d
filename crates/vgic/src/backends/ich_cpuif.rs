//! The live GICv3 virtual CPU interface of this physical CPU as a
//! [`VirtualCpuInterface`] (for [`crate::cpuif_trap`]), and the `ICH_HCR_EL2` trap bits that
//! send a guest's `ICC_*` accesses there. Only built for AArch64; needs `ICC_SRE_EL2.SRE` = 1.

use aarch64_cpu::registers::{
    ICH_AP0R0_EL2, ICH_AP0R1_EL2, ICH_AP0R2_EL2, ICH_AP0R3_EL2, ICH_AP1R0_EL2, ICH_AP1R1_EL2,
    ICH_AP1R2_EL2, ICH_AP1R3_EL2, ICH_HCR_EL2, ICH_VMCR_EL2, ICH_VTR_EL2,
};
use tock_registers::interfaces::{Readable, Writeable};

use super::gicv3::IchBackend;
use crate::cpuif_trap::{Group, VirtualCpuInterface};
use crate::lr::{ListRegisters, LrEntry};

/// `ICH_HCR_EL2.TC`: trap the registers common to both groups (`ICC_PMR_EL1`,
/// `ICC_CTLR_EL1`, `ICC_DIR_EL1`, `ICC_RPR_EL1`, the SGI registers).
pub const ICH_HCR_TC: u64 = 1 << 10;
/// `ICH_HCR_EL2.TALL0`: trap every group-0 register.
pub const ICH_HCR_TALL0: u64 = 1 << 11;
/// `ICH_HCR_EL2.TALL1`: trap every group-1 register.
pub const ICH_HCR_TALL1: u64 = 1 << 12;
/// `ICH_HCR_EL2.EOIcount` increment.
const ICH_HCR_EOICOUNT_ONE: u64 = 1 << 27;

/// Sets `ICH_HCR_EL2.TC`, `TALL0` and `TALL1` on this CPU: every guest access to its GICv3 CPU
/// interface traps to EL2 (EC 0x18). The other `ICH_HCR_EL2` bits are kept.
///
/// # Safety
/// At EL2 with the GICv3 system-register interface enabled (`ICC_SRE_EL2.SRE` = 1).
pub unsafe fn trap_guest_cpuif() {
    ICH_HCR_EL2.set(ICH_HCR_EL2.get() | ICH_HCR_TC | ICH_HCR_TALL0 | ICH_HCR_TALL1);
}

/// The `ICH_*_EL2` registers of the CPU this runs on, holding the loaded vCPU's interface.
pub struct IchCpuIf {
    lrs: IchBackend,
}

impl IchCpuIf {
    /// The live interface.
    ///
    /// # Safety
    /// As for [`trap_guest_cpuif`]; the registers must hold the vCPU being emulated (between
    /// its vGIC load and put).
    pub unsafe fn new() -> Self {
        // SAFETY: the caller's contract is `IchBackend::new`'s.
        IchCpuIf {
            lrs: unsafe { IchBackend::new() },
        }
    }
}

/// Runs `$body` with `$r` bound to `ICH_AP<g>R<n>_EL2` (names are compile-time).
macro_rules! with_apr {
    ($g:expr, $n:expr, $r:ident => $body:expr) => {
        match ($g, $n) {
            (Group::G0, 0) => {
                let $r = ICH_AP0R0_EL2;
                $body
            }
            (Group::G0, 1) => {
                let $r = ICH_AP0R1_EL2;
                $body
            }
            (Group::G0, 2) => {
                let $r = ICH_AP0R2_EL2;
                $body
            }
            (Group::G0, _) => {
                let $r = ICH_AP0R3_EL2;
                $body
            }
            (Group::G1, 0) => {
                let $r = ICH_AP1R0_EL2;
                $body
            }
            (Group::G1, 1) => {
                let $r = ICH_AP1R1_EL2;
                $body
            }
            (Group::G1, 2) => {
                let $r = ICH_AP1R2_EL2;
                $body
            }
            (Group::G1, _) => {
                let $r = ICH_AP1R3_EL2;
                $body
            }
        }
    };
}

impl VirtualCpuInterface for IchCpuIf {
    fn vtr(&self) -> u64 {
        ICH_VTR_EL2.get()
    }
    fn vmcr(&self) -> u64 {
        ICH_VMCR_EL2.get()
    }
    fn set_vmcr(&mut self, value: u64) {
        ICH_VMCR_EL2.set(value);
    }
    fn lr(&self, i: usize) -> LrEntry {
        self.lrs.read_lr(i)
    }
    fn set_lr(&mut self, i: usize, e: LrEntry) {
        self.lrs.write_lr(i, e);
    }
    fn apr(&self, group: Group, n: usize) -> u32 {
        // Callers stay below the implemented count (`ICH_VTR_EL2.PREbits`).
        with_apr!(group, n.min(3), r => r.get() as u32)
    }
    fn set_apr(&mut self, group: Group, n: usize, value: u32) {
        with_apr!(group, n.min(3), r => r.set(u64::from(value)))
    }
    fn bump_eoicount(&mut self) {
        ICH_HCR_EL2.set(ICH_HCR_EL2.get().wrapping_add(ICH_HCR_EOICOUNT_ONE));
    }
    fn deactivate_physical(&mut self, pintid: u32) {
        // The host runs with ICC_CTLR_EL1.EOImode = 1: ICC_DIR_EL1 deactivates.
        // SAFETY: a write of ICC_DIR_EL1 (S3_0_C12_C11_1) at EL2 deactivates the host's
        // physical interrupt `pintid`, which the guest's hardware-mapped list register owned.
        unsafe {
            core::arch::asm!("msr S3_0_C12_C11_1, {}", in(reg) u64::from(pintid), options(nostack))
        };
    }
}
