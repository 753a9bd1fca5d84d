//! Exits that are not synchronous exceptions: a physical IRQ/FIQ (`HCR_EL2.IMO`/`FMO`)
//! taken while the guest ran, and an SError (`HCR_EL2.AMO`).

use super::{ExitCtx, ExitHost, Outcome, VmEnd};
use crate::stats::ExitReason;

/// A physical interrupt: the host handles it; the loaded vCPU's virtual timer is
/// forwarded; the vCPU yields when its time slice is over and another vCPU waits.
pub fn host_irq<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Irq);
    if ctx.vm.host_irqs().vtimer {
        ctx.timer.on_irq(vtimer::VIRT_TIMER_PPI, ctx.vm);
    }
    if ctx.vm.slice_over() {
        Outcome::Yield
    } else {
        Outcome::Emulated
    }
}

/// An SError from the guest: its state is unknown, the VM stops.
pub fn serror<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Other);
    ctx.vm.warn(format_args!(
        "SError from guest (ESR_EL2={:#x}); stopping the VM",
        ctx.info.esr
    ));
    ctx.vm.end_vm(VmEnd::Crashed);
    Outcome::Yield
}
