//! Cache maintenance for guest memory the hypervisor writes before the guest runs.
//!
//! A guest starts with its MMU off (the arm64 and ARM boot protocols): its data accesses
//! are Non-cacheable and its instruction fetches go to memory, while the hypervisor wrote
//! the guest's RAM (zeroes, images, device tree) through its cacheable identity map. Every
//! such line is cleaned *and invalidated* to the point of coherency (`DC CIVAC`, as KVM's
//! `kvm_flush_dcache_to_poc` = `dcache_clean_inval_poc`): cleaning puts the data in memory;
//! invalidating leaves no clean copy behind that the guest's later cacheable reads (once
//! its MMU is on) could hit instead of what it wrote meanwhile with its MMU off. The line
//! size is `CTR_EL0.DminLine` (64 bytes on QEMU's CPUs and Cortex-A57, 128 on ThunderX).
//!
//! Not done: `HCR_EL2.FWB` (FEAT_S2FWB, `ID_AA64MMFR2_EL1.FWB`) would force the guest's
//! accesses cacheable and make this unnecessary, but changes what stage-2 `MemAttr` means;
//! Cortex-A57 and ThunderX do not have it.

/// `CTR_EL0.DminLine`: the smallest data cache line of this CPU, in bytes.
pub fn dcache_line() -> u64 {
    let ctr: u64;
    // SAFETY: CTR_EL0 is a read-only identification register readable at EL2.
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    4 << ((ctr >> 16) & 0xf)
}

/// `DC CIVAC` over every line of `[pa, pa + len)`, then `DSB SY`: the bytes are in memory
/// for every observer, whatever attributes it uses, and no cache holds a copy.
///
/// # Safety
/// The range is identity-mapped memory (a fault on `DC CIVAC` would be taken at EL2).
pub unsafe fn clean_inval_to_poc(pa: u64, len: u64) {
    if len == 0 {
        return;
    }
    let line = dcache_line();
    let end = pa.saturating_add(len);
    let mut a = pa & !(line - 1);
    while a < end {
        // SAFETY: cache maintenance by VA on mapped memory (the caller's contract); it
        // writes back data, it never loses any.
        unsafe { core::arch::asm!("dc civac, {}", in(reg) a, options(nostack)) };
        a += line;
    }
    // SAFETY: barrier only. Full system, so Non-cacheable observers (the guest with its
    // MMU off, possibly on another CPU) see the completed maintenance.
    unsafe { core::arch::asm!("dsb sy", options(nostack)) };
}

/// `IC IALLUIS; DSB ISH; ISB`: no instruction cache of the inner-shareable domain holds a
/// line of code the hypervisor has just written into a guest (or a stale one of the
/// previous owner of that memory). Called after images are loaded, before any vCPU of the
/// VM runs.
pub fn invalidate_icache() {
    // SAFETY: invalidating instruction caches loses nothing; the barriers order it before
    // the guest's first fetch.
    unsafe { core::arch::asm!("ic ialluis", "dsb ish", "isb", options(nostack)) };
}
