//! The storm's stage-1 translation: a 39-bit VA space (`TCR_EL1.T0SZ` = 25, 4 KiB granule,
//! lookup from level 1, 1 GiB blocks) with
//! - VA = PA for the first 4 GiB as guest-rt maps them (devices, then RAM; EL1 only);
//! - an EL0 alias of the RAM gigabyte at [`EL0_ALIAS`] (EL0 read/write/execute, so never
//!   executable at EL1), where EL0 operations run;
//! - per vCPU, three *windows* that the storm points at any 1 GiB-aligned IPA before an
//!   access, so every address of the IPA space (up to 48 bits) is reachable as Device or as
//!   Normal memory, and as instructions: [`Window::Device`], [`Window::Normal`] (both EL0 and
//!   EL1 read/write, never executable) and [`Window::Exec`] (EL1 only, executable).
//!   `TCR_EL1.IPS` is 48 bits, so stage 1 passes any such address on to stage 2.
//!
//! Everything else is unmapped: an access there is a stage-1 translation fault.

use core::arch::asm;
use core::cell::UnsafeCell;

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Writeable, TCR_EL1, TTBR0_EL1};

/// 1 GiB: a level-1 block.
pub const GIB: u64 = 1 << 30;
/// Start of the EL0 alias of the RAM gigabyte (PA 0x4000_0000).
pub const EL0_ALIAS: u64 = 4 * GIB;
/// PA the EL0 alias maps.
pub const EL0_ALIAS_PA: u64 = GIB;
/// First level-1 entry of the per-vCPU windows (4 entries per vCPU).
const WINDOW_BASE_ENTRY: u64 = 8;
/// First VA that nothing maps and no window can use (an access there never leaves stage 1).
pub const UNMAPPED_VA: u64 = 64 * GIB;
/// End of the VA space.
pub const VA_END: u64 = 1 << 39;
/// Largest output address a window block can hold.
pub const OA_END: u64 = 1 << 48;

/// A per-vCPU window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Device-nGnRnE, EL0 and EL1 read/write, execute-never.
    Device = 0,
    /// Normal write-back, EL0 and EL1 read/write, execute-never.
    Normal = 1,
    /// Normal write-back, EL1 read/write/execute, no EL0 access.
    Exec = 2,
}

/// Stage-1 descriptor bits (VMSAv8-64, level-1 block).
mod desc {
    pub const BLOCK: u64 = 0b01;
    pub const ATTR_DEVICE: u64 = 0 << 2;
    pub const ATTR_NORMAL: u64 = 1 << 2;
    /// AP[2:1] = 0b01: EL1 and EL0 read/write.
    pub const AP_EL0_RW: u64 = 0b01 << 6;
    pub const SH_INNER: u64 = 0b11 << 8;
    pub const AF: u64 = 1 << 10;
    pub const PXN: u64 = 1 << 53;
    pub const UXN: u64 = 1 << 54;
}

/// The level-1 table (512 entries of 1 GiB).
#[repr(C, align(4096))]
struct Table(UnsafeCell<[u64; 512]>);

// SAFETY: entries 0..8 are written by `install` on the boot vCPU before any other vCPU runs;
// each vCPU writes only its own window entries afterwards (and invalidates its TLB).
unsafe impl Sync for Table {}

static L1: Table = Table(UnsafeCell::new([0; 512]));

fn write_entry(index: u64, value: u64) {
    // SAFETY: `index` < 512 (callers' constants); see `Table`'s Sync for who writes what.
    unsafe {
        (L1.0.get() as *mut u64)
            .add(index as usize)
            .write_volatile(value)
    };
}

/// Builds the fixed entries (boot vCPU, once, after guest-rt's `mmu::enable`) and loads
/// the table on the calling vCPU.
pub fn install() {
    for i in 0..4u64 {
        let attrs = if i == 0 {
            desc::ATTR_DEVICE | desc::PXN | desc::UXN
        } else {
            desc::ATTR_NORMAL | desc::SH_INNER
        };
        write_entry(i, (i * GIB) | attrs | desc::AF | desc::BLOCK);
    }
    write_entry(
        EL0_ALIAS / GIB,
        EL0_ALIAS_PA
            | desc::ATTR_NORMAL
            | desc::SH_INNER
            | desc::AP_EL0_RW
            | desc::PXN
            | desc::AF
            | desc::BLOCK,
    );
    barrier::dsb(barrier::SY);
    load();
}

/// Loads the storm's table on the calling vCPU (its MMU already on with guest-rt's
/// identity map, which agrees on every address the running code uses).
pub fn load() {
    TCR_EL1.write(
        TCR_EL1::T0SZ.val(25)
            + TCR_EL1::TG0::KiB_4
            + TCR_EL1::SH0::Inner
            + TCR_EL1::ORGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::IRGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
            + TCR_EL1::EPD1::DisableTTBR1Walks
            + TCR_EL1::IPS::Bits_48,
    );
    TTBR0_EL1.set(L1.0.get() as u64);
    barrier::isb(barrier::SY);
    // SAFETY: invalidating this vCPU's EL1&0 TLB only drops cached translations.
    unsafe { asm!("tlbi vmalle1", "dsb nsh", "isb", options(nostack)) };
}

/// Points this vCPU's window `w` at the gigabyte holding `ipa` (< [`OA_END`]) and returns
/// the VA through which `ipa` is reached.
pub fn map(w: Window, ipa: u64) -> u64 {
    let cpu = crate::vectors::cpu() as u64;
    let entry = WINDOW_BASE_ENTRY + cpu * 4 + w as u64;
    let attrs = match w {
        Window::Device => desc::ATTR_DEVICE | desc::AP_EL0_RW | desc::PXN | desc::UXN,
        Window::Normal => {
            desc::ATTR_NORMAL | desc::SH_INNER | desc::AP_EL0_RW | desc::PXN | desc::UXN
        }
        Window::Exec => desc::ATTR_NORMAL | desc::SH_INNER | desc::UXN,
    };
    let va = entry * GIB;
    write_entry(
        entry,
        (ipa & !(GIB - 1) & (OA_END - 1)) | attrs | desc::AF | desc::BLOCK,
    );
    // SAFETY: the new descriptor is visible to the walker (DSB) before the old translation
    // of this window is dropped from this vCPU's TLB; nothing else uses the window's VAs.
    unsafe {
        asm!(
            "dsb ishst",
            "tlbi vae1, {page}",
            "dsb nsh",
            "isb",
            page = in(reg) va >> 12,
            options(nostack),
        )
    };
    va + (ipa & (GIB - 1))
}

/// The EL0 alias of RAM address `pa` (in the first RAM gigabyte).
pub fn el0_alias(pa: u64) -> u64 {
    pa - EL0_ALIAS_PA + EL0_ALIAS
}
