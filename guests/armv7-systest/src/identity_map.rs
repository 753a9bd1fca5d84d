//! The short-descriptor identity map the MMU checks share (`section_tlbi`, `switch_mmu`,
//! `smp_mmu`): global 1 MiB sections for the GIC and the UART (strongly ordered) and for
//! the first 128 MiB of RAM (normal write-back), and turning the MMU on and off around a
//! check with it. Each check then changes only the entries of the address it tests.

use core::arch::asm;

/// A first-level (short-descriptor) translation table.
#[repr(C, align(16384))]
pub struct L1(pub [u32; 4096]);

/// Section: normal write-back, shareable, read/write, domain 0, global.
pub const SECTION_RAM: u32 = 0x1_0c0e;
/// Section: strongly ordered, execute-never.
pub const SECTION_DEV: u32 = 0xc12;

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
            "mcr p15, 0, {z}, c8, c7, 0",  // TLBIALL (this CPU)
            "dsb",
            "isb",
            "mrc p15, 0, {t}, c1, c0, 0",
            "orr {t}, {t}, #1",
            "mcr p15, 0, {t}, c1, c0, 0",  // SCTLR.M
            "isb",
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
            "mrc p15, 0, {t}, c1, c0, 0",
            "bic {t}, {t}, #1",
            "mcr p15, 0, {t}, c1, c0, 0",  // SCTLR.M = 0
            "isb",
            "mcr p15, 0, {z}, c13, c0, 1", // CONTEXTIDR: ASID 0
            "mcr p15, 0, {z}, c8, c7, 0",  // TLBIALL
            "dsb",
            "isb",
            z = in(reg) 0u32,
            t = out(reg) _,
            options(nostack),
        )
    };
}
