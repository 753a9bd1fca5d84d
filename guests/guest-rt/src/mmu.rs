//! Optional EL1 stage-1 MMU: one shared identity map, enabled per CPU by an explicit call.
//!
//! With the MMU off every data access is Device-nGnRnE: exclusives (and so read-modify-write
//! atomics) are not guaranteed to work and nothing is cached. A guest that shares data
//! between CPUs calls [`enable`] on its boot CPU first; secondaries started afterwards with
//! [`crate::smp::start_secondary`] turn on the same translation before they touch memory.
//!
//! The map uses the 4 KiB granule, a 32-bit VA space (`TCR_EL1.T0SZ` = 32, lookup starting at
//! level 1) and four 1 GiB blocks, VA = PA:
//! - 0x0000_0000..0x4000_0000: Device-nGnRnE, execute-never (GIC, PL011, virtio-mmio, ...);
//! - 0x4000_0000..0x1_0000_0000: Normal memory, inner/outer write-back, inner shareable (RAM).

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Readable, Writeable, MAIR_EL1, SCTLR_EL1, TCR_EL1, TTBR0_EL1};
use core::arch::asm;
use core::cell::UnsafeCell;

/// One level-1 translation table (only the first four entries are used).
#[repr(C, align(4096))]
struct Table(UnsafeCell<[u64; 512]>);

// SAFETY: the table is written only by `enable` on the boot CPU before any secondary runs and
// before the MMU reads it; afterwards it is read-only.
unsafe impl Sync for Table {}

static L1_TABLE: Table = Table(UnsafeCell::new([0; 512]));

/// Block descriptor bits (VMSAv8-64, stage 1, level 1 block).
mod desc {
    /// Bits 1:0 = 0b01: block descriptor.
    pub const BLOCK: u64 = 0b01;
    /// `AttrIndx` (bits 4:2) selecting `MAIR_EL1` attribute 0 (Device-nGnRnE).
    pub const ATTR_DEVICE: u64 = 0 << 2;
    /// `AttrIndx` selecting `MAIR_EL1` attribute 1 (Normal write-back).
    pub const ATTR_NORMAL: u64 = 1 << 2;
    /// `SH` (bits 9:8) = 0b11: inner shareable.
    pub const SH_INNER: u64 = 0b11 << 8;
    /// Access flag (bit 10): set, so no access-flag faults.
    pub const AF: u64 = 1 << 10;
    /// Privileged execute-never (bit 53).
    pub const PXN: u64 = 1 << 53;
    /// Unprivileged execute-never (bit 54).
    pub const UXN: u64 = 1 << 54;
}

/// Size of a level-1 block: 1 GiB.
const BLOCK_SIZE: u64 = 1 << 30;

/// The register values every CPU loads to turn on the shared identity map.
#[derive(Clone, Copy, Debug)]
pub struct MmuConfig {
    /// `MAIR_EL1`.
    pub mair: u64,
    /// `TCR_EL1`.
    pub tcr: u64,
    /// `TTBR0_EL1` (physical address of the level-1 table).
    pub ttbr0: u64,
    /// `SCTLR_EL1` with `M`, `C` and `I` set.
    pub sctlr: u64,
}

/// True if this CPU runs with stage-1 translation on (`SCTLR_EL1.M`).
pub fn is_enabled() -> bool {
    SCTLR_EL1.is_set(SCTLR_EL1::M)
}

/// Builds the identity map (first call only) and turns the MMU and caches on for the calling
/// CPU. Call it on the boot CPU before starting secondaries; idempotent.
pub fn enable() {
    if is_enabled() {
        return;
    }
    build_table();
    let cfg = config();
    MAIR_EL1.set(cfg.mair);
    TCR_EL1.set(cfg.tcr);
    TTBR0_EL1.set(cfg.ttbr0);
    barrier::isb(barrier::SY);
    // SAFETY: invalidating this CPU's stage-1 EL1&0 TLB entries has no effect on memory; the
    // barriers complete it before the MMU is turned on.
    unsafe { asm!("tlbi vmalle1", "dsb nsh", "isb", options(nostack)) };
    SCTLR_EL1.set(cfg.sctlr);
    barrier::isb(barrier::SY);
    // SAFETY: invalidating the instruction cache is always allowed at EL1 and only affects
    // performance; the code is identity mapped so execution continues at the next address.
    unsafe { asm!("ic iallu", "dsb nsh", "isb", options(nostack)) };
}

/// The configuration [`enable`] uses, for secondaries to load in their entry code.
/// `sctlr` is derived from the calling CPU's current `SCTLR_EL1`.
pub fn config() -> MmuConfig {
    let mair = (MAIR_EL1::Attr0_Device::nonGathering_nonReordering_noEarlyWriteAck
        + MAIR_EL1::Attr1_Normal_Outer::WriteBack_NonTransient_ReadWriteAlloc
        + MAIR_EL1::Attr1_Normal_Inner::WriteBack_NonTransient_ReadWriteAlloc)
        .value;
    let tcr = (TCR_EL1::T0SZ.val(32)
        + TCR_EL1::TG0::KiB_4
        + TCR_EL1::SH0::Inner
        + TCR_EL1::ORGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
        + TCR_EL1::IRGN0::WriteBack_ReadAlloc_WriteAlloc_Cacheable
        + TCR_EL1::EPD1::DisableTTBR1Walks
        + TCR_EL1::IPS::Bits_32)
        .value;
    let sctlr = SCTLR_EL1.get()
        | (SCTLR_EL1::M::Enable + SCTLR_EL1::C::Cacheable + SCTLR_EL1::I::Cacheable).value;
    MmuConfig {
        mair,
        tcr,
        ttbr0: L1_TABLE.0.get() as u64,
        sctlr,
    }
}

/// Fills the four 1 GiB identity blocks (with the MMU still off, so the writes reach memory).
fn build_table() {
    let table = L1_TABLE.0.get() as *mut u64;
    for i in 0..4u64 {
        let pa = i * BLOCK_SIZE;
        let attrs = if i == 0 {
            desc::ATTR_DEVICE | desc::PXN | desc::UXN
        } else {
            desc::ATTR_NORMAL | desc::SH_INNER
        };
        // SAFETY: `i` < 512 indexes the static table; only the boot CPU writes it, before
        // the MMU walks it (see `Table`'s `Sync`).
        unsafe {
            table
                .add(i as usize)
                .write_volatile(pa | attrs | desc::AF | desc::BLOCK)
        };
    }
    barrier::dsb(barrier::SY);
}
