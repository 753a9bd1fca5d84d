//! The AArch32-only part of a guest's EL1 context (`HCR_EL2.RW` = 0), switched only for
//! such vCPUs: the banked `SPSR`s of Abort, Undefined, IRQ and FIQ modes, `DACR32_EL2`,
//! `IFSR32_EL2` (one table, like `el1.rs`; these names are the same with and without VHE),
//! and `FPEXC32_EL2`.
//!
//! `FPEXC32_EL2` is switched eagerly with the vCPU while the FP/SIMD registers stay lazy:
//! with the guest's own `FPEXC.EN` loaded, a VFP instruction with `EN` = 0 is UNDEFINED at
//! the guest's EL1 (that check comes before `CPTR_EL2`'s, so Linux's own lazy VFP switch
//! sees what it expects), and one with `EN` = 1 traps to EL2 through `CPTR_EL2` until the
//! registers are loaded. EL2 reaches `FPEXC32_EL2` only with FP accesses untrapped, so the
//! accesses are bracketed by `CPTR_EL2` writes.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{CPTR_EL2, DACR32_EL2};
use tock_registers::interfaces::{Readable, Writeable};

use super::{controls, El1Reg};
use crate::sysreg::{FPEXC32_EL2, IFSR32_EL2, SPSR_ABT, SPSR_FIQ, SPSR_IRQ, SPSR_UND};
use crate::vcpu::El1SysRegs;

/// The AArch32 register file: `field (El1Reg variant): register;`.
macro_rules! aarch32_file {
    ($m:ident) => {
        $m! {
            spsr_abt (SpsrAbt): SPSR_ABT;
            spsr_und (SpsrUnd): SPSR_UND;
            spsr_irq (SpsrIrq): SPSR_IRQ;
            spsr_fiq (SpsrFiq): SPSR_FIQ;
            dacr32_el2 (Dacr32): DACR32_EL2;
            ifsr32_el2 (Ifsr32): IFSR32_EL2;
        }
    };
}

/// Saves the AArch32 registers from the hardware.
pub(super) fn save(r: &mut El1SysRegs) {
    macro_rules! save {
        ($($f:ident ($v:ident): $reg:ident;)*) => { $( r.$f = $reg.get(); )* };
    }
    aarch32_file!(save);
}

/// Loads the AArch32 registers into the hardware.
pub(super) fn restore(r: &El1SysRegs) {
    macro_rules! restore {
        ($($f:ident ($v:ident): $reg:ident;)*) => { $( $reg.set(r.$f); )* };
    }
    aarch32_file!(restore);
}

/// Reads the live copy of an AArch32 register; `None` for a register of the EL1 table.
pub(super) fn read(reg: El1Reg) -> Option<u64> {
    macro_rules! read {
        ($($f:ident ($v:ident): $reg:ident;)*) => {
            match reg {
                $( El1Reg::$v => Some($reg.get()), )*
                _ => None,
            }
        };
    }
    aarch32_file!(read)
}

/// Writes the live copy of an AArch32 register; false for a register of the EL1 table.
pub(super) fn write(reg: El1Reg, value: u64) -> bool {
    macro_rules! write {
        ($($f:ident ($v:ident): $reg:ident;)*) => {
            match reg {
                $( El1Reg::$v => { $reg.set(value); true } )*
                _ => false,
            }
        };
    }
    aarch32_file!(write)
}

/// Runs `f` with FP/SIMD accesses at EL2 untrapped, then installs `cptr_after`.
fn with_fp_untrapped<const VHE: bool, T>(f: impl FnOnce() -> T, cptr_after: u64) -> T {
    CPTR_EL2.set(controls::guest_cptr(VHE, true));
    // The CPTR_EL2 write takes effect before the FPEXC32_EL2 access.
    barrier::isb(barrier::SY);
    let r = f();
    CPTR_EL2.set(cptr_after);
    r
}

/// Loads the guest's `FPEXC32_EL2`, leaving `CPTR_EL2` = `cptr` (the caller's ISB makes it
/// take effect).
pub(super) fn load_fpexc<const VHE: bool>(fpexc: u64, cptr: u64) {
    with_fp_untrapped::<VHE, _>(|| FPEXC32_EL2.set(fpexc), cptr)
}

/// Reads the guest's `FPEXC32_EL2`, leaving `CPTR_EL2` = `cptr`.
pub(super) fn save_fpexc<const VHE: bool>(cptr: u64) -> u64 {
    with_fp_untrapped::<VHE, _>(|| FPEXC32_EL2.get(), cptr)
}
