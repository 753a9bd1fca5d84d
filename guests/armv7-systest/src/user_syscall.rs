//! System calls from User mode with the MMU on (issue 17: under the DBT an `SVC` from User
//! mode and the `MOVS pc, lr` back switch the host's shadow between the guest's PL0 and
//! PL1 permissions, and the translation context, from inside translated code). A loop in
//! User mode makes system calls whose handler (PL1) reads a privileged-only page; after the
//! loop, still in User mode, a read of a user page must succeed and a read of the
//! privileged-only page must abort. It runs on a vector table of its own (`VBAR`
//! switched for the check): SVC reads and returns, a Data Abort counts and skips the
//! load, UNDEFINED goes back to Supervisor mode.

use core::arch::{asm, global_asm};
use core::ptr::read_volatile;

global_asm!(
    r#"
    .section .text.user_syscall_vectors, "ax"
    .arm
    .balign 32
user_syscall_vectors:
    b .
    b user_syscall_und
    b user_syscall_svc
    b .
    b user_syscall_dabt
    b .
    b .
    b .

    @ SVC from User mode: r2 += the privileged-only word at [r1], back to User mode.
user_syscall_svc:
    ldr r3, [r1]
    add r2, r2, r3
    movs pc, lr
    @ Data Abort: r8 += 1, resume after the aborted load (in User mode).
user_syscall_dabt:
    add r8, r8, #1
    subs pc, lr, #4
    @ UNDEFINED (the end of the check): Supervisor mode again (CPSR from r10), at r12.
user_syscall_und:
    msr cpsr_cxsf, r10
    bx r12
"#
);

/// System calls from User mode.
const CALLS: u32 = 200;

/// Runs the check with the MMU on: `privileged` is a privileged-only page's address,
/// `user` a page User mode may read (both map the same word).
pub fn test_user_syscalls(check: fn(&str, bool), privileged: u32, user: u32) {
    // SAFETY: a PL1 read of a page mapped for PL1.
    let word = unsafe { read_volatile(privileged as *const u32) };
    let (sum, aborts, user_word): (u32, u32, u32);
    // SAFETY: runs on `user_syscall_vectors` (VBAR restored before the end): in User mode
    // only registers are touched and the two reads; each SVC returns to User mode at the
    // next instruction (LR_svc, SPSR_svc clobbered), the Data Abort resumes after the load
    // (LR_abt, SPSR_abt clobbered), the UDF returns to Supervisor mode with the CPSR from
    // before at label 3 (LR_und, SPSR_und clobbered). SP_svc is not touched in User mode.
    unsafe {
        asm!(
            "mrc p15, 0, {old}, c12, c0, 0",
            // MOVW/MOVT, not a literal: the assembler's pool for this block can end up
            // out of LDR's reach in a grown .text.
            "movw {t}, #:lower16:user_syscall_vectors",
            "movt {t}, #:upper16:user_syscall_vectors",
            "mcr p15, 0, {t}, c12, c0, 0",
            "isb",
            "mrs r10, cpsr",
            "adr r12, 3f",
            "cps #0x10",
            "2:",
            "svc #0",
            "subs {n}, {n}, #1",
            "bne 2b",
            "ldr r0, [{user}]",
            "ldr {t}, [r1]",
            "udf #1",
            "3:",
            "mcr p15, 0, {old}, c12, c0, 0",
            "isb",
            old = out(reg) _,
            t = out(reg) _,
            n = inout(reg) CALLS => _,
            user = in(reg) user,
            in("r1") privileged,
            inout("r2") 0u32 => sum,
            out("r3") _,
            inout("r8") 0u32 => aborts,
            out("r10") _,
            out("r12") _,
            out("r0") user_word,
            out("lr") _,
            options(nostack),
        );
    }
    check(
        "user-mode system calls: handler reads privileged-only page",
        sum == word.wrapping_mul(CALLS),
    );
    check(
        "after system calls: user-mode read of user page",
        user_word == word,
    );
    check(
        "after system calls: user-mode read of privileged-only page aborts",
        aborts == 1,
    );
}
