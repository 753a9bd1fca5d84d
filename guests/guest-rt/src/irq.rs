//! IRQ handling: a handler per INTID, called from the EL1 IRQ vectors through the GIC driver
//! ([`crate::gic`]): acknowledge, run the handler, EOI. Also masking helpers for `DAIF.I`.
//!
//! Handlers run with IRQs masked (no nesting) on the CPU that took the interrupt. A level
//! interrupt must be quietened at its source by the handler (e.g. re-arm or mask a timer)
//! before it returns, or it is taken again at once. An IRQ without a handler is reported
//! and ends the run with SYSTEM_RESET.

use crate::gic;
use core::arch::asm;
use core::sync::atomic::{AtomicUsize, Ordering};

/// An interrupt handler; gets the INTID it was called for.
pub type Handler = fn(intid: u32);

/// Handlers by INTID (0 = none). Function pointers stored as `usize` with plain loads and
/// stores, so registration also works with the MMU off.
static HANDLERS: [AtomicUsize; gic::SPECIAL_BASE as usize] =
    [const { AtomicUsize::new(0) }; gic::SPECIAL_BASE as usize];

/// Installs `handler` for `intid` (shared by all CPUs). Ignores INTIDs >= 1020.
pub fn set_handler(intid: u32, handler: Handler) {
    if let Some(slot) = HANDLERS.get(intid as usize) {
        slot.store(handler as usize, Ordering::Release);
    }
}

/// Unmasks IRQs on this CPU (`DAIFClr` I).
pub fn enable() {
    // SAFETY: clearing PSTATE.I only allows IRQ exceptions, which the vectors handle.
    unsafe { asm!("msr daifclr, #2", options(nostack)) };
}

/// Masks IRQs on this CPU (`DAIFSet` I).
pub fn disable() {
    // SAFETY: setting PSTATE.I only defers IRQs.
    unsafe { asm!("msr daifset, #2", options(nostack)) };
}

/// True if IRQs are masked on this CPU (`DAIF.I`).
pub fn is_masked() -> bool {
    let daif: u64;
    // SAFETY: reading DAIF has no side effects.
    unsafe { asm!("mrs {}, daif", out(reg) daif, options(nomem, nostack, preserves_flags)) };
    daif & (1 << 7) != 0
}

/// Runs `f` with IRQs masked, restoring the previous mask state afterwards.
pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
    let was_masked = is_masked();
    disable();
    let r = f();
    if !was_masked {
        enable();
    }
    r
}

/// Waits for an interrupt (`WFI`); returns after any IRQ was taken (if unmasked) or became
/// pending (if masked).
pub fn wait_for_interrupt() {
    aarch64_cpu::asm::wfi();
}

/// Called by the IRQ vectors: acknowledges one interrupt, dispatches it, EOIs it.
pub(crate) fn dispatch() {
    let ack = gic::ack();
    if ack.is_special() {
        return;
    }
    let intid = ack.intid();
    let h = HANDLERS
        .get(intid as usize)
        .map_or(0, |s| s.load(Ordering::Acquire));
    if h == 0 {
        crate::println!(
            "guest-rt: FAIL unexpected IRQ {} on cpu {}",
            intid,
            crate::smp::this_cpu()
        );
        crate::psci::system_reset();
    }
    // SAFETY: a non-zero entry was stored from a `Handler` by `set_handler`.
    let handler = unsafe { core::mem::transmute::<usize, Handler>(h) };
    handler(intid);
    gic::eoi(ack);
}
