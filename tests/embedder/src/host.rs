//! The host side the toy VMM gives `stage2`: table pages from the heap.

use std::collections::HashMap;

use stage2::TableAllocator;

/// Bytes of one table page (4 KiB granule).
const PAGE: u64 = 4096;
/// Fake physical addresses of table pages start here.
const TABLES_PA: u64 = 0x100_0000_0000;

/// Heap-backed Stage-2 table pages with fake, unique physical addresses.
#[derive(Default)]
pub struct HeapTables {
    pages: HashMap<u64, Box<[u64; 512]>>,
    next: u64,
}

// SAFETY: every page is its own heap allocation that stays in place until freed, and every
// address handed out is unique and aligned to the requested run of pages.
unsafe impl TableAllocator for HeapTables {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        let align = count as u64 * PAGE;
        let pa = self.next.max(TABLES_PA).div_ceil(align) * align;
        self.next = pa + align;
        for i in 0..count as u64 {
            self.pages.insert(pa + i * PAGE, Box::new([0; 512]));
        }
        Some(pa)
    }

    fn free_pages(&mut self, pa: u64, count: usize) {
        for i in 0..count as u64 {
            self.pages.remove(&(pa + i * PAGE));
        }
    }

    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        self.pages[&pa].as_ptr() as *mut u64
    }
}
