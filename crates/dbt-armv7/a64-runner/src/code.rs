//! The code cache: an RWX mapping, with the AArch64 cache maintenance that makes new code
//! visible to instruction fetch.

use dbt_armv7::translate::host::{call_prologue, sync_code, CodeMemory};
use dbt_armv7::translate::GuestState;

/// Where the code cache is mapped.
const CODE_BASE: u64 = 0x20_0000_0000;

/// The code cache memory.
pub struct Code {
    base: *mut u8,
    len: usize,
    /// Write-protect guest code pages (self-modifying code detection).
    pub protect: bool,
}

impl Code {
    /// Maps a code cache of `len` bytes.
    pub fn new(len: usize) -> Option<Code> {
        crate::sys::mmap_fixed(CODE_BASE, len as u64, true).then_some(Code {
            base: CODE_BASE as *mut u8,
            len,
            protect: true,
        })
    }
}

impl Code {
    /// Host address and length of the cache.
    pub fn range(&self) -> (u64, u64) {
        (self.base as u64, self.len as u64)
    }
}

impl CodeMemory for Code {
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is ours, `len` bytes long, and lives as long as the program.
        unsafe { core::slice::from_raw_parts_mut(self.base, self.len) }
    }

    fn sync(&mut self, start: usize, len: usize) {
        sync_code(self.base as usize + start, len);
    }

    unsafe fn enter(&mut self, prologue: usize, state: *mut GuestState, entry: usize) {
        // SAFETY: the caller's contract (generated code, valid state), and `base` is the
        // executable cache.
        unsafe { call_prologue(self.base, prologue, state, entry) }
    }

    fn protect_guest_page(&mut self, page: u32) -> bool {
        // Guest memory is mapped at the guest's addresses: a guest page is a host page.
        self.protect && crate::sys::mprotect((page as u64) << 12, 0x1000, false)
    }

    fn unprotect_guest_page(&mut self, page: u32) {
        crate::sys::mprotect((page as u64) << 12, 0x1000, true);
    }
}
