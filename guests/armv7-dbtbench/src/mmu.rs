//! The MMU-on kernels (issue 17 stage C): short-descriptor tables, identity for the RAM
//! (global 1 MiB sections) and the PL011, plus one non-global section whose frame differs
//! between two address spaces (ASID 1 and 2). With the MMU on: a pointer chase over
//! 64 MiB, a loop switching between the two address spaces (`CONTEXTIDR` + `TTBR0`, as
//! Linux's `cpu_v7_switch_mm` does), and the shadow-miss path (a page's translation
//! invalidated with `TLBIMVAA`, then touched).

use core::arch::asm;
use core::hint::black_box;
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::aborts::{NO_ACCESS_VA, XN_VA};

/// A short-descriptor level-1 table (16 KiB aligned, 4096 sections).
#[repr(C, align(16384))]
struct L1([u32; 4096]);

static mut SPACE_A: L1 = L1([0; 4096]);
static mut SPACE_B: L1 = L1([0; 4096]);

/// Start of guest RAM and its size (the VM's and `qemu-system-arm -m 128M`'s).
const RAM: u32 = 0x4000_0000;
const RAM_MIB: u32 = 128;
/// The pointer chase's 64 MiB: the upper half of RAM (the image is at its start).
const CHASE: u32 = 0x4400_0000;
const CHASE_BYTES: u32 = 64 << 20;
/// Bytes between chase nodes (one per cache line).
const NODE: u32 = 64;
/// The virtual section whose frame is per address space, and the two frames.
const PRIVATE_VA: u32 = 0x4800_0000;
const FRAME_A: u32 = 0x43e0_0000;
const FRAME_B: u32 = 0x43f0_0000;

/// Section descriptor: AP = 0b11 (read/write at PL0 and PL1), TEX = 0, C = B = 1 (Normal
/// write-back), domain 0.
const SECTION_RAM: u32 = 0xc0e;
/// Section descriptor for the PL011: AP = 0b11, strongly ordered, XN.
const SECTION_DEVICE: u32 = 0xc12;
/// Section descriptor with `AP` = 0b00, `APX` = 0: no access (Normal write-back, domain 0).
const SECTION_NO_ACCESS: u32 = 0x00e;
/// Section descriptor bit XN: execute-never.
const XN: u32 = 1 << 4;
/// Section descriptor bit nG: the translation belongs to the current ASID.
const NG: u32 = 1 << 17;

fn fill(t: &mut L1, frame: u32) {
    t.0.fill(0);
    t.0[0x090] = 0x0900_0000 | SECTION_DEVICE;
    for s in 0..RAM_MIB {
        t.0[((RAM >> 20) + s) as usize] = (RAM + (s << 20)) | SECTION_RAM;
    }
    t.0[(PRIVATE_VA >> 20) as usize] = frame | SECTION_RAM | NG;
    // The abort kernels' sections (`aborts.rs`; INVALID_VA's entry stays 0: invalid).
    t.0[(NO_ACCESS_VA >> 20) as usize] = frame | SECTION_NO_ACCESS;
    t.0[(XN_VA >> 20) as usize] = frame | SECTION_RAM | XN;
}

/// Builds both address spaces, and the chase's cycle (with the MMU off), then turns the MMU
/// on in address space A (ASID 1).
pub fn enable() {
    // SAFETY: the tables are private statics; identity for every address the program
    // uses, so turning the MMU on moves nothing.
    unsafe {
        fill(&mut *addr_of_mut!(SPACE_A), FRAME_A);
        fill(&mut *addr_of_mut!(SPACE_B), FRAME_B);
        write_volatile(FRAME_A as *mut u32, 1);
        write_volatile(FRAME_B as *mut u32, 2);
        build_chase();
        asm!(
            "mcr p15, 0, {zero}, c2, c0, 2", // TTBCR: N = 0, short descriptors
            "mcr p15, 0, {all}, c3, c0, 0",  // DACR: every domain client
            "mcr p15, 0, {one}, c13, c0, 1", // CONTEXTIDR: ASID 1
            "mcr p15, 0, {ttb}, c2, c0, 0",  // TTBR0
            "mcr p15, 0, {zero}, c8, c7, 0", // TLBIALL
            "dsb",
            "isb",
            "mrc p15, 0, {s}, c1, c0, 0",
            "orr {s}, {s}, #1",
            "mcr p15, 0, {s}, c1, c0, 0",   // SCTLR.M
            "isb",
            zero = in(reg) 0u32,
            all = in(reg) 0x5555_5555u32,
            one = in(reg) 1u32,
            ttb = in(reg) addr_of!(SPACE_A) as u32,
            s = out(reg) _,
        );
    }
}

/// Node `i`'s successor: a full-period LCG over the 2^20 nodes, so the chase visits them
/// all in a scattered order.
fn next(i: u32) -> u32 {
    (i.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)) & (CHASE_BYTES / NODE - 1)
}

fn build_chase() {
    for i in 0..CHASE_BYTES / NODE {
        // SAFETY: the chase region is RAM this program owns (identity-mapped or MMU off).
        unsafe { write_volatile((CHASE + i * NODE) as *mut u32, CHASE + next(i) * NODE) };
    }
}

/// 100 000 dependent loads, each on another cache line of the 64 MiB region.
pub fn chase() -> u32 {
    let mut p = CHASE;
    for _ in 0..100_000 {
        // SAFETY: every node holds the address of another node.
        p = unsafe { read_volatile(p as *const u32) };
    }
    p
}

/// 2000 switches between address spaces A and B, each followed by a load from the
/// non-global section (1 in A, 2 in B): ends in A.
pub fn switch() -> u32 {
    let mut acc = 0u32;
    for i in 0..2000u32 {
        let (asid, ttb) = if i & 1 == 0 {
            (2u32, addr_of!(SPACE_B) as u32)
        } else {
            (1u32, addr_of!(SPACE_A) as u32)
        };
        // SAFETY: both spaces map all code and data identically but for PRIVATE_VA.
        unsafe {
            asm!(
                "mcr p15, 0, {asid}, c13, c0, 1",
                "isb",
                "mcr p15, 0, {ttb}, c2, c0, 0",
                "isb",
                asid = in(reg) asid,
                ttb = in(reg) ttb,
                options(nostack)
            );
            acc = acc.wrapping_add(read_volatile(PRIVATE_VA as *const u32));
        }
    }
    acc
}

/// Pages the TLB kernels touch (in the chase region).
const PAGES: u32 = 256;

fn tlbimvaa(va: u32) {
    // SAFETY: TLB maintenance only.
    unsafe { asm!("mcr p15, 0, {}, c8, c7, 3", "dsb", "isb", in(reg) va, options(nostack)) };
}

/// 256 `TLBIMVAA` (the pages' translations dropped, none touched).
pub fn tlbi() -> u32 {
    for k in 0..PAGES {
        tlbimvaa(CHASE + k * 4096);
    }
    PAGES
}

/// 256 `TLBIMVAA`, each followed by a load from that page: a TLB miss each (under the DBT
/// a shadow miss filled from the guest's tables).
pub fn miss() -> u32 {
    let mut acc = 0u32;
    for k in 0..PAGES {
        let va = CHASE + k * 4096;
        tlbimvaa(va);
        // SAFETY: RAM of the chase region.
        acc = acc.wrapping_add(unsafe { read_volatile(black_box(va) as *const u32) });
    }
    acc
}

/// Address spaces besides A and B that [`fill_spaces`] touches the private section in.
const OTHER_SPACES: u32 = 32;

/// Loads from the private section's first [`PAGES`] pages in [`OTHER_SPACES`] more address
/// spaces (ASIDs 3 to 34, address space A's tables), then returns to A (ASID 1): under
/// the DBT each gets a shadow holding its own non-global translations of those pages, as
/// the processes of an operating system all map their code and stacks at the same
/// addresses.
pub fn fill_spaces() -> u32 {
    let mut acc = 0u32;
    for asid in 3..3 + OTHER_SPACES {
        set_asid(asid);
        for k in 0..PAGES {
            // SAFETY: the private section is RAM (frame A) in every ASID with A's tables.
            acc = acc.wrapping_add(unsafe { read_volatile((PRIVATE_VA + k * 4096) as *const u32) });
        }
    }
    set_asid(1);
    acc
}

/// Writes `CONTEXTIDR` (the ASID; `TTBR0` stays address space A's).
fn set_asid(asid: u32) {
    // SAFETY: every ASID uses A's tables, which map all code and data.
    unsafe { asm!("mcr p15, 0, {}, c13, c0, 1", "isb", in(reg) asid, options(nostack)) };
}

/// 256 `TLBIMVA` of ASID 1 in the private section (none touched) while the other address
/// spaces of [`fill_spaces`] hold translations of the same pages.
pub fn tlbi_asid() -> u32 {
    for k in 0..PAGES {
        // SAFETY: TLB maintenance only.
        unsafe {
            asm!("mcr p15, 0, {}, c8, c7, 1", "dsb", "isb",
                in(reg) (PRIVATE_VA + k * 4096) | 1, options(nostack))
        };
    }
    PAGES
}
