//! Priorities on the calling CPU: two SGIs pending at once are taken highest priority first;
//! an SGI whose priority is not below `PMR` stays pending until `PMR` is raised.

use crate::counts::{self, SGI_HIGH, SGI_LOW, SGI_MASKED};
use crate::{fail, say};
use guest_rt::{gic, irq, timer};

/// Priority of [`SGI_LOW`] (numerically higher = less urgent).
const LOW_PRIORITY: u8 = 0xc0;
/// Priority of [`SGI_HIGH`].
const HIGH_PRIORITY: u8 = 0x40;
/// Priority of [`SGI_MASKED`].
const MASKED_PRIORITY: u8 = 0xa0;

fn wait_pending(intid: u32) {
    if !timer::wait_until(100_000, || gic::is_pending(intid)) {
        fail(format_args!(
            "SGI {intid} sent to self did not become pending"
        ));
    }
}

/// Makes SGI_LOW then SGI_HIGH pending with IRQs masked, unmasks, and checks SGI_HIGH was
/// taken first.
pub fn order() {
    irq::disable();
    gic::set_priority(SGI_LOW, LOW_PRIORITY);
    gic::set_priority(SGI_HIGH, HIGH_PRIORITY);
    gic::enable(SGI_LOW);
    gic::enable(SGI_HIGH);
    gic::send_sgi_self(SGI_LOW);
    gic::send_sgi_self(SGI_HIGH);
    wait_pending(SGI_LOW);
    wait_pending(SGI_HIGH);
    irq::enable();
    let both = timer::wait_until(100_000, || counts::order_len() >= 2);
    irq::disable();
    if !both {
        fail(format_args!(
            "priority: only {} of 2 pending SGIs taken after unmasking",
            counts::order_len()
        ));
    }
    let first = counts::ORDER[0].load(core::sync::atomic::Ordering::Acquire);
    let second = counts::ORDER[1].load(core::sync::atomic::Ordering::Acquire);
    if (first, second) != (u64::from(SGI_HIGH), u64::from(SGI_LOW)) || counts::order_len() != 2 {
        fail(format_args!(
            "priority: taken SGI {first} then SGI {second} ({} in all), expected SGI {SGI_HIGH} \
             (prio {HIGH_PRIORITY:#x}) then SGI {SGI_LOW} (prio {LOW_PRIORITY:#x})",
            counts::order_len()
        ));
    }
    say!(
        "priority: SGI {} (prio {:#x}) taken before SGI {} (prio {:#x}) ok",
        SGI_HIGH,
        HIGH_PRIORITY,
        SGI_LOW,
        LOW_PRIORITY
    );
}

/// With `PMR` equal to the SGI's priority it is not taken (only priorities *below* `PMR` are
/// signalled); raising `PMR` delivers it.
pub fn pmr_masking() {
    irq::disable();
    let pmr_before = gic::priority_mask();
    gic::set_priority(SGI_MASKED, MASKED_PRIORITY);
    gic::enable(SGI_MASKED);
    gic::set_priority_mask(MASKED_PRIORITY);
    gic::send_sgi_self(SGI_MASKED);
    wait_pending(SGI_MASKED);
    irq::enable();
    // Give a wrongly signalled interrupt 20 ms to show up.
    let leaked = timer::wait_until(20_000, || counts::count(0, SGI_MASKED) != 0);
    irq::disable();
    if leaked {
        fail(format_args!(
            "PMR: SGI {SGI_MASKED} (prio {MASKED_PRIORITY:#x}) taken with PMR = {MASKED_PRIORITY:#x}"
        ));
    }
    if !gic::is_pending(SGI_MASKED) {
        fail(format_args!(
            "PMR: masked SGI {SGI_MASKED} is no longer pending"
        ));
    }
    gic::set_priority_mask(pmr_before);
    irq::enable();
    let taken = timer::wait_until(100_000, || counts::count(0, SGI_MASKED) == 1);
    irq::disable();
    if !taken {
        fail(format_args!(
            "PMR: SGI {SGI_MASKED} not taken after raising PMR to {pmr_before:#x}"
        ));
    }
    say!(
        "PMR: SGI {} (prio {:#x}) held back by PMR {:#x}, taken after PMR {:#x} ok",
        SGI_MASKED,
        MASKED_PRIORITY,
        MASKED_PRIORITY,
        pmr_before
    );
}
