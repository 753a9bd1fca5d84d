//! Address-space switches with different code at one virtual address (issue 17: the DBT
//! switches address space inside a translated block). Two short-descriptor tables map all
//! RAM and the UART by identity with global sections, and one small non-global page at
//! [`VA`] to a different code page each (ASID 1: `add r0, r1, #0xa1; bx lr`, ASID 2:
//! `eor r0, r1, #0xb2; add r0, r0, r0; bx lr`). A loop in a global page writes
//! `CONTEXTIDR` and `TTBR0` (as Linux's `cpu_v7_switch_mm`: ASID first, then the table,
//! each followed by an `ISB`) and then calls [`VA`] by a direct `BL`, alternating between
//! the two spaces; the checksum of what the calls return must be what each space's code
//! gives. Under the DBT the switch and the `BL` are one translated block that goes on after
//! the switch: its `BL` must not be linked to the block translated in the other address
//! space, and the return must come back through the right space's tables. A Thumb-2 copy
//! of the loop (the `MCR`s and `BL` in T32) runs the same check.

use core::arch::global_asm;
use core::ptr::{addr_of, addr_of_mut};

use crate::identity_map::{map_identity_with_pages, mmu_off, mmu_on, put_code, Page, L1};

/// Space A's (ASID 1) and space B's (ASID 2) first-level and second-level tables, and
/// their code pages.
static mut TTA: L1 = L1([0; 4096]);
static mut TTB: L1 = L1([0; 4096]);
static mut PTA: Page = Page([0; 1024]);
static mut PTB: Page = Page([0; 1024]);
static mut CODE_A: Page = Page([0; 1024]);
static mut CODE_B: Page = Page([0; 1024]);

/// The per-space code page's virtual address (`link.ld`: `switch_mmu_code_va`, within a
/// direct T32 `BLX` of this program, 16 MiB; nothing else of its 1 MiB is mapped while
/// the check runs).
const VA: u32 = 0x40c0_0000;

/// Loop iterations per instruction set (enough for every block to be translated and
/// its exits linked).
const ITERATIONS: u32 = 200;

global_asm!(
    r#"
    .text
    .arm
    .balign 4
    // r0 = iterations (> 0), r1 = TTBR0 of space A, r2 = TTBR0 of space B: for i = r0
    // down to 1, switch to ASID (i & 1) + 1 (A when even), call VA with r1 = i and
    // fold the result into the checksum (rotate left by one, add); returns it.
    .global switch_mmu_loop_a32
switch_mmu_loop_a32:
    push {{r4-r8, lr}}
    mov r4, r0
    mov r5, r1
    mov r6, r2
    mov r7, #0
1:  and r3, r4, #1
    add r3, r3, #1
    mcr p15, 0, r3, c13, c0, 1
    isb
    cmp r3, #1
    moveq r8, r5
    movne r8, r6
    mcr p15, 0, r8, c2, c0, 0
    isb
    mov r1, r4
    bl switch_mmu_code_va
    add r7, r0, r7, ror #31
    subs r4, r4, #1
    bne 1b
    mov r0, r7
    pop {{r4-r8, pc}}

    .thumb
    .balign 4
    .thumb_func
    .global switch_mmu_loop_t32
switch_mmu_loop_t32:
    push {{r4-r8, lr}}
    mov r4, r0
    mov r5, r1
    mov r6, r2
    movs r7, #0
2:  and r3, r4, #1
    add r3, r3, #1
    mcr p15, 0, r3, c13, c0, 1
    isb
    cmp r3, #1
    ite eq
    moveq r8, r5
    movne r8, r6
    mcr p15, 0, r8, c2, c0, 0
    isb
    mov r1, r4
    blx switch_mmu_code_va
    add.w r7, r0, r7, ror #31
    subs r4, r4, #1
    bne 2b
    mov r0, r7
    pop {{r4-r8, pc}}
    .arm
"#
);

extern "C" {
    fn switch_mmu_loop_a32(iterations: u32, tta: u32, ttb: u32) -> u32;
    fn switch_mmu_loop_t32(iterations: u32, tta: u32, ttb: u32) -> u32;
}

/// What the loop returns when each call runs its own space's code.
fn expected(iterations: u32) -> u32 {
    (1..=iterations).rev().fold(0u32, |acc, i| {
        let r = if i & 1 == 0 {
            i.wrapping_add(0xa1)
        } else {
            (i ^ 0xb2).wrapping_add(i ^ 0xb2)
        };
        acc.rotate_left(1).wrapping_add(r)
    })
}

/// Builds both spaces (MMU off).
fn build() {
    // SAFETY: the module's own statics, used only by this check on this CPU.
    unsafe {
        for (tt, pt, code) in [
            (
                &mut *addr_of_mut!(TTA),
                &mut *addr_of_mut!(PTA),
                addr_of!(CODE_A) as u32,
            ),
            (
                &mut *addr_of_mut!(TTB),
                &mut *addr_of_mut!(PTB),
                addr_of!(CODE_B) as u32,
            ),
        ] {
            map_identity_with_pages(tt, pt, VA, 1, code);
        }
        // ASID 1: add r0, r1, #0xa1; bx lr
        put_code(
            addr_of_mut!(CODE_A) as *mut u32,
            &[0xe281_00a1, 0xe12f_ff1e],
        );
        // ASID 2: eor r0, r1, #0xb2; add r0, r0, r0; bx lr
        put_code(
            addr_of_mut!(CODE_B) as *mut u32,
            &[0xe221_00b2, 0xe080_0000, 0xe12f_ff1e],
        );
    }
}

/// Runs the loops with the MMU on in space A and reports them through `check`.
pub fn test_switch(check: fn(&str, bool)) {
    build();
    let (tta, ttb) = (addr_of!(TTA) as u32, addr_of!(TTB) as u32);
    // SAFETY: both tables map all RAM and the UART by identity, so nothing this program
    // uses moves when the MMU goes on or the space changes (only VA differs).
    let (a32, t32) = unsafe {
        mmu_on(addr_of!(TTA));
        let a32 = switch_mmu_loop_a32(ITERATIONS, tta, ttb);
        let t32 = switch_mmu_loop_t32(ITERATIONS, tta, ttb);
        mmu_off();
        (a32, t32)
    };
    let want = expected(ITERATIONS);
    check(
        "A32 address-space switch loop: per-ASID code at one VA",
        a32 == want,
    );
    check(
        "T32 address-space switch loop: per-ASID code at one VA",
        t32 == want,
    );
}
