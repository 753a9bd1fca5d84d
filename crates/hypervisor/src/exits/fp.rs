//! The guest's first FP/SIMD use since its vCPU was loaded (EC 0x07, `CPTR_EL2.TFP` /
//! `CPACR_EL1.FPEN` through `CPTR_EL2` with VHE): the world switch loads its FP/SIMD state
//! and stops trapping until `vcpu_put` (lazy switch).

use super::{ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// An FP/SIMD access trap.
pub fn fp_simd<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::FpTrap);
    // SAFETY: exit handlers run inside the run loop of this vCPU, between `vcpu_load` and
    // `vcpu_put` on this CPU: the vCPU is the loaded one, as `fp_trap` requires.
    unsafe { ctx.sw.fp_trap(ctx.vcpu) };
    Outcome::Emulated
}
