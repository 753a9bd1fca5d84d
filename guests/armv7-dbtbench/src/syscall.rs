//! The `syscall` kernel: system calls from User mode, the shape of an OS's (SVC from
//! PL0 into a PL1 handler that returns to User mode with `MOVS pc, lr`). It runs on a
//! vector table of its own (`VBAR` switched outside the timed runs): SVC returns at once,
//! and UNDEFINED is the way back to Supervisor mode after the loop.

use core::arch::{asm, global_asm};

global_asm!(
    r#"
    .section .text.vectors_sys, "ax"
    .arm
    .balign 32
vectors_sys:
    b .
    b sys_leave_user
    b sys_svc
    b .
    b .
    b .
    b .
    b .

    @ SVC from User mode: return to it.
sys_svc:
    movs pc, lr
    @ UNDEFINED from User mode (the end of the loop): continue after it in Supervisor
    @ mode (its SP and LR are those from before the loop).
sys_leave_user:
    mov r12, lr
    cps #0x13
    bx r12
"#
);

/// `VBAR` = `vectors_sys` (`on`) or the value it had before (`off`).
pub fn use_vectors(on: bool) {
    static mut SAVED: u32 = 0;
    // SAFETY: VBAR writes between kernels, one CPU; SAVED is only touched here.
    unsafe {
        if on {
            let (old, new): (u32, u32);
            asm!("mrc p15, 0, {0}, c12, c0, 0", "ldr {1}, =vectors_sys",
                 "mcr p15, 0, {1}, c12, c0, 0", "isb", out(reg) old, out(reg) new,
                 options(nostack));
            let _ = new;
            *core::ptr::addr_of_mut!(SAVED) = old;
        } else {
            let old = *core::ptr::addr_of!(SAVED);
            asm!("mcr p15, 0, {0}, c12, c0, 0", "isb", in(reg) old, options(nostack));
        }
    }
}

/// 2000 `SVC #0` from User mode (entered with `CPS`), then back to Supervisor mode.
pub fn syscall_loop() -> u32 {
    // SAFETY: runs with `vectors_sys` (use_vectors): each SVC returns to User mode at the
    // next instruction (LR_svc clobbered), the UDF returns to Supervisor mode after
    // itself (r12 clobbered); the loop touches no memory, and User mode leaves SP_svc
    // alone.
    unsafe {
        asm!(
            "cps #0x10",
            "2:",
            "svc #0",
            "subs {n}, {n}, #1",
            "bne 2b",
            "udf #1",
            n = inout(reg) 2000u32 => _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        )
    };
    2000
}
