//! CP15 registers the runtime implements with the hardware's AArch64 EL1 registers
//! (`dbt_armv7::cpu::CoprocHost`), so the guest's timer and GIC CPU interface are the
//! VM's own, the ones the hypervisor virtualizes for an AArch64 guest:
//!
//! - the generic timer: `CNTV_CTL`/`CNTV_TVAL`/`CNTV_CVAL` -> `CNTV_*_EL0` (the EL1 virtual
//!   timer, whose PPI the hypervisor forwards through the vGIC), `CNTP_*` -> `CNTP_*_EL0`
//!   (the hypervisor's emulated physical timer), `CNTVCT`/`CNTPCT` -> `CNTVCT_EL0`/
//!   `CNTPCT_EL0`; `CNTFRQ`/`CNTKCTL` stay in the model (their PL0 access rules live there);
//! - `c15` (IMPLEMENTATION DEFINED) is UNDEFINED;
//! - `MPIDR` -> `MPIDR_EL1` (the hypervisor's `VMPIDR_EL2`, what the device tree names);
//! - GICv3 only (the guest's device tree has `arm,gic-v3`): the AArch32 `ICC_*` encodings
//!   (`p15, 0, <Rt>, c12, ...`, `c4, c6, 0` = `ICC_PMR`; `MCRR p15, {0,1,2}, c12` = the
//!   SGI registers) -> the AArch64 `ICC_*_EL1` registers, in the direction each allows
//!   (a read of a write-only register and the reverse stay UNDEFINED);
//! - the IRQ/FIQ inputs, sampled from `ISR_EL1` by the interpreter while the guest could
//!   take them (so an interrupt it just acknowledged is not taken again).

use aarch64_cpu::registers::*;
use dbt_armv7::cpu::{CoprocHost, SysCounter};

use crate::vectors::guest_sysreg;

/// The guest's view of the system counter: the VM's virtual count.
pub struct VirtualCounter;

impl SysCounter for VirtualCounter {
    fn count(&mut self) -> u64 {
        CNTVCT_EL0.get()
    }

    fn frequency(&self) -> u32 {
        CNTFRQ_EL0.get() as u32
    }
}

/// `ISR_EL1.I` and `.F`: a virtual IRQ/FIQ is pending for this vCPU.
pub const ISR_I: u64 = 1 << 7;
/// See [`ISR_I`].
pub const ISR_F: u64 = 1 << 6;

/// `ISR_EL1`: the virtual interrupts the vGIC presents to this vCPU now.
pub fn isr_el1() -> u64 {
    let isr: u64;
    // SAFETY: reads ISR_EL1, no side effect.
    unsafe { core::arch::asm!("mrs {}, isr_el1", out(reg) isr, options(nomem, nostack)) };
    isr
}

/// The host half of the guest's coprocessor registers.
pub struct Registers {
    /// The guest has a GICv3 (system-register CPU interface).
    pub gicv3: bool,
}

macro_rules! mrs {
    ($name:literal) => {{
        let v: u64;
        // SAFETY: reads an EL1-accessible system register with no side effect but the
        // architectural one (ICC_IAR acknowledges, as the guest asked).
        unsafe { core::arch::asm!(concat!("mrs {}, ", $name), out(reg) v, options(nostack)) };
        v
    }};
}

macro_rules! msr {
    ($name:literal, $v:expr) => {{
        let v: u64 = $v;
        // SAFETY: writes an EL1-accessible system register on the guest's behalf; these
        // registers affect only this VM (the hypervisor virtualizes them).
        unsafe { core::arch::asm!(concat!("msr ", $name, ", {}"), "isb", in(reg) v, options(nostack)) };
    }};
}

/// Reads the AArch64 `ICC_*` register of AArch32 encoding `(crn, crm, opc2)` (opc1 = 0).
fn icc_read(crn: u8, crm: u8, opc2: u8) -> Option<u64> {
    Some(match (crn, crm, opc2) {
        (4, 6, 0) => mrs!("icc_pmr_el1"),
        (12, 8, 0) => mrs!("icc_iar0_el1"),
        (12, 8, 2) => mrs!("icc_hppir0_el1"),
        (12, 8, 3) => mrs!("icc_bpr0_el1"),
        (12, 8, 4) => mrs!("icc_ap0r0_el1"),
        (12, 9, 0) => mrs!("icc_ap1r0_el1"),
        (12, 11, 3) => mrs!("icc_rpr_el1"),
        (12, 12, 0) => mrs!("icc_iar1_el1"),
        (12, 12, 2) => mrs!("icc_hppir1_el1"),
        (12, 12, 3) => mrs!("icc_bpr1_el1"),
        (12, 12, 4) => mrs!("icc_ctlr_el1"),
        (12, 12, 5) => mrs!("icc_sre_el1"),
        (12, 12, 6) => mrs!("icc_igrpen0_el1"),
        (12, 12, 7) => mrs!("icc_igrpen1_el1"),
        _ => return None,
    })
}

/// Writes the AArch64 `ICC_*` register of AArch32 encoding `(crn, crm, opc2)`.
fn icc_write(crn: u8, crm: u8, opc2: u8, v: u64) -> bool {
    match (crn, crm, opc2) {
        (4, 6, 0) => msr!("icc_pmr_el1", v),
        (12, 8, 1) => msr!("icc_eoir0_el1", v),
        (12, 8, 3) => msr!("icc_bpr0_el1", v),
        (12, 8, 4) => msr!("icc_ap0r0_el1", v),
        (12, 9, 0) => msr!("icc_ap1r0_el1", v),
        (12, 11, 1) => msr!("icc_dir_el1", v),
        (12, 12, 1) => msr!("icc_eoir1_el1", v),
        (12, 12, 3) => msr!("icc_bpr1_el1", v),
        (12, 12, 4) => msr!("icc_ctlr_el1", v),
        (12, 12, 5) => msr!("icc_sre_el1", v),
        (12, 12, 6) => msr!("icc_igrpen0_el1", v),
        (12, 12, 7) => msr!("icc_igrpen1_el1", v),
        _ => return false,
    }
    true
}

impl CoprocHost for Registers {
    fn undefined(&mut self, cp: u8, _opc1: u8, crn: u8, _crm: u8, _opc2: u8) -> bool {
        // IMPLEMENTATION DEFINED registers: UNDEFINED, as for a hardware AArch32 guest
        // (HCR_EL2.TIDCP) and under qemu-system-arm's cortex-a15.
        cp == 15 && crn == 15
    }

    fn read(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8) -> Option<u32> {
        if cp != 15 || opc1 != 0 {
            return None;
        }
        let v = match (crn, crm, opc2) {
            (0, 0, 5) => MPIDR_EL1.get(),
            (14, 2, 0) => CNTP_TVAL_EL0.get(),
            (14, 2, 1) => CNTP_CTL_EL0.get(),
            (14, 3, 0) => CNTV_TVAL_EL0.get(),
            (14, 3, 1) => CNTV_CTL_EL0.get(),
            (4 | 12, ..) if self.gicv3 => {
                let v = guest_sysreg(|| icc_read(crn, crm, opc2)).flatten()?;
                if (crn, crm, opc2) == (12, 12, 0) {
                    crate::sgi_count::note_acknowledged(v);
                }
                v
            }
            _ => return None,
        };
        Some(v as u32)
    }

    fn write(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8, value: u32) -> bool {
        if cp != 15 || opc1 != 0 {
            return false;
        }
        let v = u64::from(value);
        match (crn, crm, opc2) {
            // TVAL is a signed 32-bit offset from the count.
            (14, 2, 0) => CNTP_TVAL_EL0.set(value as i32 as i64 as u64),
            (14, 2, 1) => CNTP_CTL_EL0.set(v & 3),
            (14, 3, 0) => CNTV_TVAL_EL0.set(value as i32 as i64 as u64),
            (14, 3, 1) => CNTV_CTL_EL0.set(v & 3),
            // Refused by the hypervisor (UNDEFINED): the model makes it the guest's.
            (4 | 12, ..) if self.gicv3 => {
                return guest_sysreg(|| icc_write(crn, crm, opc2, v)).unwrap_or(false)
            }
            _ => return false,
        }
        true
    }

    fn read64(&mut self, cp: u8, opc1: u8, crm: u8) -> Option<u64> {
        if cp != 15 || crm != 14 {
            return None;
        }
        Some(match opc1 {
            0 => CNTPCT_EL0.get(),
            1 => CNTVCT_EL0.get(),
            2 => CNTP_CVAL_EL0.get(),
            3 => CNTV_CVAL_EL0.get(),
            _ => return None,
        })
    }

    fn interrupt_lines(&mut self) -> Option<(bool, bool)> {
        let isr = isr_el1();
        Some((isr & ISR_I != 0, isr & ISR_F != 0))
    }

    fn write64(&mut self, cp: u8, opc1: u8, crm: u8, value: u64) -> bool {
        if cp != 15 {
            return false;
        }
        match (crm, opc1) {
            (14, 2) => CNTP_CVAL_EL0.set(value),
            (14, 3) => CNTV_CVAL_EL0.set(value),
            // The SGI registers; one the hypervisor refuses (e.g. group 0 `ICC_SGI0R_EL1`)
            // is UNDEFINED for the guest (the model has no such 64-bit register).
            (12, 0) if self.gicv3 => {
                let sent = guest_sysreg(|| msr!("icc_sgi1r_el1", value)).is_some();
                if sent {
                    crate::sgi_count::note_sent(value, crate::mmu::shadow::vcpus());
                }
                return sent;
            }
            (12, 1) if self.gicv3 => {
                return guest_sysreg(|| msr!("icc_asgi1r_el1", value)).is_some()
            }
            (12, 2) if self.gicv3 => {
                return guest_sysreg(|| msr!("icc_sgi0r_el1", value)).is_some()
            }
            _ => return false,
        }
        true
    }
}
