//! Interrupts while translated code runs (issues 17/18: a pending virtual IRQ preempts
//! translated code instead of waiting for the end of the slice).
//!
//! The runtime keeps `PSTATE.I` masked, except inside translated code: before each entry
//! [`entry_daif`] gives the engine the masks for it (`GuestState::daif`, which the
//! prologue writes to `DAIF` and the epilogue masks again): IRQ unmasked unless its line
//! is already raised (`ISR_EL1`; the engine has just sampled the lines, so a raised one is
//! one the guest masks, and taking it would only repeat). A virtual IRQ that the vGIC
//! raises while translated code runs then enters [`dbt_rt_interrupt`] through the EL1
//! vector:
//! - at an address where the budget register holds the budget (a block, or the runtime
//!   between the prologue's load and the epilogue's store: `BudgetSites`), the handler
//!   makes the code leave at its next budget check (`a64::preempt`: every exit, loop
//!   back-edge and indirect branch checks it, so at most one block's instructions run
//!   before it leaves); the dispatcher then samples `ISR_EL1` and, if the guest's
//!   `CPSR.I` allows, takes the ARMv7 IRQ exception at that block boundary;
//! - anywhere else (the prologue before the load, host code that translated code calls:
//!   `step_from_code`, the privilege switch), nothing changes: the line is seen at the
//!   next dispatch.
//!
//! Either way the handler returns with IRQ and FIQ masked (`SPSR_EL1.I`/`.F`), so a
//! level-sensitive line is not taken again before the engine looks at it, and the
//! interrupt itself stays pending in the vGIC: nothing is acknowledged, lost or taken
//! twice, and no guest-visible state changes (the handler saves every general-purpose
//! and SIMD&FP register and `FPSR`/`FPCR`: an interrupt may come between any two host
//! instructions of translated code, whose temporaries live in them).

use core::sync::atomic::{AtomicU64, Ordering};

use dbt_armv7::translate::a64::preempt::{preempt, BudgetSites};

use crate::coproc::{isr_el1, ISR_I};
use crate::frame_asm::{restore_gprs_elr_spsr, save_gprs_elr_spsr};
use crate::smp::{me, MAX_VCPUS};

/// Each vCPU's code-cache addresses where an interrupt may make translated code leave.
static SITES: [spin::Once<BudgetSites>; MAX_VCPUS] = [const { spin::Once::new() }; MAX_VCPUS];

/// Per vCPU: interrupts that made translated code leave early.
static PREEMPTED: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];
/// Per vCPU: interrupts taken elsewhere (or again before the code left).
static ELSEWHERE: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];

/// `DAIF`/`SPSR_EL1` bits: D, A, I, F.
const DAIF_D: u64 = 1 << 9;
const DAIF_A: u64 = 1 << 8;
const DAIF_I: u64 = 1 << 7;
const DAIF_F: u64 = 1 << 6;

/// Records this vCPU's code cache `[lo, hi)` (before translated code runs on it).
pub fn set_code_cache(lo: u64, hi: u64) {
    SITES[me()].call_once(|| BudgetSites::new(lo, hi));
}

/// The `DAIF` value translated code runs with on this vCPU (`GuestState::daif`): debug,
/// SError and FIQ masked as everywhere in the runtime (a guest FIQ is taken at block
/// boundaries, as before; with FIQ unmasked too, 4 of armv7-systest's User-mode checks
/// failed although no FIQ reached these vectors: not understood, left alone); IRQ
/// unmasked unless its line is raised already.
pub fn entry_daif() -> u32 {
    let mut daif = DAIF_D | DAIF_A | DAIF_F;
    if isr_el1() & ISR_I != 0 {
        daif |= DAIF_I;
    }
    daif as u32
}

/// This vCPU's interrupts so far: (made translated code leave, taken elsewhere).
pub fn stats() -> (u64, u64) {
    let me = me();
    (
        PREEMPTED[me].load(Ordering::Relaxed),
        ELSEWHERE[me].load(Ordering::Relaxed),
    )
}

/// The interrupted context as [`dbt_rt_irq`]'s frame begins (the SIMD&FP registers
/// follow it).
#[repr(C)]
pub struct IrqFrame {
    x: [u64; 31],
    elr: u64,
    spsr: u64,
    _pad: u64,
}

/// Bytes of the frame: [`IrqFrame`] (272), `q0`-`q31` (512), `FPSR` and `FPCR` (16).
pub const IRQ_FRAME: usize = 800;

core::arch::global_asm!(
    ".text",
    ".balign 4",
    ".global dbt_rt_irq",
    // The vector entry made room for IRQ_FRAME bytes, saved x0/x1 and put the kind in x0.
    "dbt_rt_irq:",
    save_gprs_elr_spsr!(),
    "add x1, sp, #272",
    "stp q0, q1, [x1, #0]",
    "stp q2, q3, [x1, #32]",
    "stp q4, q5, [x1, #64]",
    "stp q6, q7, [x1, #96]",
    "stp q8, q9, [x1, #128]",
    "stp q10, q11, [x1, #160]",
    "stp q12, q13, [x1, #192]",
    "stp q14, q15, [x1, #224]",
    "stp q16, q17, [x1, #256]",
    "stp q18, q19, [x1, #288]",
    "stp q20, q21, [x1, #320]",
    "stp q22, q23, [x1, #352]",
    "stp q24, q25, [x1, #384]",
    "stp q26, q27, [x1, #416]",
    "stp q28, q29, [x1, #448]",
    "stp q30, q31, [x1, #480]",
    "mrs x2, fpsr",
    "mrs x3, fpcr",
    "str x2, [x1, #512]",
    "str x3, [x1, #520]",
    "mov x1, x0",
    "mov x0, sp",
    "bl dbt_rt_interrupt",
    "add x1, sp, #272",
    "ldr x2, [x1, #512]",
    "ldr x3, [x1, #520]",
    "msr fpsr, x2",
    "msr fpcr, x3",
    "ldp q0, q1, [x1, #0]",
    "ldp q2, q3, [x1, #32]",
    "ldp q4, q5, [x1, #64]",
    "ldp q6, q7, [x1, #96]",
    "ldp q8, q9, [x1, #128]",
    "ldp q10, q11, [x1, #160]",
    "ldp q12, q13, [x1, #192]",
    "ldp q14, q15, [x1, #224]",
    "ldp q16, q17, [x1, #256]",
    "ldp q18, q19, [x1, #288]",
    "ldp q20, q21, [x1, #320]",
    "ldp q22, q23, [x1, #352]",
    "ldp q24, q25, [x1, #384]",
    "ldp q26, q27, [x1, #416]",
    "ldp q28, q29, [x1, #448]",
    "ldp q30, q31, [x1, #480]",
    restore_gprs_elr_spsr!(),
    "add sp, sp, #{frame}",
    "eret",
    frame = const IRQ_FRAME,
);

/// An IRQ or FIQ (vector `kind` 5 or 6: current EL with `SP_EL1`) interrupted the context
/// `f`: see the module doc.
#[no_mangle]
extern "C" fn dbt_rt_interrupt(f: &mut IrqFrame, _kind: u64) {
    // Not taken again until the engine has looked at the lines (level-sensitive: the
    // vGIC keeps the line raised until the guest acknowledges the interrupt).
    f.spsr |= DAIF_I | DAIF_F;
    let me = me();
    let in_code = SITES[me].get().is_some_and(|s| s.contains(f.elr));
    // SAFETY: the context was interrupted where this vCPU's running engine keeps the
    // budget in its register and its GuestState in x28 (`BudgetSites`).
    if in_code && unsafe { preempt(&mut f.x) } {
        PREEMPTED[me].fetch_add(1, Ordering::Relaxed);
    } else {
        ELSEWHERE[me].fetch_add(1, Ordering::Relaxed);
    }
}
