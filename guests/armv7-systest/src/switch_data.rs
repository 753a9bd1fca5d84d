//! Address-space switches with different data behind the same virtual pages, each page
//! read for the first time right after a switch (issue 17: the DBT switches the host's
//! shadow from inside translated code through its switch cache, and the runtime's shadow
//! learns the switch only when it next fills a page). Two short-descriptor tables map all
//! RAM and the UART by identity with global sections, and [`PAGES`] non-global small
//! pages from [`VA`] on: in space A (ASID 1) all to one data page, in space B (ASID 2) all
//! to another. A loop in a global page switches to B (`CONTEXTIDR`, `ISB`, `TTBR0`, `ISB`,
//! as Linux's `cpu_v7_switch_mm`), reads word `k` of page `k`, switches to A and reads it
//! again, for every `k`; the checksum must be what each space's page holds. A shadow
//! filled for the space current before the switch would give A's read B's word. The same
//! loop runs with LPAE tables, switching as Linux's `armmp-lpae` kernels do: one `MCRR`
//! of `TTBR0` with the ASID in bits 55:48 (`TTBCR.A1` = 0), then an `ISB`.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut};

use crate::identity_map::{
    map_identity_with_pages, mmu_off, mmu_on, sctlr_m_off, sctlr_m_on, tlbiall_sync, Page, L1,
};

/// Space A's (ASID 1) and space B's (ASID 2) first-level and second-level tables, and
/// their data pages.
static mut TTA: L1 = L1([0; 4096]);
static mut TTB: L1 = L1([0; 4096]);
static mut PTA: Page = Page([0; 1024]);
static mut PTB: Page = Page([0; 1024]);
static mut DATA_A: Page = Page([0; 1024]);
static mut DATA_B: Page = Page([0; 1024]);
/// The LPAE tables of both spaces: first level (4 entries used), second level of the GiB
/// of RAM, third level of the 2 MiB that holds [`VA`].
static mut LA1: Page = Page([0; 1024]);
static mut LA2: Page = Page([0; 1024]);
static mut LA3: Page = Page([0; 1024]);
static mut LB1: Page = Page([0; 1024]);
static mut LB2: Page = Page([0; 1024]);
static mut LB3: Page = Page([0; 1024]);

/// The first virtual page (a 1 MiB range that nothing else uses while the check runs).
const VA: u32 = 0x40e0_0000;

/// Virtual pages read in each space.
const PAGES: u32 = 64;

global_asm!(
    r#"
    .section .text.switch_data, "ax"
    .arm
    .balign 4
    // The loops' shared parts. r3 = VA of page k, r4 = k, r7 = checksum; r8 and r9 hold
    // what switches to space A and to space B.
    .macro switch_data_enter to_b, to_a
    push {{r4-r9, lr}}
    mov r4, #0
    mov r7, #0
    mov r9, #\to_b
    mov r8, #\to_a
    .endm
    // CONTEXTIDR (ASID), ISB, TTBR0, ISB, as Linux's cpu_v7_switch_mm.
    .macro switch_data_space asid, ttbr0
    mcr p15, 0, \asid, c13, c0, 1
    isb
    mcr p15, 0, \ttbr0, c2, c0, 0
    isb
    .endm
    // Fold the word at r3 into the checksum (rotate left by one, add).
    .macro switch_data_read
    ldr r5, [r3]
    add r7, r5, r7, ror #31
    .endm
    // Next page (word k + 1 of page k + 1) until k = r0; return the checksum.
    .macro switch_data_next_or_return
    add r3, r3, #4096
    add r3, r3, #4
    add r4, r4, #1
    cmp r4, r0
    bne 1b
    mov r0, r7
    pop {{r4-r9, pc}}
    .endm

    // r0 = pages (> 0), r1 = TTBR0 of space A, r2 = TTBR0 of space B, r3 = VA: for k =
    // 0 to r0 - 1, in space B then in space A, fold the word at VA + k * 4100 (word k of
    // page k) into the checksum (rotate left by one, add); returns it in space A.
    .global switch_data_loop
switch_data_loop:
    switch_data_enter 2, 1
1:  switch_data_space r9, r2
    switch_data_read
    switch_data_space r8, r1
    switch_data_read
    switch_data_next_or_return

    // The same, with a TLBIASID of ASID 2 after each read in space A (the runtime drops
    // space B's shadow then: the next switch to B must not load it).
    .global switch_data_loop_tlbi
switch_data_loop_tlbi:
    switch_data_enter 2, 1
1:  switch_data_space r9, r2
    switch_data_read
    switch_data_space r8, r1
    switch_data_read
    mcr p15, 0, r9, c8, c7, 2
    dsb
    isb
    switch_data_next_or_return

    // The same with LPAE: r1 = TTBR0 (low word) of space A, r2 = of space B; the high
    // words carry the ASID (A: 1, B: 2) in bits 23:16.
    .global switch_data_loop_lpae
switch_data_loop_lpae:
    switch_data_enter 0x20000, 0x10000
1:  mcrr p15, 0, r2, r9, c2
    isb
    switch_data_read
    mcrr p15, 0, r1, r8, c2
    isb
    switch_data_read
    switch_data_next_or_return
    .text
"#
);

extern "C" {
    fn switch_data_loop(pages: u32, tta: u32, ttb: u32, va: u32) -> u32;
    fn switch_data_loop_lpae(pages: u32, tta: u32, ttb: u32, va: u32) -> u32;
    fn switch_data_loop_tlbi(pages: u32, tta: u32, ttb: u32, va: u32) -> u32;
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
            for (k, w) in data.0.iter_mut().enumerate() {
                *w = word(b, k as u32);
            }
            map_identity_with_pages(tt, pt, VA, PAGES as usize, data as *const Page as u32);
        }
    }
}

/// LPAE descriptor bits: access flag, inner shareable, not global; a table or page.
const AF: u64 = 1 << 10;
const SH_INNER: u64 = 3 << 8;
const NG: u64 = 1 << 11;
const TABLE: u64 = 3;

/// Builds both spaces' LPAE tables (MMU off): RAM by identity with global 2 MiB blocks
/// (normal, `MAIR0` attribute 0), the first GiB as a device block, and the pages at
/// [`VA`] as [`build`] maps them, not global.
fn build_lpae() {
    // SAFETY: the module's own statics, used only by this check on this CPU.
    unsafe {
        for (l1, l2, l3, data) in [
            (
                &mut *addr_of_mut!(LA1),
                &mut *addr_of_mut!(LA2),
                &mut *addr_of_mut!(LA3),
                addr_of!(DATA_A) as u64,
            ),
            (
                &mut *addr_of_mut!(LB1),
                &mut *addr_of_mut!(LB2),
                &mut *addr_of_mut!(LB3),
                addr_of!(DATA_B) as u64,
            ),
        ] {
            let (l1, l2, l3) = (
                &mut *(l1 as *mut Page as *mut [u64; 512]),
                &mut *(l2 as *mut Page as *mut [u64; 512]),
                &mut *(l3 as *mut Page as *mut [u64; 512]),
            );
            l1.fill(0);
            l1[0] = AF | 1 << 2 | 3 << 53 | 1; // 0..1 GiB: device, execute-never
            l1[1] = l2.as_ptr() as u64 | TABLE;
            for (j, e) in l2.iter_mut().enumerate() {
                *e = (0x4000_0000 + ((j as u64) << 21)) | AF | SH_INNER | 1;
            }
            l2[((VA - 0x4000_0000) >> 21) as usize] = l3.as_ptr() as u64 | TABLE;
            l3.fill(0);
            for k in 0..PAGES as usize {
                l3[((VA >> 12) & 511) as usize + k] = data | AF | SH_INNER | NG | TABLE;
            }
        }
    }
}

/// Runs the LPAE loop (MMU on in space A, ASID 1) and turns the MMU off again, back to
/// short descriptors and ASID 0.
fn run_lpae() -> u32 {
    let (la, lb) = (addr_of!(LA1) as u32, addr_of!(LB1) as u32);
    // SAFETY: both spaces map all RAM by identity (only the pages at VA differ) and the
    // first GiB (the UART) as device memory, so nothing this program uses moves.
    unsafe {
        asm!(
            "mcr p15, 0, {mair0}, c10, c2, 0",
            "mcr p15, 0, {z}, c10, c2, 1",
            "mcrr p15, 0, {lo}, {hi}, c2",   // TTBR0: space A, ASID 1
            "mcr p15, 0, {eae}, c2, c0, 2",  // TTBCR: LPAE, TTBR0 only, ASID in TTBR0
            tlbiall_sync!(),
            sctlr_m_on!(),
            mair0 = in(reg) 0x0044_04ffu32,
            z = in(reg) 0u32,
            lo = in(reg) la,
            hi = in(reg) 0x1_0000u32,
            eae = in(reg) 0x8000_0000u32,
            t = out(reg) _,
            options(nostack),
        );
        let sum = switch_data_loop_lpae(PAGES, la, lb, VA);
        asm!(
            sctlr_m_off!(),
            "mcr p15, 0, {z}, c2, c0, 2",    // TTBCR: short descriptors
            "mcrr p15, 0, {z}, {z}, c2",     // TTBR0 (and its ASID) 0
            tlbiall_sync!(),
            z = in(reg) 0u32,
            t = out(reg) _,
            options(nostack),
        );
        sum
    }
}

/// Runs the loop with the MMU on in space A and reports it through `check`.
pub fn test_switch_data(check: fn(&str, bool)) {
    build();
    let (tta, ttb) = (addr_of!(TTA) as u32, addr_of!(TTB) as u32);
    // SAFETY: both tables map all RAM and the UART by identity, so nothing this program
    // uses moves when the MMU goes on or the space changes (only the pages at VA differ).
    let (sum, tlbi) = unsafe {
        mmu_on(addr_of!(TTA));
        let sum = switch_data_loop(PAGES, tta, ttb, VA);
        mmu_off();
        mmu_on(addr_of!(TTA));
        let tlbi = switch_data_loop_tlbi(PAGES, tta, ttb, VA);
        mmu_off();
        (sum, tlbi)
    };
    check(
        "address-space switch loop: per-ASID data at each page's first read",
        sum == expected(PAGES),
    );
    check(
        "address-space switch loop with TLBIASID of the other space: per-ASID data",
        tlbi == expected(PAGES),
    );
    build_lpae();
    check(
        "lpae address-space switch loop (MCRR TTBR0 with the ASID): per-ASID data",
        run_lpae() == expected(PAGES),
    );
}
