//! Instructions made at run time: system-register accesses, loads/stores and SMCCC
//! conduits carry their operands as immediates in the encoding, so the storm writes the
//! instruction it wants into a per-vCPU code page, makes it visible to instruction fetch
//! (`DC CVAU`, `IC IVAU`, barriers) and calls it: at EL1 as `insn; RET`, at EL0 (through
//! the RAM alias, see [`crate::paging`]) as `insn; SVC #0`.
//!
//! Register convention of every generated instruction: x0 data (in and out), x1 address,
//! x2 second data register, x3 status (store-exclusive), x0..x7 SMCCC arguments; v0..v3
//! SIMD data.

use core::arch::asm;
use core::cell::UnsafeCell;

use crate::vectors::{self, MAX_CPUS};

/// `RET`.
const RET: u32 = 0xd65f_03c0;
/// `SVC #0`.
const SVC0: u32 = 0xd400_0001;

#[repr(C, align(4096))]
struct Page(UnsafeCell<[u32; 1024]>);

/// One code page per vCPU and level.
struct Pages([Page; MAX_CPUS * 2]);

// SAFETY: each vCPU writes only its own two pages (indexed by its TPIDR_EL1 index).
unsafe impl Sync for Pages {}

static PAGES: Pages = Pages([const { Page(UnsafeCell::new([0; 1024])) }; MAX_CPUS * 2]);

/// Writes `words` + `tail` into this vCPU's page for `el0` and returns its address.
fn prepare(words: &[u32], tail: u32, el0: bool) -> u64 {
    let page = &PAGES.0[vectors::cpu() * 2 + usize::from(el0)];
    let base = page.0.get() as *mut u32;
    for (i, w) in words.iter().chain(core::iter::once(&tail)).enumerate() {
        // SAFETY: at most a few words into this vCPU's own 4 KiB page.
        unsafe { base.add(i).write_volatile(*w) };
    }
    // SAFETY: cache maintenance by VA on our own page: clean to the point of unification,
    // invalidate the instruction cache, then synchronise the fetch stream.
    unsafe {
        asm!(
            "dc cvau, {a}",
            "dsb ish",
            "ic ivau, {a}",
            "dsb ish",
            "isb",
            a = in(reg) base as u64,
            options(nostack),
        )
    };
    base as u64
}

/// Results of a generated instruction run at EL1.
#[derive(Clone, Copy, Debug, Default)]
pub struct Out {
    /// x0..x3 afterwards.
    pub x: [u64; 4],
    /// The low 64 bits of v0 afterwards.
    pub v0: u64,
}

/// Runs `words` at EL1 with x0..x7 = `x` and v0..v3 = `v` as 64-bit values (the exception
/// vectors resume at the `RET` after a fault); returns the address of the first word and
/// the registers afterwards.
pub fn run_el1(words: &[u32], x: [u64; 8], v: u64) -> (u64, Out) {
    let page = prepare(words, RET, false);
    let mut out = Out::default();
    // SAFETY: the page holds the caller's instructions followed by RET; they use only the
    // registers declared here (x0..x7, v0..v3, x30 by the BLR) and memory the caller chose
    // for them (the storm's windows, scratch areas or devices). Every exception they raise
    // is caught by the storm's vectors and resumes at the RET (or at x30).
    unsafe {
        asm!(
            "fmov d0, {v}",
            "fmov d1, {v}",
            "fmov d2, {v}",
            "fmov d3, {v}",
            "blr {page}",
            "fmov x8, d0",
            page = in(reg) page,
            v = in(reg) v,
            lateout("x8") out.v0,
            inlateout("x0") x[0] => out.x[0],
            inlateout("x1") x[1] => out.x[1],
            inlateout("x2") x[2] => out.x[2],
            inlateout("x3") x[3] => out.x[3],
            in("x4") x[4],
            in("x5") x[5],
            in("x6") x[6],
            in("x7") x[7],
            clobber_abi("C"),
        );
    }
    (page, out)
}

/// Runs `words` at EL0 with x0, x1, x2 = `a0, a1, a2` on the EL0 stack `sp` (an alias VA);
/// returns the EL0 address of the first word and x0, x2 afterwards.
pub fn run_el0(words: &[u32], a0: u64, a1: u64, a2: u64, sp: u64) -> (u64, (u64, u64)) {
    let page = crate::paging::el0_alias(prepare(words, SVC0, true));
    (page, vectors::run_el0(page, a0, a1, a2, sp))
}
