//! A direct-mapped software TLB of 4 KiB translations with their permissions.

use alloc::boxed::Box;
use alloc::vec;

const ENTRIES: usize = 1024;

#[derive(Clone, Copy)]
struct Entry {
    vpage: u32,
    /// The [`Tlb::generation`] it was cached in: older ones are flushed.
    generation: u32,
    pa_page: u64,
    perms: u8,
}

/// Software TLB. Any change of translation state flushes it whole (cheap and always
/// correct: it is a cache); a flush is a new generation, not a pass over the entries
/// (guests write `TTBR0`/`CONTEXTIDR` on every address-space switch).
pub struct Tlb {
    /// A fixed-size array (no length to check at a lookup).
    e: Box<[Entry; ENTRIES]>,
    generation: u32,
    /// How often `generation` wrapped to 0 ([`Tlb::stamp`]'s high word).
    wraps: u32,
}

/// Byte offset of the generation in a [`Tlb`] (a `u32`): translated code that writes a
/// translation register flushes the TLB by incrementing it (`a64::ttbr_inline`), and
/// leaves a wrap to 0 to [`Tlb::flush`].
pub(crate) const GENERATION_OFFSET: usize = core::mem::offset_of!(Tlb, generation);

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
            // Built on the heap (24 KiB: not through the stack).
            e: vec![
                Entry {
                    vpage: INVALID,
                    generation: 0,
                    pa_page: 0,
                    perms: 0
                };
                ENTRIES
            ]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("ENTRIES entries")),
            generation: 0,
            wraps: 0,
        }
    }

    /// Cached `(pa_page, perms)` for the page of `va`.
    #[inline(always)]
    pub fn lookup(&self, va: u32) -> Option<(u64, u8)> {
        let e = &self.e[(va >> 12) as usize & (ENTRIES - 1)];
        (e.vpage == va & !0xfff && e.generation == self.generation).then_some((e.pa_page, e.perms))
    }

    /// A value that changes at every flush and never comes back (within 2^64 flushes):
    /// every write of a register the translation depends on (`SCTLR`, `TTBR0`, `TTBR1`,
    /// `TTBCR`, `DACR`, `CONTEXTIDR`) flushes the TLB, in the interpreter (`Cp15::write`,
    /// `Cp15::write64`: `Cp15Effect::FlushTlb`) and in translated code (`a64::ttbr_inline`
    /// increments the generation and leaves a wrap to [`Tlb::flush`]), so an unchanged
    /// stamp means that none of them was written since (remembered Data Abort verdicts
    /// are keyed by it).
    #[inline]
    pub fn stamp(&self) -> u64 {
        (self.wraps as u64) << 32 | self.generation as u64
    }

    /// Caches a translation.
    pub fn insert(&mut self, va: u32, pa_page: u64, perms: u8) {
        self.e[(va >> 12) as usize & (ENTRIES - 1)] = Entry {
            vpage: va & !0xfff,
            generation: self.generation,
            pa_page,
            perms,
        };
    }

    /// Drops every entry.
    pub fn flush(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.wraps = self.wraps.wrapping_add(1);
            // Wrapped: entries of the generation 2^32 flushes ago must not come back.
            for e in self.e.iter_mut() {
                e.vpage = INVALID;
            }
        }
    }
}
