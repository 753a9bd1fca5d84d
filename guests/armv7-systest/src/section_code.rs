//! Code run through a section that the program points at another frame (issue 17: under
//! the DBT, translated code of a section is indexed by 4 KiB page, and the TLB maintenance
//! of one page of the section must reach the code of its other pages).
//!
//! A global section at [`VA`] maps frame 1, each frame holding `mov r0, #n; bx lr` at
//! [`CODE_OFF`]; the program runs that code (twice: translated under the DBT), then:
//!
//! 1. points the section at frame 2 and invalidates with `TLBIMVA` of the code's own page:
//!    the code of frame 2 must run;
//! 2. points it at frame 3 and invalidates with `TLBIMVA` of the section's *first* page,
//!    not the code's: that drops the whole section's TLB entry (ARMv7-A: an entry is
//!    invalidated by any address it translates), and Cortex-A15's instruction cache is
//!    PIPT (`CTR.L1Ip` = 0b11), so with `BPIALL`, `DSB`, `ISB` the architecture requires
//!    the next fetch to come from frame 3, without `ICIALLU` (which a VIPT cache would
//!    need; under the DBT it would re-check every translation and hide the case tested:
//!    the section's other pages' code re-checked, 7b63f56). qemu-system-arm 7.2, the
//!    reference, keeps running frame 2's code after that sequence, with or without
//!    `ICIALLU` (its flush of a large page's TLB entry does not clear its
//!    translated-code lookup for the section's other pages); so the check then writes
//!    `CONTEXTIDR` with ASID 2 and back to 1 (the section is global: nothing it maps
//!    changes), which makes QEMU flush its whole TLB and that lookup, and under the DBT
//!    changes nothing for global code.

use core::arch::asm;
use core::ptr::addr_of_mut;

use crate::identity_map::{mmu_off, mmu_on_with_section, put_code, remap_section, L1};

static mut TT: L1 = L1([0; 4096]);

/// The section's virtual address, and the three frames (1 MiB aligned guest RAM that
/// nothing else of this program uses).
const VA: u32 = 0x40e0_0000;
const FRAMES: [u32; 3] = [0x4320_0000, 0x4330_0000, 0x4340_0000];
/// Where the code is in the section (not its first page).
const CODE_OFF: u32 = 0x6000;

/// Writes `mov r0, #n + 1; bx lr` at [`CODE_OFF`] of frame `n` (MMU off) and makes it
/// visible to instruction fetches.
fn fill_frames() {
    for (n, &f) in FRAMES.iter().enumerate() {
        // SAFETY: guest RAM this check owns (see FRAMES), written with the MMU off.
        unsafe {
            put_code(
                (f + CODE_OFF) as *mut u32,
                &[0xe3a0_0001 + n as u32, 0xe12f_ff1e], // mov r0, #n + 1; bx lr
            );
        }
    }
}

/// What the code at [`CODE_OFF`] of the section returns now.
fn run() -> u32 {
    // SAFETY: the section maps one of the frames, all filled by `fill_frames`.
    unsafe {
        let f: extern "C" fn() -> u32 = core::mem::transmute((VA + CODE_OFF) as usize);
        f()
    }
}

/// Runs the check and reports it through `check`.
#[inline(never)]
pub fn test_section_code(check: fn(&str, bool)) {
    fill_frames();
    // SAFETY: the table maps all RAM and the UART by identity but for VA's section, which
    // this program uses only through `run`; nothing moves when the MMU goes on.
    let (first, own_page, other_page) = unsafe {
        let slot = mmu_on_with_section(addr_of_mut!(TT), VA, FRAMES[0]);
        run();
        let first = run();
        remap_section(slot, FRAMES[1], VA + CODE_OFF);
        let own_page = run();
        remap_section(slot, FRAMES[2], VA);
        // For qemu-system-arm (see the module's comment): a new ASID and back.
        asm!(
            "mcr p15, 0, {two}, c13, c0, 1", // CONTEXTIDR: ASID 2
            "isb",
            "mcr p15, 0, {one}, c13, c0, 1", // CONTEXTIDR: ASID 1
            "isb",
            one = in(reg) 1u32,
            two = in(reg) 2u32,
            options(nostack),
        );
        let other_page = run();
        mmu_off();
        (first, own_page, other_page)
    };
    check(
        "section remapped, TLBIMVA of its code page: new code runs",
        first == 1 && own_page == 2,
    );
    check(
        "section remapped, TLBIMVA of another of its pages: new code runs",
        other_page == 3,
    );
}
