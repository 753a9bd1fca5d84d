//! The SMP check with the MMU on (issue 17: shadow stage 1 on several vCPUs): both CPUs
//! run on the same short-descriptor tables (identity for RAM and devices, small non-global
//! pages at [`VA`]) and
//!
//! 1. CPU 0 remaps a data page and a code page, `TLBIMVAIS` both, `DSB`, and only then
//!    tells CPU 1 (a flag in memory): CPU 1, which read and ran the old pages before, must
//!    read the new data and run the new code (the broadcast invalidation is complete for
//!    every PE at the issuer's `DSB`);
//! 2. CPU 1 switches between ASID 1 and ASID 2 (two tables that map [`VA`] to different
//!    pages) and back: each ASID's entries give that ASID's page;
//! 3. CPU 0 remaps ASID 1's page and `TLBIASIDIS(1)`: CPU 1 sees the new page in ASID 1
//!    and still ASID 2's own page in ASID 2; a global page (a kernel mapping) CPU 0
//!    remapped with `TLBIMVAAIS` in step 1 is new for CPU 1 in both ASIDs;
//! 4. CPU 0 sends SGIs to CPU 1, still with its MMU on: one while CPU 1 spins with IRQs
//!    unmasked (as Linux waits for a cross-call), one while it sits in a WFI loop with
//!    IRQs masked around the WFI (as Linux's idle loop); CPU 1's handler answers each.
//!
//! Each check compares with what the architecture requires, so the lines are the same
//! under `qemu-system-arm` and under the hypervisor's DBT.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::identity_map::{map_identity, mmu_off, L1};
use crate::uart::{puthex, puts};

#[repr(C, align(4096))]
struct Page([u32; 1024]);

/// ASID 1's and ASID 2's first-level tables, their second-level tables for [`VA`].
static mut TT1: L1 = L1([0; 4096]);
static mut TT2: L1 = L1([0; 4096]);
static mut PT1: Page = Page([0; 1024]);
static mut PT2: Page = Page([0; 1024]);
/// Data pages (their first word tells them apart) and code pages (`mov r0, #n; bx lr`).
static mut DATA: [Page; 3] = [const { Page([0; 1024]) }; 3];
static mut CODE: [Page; 2] = [const { Page([0; 1024]) }; 2];

/// Where the test maps its pages: data at `VA`, code at `VA + 0x1000` (within a direct
/// `BL` of this program, so that under the DBT the call is a linked branch that bypasses
/// the dispatcher; the rest of the 1 MiB around it is not mapped while the MMU is on).
/// `link.ld` defines `smp_mmu_code_va` = `VA + 0x1000` for that `BL`.
const VA: u32 = 0x4100_0000;

global_asm!(
    r#"
    .text
    .arm
    .balign 4
    // r0 = flag, r1 = value, r2 = patience: waits until the word at r0 >= r1 (or r2
    // polls), then calls the code page at VA + 0x1000 and returns what it returns.
    .global smp_mmu_probe
smp_mmu_probe:
1:  ldr r3, [r0]
    cmp r3, r1
    bhs 2f
    subs r2, r2, #1
    bne 1b
2:  push {{r4, lr}}
    bl smp_mmu_code_va
    pop {{r4, pc}}
"#
);

extern "C" {
    fn smp_mmu_probe(flag: *const u32, value: u32, patience: u32) -> u32;
}
/// First words of the data pages, return values of the code pages.
const WORDS: [u32; 3] = [0x1111_1111, 0x2222_2222, 0x3333_3333];
const RETURNS: [u32; 2] = [0x11, 0x22];

/// Small page: normal write-back, shareable, not global, read/write at PL0 and PL1.
const SMALL: u32 = 0xc3e;
/// The same, global (nG = 0): one entry for every ASID, as a kernel mapping.
const SMALL_GLOBAL: u32 = SMALL & !0x800;

/// The handshake (written by one CPU, read by the other).
static mut STAGE0: u32 = 0; // CPU 0: 1 tables ready, 2 pages remapped, 3 ASID 1 remapped
static mut STAGE1: u32 = 0; // CPU 1: 1 read the old pages, 2 saw the remap, 3 done
/// What CPU 1 saw: old data, old code, new data, new code, ASID 2, ASID 1 again, after
/// TLBIASIDIS: ASID 1, ASID 2; SGI taken while spinning, SGI taken from WFI; the global
/// page before the remap in ASID 1 and 2, after it in ASID 1 and 2.
static mut SEEN: [u32; 14] = [0; 14];

const PATIENCE: u32 = 20_000_000;

fn wait(flag: *const u32, value: u32) -> bool {
    // SAFETY: a flag the other CPU writes.
    (0..PATIENCE).any(|_| unsafe { read_volatile(flag) } >= value)
}

fn set(flag: *mut u32, value: u32) {
    // SAFETY: a flag only this CPU writes; the barrier orders what it announces before.
    unsafe {
        asm!("dmb ish", options(nostack));
        write_volatile(flag, value);
    }
}

fn page(p: *const Page) -> u32 {
    p as u32
}

fn data(i: usize) -> u32 {
    // SAFETY: the address of a static.
    page(unsafe { addr_of!(DATA[i]) })
}

fn code(i: usize) -> u32 {
    // SAFETY: the address of a static.
    page(unsafe { addr_of!(CODE[i]) })
}

/// Builds both tables and the pages (CPU 0, MMU off).
fn build() {
    // SAFETY: the test's own statics; CPU 1 uses them only after STAGE0 = 1.
    unsafe {
        for (tt, pt) in [
            (&mut *addr_of_mut!(TT1), addr_of!(PT1)),
            (&mut *addr_of_mut!(TT2), addr_of!(PT2)),
        ] {
            map_identity(tt);
            tt.0[(VA >> 20) as usize] = page(pt) | 1;
        }
        let pt1 = &mut *addr_of_mut!(PT1);
        let pt2 = &mut *addr_of_mut!(PT2);
        pt1.0.iter_mut().for_each(|e| *e = 0);
        pt2.0.iter_mut().for_each(|e| *e = 0);
        pt1.0[0] = data(0) | SMALL;
        pt1.0[1] = code(0) | SMALL;
        pt2.0[0] = data(1) | SMALL;
        pt1.0[2] = data(0) | SMALL_GLOBAL;
        pt2.0[2] = data(0) | SMALL_GLOBAL;
        for (i, w) in WORDS.into_iter().enumerate() {
            write_volatile(data(i) as *mut u32, w);
        }
        for (i, r) in RETURNS.into_iter().enumerate() {
            let at = code(i) as *mut u32;
            write_volatile(at, 0xe3a0_0000 | r); // mov r0, #r
            write_volatile(at.add(1), 0xe12f_ff1e); // bx lr
            asm!(
                "dsb ish",
                "mcr p15, 0, {a}, c7, c11, 1", // DCCMVAU
                "mcr p15, 0, {b}, c7, c11, 1",
                "dsb ish",
                "mcr p15, 0, {z}, c7, c1, 0", // ICIALLUIS
                "dsb ish",
                "isb",
                a = in(reg) at, b = in(reg) at.add(1), z = in(reg) 0u32,
                options(nostack),
            );
        }
        asm!("dsb ish", options(nostack));
    }
}

/// Turns this CPU's MMU on with ASID 1's tables.
fn mmu_on() {
    // SAFETY: the tables map all RAM and the devices this program uses by identity
    // (`map_identity`), so nothing moves when the MMU goes on.
    unsafe { crate::identity_map::mmu_on(addr_of!(TT1)) };
}

/// Switches to ASID `asid` with first-level table `tt`.
fn switch(asid: u32, tt: u32) {
    // SAFETY: both tables map everything but `VA` alike; the code runs outside `VA`.
    unsafe {
        asm!(
            "mcr p15, 0, {a}, c13, c0, 1",
            "isb",
            "mcr p15, 0, {tt}, c2, c0, 0",
            "isb",
            a = in(reg) asid, tt = in(reg) tt,
            options(nostack),
        )
    };
}

fn read_global() -> u32 {
    // SAFETY: `VA + 0x2000` is mapped (global) in both ASIDs while the MMU is on.
    unsafe { read_volatile((VA + 0x2000) as *const u32) }
}

fn read_va() -> u32 {
    // SAFETY: `VA` is mapped in both ASIDs while the MMU is on.
    unsafe { read_volatile(VA as *const u32) }
}

/// Waits until `flag` >= `value`, then runs the code page at `VA + 0x1000` (ASID 1: a
/// code page, `mov r0, #n; bx lr`) and returns what it returns.
fn call_va_after(flag: *const u32, value: u32) -> u32 {
    // SAFETY: the code page is mapped in ASID 1, where the callers run this.
    unsafe { smp_mmu_probe(flag, value, PATIENCE) }
}

fn call_va() -> u32 {
    call_va_after(addr_of!(STAGE0), 0)
}

/// Sets entry `i` of second-level table `pt` to small page `pa` (and orders the store
/// before the TLB maintenance that follows).
fn map(pt: *mut Page, i: usize, pa: u32) {
    // SAFETY: an entry of the test's own table.
    unsafe {
        write_volatile(addr_of_mut!((*pt).0[i]), pa | SMALL);
        asm!("dsb ish", options(nostack));
    }
}

fn tlbimvais(va_asid: u32) {
    // SAFETY: TLB maintenance only.
    unsafe { asm!("mcr p15, 0, {}, c8, c3, 1", in(reg) va_asid, options(nostack)) };
}

fn tlbimvaais(va: u32) {
    // SAFETY: TLB maintenance only.
    unsafe { asm!("mcr p15, 0, {}, c8, c3, 3", in(reg) va, options(nostack)) };
}

fn tlbiasidis(asid: u32) {
    // SAFETY: TLB maintenance only.
    unsafe { asm!("mcr p15, 0, {}, c8, c3, 2", in(reg) asid, options(nostack)) };
}

fn complete() {
    // SAFETY: barriers only.
    unsafe { asm!("dsb ish", "isb", options(nostack)) };
}

fn seen(i: usize, v: u32) {
    // SAFETY: CPU 1's reports; CPU 0 reads them after STAGE1 moves.
    unsafe { write_volatile(addr_of_mut!(SEEN[i]), v) };
}

/// CPU 1's part, after the MMU-off SMP checks.
pub fn secondary() {
    if !wait(addr_of!(STAGE0), 1) {
        return;
    }
    mmu_on();
    seen(0, read_va());
    seen(1, call_va());
    // The global page, so that both ASIDs' entries for it exist.
    seen(10, read_global());
    switch(2, addr_of!(TT2) as u32);
    seen(11, read_global());
    switch(1, addr_of!(TT1) as u32);
    set(addr_of_mut!(STAGE1), 1);
    // Spins with the MMU on (its translations of `VA` cached) while CPU 0 remaps, then
    // calls the code page from the same place as before.
    seen(3, call_va_after(addr_of!(STAGE0), 2));
    seen(2, read_va());
    seen(12, read_global());
    switch(2, addr_of!(TT2) as u32);
    seen(4, read_va());
    seen(13, read_global());
    switch(1, addr_of!(TT1) as u32);
    seen(5, read_va());
    set(addr_of_mut!(STAGE1), 2);
    wait(addr_of!(STAGE0), 3);
    seen(6, read_va());
    switch(2, addr_of!(TT2) as u32);
    seen(7, read_va());
    switch(1, addr_of!(TT1) as u32);
    set(addr_of_mut!(STAGE1), 3);
    // Interrupts with the MMU on: an SGI while spinning with IRQs unmasked, then one
    // that wakes it from WFI.
    crate::smp::forget_ping();
    set(addr_of_mut!(STAGE1), 4);
    seen(8, crate::smp::spin_for_ping() as u32);
    crate::smp::forget_ping();
    set(addr_of_mut!(STAGE1), 5);
    seen(9, crate::smp::idle_for_ping() as u32);
    mmu_off();
    set(addr_of_mut!(STAGE1), 6);
}

/// CPU 0's part (CPU 1 is running [`secondary`]).
pub fn primary(check: fn(&str, bool)) {
    build();
    mmu_on();
    let before = (read_va(), call_va());
    set(addr_of_mut!(STAGE0), 1);
    let started = wait(addr_of!(STAGE1), 1);
    // Remap: data page 0 -> 2, code page 0 -> 1; invalidate both pages everywhere.
    map(addr_of_mut!(PT1), 0, data(2));
    map(addr_of_mut!(PT1), 1, code(1));
    tlbimvais(VA | 1);
    tlbimvais((VA + 0x1000) | 1);
    // The global page in both tables: data page 0 -> 1, every ASID's entry.
    map(addr_of_mut!(PT1), 2, data(1));
    map(addr_of_mut!(PT2), 2, data(1));
    tlbimvaais(VA + 0x2000);
    complete();
    let mine = (read_va(), call_va());
    set(addr_of_mut!(STAGE0), 2);
    let switched = wait(addr_of!(STAGE1), 2);
    // ASID 1's data page back to page 0; ASID 2's untouched.
    map(addr_of_mut!(PT1), 0, data(0));
    tlbiasidis(1);
    complete();
    set(addr_of_mut!(STAGE0), 3);
    let done = wait(addr_of!(STAGE1), 3);
    let spin = wait(addr_of!(STAGE1), 4) && crate::smp::ping_cpu1();
    let idle = wait(addr_of!(STAGE1), 5) && crate::smp::ping_cpu1();
    let off = wait(addr_of!(STAGE1), 6);
    mmu_off();
    // SAFETY: CPU 1 wrote them before STAGE1 = 3 (or gave up).
    let s: [u32; 14] = unsafe { read_volatile(addr_of!(SEEN)) };
    let ok_old = started && s[0] == WORDS[0] && s[1] == RETURNS[0];
    let ok_remap = ok_old
        && before == (WORDS[0], RETURNS[0])
        && mine == (WORDS[2], RETURNS[1])
        && s[2] == WORDS[2];
    let ok_code = ok_old && s[3] == RETURNS[1];
    let ok_asid = switched && s[4] == WORDS[1] && s[5] == WORDS[2];
    let ok_asidis = done && s[6] == WORDS[0] && s[7] == WORDS[1];
    let ok_global = switched
        && s[10] == WORDS[0]
        && s[11] == WORDS[0]
        && s[12] == WORDS[1]
        && s[13] == WORDS[1];
    if !(ok_remap && ok_code && ok_asid && ok_asidis && ok_global) {
        puts("armv7-systest: smp mmu: cpu 0 saw");
        for v in [before.0, before.1, mine.0, mine.1] {
            puts(" ");
            puthex(v);
        }
        puts(", cpu 1 saw");
        for v in s {
            puts(" ");
            puthex(v);
        }
        puts("\n");
    }
    check(
        "smp mmu: cpu 1 reads the page cpu 0 remapped with TLBIMVAIS",
        ok_remap,
    );
    check(
        "smp mmu: cpu 1 runs the code page cpu 0 remapped with TLBIMVAIS",
        ok_code,
    );
    check(
        "smp mmu: cpu 1 sees each ASID's page across switches",
        ok_asid,
    );
    check(
        "smp mmu: TLBIASIDIS by cpu 0 remaps ASID 1 on cpu 1, ASID 2 kept",
        ok_asidis,
    );
    check(
        "smp mmu: global page remapped with TLBIMVAAIS seen new by cpu 1 in both ASIDs",
        ok_global,
    );
    check(
        "smp mmu: SGI taken by cpu 1 spinning with IRQs unmasked",
        spin && s[8] == 1,
    );
    check(
        "smp mmu: SGI wakes cpu 1 from its WFI loop",
        idle && off && s[9] == 1,
    );
}
