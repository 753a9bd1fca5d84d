//! The hypervisor's own EL2 stage-1 translation: an identity map of RAM (normal,
//! write-back) and of the devices it drives (Device-nGnRE, never executable), built in a
//! static table pool before the MMU is on, so it needs no allocator.
//!
//! 4 KiB granule, 48-bit VA (`T0SZ` = 16, start at level 0), 2 MiB blocks at level 2.
//! `TCR_EL2` has a different layout with `HCR_EL2.E2H` = 1 (it becomes `TCR_EL1`'s), so
//! [`enable`] writes the one matching the chosen world-switch backend.

use core::cell::UnsafeCell;

const ENTRIES: usize = 512;
const POOL_PAGES: usize = 64;
const BLOCK_2M: u64 = 2 << 20;

/// `MAIR_EL2`: Attr0 normal WB RA/WA (0xff), Attr1 Device-nGnRE (0x04), Attr2 nGnRnE.
const MAIR: u64 = 0x00_04_ff;
const ATTR_NORMAL: u64 = 0 << 2;
const ATTR_DEVICE: u64 = 1 << 2;
/// Descriptor bits: valid block at level 2, table at levels 0-1.
const DESC_BLOCK: u64 = 0b01;
const DESC_TABLE: u64 = 0b11;
/// Lower attributes: SH = inner shareable, AF = 1.
const SH_INNER: u64 = 0b11 << 8;
const AF: u64 = 1 << 10;
/// Upper attributes: PXN (bit 53, EL2&0 regime) and XN/UXN (bit 54).
const XN_ALL: u64 = (1 << 53) | (1 << 54);

#[repr(C, align(4096))]
struct Pool([[u64; ENTRIES]; POOL_PAGES]);

/// Static storage for the EL2 tables. Written only by the boot CPU in [`IdentityMap`]
/// before any other CPU runs; afterwards only read by the MMU.
struct TablePool(UnsafeCell<Pool>);
// SAFETY: see the type's doc — single writer during boot, read-only afterwards.
unsafe impl Sync for TablePool {}

static POOL: TablePool = TablePool(UnsafeCell::new(Pool([[0; ENTRIES]; POOL_PAGES])));

/// Errors while building the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    /// The static table pool is exhausted.
    OutOfTables,
    /// Address beyond the 48-bit VA range.
    OutOfRange,
}

/// Builder for the EL2 identity map.
pub struct IdentityMap {
    used: usize,
}

impl IdentityMap {
    /// Starts a new map (level-0 table = pool page 0).
    ///
    /// # Safety
    /// Only on the boot CPU, before the MMU uses the pool, and only once.
    pub unsafe fn new() -> Self {
        Self { used: 1 }
    }

    fn table(&mut self, index: usize) -> &mut [u64; ENTRIES] {
        // SAFETY: `index < used <= POOL_PAGES`; the pool is only written through this
        // builder, which exists once (see `new`).
        unsafe { &mut (*POOL.0.get()).0[index] }
    }

    fn next_table(&mut self, table: usize, idx: usize) -> Result<usize, MapError> {
        let entry = self.table(table)[idx];
        if entry & 0b11 == DESC_TABLE {
            let pa = entry & 0x0000_ffff_ffff_f000;
            return Ok(((pa - pool_base()) / 4096) as usize);
        }
        if self.used == POOL_PAGES {
            return Err(MapError::OutOfTables);
        }
        let new = self.used;
        self.used += 1;
        let pa = pool_base() + new as u64 * 4096;
        self.table(table)[idx] = pa | DESC_TABLE;
        Ok(new)
    }

    fn map(&mut self, base: u64, size: u64, attrs: u64) -> Result<(), MapError> {
        let start = base & !(BLOCK_2M - 1);
        let end = base
            .checked_add(size)
            .and_then(|e| e.checked_add(BLOCK_2M - 1))
            .ok_or(MapError::OutOfRange)?
            & !(BLOCK_2M - 1);
        if end > 1 << 48 {
            return Err(MapError::OutOfRange);
        }
        let mut va = start;
        while va < end {
            let l1 = self.next_table(0, ((va >> 39) & 511) as usize)?;
            let l2 = self.next_table(l1, ((va >> 30) & 511) as usize)?;
            self.table(l2)[((va >> 21) & 511) as usize] = va | attrs | AF | DESC_BLOCK;
            va += BLOCK_2M;
        }
        Ok(())
    }

    /// Identity-maps RAM as normal write-back memory (rounded out to 2 MiB).
    pub fn map_ram(&mut self, base: u64, size: u64) -> Result<(), MapError> {
        self.map(base, size, ATTR_NORMAL | SH_INNER)
    }

    /// Identity-maps an MMIO region as Device-nGnRE, execute-never.
    pub fn map_device(&mut self, base: u64, size: u64) -> Result<(), MapError> {
        self.map(base, size, ATTR_DEVICE | XN_ALL)
    }

    /// Pages of the pool in use.
    pub fn tables_used(&self) -> usize {
        self.used
    }
}

fn pool_base() -> u64 {
    POOL.0.get() as u64
}

/// `ID_AA64MMFR0_EL1.PARange`, capped at 48 bits (4 KiB granule without FEAT_LPA2).
pub fn pa_range() -> u64 {
    let mmfr0: u64;
    // SAFETY: reading an ID register has no side effects.
    unsafe {
        core::arch::asm!("mrs {}, id_aa64mmfr0_el1", out(reg) mmfr0, options(nomem, nostack))
    };
    (mmfr0 & 0xf).min(5)
}

/// Turns the EL2 MMU and caches on with the identity map.
///
/// # Safety
/// Once, on the boot CPU, with the MMU off; the map must cover the running image, its
/// stack and everything touched afterwards. `HCR_EL2.E2H` must already equal `vhe`.
pub unsafe fn enable(vhe: bool) {
    // SAFETY: the caller's contract; the rest is per-CPU setup shared with secondaries.
    unsafe { enable_on_this_cpu(vhe) }
}

/// Turns the EL2 MMU on with the already-built identity map (boot and secondary CPUs).
///
/// # Safety
/// MMU off on this CPU; `HCR_EL2.E2H` must equal `vhe`; the map must be complete.
pub unsafe fn enable_on_this_cpu(vhe: bool) {
    let ps = pa_range();
    // T0SZ=16, IRGN0=ORGN0=WBWA, SH0=inner, TG0=4K.
    let common: u64 = 16 | (1 << 8) | (1 << 10) | (0b11 << 12);
    let tcr = if vhe {
        // TCR_EL1 layout: EPD1 (bit 23) disables TTBR1 walks; TG1 (31:30) = 4K; IPS at 32.
        common | (1 << 23) | (0b10 << 30) | (ps << 32)
    } else {
        // TCR_EL2 layout: PS at 16, RES1 bits 31 and 23.
        common | (ps << 16) | (1 << 31) | (1 << 23)
    };
    let ttbr = pool_base();
    // SAFETY: tables are built (caller contract); the sequence below is the architectural
    // MMU enable: invalidate stale lines of the tables and TLBs, program MAIR/TCR/TTBR0,
    // then set SCTLR_EL2.M, C, I (clearing A and WXN) with barriers in between.
    unsafe {
        invalidate_dcache_range(ttbr, (POOL_PAGES * 4096) as u64);
        core::arch::asm!(
            "msr mair_el2, {mair}",
            "msr tcr_el2, {tcr}",
            "msr ttbr0_el2, {ttbr}",
            "dsb ish",
            "tlbi alle2",
            "dsb ish",
            "isb",
            "mrs {t}, sctlr_el2",
            "orr {t}, {t}, #(1 << 0)",
            "orr {t}, {t}, #(1 << 2)",
            "orr {t}, {t}, #(1 << 12)",
            "bic {t}, {t}, #(1 << 1)",
            "bic {t}, {t}, #(1 << 19)",
            "bic {t}, {t}, #(1 << 25)",
            "msr sctlr_el2, {t}",
            "isb",
            mair = in(reg) MAIR,
            tcr = in(reg) tcr,
            ttbr = in(reg) ttbr,
            t = out(reg) _,
            options(nostack),
        );
    }
}

/// `DC IVAC` over a range (used before the MMU and caches are on, so no stale line can
/// shadow what was written to memory with caches off).
///
/// # Safety
/// The range must hold no dirty data that needs to survive (true before caches are on).
unsafe fn invalidate_dcache_range(base: u64, size: u64) {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effects.
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let line = 4u64 << ((ctr >> 16) & 0xf);
    let mut a = base & !(line - 1);
    while a < base + size {
        // SAFETY: DC IVAC on an address of our own image; see the function contract.
        unsafe { core::arch::asm!("dc ivac, {}", in(reg) a, options(nostack)) };
        a += line;
    }
    // SAFETY: barrier only.
    unsafe { core::arch::asm!("dsb ish", options(nostack)) };
}
