//! Exception classes the hypervisor does not emulate: the guest gets an UNDEFINED exception
//! and the console a warning. Which reason applies is part of the log line.

use super::{ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// `ESR_EL2.EC` = 0x00, "unknown reason": an instruction EL2 traps but the hardware could
/// not classify, e.g. an UNDEFINED instruction in a trapped space.
pub fn unknown_reason<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    refuse(ctx, "exception with unknown reason")
}

/// A feature hidden from guests (`ID_AA64PFR0/1_EL1` report it absent) whose use traps:
/// SVE and SME (`CPTR_EL2`), pointer authentication on a CPU without switched keys
/// (`HCR_EL2.API`/`APK` = 0). Using an absent feature is UNDEFINED.
pub fn hidden_feature<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    refuse(ctx, "use of a feature hidden from guests")
}

/// A class this hypervisor's trap configuration never routes to EL2 (`SVC`, `BRK`, debug
/// events, alignment faults, `ERET`, FP exceptions... go to the guest's own EL1 with
/// `HCR_EL2.TGE` = 0, `MDCR_EL2.TDE` = 0 and no nested virtualization): answered as an
/// unexpected instruction.
pub fn not_routed<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    refuse(ctx, "exception class not routed to EL2")
}

/// An unallocated class, or one only EL2 itself takes (aborts from the current EL).
pub fn unallocated<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    refuse(ctx, "unallocated exception class")
}

fn refuse<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, why: &str) -> Outcome {
    ctx.stats.count(ExitReason::Other);
    let (exit, esr) = (ctx.exit(), ctx.info.esr);
    ctx.undefined(format_args!(
        "unhandled exit {exit:?} (ESR_EL2={esr:#x}, {why})"
    ))
}
