//! Address-space switches with different data behind the same virtual pages, each page
//! read for the first time right after a switch (issue 17: the DBT switches the host's
//! shadow from inside translated code through its switch cache, and the runtime's shadow
//! learns the switch only when it next fills a page). Two short-descriptor tables map all
//! RAM and the UART by identity with global sections, and [`PAGES`] non-global small
//! pages from [`VA`] on: in space A (ASID 1) all to one data page, in space B (ASID 2) all
//! to another. A loop in a global page switches to B (`CONTEXTIDR`, `ISB`, `TTBR0`, `ISB`,
//! as Linux's `cpu_v7_switch_mm`), reads word `k` of page `k`, switches to A and reads it
//! again, for every `k`; the checksum must be what each space's page holds. A shadow
//! filled for the space current before the switch would give A's read B's word.

use core::arch::global_asm;
use core::ptr::{addr_of, addr_of_mut};

use crate::identity_map::{map_identity, mmu_off, mmu_on, L1};

#[repr(C, align(4096))]
struct Page([u32; 1024]);

/// Space A's (ASID 1) and space B's (ASID 2) first-level and second-level tables, and
/// their data pages.
static mut TTA: L1 = L1([0; 4096]);
static mut TTB: L1 = L1([0; 4096]);
static mut PTA: Page = Page([0; 1024]);
static mut PTB: Page = Page([0; 1024]);
static mut DATA_A: Page = Page([0; 1024]);
static mut DATA_B: Page = Page([0; 1024]);

/// The first virtual page (a 1 MiB range that nothing else uses while the check runs).
const VA: u32 = 0x40e0_0000;

/// Virtual pages read in each space.
const PAGES: u32 = 64;

/// Small page: normal write-back, not global, read/write at PL0 and PL1.
const SMALL: u32 = 0xc3e;

global_asm!(
    r#"
    .text
    .arm
    .balign 4
    // r0 = pages (> 0), r1 = TTBR0 of space A, r2 = TTBR0 of space B, r3 = VA: for k =
    // 0 to r0 - 1, in space B then in space A, fold the word at VA + k * 4100 (word k of
    // page k) into the checksum (rotate left by one, add); returns it in space A.
    .global switch_data_loop
switch_data_loop:
    push {{r4-r9, lr}}
    mov r4, #0
    mov r7, #0
    mov r9, #2
    mov r8, #1
1:  mcr p15, 0, r9, c13, c0, 1
    isb
    mcr p15, 0, r2, c2, c0, 0
    isb
    ldr r5, [r3]
    add r7, r5, r7, ror #31
    mcr p15, 0, r8, c13, c0, 1
    isb
    mcr p15, 0, r1, c2, c0, 0
    isb
    ldr r5, [r3]
    add r7, r5, r7, ror #31
    add r3, r3, #4096
    add r3, r3, #4
    add r4, r4, #1
    cmp r4, r0
    bne 1b
    mov r0, r7
    pop {{r4-r9, pc}}
"#
);

extern "C" {
    fn switch_data_loop(pages: u32, tta: u32, ttb: u32, va: u32) -> u32;
}

/// Word `k` of space A's and of space B's data page.
fn word(b: bool, k: u32) -> u32 {
    if b {
        0xb000_0000 | k << 8 | 0xbb
    } else {
        0xa000_0000 | k << 8 | 0xaa
    }
}

/// What the loop returns when each read sees its own space's page.
fn expected(pages: u32) -> u32 {
    (0..pages).fold(0u32, |acc, k| {
        let acc = acc.rotate_left(1).wrapping_add(word(true, k));
        acc.rotate_left(1).wrapping_add(word(false, k))
    })
}

/// Builds both spaces (MMU off).
fn build() {
    // SAFETY: the module's own statics, used only by this check on this CPU.
    unsafe {
        for (tt, pt, data, b) in [
            (
                &mut *addr_of_mut!(TTA),
                &mut *addr_of_mut!(PTA),
                &mut *addr_of_mut!(DATA_A),
                false,
            ),
            (
                &mut *addr_of_mut!(TTB),
                &mut *addr_of_mut!(PTB),
                &mut *addr_of_mut!(DATA_B),
                true,
            ),
        ] {
            map_identity(tt);
            for (k, w) in data.0.iter_mut().enumerate() {
                *w = word(b, k as u32);
            }
            pt.0.iter_mut().for_each(|e| *e = 0);
            for k in 0..PAGES as usize {
                pt.0[k] = data as *const Page as u32 | SMALL;
            }
            tt.0[(VA >> 20) as usize] = pt as *const Page as u32 | 1;
        }
    }
}

/// Runs the loop with the MMU on in space A and reports it through `check`.
pub fn test_switch_data(check: fn(&str, bool)) {
    build();
    let (tta, ttb) = (addr_of!(TTA) as u32, addr_of!(TTB) as u32);
    // SAFETY: both tables map all RAM and the UART by identity, so nothing this program
    // uses moves when the MMU goes on or the space changes (only the pages at VA differ).
    let sum = unsafe {
        mmu_on(addr_of!(TTA));
        let sum = switch_data_loop(PAGES, tta, ttb, VA);
        mmu_off();
        sum
    };
    check(
        "address-space switch loop: per-ASID data at each page's first read",
        sum == expected(PAGES),
    );
}
