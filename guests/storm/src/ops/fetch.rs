//! Instruction fetch from places without code: unbacked IPA, every device, beyond the
//! IPA size (a `BLR` through the storm's executable window). The answer must be an
//! Instruction Abort at EL1 (`EC` 0x21) taken on the target address with a synchronous
//! external abort (or an address size fault beyond the IPA size): a hypervisor must never
//! emulate an instruction fetch from MMIO. As a control, a page of `RET`s in RAM, fetched
//! through the same window, runs.

use core::arch::asm;

use crate::ops::sysreg::Shown;
use crate::ops::Ctx;
use crate::paging::{self, Window};
use crate::tally::{self, Kind};
use crate::vectors;

/// `RET`.
const RET: u32 = 0xd65f_03c0;

/// Fills this vCPU's `RET` page (in its scratch) and makes it fetchable.
pub fn init(ret_page: u64) {
    for i in 0..1024u64 {
        // SAFETY: the page is this vCPU's scratch, identity mapped, used for nothing else.
        unsafe { ((ret_page + 4 * i) as *mut u32).write_volatile(RET) };
    }
    let mut a = ret_page;
    while a < ret_page + 4096 {
        // SAFETY: cache maintenance by VA on our own page.
        unsafe { asm!("dc cvau, {a}", "dsb ish", "ic ivau, {a}", a = in(reg) a, options(nostack)) };
        a += 64;
    }
    // SAFETY: barriers only.
    unsafe { asm!("dsb ish", "isb", options(nostack)) };
}

/// One fetch.
pub fn op(ctx: &mut Ctx) {
    let t = ctx.targets;
    let rng = &mut ctx.rng;
    let (ipa, code) = match rng.below(8) {
        0..=3 if t.nregions > 0 => {
            let r = t.regions()[rng.below(t.nregions as u64) as usize];
            (r.base + (rng.below(r.size) & !3), false)
        }
        4 => (ctx.ret_page + (rng.below(1024) << 2), true),
        5 => (
            (1u64 << t.ipa_bits.min(47)) + (rng.below(1 << 20) & !3),
            false,
        ),
        _ => (t.outside(rng), false),
    };
    let va = paging::map(Window::Exec, ipa);
    tally::count(Kind::Fetch);
    vectors::clear();
    // SAFETY: the target is either a page of RETs or an address that cannot be fetched;
    // the storm's vectors resume an instruction abort at x30, right after the BLR.
    unsafe { asm!("blr {t}", t = in(reg) va, out("x30") _, options(nostack)) };
    let f = vectors::take();
    let ok = match f {
        None => code,
        Some(f) => {
            let addr_size = matches!(f.fsc(), 0..=3) && ipa >= 1 << t.ipa_bits;
            !code
                && f.ec() == 0x21
                && (f.fsc() == 0x10 || addr_size)
                && f.elr == va
                && (f.esr & (1 << 10) != 0 || f.far == va)
        }
    };
    if !ok {
        tally::fail(
            Kind::Fetch,
            format_args!(
                "fetch at IPA {ipa:#x} (VA {va:#x}, code {code}): {}",
                Shown(f)
            ),
        );
    }
}
