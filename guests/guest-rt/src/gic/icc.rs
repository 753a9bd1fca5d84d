//! GICv3 CPU interface system registers used at EL1 (`ICC_*_EL1`).

use core::arch::asm;

/// `ICC_SRE_EL1.SRE`: system register interface enabled.
pub const SRE_SRE: u64 = 1 << 0;
/// `ICC_CTLR_EL1.EOImode` (bit 1): 0 = EOI drops priority *and* deactivates.
pub const CTLR_EOIMODE: u64 = 1 << 1;

macro_rules! sysreg_read {
    ($read:ident, $name:literal) => {
        #[doc = concat!("Reads `", $name, "`.")]
        pub fn $read() -> u64 {
            let v: u64;
            // SAFETY: the GICv3 CPU interface registers are accessible at EL1 once
            // `ICC_SRE_EL1.SRE` is set (the driver sets it first); reads have no side effects.
            unsafe { asm!(concat!("mrs {}, ", $name), out(reg) v, options(nomem, nostack)) };
            v
        }
    };
}

macro_rules! sysreg_write {
    ($write:ident, $name:literal) => {
        #[doc = concat!("Writes `", $name, "` (then `ISB`).")]
        pub fn $write(v: u64) {
            // SAFETY: as for the reads; the caller passes a value valid for the register.
            unsafe { asm!(concat!("msr ", $name, ", {}"), "isb", in(reg) v, options(nostack)) };
        }
    };
}

sysreg_read!(sre, "icc_sre_el1");
sysreg_write!(set_sre, "icc_sre_el1");
sysreg_read!(ctlr, "icc_ctlr_el1");
sysreg_write!(set_ctlr, "icc_ctlr_el1");
sysreg_read!(pmr_raw, "icc_pmr_el1");
sysreg_write!(set_pmr_raw, "icc_pmr_el1");
sysreg_write!(set_bpr1, "icc_bpr1_el1");
sysreg_write!(set_igrpen1, "icc_igrpen1_el1");

/// Sets `ICC_PMR_EL1`.
pub fn set_pmr(pmr: u8) {
    set_pmr_raw(u64::from(pmr));
}

/// Reads `ICC_PMR_EL1`.
pub fn pmr() -> u8 {
    pmr_raw() as u8
}

/// Acknowledges: reads `ICC_IAR1_EL1`.
pub fn iar1() -> u32 {
    let v: u64;
    // SAFETY: reading IAR1 acknowledges the interrupt the caller is about to handle; it has
    // no memory effects. The DSB-free sequence is fine: the handler runs after the read.
    unsafe { asm!("mrs {}, icc_iar1_el1", out(reg) v, options(nostack)) };
    v as u32
}

/// Ends an interrupt: writes `ICC_EOIR1_EL1` (then `ISB`).
pub fn eoir1(raw: u32) {
    // SAFETY: writing back the INTID acknowledged by `iar1` is the architected EOI.
    unsafe { asm!("msr icc_eoir1_el1, {}", "isb", in(reg) u64::from(raw), options(nostack)) };
}

/// Sends group-1 SGI `intid` to the single CPU with affinity `mpidr` (`ICC_SGI1R_EL1`):
/// Aff3 [55:48], Aff2 [39:32], Aff1 [23:16], RS [47:44] = Aff0 / 16, TargetList bit Aff0 % 16.
pub fn send_sgi1(intid: u32, mpidr: u64) {
    let aff0 = mpidr & 0xff;
    let aff1 = (mpidr >> 8) & 0xff;
    let aff2 = (mpidr >> 16) & 0xff;
    let aff3 = (mpidr >> 32) & 0xff;
    let v = (aff3 << 48)
        | ((aff0 / 16) << 44)
        | (aff2 << 32)
        | ((u64::from(intid) & 0xf) << 24)
        | (aff1 << 16)
        | (1 << (aff0 % 16));
    // SAFETY: a write to ICC_SGI1R_EL1 only generates the SGI described; the DSB makes
    // earlier memory writes visible to the target before it can take the SGI.
    unsafe { asm!("dsb ishst", "msr icc_sgi1r_el1, {}", "isb", in(reg) v, options(nostack)) };
}
