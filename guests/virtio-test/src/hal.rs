//! `virtio_drivers::Hal` for a guest running with the MMU off: guest physical = virtual, so
//! DMA addresses are plain pointers. DMA pages come from a bump pool in `.bss` (zeroed by the
//! runtime at entry, never reused, so always zero when handed out).

use core::cell::UnsafeCell;
use core::ptr::NonNull;

use virtio_drivers::{BufferDirection, Hal, PhysAddr, PAGE_SIZE};

/// Pages in the DMA pool (1 MiB).
const DMA_PAGES: usize = 256;

#[repr(C, align(4096))]
struct Pool([u8; DMA_PAGES * PAGE_SIZE]);

struct DmaPool {
    pages: UnsafeCell<Pool>,
    next: UnsafeCell<usize>,
}

// SAFETY: the guest runs on one CPU with interrupts masked, so the pool is never accessed
// concurrently.
unsafe impl Sync for DmaPool {}

static POOL: DmaPool = DmaPool {
    pages: UnsafeCell::new(Pool([0; DMA_PAGES * PAGE_SIZE])),
    next: UnsafeCell::new(0),
};

/// Pages of the DMA pool handed out so far.
pub fn dma_pages_used() -> usize {
    // SAFETY: single CPU, no interrupts: nothing else accesses `next` meanwhile.
    unsafe { *POOL.next.get() }
}

/// The guest's `Hal`: identity-mapped DMA from the pool.
pub struct GuestHal;

// SAFETY: `dma_alloc` returns page-aligned, zeroed, never-aliased pages of the pool, whose
// physical address equals their address (MMU off); `share` returns the buffer's own address,
// which is its physical address for the same reason.
unsafe impl Hal for GuestHal {
    fn dma_alloc(pages: usize, _direction: BufferDirection) -> (PhysAddr, NonNull<u8>) {
        // SAFETY: single CPU, no interrupts: this is the only access to `next` right now.
        let next = unsafe { &mut *POOL.next.get() };
        if pages == 0 || *next + pages > DMA_PAGES {
            return (0, NonNull::dangling());
        }
        let base = POOL.pages.get() as *mut u8;
        // SAFETY: `*next + pages <= DMA_PAGES`, so the offset stays inside the pool.
        let ptr = unsafe { base.add(*next * PAGE_SIZE) };
        *next += pages;
        (
            ptr as PhysAddr,
            NonNull::new(ptr).unwrap_or(NonNull::dangling()),
        )
    }

    unsafe fn dma_dealloc(_paddr: PhysAddr, _vaddr: NonNull<u8>, _pages: usize) -> i32 {
        // A bump pool: pages are not reused (the test allocates a bounded amount).
        0
    }

    unsafe fn mmio_phys_to_virt(paddr: PhysAddr, _size: usize) -> NonNull<u8> {
        NonNull::new(paddr as *mut u8).unwrap_or(NonNull::dangling())
    }

    unsafe fn share(buffer: NonNull<[u8]>, _direction: BufferDirection) -> PhysAddr {
        buffer.as_ptr() as *mut u8 as PhysAddr
    }

    unsafe fn unshare(_paddr: PhysAddr, _buffer: NonNull<[u8]>, _direction: BufferDirection) {}
}
