//! A `Sync` cell read and written with volatile accesses, for state shared between guest
//! code and its exception handler on one CPU. With the MMU off memory is Device-nGnRnE, where
//! exclusives are not allowed, so plain aligned loads and stores replace atomics.

use core::cell::UnsafeCell;

/// A `u64` shared between thread context and the (same CPU's) exception handler.
pub(crate) struct VolatileCell(UnsafeCell<u64>);

// SAFETY: guests run on one CPU with interrupts masked; the only concurrency is the
// synchronous exception handler, which runs between two guest instructions. Each access is a
// single aligned 64-bit load or store, so no access is ever torn or interleaved.
unsafe impl Sync for VolatileCell {}

impl VolatileCell {
    /// A cell holding `value`.
    pub(crate) const fn new(value: u64) -> Self {
        Self(UnsafeCell::new(value))
    }

    /// Reads the value.
    pub(crate) fn get(&self) -> u64 {
        // SAFETY: the pointer comes from a live UnsafeCell and is aligned (see `Sync` above).
        unsafe { self.0.get().read_volatile() }
    }

    /// Writes the value.
    pub(crate) fn set(&self, value: u64) {
        // SAFETY: as in `get`.
        unsafe { self.0.get().write_volatile(value) }
    }
}
