//! Data aborts from the guest (EC 0x24): a translation fault outside guest RAM is an MMIO
//! access (`mmio.rs`); a fault in RAM is classified by [`stage2::classify`] (a write to a
//! dirty-logged page, a race with a table change, or an abort the guest gets back).

use el2_core::exit::{DataAbort, FaultStatus};
use el2_core::inject;
use stage2::{FaultAction, FaultInput, IpaRegion, S2FaultKind};

use super::{mmio, ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// A data abort.
pub fn dabt_low<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    let da = DataAbort::from_info(&ctx.info);
    let in_ram = ctx.vm.ram_contains(da.ipa);
    // Fast path, the common MMIO exit: a translation fault outside guest RAM goes straight
    // to the bus (what `classify` would decide, without building its input).
    let plain_mmio = !in_ram && matches!(da.status, FaultStatus::Translation { .. }) && !da.s1ptw;
    let action = if plain_mmio {
        FaultAction::Mmio
    } else {
        classify(ctx, &da, in_ram)
    };
    match action {
        FaultAction::Mmio | FaultAction::PopulateRam => mmio::emulate(ctx, &da),
        FaultAction::Retry => {
            ctx.stats.count(ExitReason::DirtyLog);
            Outcome::Emulated
        }
        FaultAction::DirtyLogWrite => {
            ctx.stats.count(ExitReason::DirtyLog);
            match ctx.vm.dirty_log_write(da.ipa) {
                // Marked dirty and writable again (or another vCPU did it): the guest
                // retries the store.
                Ok(()) => Outcome::Emulated,
                Err(e) => refuse(ctx, &da, format_args!("dirty-log write fault: {e:?}")),
            }
        }
        FaultAction::InjectAbort(reason) => {
            ctx.stats.count(ExitReason::DataAbortInjected);
            refuse(ctx, &da, format_args!("{reason}"))
        }
    }
}

/// What to do with a data abort by [`stage2::classify`]: guest RAM is looked up in the
/// Stage-2 tables; every other IPA goes to the MMIO bus, which answers or refuses.
fn classify<H: ExitHost>(ctx: &ExitCtx<'_, H>, da: &DataAbort, in_ram: bool) -> FaultAction {
    let (kind, level) = S2FaultKind::from_fsc(da.dfsc);
    let (region, page) = if in_ram {
        (IpaRegion::Ram { writable: true }, ctx.vm.s2_page(da.ipa))
    } else {
        (IpaRegion::Mmio, Default::default())
    };
    stage2::classify(&FaultInput {
        kind,
        level,
        // Cache maintenance reports WnR = 1: on a logged page it is treated as a write (the
        // page is marked dirty and made writable), which is conservative and never wrong.
        write: da.wnr,
        instruction_fetch: false,
        s1ptw: da.s1ptw,
        region,
        dirty_logged: page.dirty_logged,
        lazy_populate: false,
        mapped_now: page.mapped,
    })
}

/// Answers a data abort the hypervisor will not emulate: logs `why` and injects a
/// synchronous external abort (`FAR_EL1` = the faulting address unless `FAR_EL2` is not
/// valid).
pub fn refuse<H: ExitHost>(
    ctx: &mut ExitCtx<'_, H>,
    da: &DataAbort,
    why: core::fmt::Arguments<'_>,
) -> Outcome {
    ctx.vm.warn(format_args!(
        "{} at IPA {:#x} (pc {:#x}, ISV={}, DFSC={:#x}): {why}; injecting external abort",
        if da.wnr { "write" } else { "read" },
        da.ipa,
        ctx.vcpu.regs.pc,
        u8::from(da.isv),
        da.dfsc
    ));
    let far = if da.fnv { 0 } else { da.far };
    inject::inject_data_abort(ctx.sw, ctx.vcpu, far, da.wnr);
    Outcome::Injected
}
