//! A bump allocator over a fixed mapping above the guest's 4 GiB (never frees).

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;

/// Where the heap is mapped.
const HEAP_BASE: u64 = 0x18_0000_0000;
/// Its size.
const HEAP_SIZE: u64 = 1 << 30;

/// The allocator: the next free address (0 before the first allocation maps the heap).
pub struct Bump(Cell<u64>);

// SAFETY: the runner is single-threaded (no threads, no allocation in signal handlers).
unsafe impl Sync for Bump {}

impl Bump {
    /// An allocator that maps its heap on first use.
    pub const fn new() -> Bump {
        Bump(Cell::new(0))
    }
}

// SAFETY: blocks are carved from one mapping, never overlap, and are aligned as asked.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if self.0.get() == 0 {
            if !crate::sys::mmap_fixed(HEAP_BASE, HEAP_SIZE, false) {
                return core::ptr::null_mut();
            }
            self.0.set(HEAP_BASE);
        }
        let a = (self.0.get() + l.align() as u64 - 1) & !(l.align() as u64 - 1);
        if a + l.size() as u64 > HEAP_BASE + HEAP_SIZE {
            return core::ptr::null_mut();
        }
        self.0.set(a + l.size() as u64);
        a as *mut u8
    }
    unsafe fn dealloc(&self, _: *mut u8, _: Layout) {}
}
