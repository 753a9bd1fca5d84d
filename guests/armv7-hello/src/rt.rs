//! Entry, mode stacks, the exception vectors, HVC calls and the panic handler.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, read_volatile};

use crate::uart::{puthex, puts};

global_asm!(
    r#"
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    @ r0..r2 as the ARM boot protocol sets them; keep them for main.
    ldr r4, =_stack_top
    cps #0x1b              @ Undefined mode
    sub sp, r4, #0x1000
    cps #0x17              @ Abort mode
    sub sp, r4, #0x2000
    cps #0x12              @ IRQ mode
    sub sp, r4, #0x3000
    cps #0x13              @ back to Supervisor mode
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
    b .
    b pabt_entry
    b dabt_entry
    b .
    b irq_entry
    b .

    @ An UNDEFINED instruction: count it, continue after it (LR_und = next A32 insn).
und_entry:
    push {{r0, r1}}
    ldr r0, =UNDEF_COUNT
    ldr r1, [r0]
    add r1, r1, #1
    str r1, [r0]
    pop {{r0, r1}}
    movs pc, lr

    @ A data abort: record DFSR, DFAR, SPSR_abt; continue after the access in SVC mode.
    @ The return switches modes with CPS instead of `subs pc, lr, #4`: QEMU 7.2 (TCG)
    @ keeps the current AArch32 mode's SPSR apart from the SPSR_abt EL2 writes, so after an
    @ abort injected by the hypervisor that return would use a stale SPSR.
dabt_entry:
    push {{r0, r1}}
    ldr r0, =DABT_INFO
    mrc p15, 0, r1, c5, c0, 0
    str r1, [r0]
    mrc p15, 0, r1, c6, c0, 0
    str r1, [r0, #4]
    ldr r1, [r0, #8]
    add r1, r1, #1
    str r1, [r0, #8]
    mrs r1, spsr
    str r1, [r0, #12]
    sub r1, lr, #4
    str r1, [r0, #16]
    mrs r1, cpsr
    str r1, [r0, #20]
    pop {{r0, r1}}
    cps #0x13
    push {{r0}}
    push {{r0}}
    ldr r0, =DABT_INFO
    ldr r0, [r0, #16]
    str r0, [sp, #4]
    pop {{r0}}
    pop {{pc}}

pabt_entry:
    b .

    @ An IRQ: the Rust handler acknowledges and ends it; return to the interrupted
    @ instruction (LR_irq = that instruction + 4).
irq_entry:
    push {{r0-r3, r12, lr}}
    sub r0, lr, #4         @ the interrupted instruction
    bl irq_handler
    pop {{r0-r3, r12, lr}}
    subs pc, lr, #4
"#
);

/// UNDEFINED exceptions taken so far.
#[no_mangle]
static mut UNDEF_COUNT: u32 = 0;

/// The last data abort: `DFSR`, `DFAR`, how many were taken, its `SPSR_abt`, the
/// address it returns to and `CPSR` at the handler's entry.
#[no_mangle]
static mut DABT_INFO: [u32; 6] = [0; 6];

/// UNDEFINED exceptions taken so far.
pub fn undef_count() -> u32 {
    // SAFETY: a plain word the exception handler updates; one CPU.
    unsafe { read_volatile(addr_of!(UNDEF_COUNT)) }
}

/// The last data abort: (`DFSR`, `DFAR`, count, `SPSR_abt`).
pub fn dabt_info() -> (u32, u32, u32, u32) {
    // SAFETY: as for `undef_count`.
    let d = unsafe { read_volatile(addr_of!(DABT_INFO)) };
    (d[0], d[1], d[2], d[3])
}

/// `CPSR` at the entry of the last data abort.
pub fn dabt_cpsr() -> u32 {
    // SAFETY: as for `undef_count`.
    let d = unsafe { read_volatile(addr_of!(DABT_INFO)) };
    d[5]
}

/// An SMCCC call over `HVC #0` (SMC32 convention): `r0..r3` in, `r0..r3` out.
pub fn hvc(args: [u32; 4]) -> [u32; 4] {
    let [mut r0, mut r1, mut r2, mut r3] = args;
    // SAFETY: HVC traps to the hypervisor, which changes only r0..r3 (SMCCC 1.1).
    unsafe {
        asm!(".arch_extension virt", "hvc #0", inout("r0") r0, inout("r1") r1, inout("r2") r2, inout("r3") r3,
             options(nostack));
    }
    [r0, r1, r2, r3]
}

/// PSCI `SYSTEM_OFF` (32-bit function ID).
pub const PSCI_SYSTEM_OFF: u32 = 0x8400_0008;
/// PSCI `SYSTEM_RESET`.
pub const PSCI_SYSTEM_RESET: u32 = 0x8400_0009;

/// Reports a failed check and resets the VM (a non-zero exit status under the hypervisor).
pub fn fail(what: &str, value: u32) -> ! {
    puts("armv7-hello: FAIL ");
    puts(what);
    puts(" ");
    puthex(value);
    puts("\n");
    hvc([PSCI_SYSTEM_RESET, 0, 0, 0]);
    loop {
        // SAFETY: waits for an interrupt; SYSTEM_RESET does not return.
        unsafe { asm!("wfi", options(nomem, nostack)) };
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    fail("panic", 0)
}
