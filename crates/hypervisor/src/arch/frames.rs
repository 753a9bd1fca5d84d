//! Physical frame allocator for guest RAM and stage-2 tables: a buddy allocator over the
//! host RAM the image, the device tree and the boot loader's initrd do not use.
//!
//! Frames are handed out zeroed the fast way: `DC ZVA` writes zeros to a whole block
//! (`DCZID_EL0.BS`, usually 64 bytes) per instruction, as Linux's `clear_page` does, instead
//! of 8 or 16 bytes per store (guest RAM, heap growth and stage-2 tables: most of the boot
//! time before). Plain stores where `DCZID_EL0.DZP` prohibits it or the EL2 MMU is off
//! (`DC ZVA` needs Normal memory).
//!
//! Guest memory ([`alloc_zeroed_to_poc`]) is also cleaned and invalidated to the point of
//! coherency in the same pass (`DC CIVAC` on each block right after its `DC ZVA`, while the
//! line is still close): a guest starting with its MMU off reads memory, not our cache, and
//! must see zeros there, not a previous VM's or the hypervisor's data (`super::cache`).

use super::cache;
use aarch64_cpu::registers::{Readable, SCTLR_EL2};
use buddy_system_allocator::FrameAllocator;
use spin::Mutex;

/// Frame (page) size.
pub const FRAME: u64 = 4096;

static FRAMES: Mutex<FrameAllocator<40>> = Mutex::new(FrameAllocator::new());

/// Adds the page-aligned interior of `[base, end)` to the allocator.
pub fn add_range(base: u64, end: u64) {
    let start = base.div_ceil(FRAME);
    let end = end / FRAME;
    if end > start {
        FRAMES.lock().add_frame(start as usize, end as usize);
    }
}

/// Allocates `bytes` (rounded up to a power-of-two number of frames, naturally aligned, so
/// large guest RAM regions are block-mappable) and zeroes them. Returns the physical
/// address.
pub fn alloc_zeroed(bytes: u64) -> Option<u64> {
    let frames = bytes.div_ceil(FRAME) as usize;
    let first = FRAMES.lock().alloc(frames)?;
    let pa = first as u64 * FRAME;
    // SAFETY: the frames were just allocated for us and are identity-mapped RAM.
    unsafe { zero(pa, frames as u64 * FRAME, false) };
    Some(pa)
}

/// [`alloc_zeroed`] for memory a guest will use: the zeros are also cleaned to the point of
/// coherency and no cache keeps a line of it (see the module documentation).
pub fn alloc_zeroed_to_poc(bytes: u64) -> Option<u64> {
    let frames = bytes.div_ceil(FRAME) as usize;
    let first = FRAMES.lock().alloc(frames)?;
    let pa = first as u64 * FRAME;
    // SAFETY: the frames were just allocated for us and are identity-mapped RAM.
    unsafe { zero(pa, frames as u64 * FRAME, true) };
    Some(pa)
}

/// Returns frames obtained from [`alloc_zeroed`] with the same `bytes`.
pub fn free(pa: u64, bytes: u64) {
    let frames = bytes.div_ceil(FRAME) as usize;
    FRAMES.lock().dealloc((pa / FRAME) as usize, frames);
}

/// Stage-2 table pages from the frame allocator (identity-mapped, so phys == virt).
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameTables;

// SAFETY: pages come zeroed from `alloc_zeroed`, are exclusively owned until freed, and the
// identity map makes `phys_to_virt` a valid pointer for every page handed out.
unsafe impl stage2::TableAllocator for FrameTables {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        alloc_zeroed(count as u64 * FRAME)
    }

    fn free_pages(&mut self, pa: u64, count: usize) {
        free(pa, count as u64 * FRAME)
    }

    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        pa as *mut u64
    }
}

/// `DCZID_EL0.DZP`: `DC ZVA` is prohibited.
const DCZID_DZP: u64 = 1 << 4;

/// The `DC ZVA` block size in bytes, or `None` when the instruction cannot be used here.
fn zva_block() -> Option<u64> {
    let dczid: u64;
    // SAFETY: DCZID_EL0 is a read-only identification register readable at every EL.
    unsafe { core::arch::asm!("mrs {}, dczid_el0", out(reg) dczid, options(nomem, nostack)) };
    let mmu_on = SCTLR_EL2.matches_all(SCTLR_EL2::M::Enable);
    (dczid & DCZID_DZP == 0 && mmu_on).then(|| 4 << (dczid & 0xf))
}

/// Zeroes `[pa, pa + len)`; with `to_poc` also cleans and invalidates it to the point of
/// coherency (`DC CIVAC` of each block's lines right after its `DC ZVA`, then `DSB SY`).
///
/// # Safety
/// The range is identity-mapped memory the caller owns exclusively (nothing else reads or
/// writes it meanwhile).
unsafe fn zero(pa: u64, len: u64, to_poc: bool) {
    let line = cache::dcache_line();
    let block = match zva_block() {
        // The cleaning below steps by whole lines within each block.
        Some(b) if pa.is_multiple_of(b) && len.is_multiple_of(b) && (!to_poc || b >= line) => b,
        _ => {
            // SAFETY: the caller owns the identity-mapped range.
            unsafe { core::ptr::write_bytes(pa as *mut u8, 0, len as usize) };
            if to_poc {
                // SAFETY: as above.
                unsafe { cache::clean_inval_to_poc(pa, len) };
            }
            return;
        }
    };
    if to_poc && block == line {
        // SAFETY: the caller's range, block-aligned (checked above).
        unsafe { zero_clean_lines(pa, len, line) };
        return;
    }
    let end = pa + len;
    let mut p = pa;
    // Four blocks per iteration where the length allows (one loop branch per 256 bytes).
    let step = 4 * block;
    while end - p >= step {
        // SAFETY: DC ZVA zeroes the four naturally aligned blocks at p, all inside the
        // caller's range (Normal memory: the EL2 MMU is on).
        unsafe {
            core::arch::asm!(
                "dc zva, {a}", "dc zva, {b}", "dc zva, {c}", "dc zva, {d}",
                a = in(reg) p, b = in(reg) p + block, c = in(reg) p + 2 * block,
                d = in(reg) p + 3 * block, options(nostack)
            )
        };
        if to_poc {
            // SAFETY: the same lines; DC CIVAC is ordered after the DC ZVA (a store) to
            // the same location and writes the zeros back.
            unsafe { clean_lines(p, step, line) };
        }
        p += step;
    }
    while p < end {
        // SAFETY: as above, one block.
        unsafe { core::arch::asm!("dc zva, {}", in(reg) p, options(nostack)) };
        if to_poc {
            // SAFETY: as above.
            unsafe { clean_lines(p, block, line) };
        }
        p += block;
    }
    if to_poc {
        // SAFETY: barrier only; full system, for observers with caches off.
        unsafe { core::arch::asm!("dsb sy", options(nostack)) };
    } else {
        // Later loads and stores of this CPU, and other observers, see the zeros.
        aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::ISH);
    }
}

/// `DC ZVA` then `DC CIVAC` on each line of `[pa, pa + len)` when the `DC ZVA` block is one
/// cache line (QEMU's CPUs, Cortex-A57, ThunderX), then `DSB SY`: one loop that steps one
/// register by a line, four lines per iteration (3.5 instructions per line instead of 6.75
/// for the two loops of [`zero`] + [`clean_lines`]: a 128 MiB VM boots ~5 ms sooner under
/// `-icount`).
///
/// # Safety
/// `[pa, pa + len)` is identity-mapped Normal memory the caller owns exclusively; `pa` and
/// `len` are multiples of `line`, the `DC ZVA` block size.
unsafe fn zero_clean_lines(pa: u64, len: u64, line: u64) {
    let end = pa + len;
    let four_end = pa + (len & !(4 * line - 1));
    // SAFETY: every address the loops touch is a line of the caller's range; DC ZVA zeroes
    // it (a store) and the DC CIVAC after it, to the same location, is ordered after it and
    // writes the zeros back to PoC; the DSB SY completes the maintenance for observers
    // with caches off.
    unsafe {
        core::arch::asm!(
            "cmp {p}, {four_end}",
            "b.hs 2f",
            "1:",
            "dc zva, {p}", "dc civac, {p}", "add {p}, {p}, {line}",
            "dc zva, {p}", "dc civac, {p}", "add {p}, {p}, {line}",
            "dc zva, {p}", "dc civac, {p}", "add {p}, {p}, {line}",
            "dc zva, {p}", "dc civac, {p}", "add {p}, {p}, {line}",
            "cmp {p}, {four_end}",
            "b.lo 1b",
            "2:",
            "cmp {p}, {end}",
            "b.hs 4f",
            "3:",
            "dc zva, {p}", "dc civac, {p}", "add {p}, {p}, {line}",
            "cmp {p}, {end}",
            "b.lo 3b",
            "4:",
            "dsb sy",
            p = inout(reg) pa => _,
            four_end = in(reg) four_end,
            end = in(reg) end,
            line = in(reg) line,
            options(nostack)
        )
    };
}

/// `DC CIVAC` on each `line`-byte line of `[p, p + len)` (`p` and `len` line multiples),
/// four lines per iteration when the length allows; the caller issues the `DSB`.
///
/// # Safety
/// The range is identity-mapped memory.
#[inline(always)]
unsafe fn clean_lines(p: u64, len: u64, line: u64) {
    let end = p + len;
    let mut a = p;
    while end - a >= 4 * line {
        // SAFETY: cache maintenance by VA on mapped memory; it loses no data.
        unsafe {
            core::arch::asm!(
                "dc civac, {a}", "dc civac, {b}", "dc civac, {c}", "dc civac, {d}",
                a = in(reg) a, b = in(reg) a + line, c = in(reg) a + 2 * line,
                d = in(reg) a + 3 * line, options(nostack)
            )
        };
        a += 4 * line;
    }
    while a < end {
        // SAFETY: as above.
        unsafe { core::arch::asm!("dc civac, {}", in(reg) a, options(nostack)) };
        a += line;
    }
}
