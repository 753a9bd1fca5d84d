//! The guest heap (`virtio-drivers` needs `alloc` for its console driver): a bump allocator
//! over a `.bss` array. No atomics (MMU off: no exclusives), one CPU, interrupts masked.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;

const HEAP_SIZE: usize = 256 * 1024;

#[repr(C, align(16))]
struct Arena([u8; HEAP_SIZE]);

struct Bump {
    arena: UnsafeCell<Arena>,
    next: UnsafeCell<usize>,
}

// SAFETY: one CPU with interrupts masked: the allocator is never entered concurrently.
unsafe impl Sync for Bump {}

// SAFETY: `alloc` returns distinct, suitably aligned ranges inside the arena (or null when
// it is exhausted); `dealloc` never hands memory out again, so no two live allocations overlap.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: no concurrent entry (see `Sync`), so this is the only reference to `next`.
        let next = unsafe { &mut *self.next.get() };
        let base = self.arena.get() as usize;
        let start = (base + *next).next_multiple_of(layout.align());
        let Some(end) = start.checked_add(layout.size()) else {
            return core::ptr::null_mut();
        };
        if end > base + HEAP_SIZE {
            return core::ptr::null_mut();
        }
        *next = end - base;
        start as *mut u8
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static HEAP: Bump = Bump {
    arena: UnsafeCell::new(Arena([0; HEAP_SIZE])),
    next: UnsafeCell::new(0),
};
