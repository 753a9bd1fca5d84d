//! The assembly both EL1 vectors (`vectors.rs`: `dbt_rt_trap`, `irq.rs`: `dbt_rt_irq`)
//! use to keep the interrupted context's general-purpose registers, `ELR_EL1` and
//! `SPSR_EL1` in the 272-byte frame at `sp` (x0-x29 at 0..240, x30 and `ELR_EL1` at 240,
//! `SPSR_EL1` at 256) and to put them back. The vector entry has stored x0 and x1 already.

/// Stores x2-x30, `ELR_EL1` and `SPSR_EL1` in the frame at `sp` (clobbers x1).
macro_rules! save_gprs_elr_spsr {
    () => {
        concat!(
            "stp x2, x3, [sp, #16]\n",
            "stp x4, x5, [sp, #32]\n",
            "stp x6, x7, [sp, #48]\n",
            "stp x8, x9, [sp, #64]\n",
            "stp x10, x11, [sp, #80]\n",
            "stp x12, x13, [sp, #96]\n",
            "stp x14, x15, [sp, #112]\n",
            "stp x16, x17, [sp, #128]\n",
            "stp x18, x19, [sp, #144]\n",
            "stp x20, x21, [sp, #160]\n",
            "stp x22, x23, [sp, #176]\n",
            "stp x24, x25, [sp, #192]\n",
            "stp x26, x27, [sp, #208]\n",
            "stp x28, x29, [sp, #224]\n",
            "mrs x1, elr_el1\n",
            "stp x30, x1, [sp, #240]\n",
            "mrs x1, spsr_el1\n",
            "str x1, [sp, #256]\n",
        )
    };
}
pub(crate) use save_gprs_elr_spsr;

/// Loads `SPSR_EL1`, `ELR_EL1` and x0-x30 back from the frame at `sp` (the reverse of
/// [`save_gprs_elr_spsr`]); `sp` is left at the frame.
macro_rules! restore_gprs_elr_spsr {
    () => {
        concat!(
            "ldr x1, [sp, #256]\n",
            "msr spsr_el1, x1\n",
            "ldp x30, x1, [sp, #240]\n",
            "msr elr_el1, x1\n",
            "ldp x0, x1, [sp]\n",
            "ldp x2, x3, [sp, #16]\n",
            "ldp x4, x5, [sp, #32]\n",
            "ldp x6, x7, [sp, #48]\n",
            "ldp x8, x9, [sp, #64]\n",
            "ldp x10, x11, [sp, #80]\n",
            "ldp x12, x13, [sp, #96]\n",
            "ldp x14, x15, [sp, #112]\n",
            "ldp x16, x17, [sp, #128]\n",
            "ldp x18, x19, [sp, #144]\n",
            "ldp x20, x21, [sp, #160]\n",
            "ldp x22, x23, [sp, #176]\n",
            "ldp x24, x25, [sp, #192]\n",
            "ldp x26, x27, [sp, #208]\n",
            "ldp x28, x29, [sp, #224]\n",
        )
    };
}
pub(crate) use restore_gprs_elr_spsr;
