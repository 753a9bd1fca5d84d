//! EL1 exception vectors (`VBAR_EL1`) and their Rust handler.
//!
//! Every vector saves x0..x30, q0..q31, `FPSR` and `FPCR` (the Rust handler may use SIMD
//! registers, and the interrupted code's FP state must survive), then calls the handler with
//! the vector's index. A synchronous exception at EL1 while a fault is expected (see
//! [`crate::fault`]) is recorded and the faulting instruction skipped (`ELR_EL1 += 4`).
//! An IRQ at the current EL goes to [`crate::irq`] (GIC acknowledge, handler, EOI).
//! Anything else prints `ESR_EL1`, `ELR_EL1`, `FAR_EL1`, `SPSR_EL1` and requests SYSTEM_RESET.

use aarch64_cpu::registers::{Readable, Writeable, ELR_EL1, ESR_EL1, FAR_EL1, SPSR_EL1};
use core::arch::global_asm;

/// Registers saved by the vector entry code, in the layout the assembly below uses.
#[repr(C)]
#[derive(Debug)]
pub struct ExceptionFrame {
    /// x0..x30 at the time of the exception.
    pub x: [u64; 31],
    /// `FPSR` at the time of the exception.
    pub fpsr: u64,
    /// `FPCR` at the time of the exception.
    pub fpcr: u64,
    _pad: u64,
    /// q0..q31 at the time of the exception.
    pub q: [u128; 32],
}

const _: () = assert!(core::mem::size_of::<ExceptionFrame>() == 784);

global_asm!(
    r#"
    .equ FRAME_SIZE, 784

    .macro vector index
    .balign 0x80
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp, #0]
    mov     x0, #\index
    b       __exception_common
    .endm

    .section .text.vectors, "ax"
    .balign 0x800
    .global __vectors
__vectors:
    vector 0    // current EL, SP_EL0: synchronous
    vector 1    //                     IRQ
    vector 2    //                     FIQ
    vector 3    //                     SError
    vector 4    // current EL, SP_ELx: synchronous
    vector 5    //                     IRQ
    vector 6    //                     FIQ
    vector 7    //                     SError
    vector 8    // lower EL, AArch64:  synchronous
    vector 9    //                     IRQ
    vector 10   //                     FIQ
    vector 11   //                     SError
    vector 12   // lower EL, AArch32:  synchronous
    vector 13   //                     IRQ
    vector 14   //                     FIQ
    vector 15   //                     SError

__exception_common:
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    stp     x6, x7, [sp, #48]
    stp     x8, x9, [sp, #64]
    stp     x10, x11, [sp, #80]
    stp     x12, x13, [sp, #96]
    stp     x14, x15, [sp, #112]
    stp     x16, x17, [sp, #128]
    stp     x18, x19, [sp, #144]
    stp     x20, x21, [sp, #160]
    stp     x22, x23, [sp, #176]
    stp     x24, x25, [sp, #192]
    stp     x26, x27, [sp, #208]
    stp     x28, x29, [sp, #224]
    str     x30, [sp, #240]
    stp     q0, q1, [sp, #272]
    stp     q2, q3, [sp, #304]
    stp     q4, q5, [sp, #336]
    stp     q6, q7, [sp, #368]
    stp     q8, q9, [sp, #400]
    stp     q10, q11, [sp, #432]
    stp     q12, q13, [sp, #464]
    stp     q14, q15, [sp, #496]
    stp     q16, q17, [sp, #528]
    stp     q18, q19, [sp, #560]
    stp     q20, q21, [sp, #592]
    stp     q22, q23, [sp, #624]
    stp     q24, q25, [sp, #656]
    stp     q26, q27, [sp, #688]
    stp     q28, q29, [sp, #720]
    stp     q30, q31, [sp, #752]
    mrs     x2, fpsr
    mrs     x3, fpcr
    str     x2, [sp, #248]
    str     x3, [sp, #256]

    mov     x1, sp
    bl      guest_rt_exception

    ldr     x2, [sp, #248]
    ldr     x3, [sp, #256]
    msr     fpsr, x2
    msr     fpcr, x3
    ldp     q0, q1, [sp, #272]
    ldp     q2, q3, [sp, #304]
    ldp     q4, q5, [sp, #336]
    ldp     q6, q7, [sp, #368]
    ldp     q8, q9, [sp, #400]
    ldp     q10, q11, [sp, #432]
    ldp     q12, q13, [sp, #464]
    ldp     q14, q15, [sp, #496]
    ldp     q16, q17, [sp, #528]
    ldp     q18, q19, [sp, #560]
    ldp     q20, q21, [sp, #592]
    ldp     q22, q23, [sp, #624]
    ldp     q24, q25, [sp, #656]
    ldp     q26, q27, [sp, #688]
    ldp     q28, q29, [sp, #720]
    ldp     q30, q31, [sp, #752]
    ldp     x0, x1, [sp, #0]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldp     x6, x7, [sp, #48]
    ldp     x8, x9, [sp, #64]
    ldp     x10, x11, [sp, #80]
    ldp     x12, x13, [sp, #96]
    ldp     x14, x15, [sp, #112]
    ldp     x16, x17, [sp, #128]
    ldp     x18, x19, [sp, #144]
    ldp     x20, x21, [sp, #160]
    ldp     x22, x23, [sp, #176]
    ldp     x24, x25, [sp, #192]
    ldp     x26, x27, [sp, #208]
    ldp     x28, x29, [sp, #224]
    ldr     x30, [sp, #240]
    add     sp, sp, #FRAME_SIZE
    eret
"#
);

/// Vector indices (offset / 0x80) of the synchronous vectors for the current EL.
const SYNC_CURRENT_EL_SP0: u64 = 0;
const SYNC_CURRENT_EL_SPX: u64 = 4;
/// Vector indices of the IRQ vectors for the current EL.
const IRQ_CURRENT_EL_SP0: u64 = 1;
const IRQ_CURRENT_EL_SPX: u64 = 5;

/// Names of the 16 vectors, for reports.
const VECTOR_NAMES: [&str; 16] = [
    "current EL SP0 sync",
    "current EL SP0 IRQ",
    "current EL SP0 FIQ",
    "current EL SP0 SError",
    "current EL SPx sync",
    "current EL SPx IRQ",
    "current EL SPx FIQ",
    "current EL SPx SError",
    "lower EL A64 sync",
    "lower EL A64 IRQ",
    "lower EL A64 FIQ",
    "lower EL A64 SError",
    "lower EL A32 sync",
    "lower EL A32 IRQ",
    "lower EL A32 FIQ",
    "lower EL A32 SError",
];

/// Rust side of every vector; `index` is the vector number (0..16), `frame` the saved state.
// SAFETY: the only symbol of this name; called only by `__exception_common` above with the
// C ABI, x0 = vector index, x1 = the frame it just saved on the stack.
#[unsafe(no_mangle)]
extern "C" fn guest_rt_exception(index: u64, frame: &mut ExceptionFrame) {
    if index == IRQ_CURRENT_EL_SPX || index == IRQ_CURRENT_EL_SP0 {
        crate::irq::dispatch();
        return;
    }
    let esr = ESR_EL1.get();
    let far = FAR_EL1.get();
    let elr = ELR_EL1.get();
    let sync = index == SYNC_CURRENT_EL_SPX || index == SYNC_CURRENT_EL_SP0;
    if sync && crate::fault::record_if_expected(esr, far, elr) {
        // Resume after the faulting instruction (A64: always 4 bytes).
        ELR_EL1.set(elr.wrapping_add(4));
        return;
    }
    let fault = crate::Fault { esr, far, elr };
    let name = VECTOR_NAMES.get(index as usize).copied().unwrap_or("?");
    crate::println!(
        "guest-rt: FAIL unexpected exception ({}): {} SPSR={:#x}",
        name,
        fault,
        SPSR_EL1.get()
    );
    crate::println!(
        "guest-rt: x0={:#x} x1={:#x} x2={:#x} x3={:#x} lr={:#x} sp={:#x}",
        frame.x[0],
        frame.x[1],
        frame.x[2],
        frame.x[3],
        frame.x[30],
        frame as *const ExceptionFrame as u64 + core::mem::size_of::<ExceptionFrame>() as u64
    );
    crate::psci::system_reset()
}
