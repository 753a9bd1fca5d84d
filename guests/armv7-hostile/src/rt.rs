//! Entry, mode stacks, vectors that resume at a chosen address, HVC/SMC calls, panic.
//!
//! An UNDEFINED instruction, an `SVC` or a data abort is counted and execution resumes at `RESUME`
//! in Supervisor mode (switched with `CPS`: under QEMU 7.2 an exception return after an
//! exception the hypervisor injected would use a stale SPSR, see the root README).

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::uart::{puthex, puts};

global_asm!(
    r#"
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    ldr r4, =_stack_top
    cps #0x1b
    sub sp, r4, #0x1000
    cps #0x17
    sub sp, r4, #0x2000
    cps #0x13
    mov sp, r4
    ldr r4, =vectors
    mcr p15, 0, r4, c12, c0, 0
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
    b dabt_entry
    b .
    b .
    b .

und_entry:
    ldr sp, =COUNTS
    ldr r12, [sp]
    add r12, r12, #1
    str r12, [sp]
    b resume

    @ SVC (the USR-mode storm's way back): counted with r12 and LR_svc, which the
    @ exception has already overwritten; SP_svc stays the program's stack.
svc_entry:
    ldr r12, =COUNTS
    ldr lr, [r12, #8]
    add lr, lr, #1
    str lr, [r12, #8]
    b resume

dabt_entry:
    ldr sp, =COUNTS
    ldr r12, [sp, #4]
    add r12, r12, #1
    str r12, [sp, #4]

    @ Back to SVC mode at RESUME (r12 is the probes' scratch register).
resume:
    cps #0x13
    ldr r12, =RESUME
    ldr r12, [r12]
    bx r12
"#
);

/// UNDEFINED exceptions, data aborts and SVCs taken.
#[no_mangle]
static mut COUNTS: [u32; 3] = [0; 3];

/// Where the vectors resume (bit 0: T32).
#[no_mangle]
pub static mut RESUME: u32 = 0;

/// (UNDEFINED exceptions, data aborts) so far.
pub fn counts() -> (u32, u32) {
    // SAFETY: words the exception handlers update; one CPU.
    let c = unsafe { read_volatile(addr_of!(COUNTS)) };
    (c[0], c[1])
}

/// `SVC` exceptions so far (the USR-mode storm returns to PL1 with `SVC #0`).
pub fn svcs() -> u32 {
    // SAFETY: as for `counts`.
    unsafe { read_volatile(addr_of!(COUNTS))[2] }
}

/// Sets where the next exception resumes.
pub fn set_resume(at: u32) {
    // SAFETY: as for `counts`.
    unsafe { write_volatile(addr_of_mut!(RESUME), at) };
}

/// An SMCCC call over `HVC #0` (`smc`: over `SMC #0`): `r0..r3` in, `r0` out.
pub fn call(smc: bool, args: [u32; 4]) -> u32 {
    let [mut r0, r1, r2, r3] = args;
    // SAFETY: HVC/SMC trap to the hypervisor, which changes only r0..r3.
    unsafe {
        if smc {
            asm!(".arch_extension sec", "smc #0", inout("r0") r0, inout("r1") r1 => _,
                 inout("r2") r2 => _, inout("r3") r3 => _, options(nostack));
        } else {
            asm!(".arch_extension virt", "hvc #0", inout("r0") r0, inout("r1") r1 => _,
                 inout("r2") r2 => _, inout("r3") r3 => _, options(nostack));
        }
    }
    r0
}

/// PSCI `SYSTEM_OFF`.
pub const PSCI_SYSTEM_OFF: u32 = 0x8400_0008;
/// PSCI `SYSTEM_RESET`.
const PSCI_SYSTEM_RESET: u32 = 0x8400_0009;

/// Reports a failure and resets the VM.
pub fn fail(what: &str, value: u32) -> ! {
    puts("armv7-hostile: FAIL ");
    puts(what);
    puts(" ");
    puthex(value);
    puts("\n");
    call(false, [PSCI_SYSTEM_RESET, 0, 0, 0]);
    loop {
        // SAFETY: waits; SYSTEM_RESET does not return.
        unsafe { asm!("wfi", options(nomem, nostack)) };
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    fail("panic", 0)
}
