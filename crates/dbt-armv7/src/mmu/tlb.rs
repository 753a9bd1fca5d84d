//! A direct-mapped software TLB of 4 KiB translations with their permissions.

use alloc::vec;
use alloc::vec::Vec;

const ENTRIES: usize = 1024;

#[derive(Clone, Copy)]
struct Entry {
    vpage: u32,
    pa_page: u64,
    perms: u8,
}

/// Software TLB. Any change of translation state flushes it whole (cheap and always
/// correct: it is a cache).
pub struct Tlb {
    e: Vec<Entry>,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb::new()
    }
}

const INVALID: u32 = 1; // never a page-aligned tag

impl Tlb {
    /// An empty TLB.
    pub fn new() -> Tlb {
        Tlb {
            e: vec![
                Entry {
                    vpage: INVALID,
                    pa_page: 0,
                    perms: 0
                };
                ENTRIES
            ],
        }
    }

    /// Cached `(pa_page, perms)` for the page of `va`.
    #[inline]
    pub fn lookup(&self, va: u32) -> Option<(u64, u8)> {
        let e = &self.e[(va >> 12) as usize & (ENTRIES - 1)];
        (e.vpage == va & !0xfff).then_some((e.pa_page, e.perms))
    }

    /// Caches a translation.
    pub fn insert(&mut self, va: u32, pa_page: u64, perms: u8) {
        self.e[(va >> 12) as usize & (ENTRIES - 1)] = Entry {
            vpage: va & !0xfff,
            pa_page,
            perms,
        };
    }

    /// Drops every entry.
    pub fn flush(&mut self) {
        for e in self.e.iter_mut() {
            e.vpage = INVALID;
        }
    }
}
