//! Instruction aborts from the guest (EC 0x20): guest RAM is always executable at Stage 2,
//! so a fetch that faults is outside RAM (or from a device region): the guest gets a
//! synchronous external abort on the fetch.

use el2_core::exit::InstructionAbort;
use el2_core::inject;

use super::{ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// An instruction abort.
pub fn iabt_low<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::InstructionAbort);
    let ia = InstructionAbort::from_info(&ctx.info);
    ctx.vm.warn(format_args!(
        "instruction fetch from IPA {:#x} (pc {:#x}) outside guest RAM; injecting external abort",
        ia.ipa, ctx.vcpu.regs.pc
    ));
    let far = if ia.fnv { 0 } else { ia.far };
    inject::inject_instruction_abort(ctx.sw, ctx.vcpu, far);
    Outcome::Injected
}
