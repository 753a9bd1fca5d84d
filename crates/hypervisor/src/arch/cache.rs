//! Cache maintenance for guest memory the hypervisor writes before the guest runs.
//!
//! A guest starts with its MMU off (the arm64 and ARM boot protocols): its data accesses
//! are Non-cacheable and its instruction fetches go to memory, while the hypervisor wrote
//! the guest's RAM (zeroes, images, device tree) through its cacheable identity map. Every
//! such line is cleaned *and invalidated* to the point of coherency (`DC CIVAC`, as KVM's
//! `kvm_flush_dcache_to_poc` = `dcache_clean_inval_poc`): cleaning puts the data in memory;
//! invalidating leaves no clean copy behind that the guest's later cacheable reads (once
//! its MMU is on) could hit instead of what it wrote meanwhile with its MMU off. The line
//! size is `CTR_EL0.DminLine` (64 bytes on Cortex-A57 and QEMU's `max`, 128 on ThunderX, 256
//! on A64FX).
//!
//! Not done: `HCR_EL2.FWB` (FEAT_S2FWB, `ID_AA64MMFR2_EL1.FWB`) would force the guest's
//! accesses cacheable and make this unnecessary, but changes what stage-2 `MemAttr` means;
//! Cortex-A57 and ThunderX do not have it (QEMU 7.2: `max` has it, `cortex-a57` and
//! `a64fx` do not; the boot log says which).
//!
//! What the device models write later (virtio rings and buffers) is not cleaned: a guest
//! driving a device maps that RAM cacheable (Normal Write-Back, as KVM relies on too).

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

/// Whether the CPU has FEAT_S2FWB (`ID_AA64MMFR2_EL1.FWB`, bits [43:40]): stage 2 could
/// force guest accesses Write-Back (`HCR_EL2.FWB`), which would make the cleaning here
/// unnecessary. Reported in the boot log; not used (see the module documentation).
pub fn has_s2fwb() -> bool {
    let mmfr2: u64;
    // SAFETY: ID_AA64MMFR2_EL1 is a read-only identification register readable at EL2.
    unsafe {
        core::arch::asm!("mrs {}, id_aa64mmfr2_el1", out(reg) mmfr2, options(nomem, nostack))
    };
    (mmfr2 >> 40) & 0xf != 0
}
