//! The short-descriptor identity map the MMU checks share (`section_tlbi`, `switch_mmu`,
//! `smp_mmu`): global 1 MiB sections for the GIC and the UART (strongly ordered) and for
//! the first 128 MiB of RAM (normal write-back), and turning the MMU on and off around a
//! check with it. Each check then changes only the entries of the address it tests.

use core::arch::asm;
use core::ptr::{addr_of_mut, write_volatile};

/// `TLBIALL` of this CPU, `DSB`, `ISB` (asm template; `{z}` holds 0).
macro_rules! tlbiall_sync {
    () => {
        concat!(
            "mcr p15, 0, {z}, c8, c7, 0\n", // TLBIALL (this CPU)
            "dsb\n",
            "isb\n",
        )
    };
}
pub(crate) use tlbiall_sync;

/// Sets `SCTLR.M`, `ISB` (asm template; `{t}` is a scratch register).
macro_rules! sctlr_m_on {
    () => {
        concat!(
            "mrc p15, 0, {t}, c1, c0, 0\n",
            "orr {t}, {t}, #1\n",
            "mcr p15, 0, {t}, c1, c0, 0\n", // SCTLR.M
            "isb\n",
        )
    };
}
pub(crate) use sctlr_m_on;

/// Clears `SCTLR.M`, `ISB` (asm template; `{t}` is a scratch register).
macro_rules! sctlr_m_off {
    () => {
        concat!(
            "mrc p15, 0, {t}, c1, c0, 0\n",
            "bic {t}, {t}, #1\n",
            "mcr p15, 0, {t}, c1, c0, 0\n", // SCTLR.M = 0
            "isb\n",
        )
    };
}
pub(crate) use sctlr_m_off;

/// A first-level (short-descriptor) translation table.
#[repr(C, align(16384))]
pub struct L1(pub [u32; 4096]);

/// A second-level (short-descriptor) table, or a 4 KiB page.
#[repr(C, align(4096))]
pub struct Page(pub [u32; 1024]);

/// Section: normal write-back, shareable, read/write, domain 0, global.
pub const SECTION_RAM: u32 = 0x1_0c0e;
/// Section: strongly ordered, execute-never.
pub const SECTION_DEV: u32 = 0xc12;
/// Small page: normal write-back, not global, read/write at PL0 and PL1.
pub const SMALL_NOT_GLOBAL: u32 = 0xc3e;

/// Fills `tt` with the identity map: GIC and UART sections, 128 MiB of RAM from
/// 0x4000_0000, nothing else.
pub fn map_identity(tt: &mut L1) {
    tt.0.iter_mut().for_each(|e| *e = 0);
    tt.0[0x080] = 0x0800_0000 | SECTION_DEV; // GIC
    tt.0[0x090] = 0x0900_0000 | SECTION_DEV; // UART
    for s in 0..128u32 {
        tt.0[(0x400 + s) as usize] = (0x4000_0000 + (s << 20)) | SECTION_RAM;
    }
}

/// Fills `tt` with the identity map and maps the 1 MiB at `va` (outside it) through the
/// second-level table `pt`: its first `pages` small pages all to `frame`, not global.
pub fn map_identity_with_pages(tt: &mut L1, pt: &mut Page, va: u32, pages: usize, frame: u32) {
    map_identity(tt);
    pt.0.iter_mut().for_each(|e| *e = 0);
    for e in &mut pt.0[..pages] {
        *e = frame | SMALL_NOT_GLOBAL;
    }
    tt.0[(va >> 20) as usize] = pt as *const Page as u32 | 1;
}

/// Fills `tt` with the identity map and the global section at `va` (outside it) mapped to
/// `frame`, turns the MMU on with it ([`mmu_on`]) and returns the section's entry.
///
/// # Safety
///
/// As for [`mmu_on`]; `tt` is not otherwise in use.
pub unsafe fn mmu_on_with_section(tt: *mut L1, va: u32, frame: u32) -> *mut u32 {
    // SAFETY: the caller's promise above.
    unsafe {
        map_identity(&mut *tt);
        let slot = addr_of_mut!((*tt).0[(va >> 20) as usize]);
        write_volatile(slot, frame | SECTION_RAM);
        mmu_on(tt);
        slot
    }
}

/// Points the live section entry `slot` at `frame`, then `TLBIMVA` of `mva` with ASID 1,
/// `BPIALL`, `DSB`, `ISB`.
///
/// # Safety
///
/// `slot` is a section's entry in the live table, and nothing the program uses but
/// through that section's addresses moves.
pub unsafe fn remap_section(slot: *mut u32, frame: u32, mva: u32) {
    // SAFETY: the caller's promise above.
    unsafe {
        write_volatile(slot, frame | SECTION_RAM);
        asm!(
            "dsb",
            "mcr p15, 0, {mva}, c8, c7, 1", // TLBIMVA, ASID 1
            "mcr p15, 0, {z}, c7, c5, 6",   // BPIALL
            "dsb",
            "isb",
            mva = in(reg) mva | 1,
            z = in(reg) 0u32,
            options(nostack),
        );
    }
}

/// Writes `words` at `at` and makes them visible to instruction fetch (`DCCMVAU` of each,
/// `DSB`, `ICIALLU`, `DSB`, `ISB`).
///
/// # Safety
///
/// `at` points to `words.len()` words of RAM this check owns, not executing.
pub unsafe fn put_code(at: *mut u32, words: &[u32]) {
    for (k, &w) in words.iter().enumerate() {
        // SAFETY: within the caller's words.
        unsafe {
            write_volatile(at.add(k), w);
            asm!("mcr p15, 0, {a}, c7, c11, 1", a = in(reg) at.add(k), options(nostack));
            // DCCMVAU
        }
    }
    // SAFETY: barriers and ICIALLU.
    unsafe {
        asm!(
            "dsb",
            "mcr p15, 0, {z}, c7, c5, 0", // ICIALLU
            "dsb",
            "isb",
            z = in(reg) 0u32,
            options(nostack)
        )
    };
}

/// Turns this CPU's MMU on with short descriptors, `TTBR0` = `tt`, ASID 1 and domain 0 a
/// client, after a `TLBIALL` of this CPU.
///
/// # Safety
///
/// `tt` maps (at least) what [`map_identity`] maps by identity, so nothing the program
/// uses moves when the MMU goes on.
pub unsafe fn mmu_on(tt: *const L1) {
    // SAFETY: the caller's promise above.
    unsafe {
        asm!(
            "dsb",
            "mcr p15, 0, {z}, c2, c0, 2",  // TTBCR: TTBR0 only, short descriptors
            "mcr p15, 0, {one}, c3, c0, 0", // DACR: domain 0 client
            "mcr p15, 0, {one}, c13, c0, 1", // CONTEXTIDR: ASID 1
            "mcr p15, 0, {tt}, c2, c0, 0", // TTBR0
            tlbiall_sync!(),
            sctlr_m_on!(),
            z = in(reg) 0u32,
            one = in(reg) 1u32,
            tt = in(reg) tt as u32,
            t = out(reg) _,
            options(nostack),
        )
    };
}

/// Turns this CPU's MMU off and leaves ASID 0 and an empty TLB, as the later checks
/// expect.
pub fn mmu_off() {
    // SAFETY: the tables of [`mmu_on`] map by identity: nothing moves when the MMU goes off.
    unsafe {
        asm!(
            sctlr_m_off!(),
            "mcr p15, 0, {z}, c13, c0, 1", // CONTEXTIDR: ASID 0
            tlbiall_sync!(),
            z = in(reg) 0u32,
            t = out(reg) _,
            options(nostack),
        )
    };
}
