//! EL1 exception vectors (`VBAR_EL1`) and their Rust handler.
//!
//! Every vector saves x0..x30, q0..q31, `FPSR` and `FPCR` (the Rust handler may use SIMD
//! registers, and the interrupted code's FP state must survive), then calls the handler with
//! the vector's index. A synchronous exception at EL1 while a fault is expected (see
//! [`crate::fault`]) is recorded and the faulting instruction skipped (`ELR_EL1 += 4`).
//! An IRQ at the current EL goes to [`crate::irq`] (GIC acknowledge, handler, EOI).
//! Anything else prints `ESR_EL1`, `ELR_EL1`, `FAR_EL1`, `SPSR_EL1` and requests SYSTEM_RESET.

use aarch64_cpu::registers::{Readable, Writeable, ELR_EL1, ESR_EL1, FAR_EL1, SPSR_EL1};

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

/// Emits a 2 KiB-aligned EL1 vector table named `$table` whose 16 entries save an
/// [`ExceptionFrame`] (x0..x30, q0..q31, `FPSR`, `FPCR`) on the current stack, call
/// `$handler(index, &mut frame)` (`extern "C" fn(u64, &mut ExceptionFrame)`, index = vector
/// number 0..16), restore the frame (so the handler may change registers through it) and
/// `ERET`. guest-rt's own table is `__vectors` with [`guest_rt_exception`]; a guest with
/// its own handling (the storm) instantiates another and points `VBAR_EL1` at it.
#[macro_export]
macro_rules! exception_vectors {
    ($table:literal, $handler:path) => {
        core::arch::global_asm!(
            concat!(
                ".section .text.", $table, ", \"ax\"\n",
                ".balign 0x800\n",
                ".global ", $table, "\n",
                $table, ":\n",
                ".irp index, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n",
                ".balign 0x80\n",
                "sub sp, sp, #784\n",
                "stp x0, x1, [sp, #0]\n",
                "mov x0, #\\index\n",
                "b ", $table, "_common\n",
                ".endr\n",
                $table, "_common:\n",
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
                "str x30, [sp, #240]\n",
                "mrs x2, fpsr\n",
                "mrs x3, fpcr\n",
                "stp x2, x3, [sp, #248]\n",
                "stp q0, q1, [sp, #272]\n",
                "stp q2, q3, [sp, #304]\n",
                "stp q4, q5, [sp, #336]\n",
                "stp q6, q7, [sp, #368]\n",
                "stp q8, q9, [sp, #400]\n",
                "stp q10, q11, [sp, #432]\n",
                "stp q12, q13, [sp, #464]\n",
                "stp q14, q15, [sp, #496]\n",
                "stp q16, q17, [sp, #528]\n",
                "stp q18, q19, [sp, #560]\n",
                "stp q20, q21, [sp, #592]\n",
                "stp q22, q23, [sp, #624]\n",
                "stp q24, q25, [sp, #656]\n",
                "stp q26, q27, [sp, #688]\n",
                "stp q28, q29, [sp, #720]\n",
                "stp q30, q31, [sp, #752]\n",
                "mov x1, sp\n",
                "bl {handler}\n",
                "ldp q0, q1, [sp, #272]\n",
                "ldp q2, q3, [sp, #304]\n",
                "ldp q4, q5, [sp, #336]\n",
                "ldp q6, q7, [sp, #368]\n",
                "ldp q8, q9, [sp, #400]\n",
                "ldp q10, q11, [sp, #432]\n",
                "ldp q12, q13, [sp, #464]\n",
                "ldp q14, q15, [sp, #496]\n",
                "ldp q16, q17, [sp, #528]\n",
                "ldp q18, q19, [sp, #560]\n",
                "ldp q20, q21, [sp, #592]\n",
                "ldp q22, q23, [sp, #624]\n",
                "ldp q24, q25, [sp, #656]\n",
                "ldp q26, q27, [sp, #688]\n",
                "ldp q28, q29, [sp, #720]\n",
                "ldp q30, q31, [sp, #752]\n",
                "ldp x2, x3, [sp, #248]\n",
                "msr fpsr, x2\n",
                "msr fpcr, x3\n",
                "ldp x0, x1, [sp, #0]\n",
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
                "ldr x30, [sp, #240]\n",
                "add sp, sp, #784\n",
                "eret\n",
                ".text\n",
            ),
            handler = sym $handler,
        );
    };
}

exception_vectors!("__vectors", guest_rt_exception);

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
