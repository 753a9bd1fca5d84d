//! Counts of the guest's software-generated interrupts (SGIs, Linux's IPIs), kept for the
//! whole VM and printed with the runtime's other counters when the guest powers off or
//! resets: how many SGIs the guest asked for (one per target PE of each write to
//! `ICC_SGI1R`) and how many it acknowledged (reads of `ICC_IAR1` that returned an INTID
//! below 16). Sent and acknowledged differ when the GIC merged an SGI into one already
//! pending for the same target (the architecture allows it) or one was lost on the way;
//! a check that sees no IPIs in a window tells from these whether none was sent.

use core::sync::atomic::{AtomicU64, Ordering};

/// SGIs requested: target PEs named by the guest's `ICC_SGI1R` writes.
static SENT: AtomicU64 = AtomicU64::new(0);
/// SGIs acknowledged: `ICC_IAR1` reads that returned INTID 0-15.
static ACKNOWLEDGED: AtomicU64 = AtomicU64::new(0);

/// `ICC_SGI1R_EL1.IRM`: the SGI goes to every PE but the sender.
const IRM: u64 = 1 << 40;
/// `ICC_SGI1R_EL1.TargetList`: one bit per PE of the named affinity-1 cluster.
const TARGET_LIST: u64 = 0xffff;

/// Counts the targets of a guest write of `value` to `ICC_SGI1R` (`MCRR p15, 0, ..., c12`)
/// that the hypervisor accepted; `vcpus` is the VM's vCPU count.
pub fn note_sent(value: u64, vcpus: usize) {
    let targets = if value & IRM != 0 {
        vcpus.saturating_sub(1) as u64
    } else {
        u64::from((value & TARGET_LIST).count_ones())
    };
    SENT.fetch_add(targets, Ordering::Relaxed);
}

/// Counts a guest read of `ICC_IAR1` that returned `intid`.
pub fn note_acknowledged(intid: u64) {
    if intid & 0xff_ffff < 16 {
        ACKNOWLEDGED.fetch_add(1, Ordering::Relaxed);
    }
}

/// (SGIs sent, SGIs acknowledged) since the runtime started, all vCPUs together.
pub fn counts() -> (u64, u64) {
    (
        SENT.load(Ordering::Relaxed),
        ACKNOWLEDGED.load(Ordering::Relaxed),
    )
}
