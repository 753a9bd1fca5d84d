//! Entry, mode stacks, vectors (SVC and UNDEFINED return to the next instruction, the abort
//! handlers of `aborts.rs`), the counter, PSCI and the panic handler.

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
    cps #0x17              @ Abort mode
    sub sp, r4, #0x2000
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
    b pabt_entry
    b dabt_entry
    b .
    b .
    b .

    @ UNDEFINED (an A32 UDF): continue after it.
und_entry:
    movs pc, lr
    @ SVC: continue after it.
svc_entry:
    movs pc, lr

    @ The abort handlers' common part: fold the fault status (`MRC p15, 0, r0, c5, c0,
    @ \fsr`: DFSR or IFSR), the fault address (`c6, c0, \far`: DFAR or IFAR) and LR_abt
    @ into ABORT_SUM, every register but LR_abt preserved.
    .macro fold_abort fsr, far
    push {{r0-r2}}
    mrc p15, 0, r0, c5, c0, \fsr
    mrc p15, 0, r1, c6, c0, \far
    add r0, r0, r1
    add r0, r0, lr
    ldr r2, =ABORT_SUM
    ldr r1, [r2]
    add r1, r0, r1, ror #31
    str r1, [r2]
    pop {{r0-r2}}
    .endm

    @ Data Abort (aborts.rs `dabt`): fold DFSR, DFAR and LR_abt into ABORT_SUM, then skip
    @ the aborted (A32) load: LR_abt is its address + 8.
dabt_entry:
    fold_abort 0, 0
    subs pc, lr, #4

    @ Prefetch Abort (aborts.rs `pabt`): fold IFSR, IFAR and LR_abt into ABORT_SUM, then
    @ return to the address in r3 (after the BLX that branched to the aborting address).
pabt_entry:
    fold_abort 1, 2
    mov lr, r3
    subs pc, lr, #0
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
