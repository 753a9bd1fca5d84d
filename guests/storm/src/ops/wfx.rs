//! WFI and WFE storms. Before each one the storm makes sure an interrupt can wake it: it
//! re-initialises its GIC CPU interface (and, on vCPU 0, the distributor) that random
//! writes may have disabled, clears the active state of its SGIs/PPIs, enables the
//! virtual timer's PPI and arms the timer a few microseconds ahead (interrupts stay
//! masked in PSTATE: a pending interrupt ends WFI all the same). Checked: WFI/WFE return
//! (a hang is caught by the scenario's timeout) and raise no exception at EL1.

use core::arch::asm;

use aarch64_cpu::registers::{Readable, Writeable, CNTVCT_EL0, CNTV_CTL_EL0, CNTV_CVAL_EL0};
use guest_rt::gic;
use guest_rt::platform::GicInfo;

use crate::ops::sysreg::Shown;
use crate::ops::Ctx;
use crate::tally::{self, Kind};
use crate::vectors;

/// Timer ticks (62.5 MHz) until the wake-up interrupt.
const WAKE_TICKS: u64 = 200;

/// Makes the virtual timer's interrupt able to end a WFI on this vCPU, and arms it.
pub fn prepare_wakeup(ctx: &mut Ctx) {
    let _ = if ctx.cpu == 0 {
        gic::init(&ctx.gic)
    } else {
        gic::init_cpu()
    };
    let icactiver0 = match ctx.gic {
        GicInfo::V2 { gicd, .. } => gicd + 0x380,
        GicInfo::V3 { gicr, .. } => gicr + ctx.cpu * 0x2_0000 + 0x1_0000 + 0x380,
    };
    // SAFETY: GICD_ICACTIVER0 (GICv2, banked per CPU) or this vCPU's GICR_ICACTIVER0 in
    // the identity-mapped device gigabyte; writing ones only clears active states.
    unsafe { (icactiver0 as *mut u32).write_volatile(u32::MAX) };
    gic::enable(ctx.timer_ppi);
    CNTV_CVAL_EL0.set(CNTVCT_EL0.get() + WAKE_TICKS);
    CNTV_CTL_EL0.write(CNTV_CTL_EL0::ENABLE::SET + CNTV_CTL_EL0::IMASK::CLEAR);
}

/// Disarms the timer after a wake-up.
pub fn after_wakeup() {
    CNTV_CTL_EL0.set(0);
}

/// One WFI (or, with `wfe`, `SEVL; WFE; WFE`) at EL1.
pub fn op(ctx: &mut Ctx, wfe: bool) {
    let kind = if wfe { Kind::Wfe } else { Kind::Wfi };
    prepare_wakeup(ctx);
    tally::count(kind);
    vectors::clear();
    if wfe {
        // SAFETY: WFE only waits; SEVL makes the first one return at once.
        unsafe { asm!("sevl", "wfe", "wfe", options(nostack, nomem)) };
    } else {
        // SAFETY: WFI only waits; the armed timer's pending interrupt ends it.
        unsafe { asm!("dsb sy", "wfi", options(nostack, nomem)) };
    }
    let f = vectors::take();
    after_wakeup();
    if f.is_some() {
        tally::fail(kind, format_args!("exception at EL1: {}", Shown(f)));
    }
}
