//! EL2 exception vectors and the guest entry/exit path (AArch64 only).
//!
//! `__el2_guest_enter(ctx)` saves the host's callee-saved registers on the EL2 stack,
//! loads the guest's general registers, `ELR_EL2`, `SPSR_EL2` and `SP_EL0` from `ctx`
//! (a [`crate::vcpu::GuestRegs`]) and `ERET`s. An exception from the guest lands in the
//! lower-EL vectors, which store the guest registers back into the same `ctx` (its pointer
//! sits in the host frame on the stack), restore the host registers and return from
//! `__el2_guest_enter` with the exit kind (0 sync, 1 IRQ, 2 FIQ, 3 SError) in x0. To its
//! caller it is an ordinary `extern "C"` function call.
//!
//! Exceptions taken from EL2 itself are unexpected: every register is saved into a
//! [`HostExceptionFrame`] and `el2_core_host_exception` (provided by the embedding
//! hypervisor) is called; it must not return.

use crate::vcpu::{offsets, GuestRegs};

/// Registers of the hypervisor at the time of an unexpected exception taken at EL2.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HostExceptionFrame {
    /// X0..X30.
    pub x: [u64; 31],
    /// `ELR_EL2`: the faulting or interrupted instruction.
    pub elr: u64,
    /// `SPSR_EL2`.
    pub spsr: u64,
    /// `ESR_EL2`.
    pub esr: u64,
    /// `FAR_EL2`.
    pub far: u64,
    /// Vector offset / 0x80: which vector was taken (4 = current EL SPx sync, ...).
    pub vector: u64,
}

/// Exit kind returned by the guest entry path.
pub const EXIT_SYNC: u64 = 0;
/// Exit kind: a physical IRQ arrived while the guest ran.
pub const EXIT_IRQ: u64 = 1;
/// Exit kind: a physical FIQ arrived while the guest ran.
pub const EXIT_FIQ: u64 = 2;
/// Exit kind: an SError arrived while the guest ran.
#[allow(dead_code)] // `exit_kind` maps it with the catch-all arm
pub const EXIT_SERROR: u64 = 3;

extern "C" {
    /// Enters the guest described by `regs`; returns the exit kind (`EXIT_*`).
    fn __el2_guest_enter(regs: *mut GuestRegs) -> u64;
    /// The EL2 vector table (2 KiB aligned).
    static __el2_vectors: u8;
}

/// Runs the guest until its next exception to EL2.
///
/// # Safety
/// EL2 must be configured for this guest (stage 2, traps, EL1 state), `VBAR_EL2` must point
/// at [`vector_table_address`], and `regs` must stay valid until this returns.
#[inline(always)]
pub unsafe fn enter_guest(regs: &mut GuestRegs) -> u64 {
    // SAFETY: the caller configured EL2 for this guest; `regs` is a valid, exclusive
    // reference, and the assembly preserves the AAPCS64 callee-saved registers and SP.
    unsafe { __el2_guest_enter(regs) }
}

/// Address of the EL2 vector table, for `VBAR_EL2`.
pub fn vector_table_address() -> u64 {
    core::ptr::addr_of!(__el2_vectors) as u64
}

// Host frame on the EL2 stack while a guest runs: x19..x30 at 0..96, ctx pointer at 96.
core::arch::global_asm!(
    r#"
.section .text.el2_entry, "ax"
.global __el2_guest_enter
.balign 16
__el2_guest_enter:
    sub     sp, sp, #112
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    str     x0, [sp, #96]
    ldr     x1, [x0, #{pc}]
    msr     elr_el2, x1
    ldr     x1, [x0, #{pstate}]
    msr     spsr_el2, x1
    ldr     x1, [x0, #{sp_el0}]
    msr     sp_el0, x1
    ldp     x2, x3, [x0, #16]
    ldp     x4, x5, [x0, #32]
    ldp     x6, x7, [x0, #48]
    ldp     x8, x9, [x0, #64]
    ldp     x10, x11, [x0, #80]
    ldp     x12, x13, [x0, #96]
    ldp     x14, x15, [x0, #112]
    ldp     x16, x17, [x0, #128]
    ldp     x18, x19, [x0, #144]
    ldp     x20, x21, [x0, #160]
    ldp     x22, x23, [x0, #176]
    ldp     x24, x25, [x0, #192]
    ldp     x26, x27, [x0, #208]
    ldp     x28, x29, [x0, #224]
    ldr     x30, [x0, #240]
    ldp     x0, x1, [x0, #0]
    eret
    dsb     nsh
    isb

// x0 = exit kind; guest x0/x1 pushed at [sp]; host frame at [sp + 16].
.balign 16
__el2_guest_exit:
    ldr     x1, [sp, #(16 + 96)]
    stp     x2, x3, [x1, #16]
    stp     x4, x5, [x1, #32]
    stp     x6, x7, [x1, #48]
    stp     x8, x9, [x1, #64]
    stp     x10, x11, [x1, #80]
    stp     x12, x13, [x1, #96]
    stp     x14, x15, [x1, #112]
    stp     x16, x17, [x1, #128]
    stp     x18, x19, [x1, #144]
    stp     x20, x21, [x1, #160]
    stp     x22, x23, [x1, #176]
    stp     x24, x25, [x1, #192]
    stp     x26, x27, [x1, #208]
    stp     x28, x29, [x1, #224]
    str     x30, [x1, #240]
    ldp     x2, x3, [sp], #16
    stp     x2, x3, [x1, #0]
    mrs     x2, elr_el2
    str     x2, [x1, #{pc}]
    mrs     x2, spsr_el2
    str     x2, [x1, #{pstate}]
    mrs     x2, sp_el0
    str     x2, [x1, #{sp_el0}]
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    add     sp, sp, #112
    ret

// Unexpected exception at EL2: build a HostExceptionFrame (36 * 8 = 288 bytes) and
// call el2_core_host_exception(frame). x0 holds the vector number (pushed x0/x1 first).
.balign 16
__el2_host_exception:
    sub     sp, sp, #288
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
    str     x0, [sp, #280]
    ldp     x2, x3, [sp, #288]
    stp     x2, x3, [sp, #0]
    mrs     x2, elr_el2
    str     x2, [sp, #248]
    mrs     x2, spsr_el2
    str     x2, [sp, #256]
    mrs     x2, esr_el2
    str     x2, [sp, #264]
    mrs     x2, far_el2
    str     x2, [sp, #272]
    mov     x0, sp
    bl      el2_core_host_exception
1:  wfe
    b       1b

.macro host_vector num
    .balign 0x80
    stp     x0, x1, [sp, #-16]!
    mov     x0, #\num
    b       __el2_host_exception
.endm

.macro guest_vector kind
    .balign 0x80
    stp     x0, x1, [sp, #-16]!
    mov     x0, #\kind
    b       __el2_guest_exit
.endm

.section .text.el2_vectors, "ax"
.global __el2_vectors
.balign 0x800
__el2_vectors:
    host_vector 0
    host_vector 1
    host_vector 2
    host_vector 3
    host_vector 4
    host_vector 5
    host_vector 6
    host_vector 7
    guest_vector 0
    guest_vector 1
    guest_vector 2
    guest_vector 3
    guest_vector 0
    guest_vector 1
    guest_vector 2
    guest_vector 3
"#,
    pc = const offsets::PC,
    pstate = const offsets::PSTATE,
    sp_el0 = const offsets::SP_EL0,
);
