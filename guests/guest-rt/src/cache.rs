//! Data-cache maintenance by virtual address, for data a CPU with its MMU (and so its caches)
//! still off must read: the boot block of a secondary CPU.

use aarch64_cpu::asm::barrier;
use core::arch::asm;

/// Smallest data-cache line size in bytes, from `CTR_EL0.DminLine` (log2 of words).
fn dcache_line_size() -> usize {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effects and is allowed at EL1.
    unsafe { asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack, preserves_flags)) };
    4 << ((ctr >> 16) & 0xf)
}

/// Cleans and invalidates `[addr, addr + len)` to the point of coherency (`DC CIVAC`), so a
/// non-cacheable reader (MMU off) sees what this CPU wrote. Harmless with caches off.
pub fn clean_invalidate_range(addr: usize, len: usize) {
    let line = dcache_line_size();
    let mut a = addr & !(line - 1);
    barrier::dsb(barrier::SY);
    while a < addr + len {
        // SAFETY: `DC CIVAC` on an address the caller owns only writes back/drops cache
        // lines; memory contents as seen by every observer stay the same.
        unsafe { asm!("dc civac, {}", in(reg) a, options(nostack, preserves_flags)) };
        a += line;
    }
    barrier::dsb(barrier::SY);
}
