//! Entry, mode stacks, vectors (SVC and UNDEFINED return to the next instruction), the
//! counter, PSCI and the panic handler.

use core::arch::{asm, global_asm};

use crate::uart::puts;

global_asm!(
    r#"
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    ldr r4, =_stack_top
    cps #0x1b              @ Undefined mode
    sub sp, r4, #0x1000
    cps #0x13              @ Supervisor mode
    mov sp, r4
    ldr r4, =vectors
    mcr p15, 0, r4, c12, c0, 0   @ VBAR
    isb
    bl main
1:  b 1b

    .section .text.vectors, "ax"
    .balign 32
vectors:
    b .
    b und_entry
    b svc_entry
    b .
    b .
    b .
    b .
    b .

    @ UNDEFINED (an A32 UDF): continue after it.
und_entry:
    movs pc, lr
    @ SVC: continue after it.
svc_entry:
    movs pc, lr
"#
);

/// `CNTVCT` (the virtual count), between barriers.
pub fn counter() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: CNTVCT read.
    unsafe {
        asm!("isb", "mrrc p15, 1, {}, {}, c14", "isb", out(reg) lo, out(reg) hi, options(nomem, nostack))
    };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// PSCI `SYSTEM_OFF` (SMC32) over `HVC`.
pub fn system_off() -> ! {
    // SAFETY: PSCI call; SYSTEM_OFF does not return.
    unsafe {
        asm!(".arch_extension virt", "hvc #0", in("r0") 0x8400_0008u32, options(nostack));
    }
    loop {
        // SAFETY: waits for an interrupt; SYSTEM_OFF does not return.
        unsafe { asm!("wfi", options(nomem, nostack)) };
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    puts("armv7-dbtbench: panic\n");
    system_off()
}
