//! `WFI`/`WFE`/`WFIT`/`WFET` trapped by `HCR_EL2.TWI` (EC 0x01): the vCPU gives up its
//! physical CPU until an interrupt, a kick, one of its timers or a `WFIT` timeout, unless
//! one of those is already there.

use el2_core::exit::Exit;

use super::aarch32::condition_passed;
use super::{ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// A wait instruction.
pub fn wfx<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Wfx);
    // An AArch32 WFI/WFE that failed its condition check (ISS.CV/COND, or the IT state)
    // does nothing (checked before the step, which advances the IT state).
    let passed = condition_passed(ctx.info.iss(), ctx.vcpu.regs.pstate);
    ctx.skip();
    if !passed {
        return Outcome::Emulated;
    }
    // WFIT (FEAT_WFxT): Xt holds a CNTVCT_EL0 value that bounds the wait. A timeout already
    // passed, or one the hardware did not report (ISS.RV = 0), ends the wait at once (a WFIT
    // may always complete early).
    let mut timeout = None;
    // ISS.TI bit 1 set: WFIT/WFET (only then is the whole syndrome worth decoding).
    let with_timeout = ctx.info.iss() & 0b10 != 0;
    if let Some(Exit::WfxTimeout { reg, .. }) = with_timeout.then(|| ctx.exit()) {
        let Some(reg) = reg else {
            return Outcome::Emulated;
        };
        let vcount = ctx.vcpu.regs.read(reg);
        match ctx.vm.counter().physical_at(vcount) {
            Some(at) if at <= ctx.vm.now() => return Outcome::Emulated,
            Some(at) => timeout = Some(at),
            None => {} // beyond the counter's range: an ordinary WFI
        }
    }
    if ctx.vm.take_wake() || ctx.vm.pending_for_wfi() {
        return Outcome::Emulated;
    }
    ctx.vm.block(timeout);
    Outcome::Yield
}
