//! The hypervisor heap: a buddy allocator over a static region of the image's `.bss`.

use buddy_system_allocator::LockedHeap;
use core::cell::UnsafeCell;

/// Heap size: VM bookkeeping, device models and guest device trees live here; guest RAM
/// and stage-2 tables come from the frame allocator instead.
pub const HEAP_SIZE: usize = 8 << 20;

#[repr(C, align(4096))]
struct HeapSpace(UnsafeCell<[u8; HEAP_SIZE]>);
// SAFETY: the memory is handed to the allocator once in `init` and only reached through it.
unsafe impl Sync for HeapSpace {}

static HEAP_SPACE: HeapSpace = HeapSpace(UnsafeCell::new([0; HEAP_SIZE]));

#[global_allocator]
static HEAP: LockedHeap<32> = LockedHeap::empty();

/// Grows the heap with `bytes` from the frame allocator (after it is set up): device
/// models such as RAM disks live on the heap. Returns the bytes added.
pub fn grow_from_frames(bytes: u64) -> u64 {
    match super::frames::alloc_zeroed(bytes) {
        Some(pa) => {
            // SAFETY: the frames were just allocated for the heap and are never freed; they
            // are identity-mapped normal memory.
            unsafe { HEAP.lock().add_to_heap(pa as usize, (pa + bytes) as usize) };
            bytes
        }
        None => 0,
    }
}

/// Gives the heap its memory.
///
/// # Safety
/// Once, after the MMU is on (the allocator's lock uses exclusive accesses).
pub unsafe fn init() {
    // SAFETY: the region is static, unused by anything else, and added exactly once.
    unsafe { HEAP.lock().init(HEAP_SPACE.0.get() as usize, HEAP_SIZE) };
}
