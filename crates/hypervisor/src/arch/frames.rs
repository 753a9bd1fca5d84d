//! Physical frame allocator for guest RAM and stage-2 tables: a buddy allocator over the
//! host RAM the image, the device tree and the boot loader's initrd do not use.

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
    unsafe { super::zero::zero(pa, frames as u64 * FRAME) };
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
