//! The guest-visible abort kernels (MMU on): loads from a section the guest's table leaves
//! invalid or gives no access (`dabt`: Data Aborts) and `BLX`es into an execute-never
//! section (`pabt`: Prefetch Aborts). Their handlers (`rt.rs`, Abort mode) fold what they
//! see (`DFSR`/`DFAR` or `IFSR`/`IFAR`, and `LR_abt`) into [`ABORT_SUM`], the kernels'
//! result, so a wrong fault status, address or return address changes the result the bench
//! compares with `qemu-system-arm`'s.

use core::arch::asm;
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

/// What the abort handlers saw (written by `rt.rs`'s handlers).
#[no_mangle]
pub static mut ABORT_SUM: u32 = 0;

/// A section the guest's level-1 table leaves invalid (a section Translation fault).
pub const INVALID_VA: u32 = 0x5000_0000;
/// A section mapped with `AP` = 0b000: no access at any privilege (a section Permission
/// fault, domain 0).
pub const NO_ACCESS_VA: u32 = 0x5010_0000;
/// An execute-never section (RAM behind it): a branch there is a Prefetch Abort (section
/// Permission fault).
pub const XN_VA: u32 = 0x5020_0000;

fn reset_sum() {
    // SAFETY: one CPU; the handlers write it only inside the kernels.
    unsafe { write_volatile(addr_of_mut!(ABORT_SUM), 0) };
}

fn sum() -> u32 {
    // SAFETY: as in `reset_sum`.
    unsafe { read_volatile(addr_of!(ABORT_SUM)) }
}

/// 2000 loads that abort, alternately from the invalid and the no-access section, at
/// addresses spread over 4 pages of each; the Data Abort handler skips each load.
pub fn dabt() -> u32 {
    reset_sum();
    for i in 0..2000u32 {
        let base = if i & 1 == 0 { INVALID_VA } else { NO_ACCESS_VA };
        let va = base + (i & 0x3ffc);
        // SAFETY: the load aborts; the handler (which preserves every register of this
        // mode) returns to the next instruction, so `v` keeps its input.
        unsafe {
            asm!("ldr {v}, [{a}]", a = in(reg) va, v = inout(reg) 0u32 => _, options(nostack))
        };
    }
    sum()
}

/// 2000 `BLX`es to addresses of the execute-never section; the Prefetch Abort handler
/// returns to the instruction after the `BLX` (passed in r3).
pub fn pabt() -> u32 {
    reset_sum();
    for i in 0..2000u32 {
        let target = XN_VA + ((i & 0x3ff) << 2);
        // SAFETY: the branch's target aborts; the handler returns to label 1 with every
        // register of this mode preserved but LR (the BLX's) and r3.
        unsafe {
            asm!("adr r3, 1f", "blx {t}", "1:", t = in(reg) target, out("r3") _,
                 out("lr") _, options(nostack))
        };
    }
    sum()
}
