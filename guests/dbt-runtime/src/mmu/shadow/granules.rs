//! Which 64 KiB granules of the guest's 32-bit virtual space a set of guest mappings
//! covers (one bit per granule, 8 KiB): the shadow's TLB maintenance by address looks here
//! before it searches `State::blocks` (about 65 host instructions per operation, nearly
//! always a miss: Linux invalidates user pages, its section-mapped lowmem is elsewhere).

use alloc::vec::Vec;

/// Words of the bit set (one bit per 64 KiB of 4 GiB).
const WORDS: usize = (1 << 16) / 64;

/// A set of 64 KiB granules; empty at first.
pub struct Granules(Vec<u64>);

impl Granules {
    /// No granule.
    pub fn new() -> Granules {
        Granules(alloc::vec![0; WORDS])
    }

    /// Adds every granule of the `2^log2` bytes at `base` (`log2` < 32).
    pub fn note(&mut self, base: u32, log2: u8) {
        let last = ((u64::from(base) + (1u64 << log2) - 1) >> 16) as u32;
        for g in base >> 16..=last {
            self.0[(g >> 6) as usize] |= 1 << (g & 63);
        }
    }

    /// Whether the granule of `va` was added since the last [`Granules::clear`].
    pub fn holds(&self, va: u32) -> bool {
        let g = va >> 16;
        self.0[(g >> 6) as usize] >> (g & 63) & 1 != 0
    }

    /// Removes every granule.
    pub fn clear(&mut self) {
        self.0.fill(0);
    }
}
