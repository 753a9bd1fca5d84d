//! The runtime's stage-1 translation (`TTBR0_EL1`, 4 KiB granule, 39-bit VA, start level 1).
//!
//! - VA `[0, 1 GiB)`: the guest's device range (PL011, GIC, virtio-mmio), identity to IPA,
//!   Device-nGnRE, never executable.
//! - VA `[1 GiB, 4 GiB)`: the guest's RAM and whatever else its 32-bit physical space holds,
//!   identity to IPA, Normal write-back, never executable (the host runs only translated
//!   code). 2 MiB blocks, split into 4 KiB pages on demand to write-protect a page that
//!   code was translated from (self-modifying-code detection).
//! - VA `[4 GiB, 64 GiB)`: unmapped. Translated code forms a zero-extended 32-bit address
//!   plus an immediate, or plus a second one shifted left by at most 2 (below 21 GiB), so
//!   a guest address that wraps faults here and goes through the fault path.
//! - VA `[64 GiB, 65 GiB)`: this runtime (image, stack, heap, page tables, code cache),
//!   identity to its IPA, Normal, EL1 read/write/execute. No guest address reaches it.
//! - VA `[256 GiB, 260 GiB)` ([`WINDOW`]): the guest's physical space again (a Device
//!   block, then the same level-2 tables as `[1 GiB, 4 GiB)`, so code pages are read-only
//!   here too), for the interpreter's bus, the shadow's walks of the guest's tables and the
//!   console: it stays mapped whatever the guest's MMU does.
//!
//! While the guest's MMU is off this map (the flat map, host ASID 0; guest entries nG) is
//! exactly the guest's physical view. With it on, `TTBR0_EL1` holds a shadow of the
//! guest's stage 1 instead ([`shadow`]): guest virtual addresses in `[0, 4 GiB)`, and the
//! flat map's level-1 entries above 4 GiB (runtime, write alias, window) in every root.

pub mod shadow;

use crate::smp::Mutex;
use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::*;
use alloc::boxed::Box;
use dbt_armv7::mmu::attrs::{Cacheability, MemType};

/// One translation table.
#[repr(C, align(4096))]
struct Table([u64; 512]);

/// The level-1 table and the level-2 tables of the guest's RAM range (VA 1..4 GiB).
struct Tables {
    l1: Table,
    l2: [Table; 3],
}

static TABLES: Mutex<Tables> = Mutex::new(Tables {
    l1: Table([0; 512]),
    l2: [Table([0; 512]), Table([0; 512]), Table([0; 512])],
});

/// Table descriptor (levels 1-2) and page descriptor (level 3).
const TABLE_OR_PAGE: u64 = 0b11;
/// Block descriptor (levels 1-2).
const BLOCK: u64 = 0b01;
/// Access flag.
const AF: u64 = 1 << 10;
/// Inner shareable.
const SH_INNER: u64 = 3 << 8;
/// AP\[2\]: read-only.
const AP_RO: u64 = 1 << 7;
/// Privileged and unprivileged execute-never.
const XN: u64 = (1 << 53) | (1 << 54);
/// `MAIR_EL1` index 0: Device-nGnRE.
const ATTR_DEVICE: u64 = 0 << 2;
/// `MAIR_EL1` index 1: Normal, inner/outer write-back.
const ATTR_NORMAL: u64 = 1 << 2;
/// `MAIR_EL1` index 2: Normal, inner/outer non-cacheable.
const ATTR_NORMAL_NC: u64 = 2 << 2;
/// `MAIR_EL1` index 3: Device-nGnRnE (the guest's strongly-ordered memory).
const ATTR_DEVICE_NGNRNE: u64 = 3 << 2;
/// `MAIR_EL1` index 4: Normal, inner/outer write-through.
const ATTR_NORMAL_WT: u64 = 4 << 2;
/// Output address bits of a descriptor.
const OA_MASK: u64 = 0x0000_ffff_ffff_f000;
/// Not global: the entry belongs to the ASID in `TTBR0_EL1` (guest mappings, which differ
/// between the flat map and the shadows).
const NG: u64 = 1 << 11;

/// Host VA of guest physical address 0 in the physical window.
pub const WINDOW: u64 = 256 << 30;

const GIB: u64 = 1 << 30;
const MIB2: u64 = 2 << 20;

/// VA of the runtime's write alias of the guest's RAM range: `RAM_ALIAS + IPA` for IPAs in
/// `[1 GiB, 4 GiB)`, Normal, EL1 read/write, never executable. Beyond what translated code
/// can address (below 21 GiB): only the runtime writes through it, to make a store to a
/// code page another vCPU still holds (`smp::write_held`).
pub const RAM_ALIAS: u64 = 128 * GIB;

fn normal_guest(pa: u64) -> u64 {
    pa | AF | SH_INNER | ATTR_NORMAL | XN | NG
}

/// The `MAIR_EL1` index (as the descriptor's `AttrIndx` field) of a shadow entry for
/// guest physical address `pa` that the guest's stage 1 gives memory type `mem`: the
/// guest's type (strongly-ordered: Device-nGnRnE; Device: Device-nGnRE; Normal: the less
/// cacheable of its inner and outer policies), but never Normal below 1 GiB, the guest's
/// devices. Stage 2 then makes it no weaker than the hypervisor's type for the IPA.
fn guest_attr(pa: u64, mem: MemType) -> u64 {
    match mem {
        MemType::StronglyOrdered => ATTR_DEVICE_NGNRNE,
        MemType::Device => ATTR_DEVICE,
        _ if pa < GIB => ATTR_DEVICE,
        MemType::Normal { inner, outer } => match inner.min(outer) {
            Cacheability::NonCacheable => ATTR_NORMAL_NC,
            Cacheability::WriteThrough => ATTR_NORMAL_WT,
            Cacheability::WriteBack => ATTR_NORMAL,
        },
    }
}

/// A shadow's level-3 descriptor for guest physical page `pa` of the guest's memory type
/// `mem` ([`guest_attr`]); never executable; read-only unless `writable`.
fn guest_page(pa: u64, writable: bool, mem: MemType) -> u64 {
    let attr = guest_attr(pa, mem);
    let shareable = if attr == ATTR_DEVICE || attr == ATTR_DEVICE_NGNRNE {
        0 // ignored for Device memory
    } else {
        SH_INNER
    };
    pa | AF | shareable | attr | XN | NG | TABLE_OR_PAGE | if writable { 0 } else { AP_RO }
}

/// A shadow's level-2 block descriptor for the guest physical 2 MiB range at `pa`, with
/// the attributes and permissions [`guest_page`] gives its pages.
fn guest_block(pa: u64, writable: bool, mem: MemType) -> u64 {
    (guest_page(pa, writable, mem) & !0b11) | BLOCK
}

/// Puts the entries every root shares (the flat map's above 4 GiB) into level-1 table
/// `l1`.
fn shared_entries(l1: &mut [u64; 512]) {
    l1[4..].copy_from_slice(&TABLES.lock().l1.0[4..]);
}

/// Loads root `root` with host ASID `asid` into `TTBR0_EL1`.
fn load_root(root: u64, asid: u16) {
    TTBR0_EL1.set(root | (asid as u64) << 48);
    barrier::isb(barrier::SY);
}

/// Loads the flat map (the guest's MMU is off).
fn load_flat() {
    let l1 = &TABLES.lock().l1 as *const Table as u64;
    load_root(l1, 0);
}

/// Builds the tables and turns the MMU and caches on; `runtime_base` is this runtime's
/// region (1 GiB-aligned, identity-mapped).
pub fn init(runtime_base: u64) {
    let mut t = TABLES.lock();
    t.l1.0[0] = AF | ATTR_DEVICE | XN | NG | BLOCK;
    for i in 0..3 {
        for (j, e) in t.l2[i].0.iter_mut().enumerate() {
            *e = normal_guest((i as u64 + 1) * GIB + j as u64 * MIB2) | BLOCK;
        }
        let l2 = &t.l2[i] as *const Table as u64;
        t.l1.0[i + 1] = l2 | TABLE_OR_PAGE;
    }
    t.l1.0[(runtime_base / GIB) as usize] =
        (runtime_base & !(GIB - 1)) | AF | SH_INNER | ATTR_NORMAL | BLOCK;
    // The physical window: the device block, then the guest RAM range's level-2 tables.
    let w = (WINDOW / GIB) as usize;
    t.l1.0[w] = t.l1.0[0];
    for g in 1..4 {
        t.l1.0[w + g] = t.l1.0[g];
    }
    for g in 1..4 {
        t.l1.0[((RAM_ALIAS + g * GIB) / GIB) as usize] = normal_guest(g * GIB) | BLOCK;
    }
    let l1 = &t.l1 as *const Table as u64;
    drop(t);
    L1.store(l1, core::sync::atomic::Ordering::Relaxed);
    turn_on(l1);
    // SAFETY: cleans the line holding `L1` to the point of coherency, where a vCPU that
    // starts with its MMU (and caches) off reads it.
    unsafe { core::arch::asm!("dc cvac, {}", "dsb sy", in(reg) &L1, options(nostack)) };
}

/// Turns the MMU on on a vCPU started after the boot vCPU built the tables (`init`).
pub fn init_secondary() {
    // Not through the lock: with the MMU off its exclusive accesses are to Device memory.
    turn_on(L1.load(core::sync::atomic::Ordering::Relaxed));
}

/// The level-1 table's address, for [`init_secondary`].
static L1: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// Loads the translation registers with the level-1 table `l1` and enables the MMU.
fn turn_on(l1: u64) {
    MAIR_EL1.write(
        MAIR_EL1::Attr0_Device::nonGathering_nonReordering_EarlyWriteAck
            + MAIR_EL1::Attr1_Normal_Inner::WriteBack_NonTransient_ReadWriteAlloc
            + MAIR_EL1::Attr1_Normal_Outer::WriteBack_NonTransient_ReadWriteAlloc
            + MAIR_EL1::Attr2_Normal_Inner::NonCacheable
            + MAIR_EL1::Attr2_Normal_Outer::NonCacheable
            + MAIR_EL1::Attr3_Device::nonGathering_nonReordering_noEarlyWriteAck
            + MAIR_EL1::Attr4_Normal_Inner::WriteThrough_NonTransient_ReadWriteAlloc
            + MAIR_EL1::Attr4_Normal_Outer::WriteThrough_NonTransient_ReadWriteAlloc,
    );
    let pa_range = ID_AA64MMFR0_EL1.read(ID_AA64MMFR0_EL1::PARange).min(5);
    TCR_EL1.write(
        TCR_EL1::T0SZ.val(25)
            + TCR_EL1::IRGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::ORGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::SH0::Inner
            + TCR_EL1::TG0::KiB_4
            + TCR_EL1::EPD1::DisableTTBR1Walks
            + TCR_EL1::IPS.val(pa_range),
    );
    TTBR0_EL1.set(l1);
    barrier::dsb(barrier::ISH);
    // SAFETY: drops stale translations of this EL1&0 regime before it is enabled, on every
    // CPU (Inner Shareable): after a VM restart another physical CPU may still hold the
    // previous runtime's entries for this VMID.
    unsafe { core::arch::asm!("tlbi vmalle1is", "dsb ish", "isb") };
    SCTLR_EL1.modify(
        SCTLR_EL1::M::Enable
            + SCTLR_EL1::C::Cacheable
            + SCTLR_EL1::I::Cacheable
            + SCTLR_EL1::A::Disable
            + SCTLR_EL1::WXN::Disable,
    );
    barrier::isb(barrier::SY);
}

fn tlbi_page(va: u64) {
    // SAFETY: invalidates this regime's translation of one page; barriers complete it.
    unsafe {
        core::arch::asm!("dsb ishst", "tlbi vaae1is, {}", "dsb ish", "isb", in(reg) va >> 12)
    };
}

/// Level-3 entry of guest page `va` (splitting its 2 MiB block first), or `None` outside
/// the guest's RAM range.
fn page_entry(t: &mut Tables, va: u64) -> Option<*mut u64> {
    if !(GIB..4 * GIB).contains(&va) {
        return None;
    }
    let l2 = &mut t.l2[(va / GIB - 1) as usize].0[((va >> 21) & 511) as usize];
    if *l2 & 0b11 == BLOCK {
        let block = *l2 & OA_MASK;
        let mut l3 = Box::new(Table([0; 512]));
        for (k, e) in l3.0.iter_mut().enumerate() {
            *e = normal_guest(block + k as u64 * 4096) | TABLE_OR_PAGE;
        }
        let l3 = Box::leak(l3) as *mut Table as u64;
        // Break-before-make: invalid, TLB invalidation, then the table.
        *l2 = 0;
        // SAFETY: drops the block's translations (the whole 2 MiB).
        unsafe { core::arch::asm!("dsb ishst", "tlbi vmalle1is", "dsb ish", "isb") };
        *l2 = l3 | TABLE_OR_PAGE;
        barrier::dsb(barrier::ISHST);
    }
    let l3 = (*l2 & OA_MASK) as *mut u64;
    // SAFETY: a level-3 table this module allocated; index < 512.
    Some(unsafe { l3.add(((va >> 12) & 511) as usize) })
}

/// Splits the 2 MiB blocks of guest addresses `[lo, hi)` into pages now, so that no page
/// is split (break-before-make: briefly unmapped) while another vCPU may access it.
pub fn split(lo: u64, hi: u64) {
    let mut t = TABLES.lock();
    let mut va = lo & !(MIB2 - 1);
    while va < hi {
        page_entry(&mut t, va);
        va += MIB2;
    }
}

/// Stores `size` bytes of `value` at guest physical `pa` through [`RAM_ALIAS`] (whatever
/// the guest's own mapping of the page allows); false outside `[1 GiB, 4 GiB)`.
pub fn write_alias(pa: u64, size: u8, value: u64) -> bool {
    if !(GIB..4 * GIB).contains(&pa) || pa + u64::from(size) > 4 * GIB {
        return false;
    }
    let a = RAM_ALIAS + pa;
    // SAFETY: `a` is in the write alias of guest RAM (mapped by `init`), which only the
    // runtime reaches; the access is one store of the guest's size. Volatile: other vCPUs
    // read the same memory.
    unsafe {
        match size {
            1 => core::ptr::write_volatile(a as *mut u8, value as u8),
            2 => core::ptr::write_unaligned(a as *mut u16, value as u16),
            4 => core::ptr::write_unaligned(a as *mut u32, value as u32),
            _ => core::ptr::write_unaligned(a as *mut u64, value),
        }
    }
    true
}

/// Makes guest page `page` (IPA >> 12) read-only (`on`) or writable again: in the flat
/// map (and so the window) and in every shadow that maps it; false outside the guest's
/// RAM range.
pub fn protect(page: u32, on: bool) -> bool {
    shadow::protect(page, on);
    protect_flat(page, on)
}

fn protect_flat(page: u32, on: bool) -> bool {
    let va = (page as u64) << 12;
    let mut t = TABLES.lock();
    let Some(e) = page_entry(&mut t, va) else {
        return false;
    };
    // SAFETY: `e` points into a live level-3 table that only this module writes.
    unsafe {
        let v = core::ptr::read_volatile(e);
        core::ptr::write_volatile(e, if on { v | AP_RO } else { v & !AP_RO });
    }
    tlbi_page(va);
    tlbi_page(WINDOW + va);
    true
}
