//! A software walk of the guest's stage-1 translation (VMSAv8-64, EL1&0 regime): guest
//! virtual address → IPA.
//!
//! The hypervisor needs it when the hardware does not hand it an IPA: to fetch the
//! instruction at `ELR_EL2` (a guest VA) after a data abort with `ISV` = 0 (see
//! [`crate::mmio_decode`]), and to translate `FAR_EL2` when `HPFAR_EL2` is not valid.
//! Guest page tables live in guest memory, which the walk reads through
//! [`GuestPhysRead`] (the hypervisor implements it through its stage-2 tables).
//!
//! Supported: `SCTLR_EL1.M` = 0 (VA = IPA); the 4 KiB, 16 KiB and 64 KiB granules for both
//! halves (`TCR_EL1.TG0` and `TG1` encode them differently), `T0SZ`/`T1SZ` with the start
//! level derived from them, `TTBR1_EL1` for the upper VA range, `EPD0`/`EPD1`, top-byte
//! ignore (`TBI0`/`TBI1`), block and page descriptors, hierarchical permissions (reported,
//! not enforced), big-endian table walks (`SCTLR_EL1.EE`), output addresses up to
//! `TCR_EL1.IPS` (48 bits; 52 bits with the 64 KiB granule, FEAT_LPA) and 52-bit VAs with
//! the 64 KiB granule (FEAT_LVA, `TxSZ` down to 12).
//!
//! Not supported: FEAT_LPA2 (`TCR_EL1.DS` = 1; 52-bit addresses with 4/16 KiB granules,
//! level -1) — treated as `DS` = 0; hardware access-flag updates are not performed (a
//! descriptor with `AF` = 0 faults unless `TCR_EL1.HA` is set, in which case it is accepted
//! without writing the flag back).
//!
//! Guest-controlled registers and tables are hostile input: every combination returns a
//! translation or a [`WalkFault`], never panics, and a walk reads at most four descriptors.

use core::fmt;

/// Reads guest memory by IPA during the walk.
pub trait GuestPhysRead {
    /// The 64-bit little-endian word at the 8-byte aligned `ipa`, or `None` when the IPA is
    /// not guest RAM (an emulated device, unmapped, or outside the IPA space).
    fn read_u64(&self, ipa: u64) -> Option<u64>;
}

/// The guest's EL1 translation registers, as saved at the exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stage1Regs {
    /// `SCTLR_EL1` (`M`, bit 0: MMU on; `EE`, bit 25: big-endian table walks).
    pub sctlr: u64,
    /// `TCR_EL1`.
    pub tcr: u64,
    /// `TTBR0_EL1` (lower VA range).
    pub ttbr0: u64,
    /// `TTBR1_EL1` (upper VA range).
    pub ttbr1: u64,
}

/// Why a walk failed, as the architecture would report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkFaultKind {
    /// Translation fault: invalid descriptor, VA outside both ranges, walks disabled by
    /// `EPDx`, or a block at a level that does not allow one.
    Translation,
    /// Address size fault: a table base or output address beyond `TCR_EL1.IPS`.
    AddressSize,
    /// Access flag fault: `AF` = 0 and no hardware access-flag management.
    AccessFlag,
    /// A descriptor could not be read: its IPA is not guest RAM (the architecture reports
    /// a stage-2 fault on the stage-1 walk, `S1PTW`).
    TableNotInRam,
    /// The address is not aligned as required (an instruction fetch from a VA that is not a
    /// multiple of 4).
    Alignment,
}

/// A failed stage-1 walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkFault {
    /// Lookup level of the fault (0..=3).
    pub level: u8,
    /// What went wrong.
    pub kind: WalkFaultKind,
}

impl fmt::Display for WalkFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stage-1 {:?} fault at level {}", self.kind, self.level)
    }
}

/// A translation table granule of stage 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granule {
    /// 4 KiB.
    K4,
    /// 16 KiB.
    K16,
    /// 64 KiB.
    K64,
}

impl Granule {
    /// log2 of the page size.
    pub const fn page_shift(self) -> u32 {
        match self {
            Granule::K4 => 12,
            Granule::K16 => 14,
            Granule::K64 => 16,
        }
    }

    /// VA bits resolved per level.
    pub const fn stride(self) -> u32 {
        self.page_shift() - 3
    }

    /// `TCR_EL1.TG0` decoding: 0b00 = 4K, 0b01 = 64K, 0b10 = 16K (0b11 is reserved and,
    /// like on most implementations, treated as 4K).
    pub const fn from_tg0(tg0: u64) -> Granule {
        match tg0 & 0b11 {
            0b01 => Granule::K64,
            0b10 => Granule::K16,
            _ => Granule::K4,
        }
    }

    /// `TCR_EL1.TG1` decoding: 0b01 = 16K, 0b10 = 4K, 0b11 = 64K (0b00 is reserved and
    /// treated as 4K).
    pub const fn from_tg1(tg1: u64) -> Granule {
        match tg1 & 0b11 {
            0b01 => Granule::K16,
            0b11 => Granule::K64,
            _ => Granule::K4,
        }
    }

    /// Whether a block descriptor is allowed at `level` (without FEAT_LPA2): 4K at levels 1
    /// and 2, 16K at level 2, 64K at level 2 and, with 52-bit output addresses, level 1.
    const fn block_allowed(self, level: u32, pa52: bool) -> bool {
        match self {
            Granule::K4 => level == 1 || level == 2,
            Granule::K16 => level == 2,
            Granule::K64 => level == 2 || (level == 1 && pa52),
        }
    }
}

/// A leaf found by the walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S1Leaf {
    /// Lookup level of the leaf (3 = page).
    pub level: u8,
    /// Bytes translated by the leaf (page or block size).
    pub size: u64,
    /// Granule of the translation.
    pub granule: Granule,
    /// Effective `AP[2:1]` after `APTable` restrictions (bit 1 = read-only, bit 0 = EL0
    /// access).
    pub ap: u8,
    /// Effective privileged execute-never (`PXN` or any `PXNTable`).
    pub pxn: bool,
    /// Effective unprivileged execute-never (`UXN` or any `UXNTable`).
    pub uxn: bool,
    /// `AttrIndx`: the `MAIR_EL1` attribute index.
    pub attr_index: u8,
}

/// The result of a successful walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S1Translation {
    /// The IPA the VA translates to.
    pub ipa: u64,
    /// The leaf descriptor's facts; `None` when the MMU is off (VA = IPA).
    pub leaf: Option<S1Leaf>,
}

const TCR_T0SZ_SHIFT: u32 = 0;
const TCR_EPD0: u64 = 1 << 7;
const TCR_TG0_SHIFT: u32 = 14;
const TCR_T1SZ_SHIFT: u32 = 16;
const TCR_EPD1: u64 = 1 << 23;
const TCR_TG1_SHIFT: u32 = 30;
const TCR_IPS_SHIFT: u32 = 32;
const TCR_TBI0: u64 = 1 << 37;
const TCR_TBI1: u64 = 1 << 38;
const TCR_HA: u64 = 1 << 39;
const SCTLR_M: u64 = 1 << 0;
const SCTLR_EE: u64 = 1 << 25;

/// Descriptor bits.
const DESC_VALID: u64 = 1 << 0;
const DESC_TABLE: u64 = 1 << 1;
const DESC_AF: u64 = 1 << 10;
const DESC_PXN: u64 = 1 << 53;
const DESC_UXN: u64 = 1 << 54;
const DESC_PXN_TABLE: u64 = 1 << 59;
const DESC_UXN_TABLE: u64 = 1 << 60;
/// Address bits [47:12] of a descriptor (lower bits masked per granule and level).
const DESC_ADDR_47_12: u64 = 0x0000_ffff_ffff_f000;

/// Physical address size from `TCR_EL1.IPS` (reserved values are treated as 52; with the
/// 4/16K granules and `DS` = 0, 52 is treated as 48).
fn ips_bits(tcr: u64, granule: Granule) -> u32 {
    let bits = match (tcr >> TCR_IPS_SHIFT) & 0b111 {
        0b000 => 32,
        0b001 => 36,
        0b010 => 40,
        0b011 => 42,
        0b100 => 44,
        0b101 => 48,
        _ => 52,
    };
    if bits == 52 && granule != Granule::K64 {
        48
    } else {
        bits
    }
}

/// Translates `va` through the guest's stage 1 (`SCTLR_EL1.M` = 0: `va` is the IPA).
pub fn translate<M: GuestPhysRead + ?Sized>(
    regs: &Stage1Regs,
    va: u64,
    mem: &M,
) -> Result<S1Translation, WalkFault> {
    let fault = |level: u32, kind| WalkFault {
        level: level.min(3) as u8,
        kind,
    };
    if regs.sctlr & SCTLR_M == 0 {
        // Flat mapping; the address must fit in the largest PA size.
        if va >> 52 != 0 {
            return Err(fault(0, WalkFaultKind::AddressSize));
        }
        return Ok(S1Translation {
            ipa: va,
            leaf: None,
        });
    }
    let tcr = regs.tcr;
    let upper = va & (1 << 55) != 0;
    let (txsz, granule, epd, tbi, ttbr) = if upper {
        (
            (tcr >> TCR_T1SZ_SHIFT) & 0x3f,
            Granule::from_tg1(tcr >> TCR_TG1_SHIFT),
            tcr & TCR_EPD1 != 0,
            tcr & TCR_TBI1 != 0,
            regs.ttbr1,
        )
    } else {
        (
            (tcr >> TCR_T0SZ_SHIFT) & 0x3f,
            Granule::from_tg0(tcr >> TCR_TG0_SHIFT),
            tcr & TCR_EPD0 != 0,
            tcr & TCR_TBI0 != 0,
            regs.ttbr0,
        )
    };
    // TxSZ outside the supported range is clamped (an IMPLEMENTATION DEFINED choice the
    // architecture allows): 16 (48-bit VA; 12 = 52-bit with 64K, FEAT_LVA) up to 48.
    let min_txsz = if granule == Granule::K64 { 12 } else { 16 };
    let txsz = (txsz as u32).clamp(min_txsz, 48);
    let va_bits = 64 - txsz;
    // Bits [top:va_bits] must all equal bit 55 (top = 55 with TBI, else 63).
    let top = if tbi { 55 } else { 63 };
    let check_mask = ((1u128 << (top + 1)) - (1u128 << va_bits)) as u64;
    let expect = if upper { check_mask } else { 0 };
    if va & check_mask != expect {
        return Err(fault(0, WalkFaultKind::Translation));
    }
    if epd {
        return Err(fault(0, WalkFaultKind::Translation));
    }

    let page_shift = granule.page_shift();
    let stride = granule.stride();
    let levels = (va_bits - page_shift).div_ceil(stride);
    let start_level = 4 - levels.clamp(1, 4);
    let pa_bits = ips_bits(tcr, granule);
    let pa52 = pa_bits == 52;
    let pa_limit = 1u64 << pa_bits;
    let big_endian = regs.sctlr & SCTLR_EE != 0;
    let level_shift = |level: u32| page_shift + stride * (3 - level);

    // Start table: BADDR, aligned to the size of the start-level table.
    let start_bits = va_bits - level_shift(start_level);
    let start_table_bytes = 8u64 << start_bits;
    let mut table = ttbr & 0x0000_ffff_ffff_fffe;
    if pa52 {
        // TTBR bits [5:2] hold BADDR[51:48] with 52-bit output addresses.
        table = (table & !0x3c) | ((ttbr & 0x3c) << 46);
    }
    table &= !(start_table_bytes.max(64) - 1);
    if table >= pa_limit {
        return Err(fault(start_level, WalkFaultKind::AddressSize));
    }

    let mut ap_table_ro = false;
    let mut ap_table_no_el0 = false;
    let mut pxn_table = false;
    let mut uxn_table = false;
    let mut level = start_level;
    loop {
        let shift = level_shift(level);
        let index_bits = if level == start_level {
            start_bits
        } else {
            stride
        };
        let index = (va >> shift) & ((1u64 << index_bits) - 1);
        let desc_ipa = table + index * 8;
        let raw = mem
            .read_u64(desc_ipa)
            .ok_or(fault(level, WalkFaultKind::TableNotInRam))?;
        let d = if big_endian { raw.swap_bytes() } else { raw };
        if d & DESC_VALID == 0 {
            return Err(fault(level, WalkFaultKind::Translation));
        }
        let addr = descriptor_address(d, pa52);
        if level < 3 && d & DESC_TABLE != 0 {
            let next = addr & !((1u64 << page_shift) - 1);
            if addr >= pa_limit {
                return Err(fault(level, WalkFaultKind::AddressSize));
            }
            ap_table_ro |= d & (1 << 62) != 0;
            ap_table_no_el0 |= d & (1 << 61) != 0;
            pxn_table |= d & DESC_PXN_TABLE != 0;
            uxn_table |= d & DESC_UXN_TABLE != 0;
            table = next;
            level += 1;
            continue;
        }
        if level == 3 && d & DESC_TABLE == 0 {
            // Reserved encoding at level 3.
            return Err(fault(level, WalkFaultKind::Translation));
        }
        if level < 3 && !granule.block_allowed(level, pa52) {
            return Err(fault(level, WalkFaultKind::Translation));
        }
        let size = 1u64 << shift;
        let out = addr & !(size - 1);
        if addr >= pa_limit {
            return Err(fault(level, WalkFaultKind::AddressSize));
        }
        if d & DESC_AF == 0 && tcr & TCR_HA == 0 {
            return Err(fault(level, WalkFaultKind::AccessFlag));
        }
        let mut ap = ((d >> 6) & 0b11) as u8;
        if ap_table_ro {
            ap |= 0b10;
        }
        if ap_table_no_el0 {
            ap &= !0b01;
        }
        return Ok(S1Translation {
            ipa: out | (va & (size - 1)),
            leaf: Some(S1Leaf {
                level: level as u8,
                size,
                granule,
                ap,
                pxn: d & DESC_PXN != 0 || pxn_table,
                uxn: d & DESC_UXN != 0 || uxn_table,
                attr_index: ((d >> 2) & 0b111) as u8,
            }),
        });
    }
}

/// The output (or next-table) address of a descriptor: bits [47:12], plus bits [51:48] from
/// descriptor bits [15:12] with 52-bit addresses (64K granule, FEAT_LPA). Without 52-bit
/// addresses, non-zero bits [51:48] give an address beyond every PA size, i.e. an address
/// size fault, as the architecture requires.
fn descriptor_address(d: u64, pa52: bool) -> u64 {
    if pa52 {
        (d & 0x0000_ffff_ffff_0000) | ((d & 0xf000) << 36)
    } else {
        (d & DESC_ADDR_47_12) | (d & 0x000f_0000_0000_0000)
    }
}

/// Fetches the A64 instruction at the guest VA `pc`: translates it and reads the 32-bit
/// word (instruction fetches are always little-endian).
pub fn fetch_instruction<M: GuestPhysRead + ?Sized>(
    regs: &Stage1Regs,
    pc: u64,
    mem: &M,
) -> Result<u32, WalkFault> {
    if pc & 3 != 0 {
        return Err(WalkFault {
            level: 0,
            kind: WalkFaultKind::Alignment,
        });
    }
    let t = translate(regs, pc, mem)?;
    let level = t.leaf.map_or(0, |l| l.level);
    let word = mem.read_u64(t.ipa & !7).ok_or(WalkFault {
        level,
        kind: WalkFaultKind::TableNotInRam,
    })?;
    Ok((word >> ((t.ipa & 4) * 8)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use core::cell::RefCell;

    /// Guest RAM as a sparse map of 8-byte words, with a page-table builder.
    struct Mem {
        words: RefCell<BTreeMap<u64, u64>>,
        /// Next free table page (bump allocator), in the granule's page size.
        next: RefCell<u64>,
        ram: core::ops::Range<u64>,
    }

    impl GuestPhysRead for Mem {
        fn read_u64(&self, ipa: u64) -> Option<u64> {
            if !self.ram.contains(&ipa) || ipa & 7 != 0 {
                return None;
            }
            Some(*self.words.borrow().get(&ipa).unwrap_or(&0))
        }
    }

    const AF: u64 = 1 << 10;
    const PAGE: u64 = 0b11;
    const BLOCK: u64 = 0b01;
    const TABLE: u64 = 0b11;

    impl Mem {
        fn new() -> Mem {
            Mem {
                words: RefCell::new(BTreeMap::new()),
                next: RefCell::new(0x4100_0000),
                ram: 0x4000_0000..0x100_0000_0000,
            }
        }
        fn write(&self, ipa: u64, v: u64) {
            self.words.borrow_mut().insert(ipa, v);
        }
        fn alloc(&self, g: Granule) -> u64 {
            let mut n = self.next.borrow_mut();
            let sz = 1u64 << g.page_shift();
            let pa = n.div_ceil(sz) * sz;
            *n = pa + sz;
            pa
        }
        /// Maps `va` → `pa` with a leaf at `leaf_level`, creating tables from `root`.
        #[allow(clippy::too_many_arguments)]
        fn map(
            &self,
            g: Granule,
            root: u64,
            va_bits: u32,
            va: u64,
            pa: u64,
            leaf_level: u32,
            attrs: u64,
        ) {
            let ps = g.page_shift();
            let st = g.stride();
            let start = 4 - (va_bits - ps).div_ceil(st);
            let mut table = root;
            for level in start..=leaf_level {
                let shift = ps + st * (3 - level);
                let bits = if level == start { va_bits - shift } else { st };
                let idx = (va >> shift) & ((1 << bits) - 1);
                let slot = table + idx * 8;
                if level == leaf_level {
                    let ty = if level == 3 { PAGE } else { BLOCK };
                    self.write(slot, pa | attrs | AF | ty);
                    return;
                }
                let cur = self.read_u64(slot).unwrap();
                table = if cur & 1 != 0 {
                    cur & 0x0000_ffff_ffff_f000 & !((1 << ps) - 1)
                } else {
                    let t = self.alloc(g);
                    self.write(slot, t | TABLE);
                    t
                };
            }
        }
    }

    fn tcr(t0sz: u64, tg0: u64, t1sz: u64, tg1: u64, ips: u64) -> u64 {
        t0sz | (tg0 << 14) | (t1sz << 16) | (tg1 << 30) | (ips << 32)
    }

    fn regs(tcr: u64, ttbr0: u64, ttbr1: u64) -> Stage1Regs {
        Stage1Regs {
            sctlr: 1,
            tcr,
            ttbr0,
            ttbr1,
        }
    }

    #[test]
    fn mmu_off_is_identity() {
        let m = Mem::new();
        let r = Stage1Regs::default();
        let t = translate(&r, 0x0900_0ff0, &m).unwrap();
        assert_eq!(
            t,
            S1Translation {
                ipa: 0x0900_0ff0,
                leaf: None
            }
        );
        assert_eq!(
            translate(&r, 1 << 60, &m).unwrap_err().kind,
            WalkFaultKind::AddressSize
        );
    }

    #[test]
    fn granule_encodings_differ_between_tg0_and_tg1() {
        assert_eq!(Granule::from_tg0(0b00), Granule::K4);
        assert_eq!(Granule::from_tg0(0b01), Granule::K64);
        assert_eq!(Granule::from_tg0(0b10), Granule::K16);
        assert_eq!(Granule::from_tg1(0b01), Granule::K16);
        assert_eq!(Granule::from_tg1(0b10), Granule::K4);
        assert_eq!(Granule::from_tg1(0b11), Granule::K64);
    }

    /// For each granule and several VA sizes: pages, blocks where allowed, TTBR0 and TTBR1.
    #[test]
    fn pages_and_blocks_for_every_granule() {
        let cases = [
            // (granule, tg0, tg1, t0sz, block level, block size)
            (Granule::K4, 0b00, 0b10, 16, 1, 1u64 << 30),
            (Granule::K4, 0b00, 0b10, 25, 2, 1 << 21),
            (Granule::K4, 0b00, 0b10, 33, 1, 1 << 30),
            (Granule::K16, 0b10, 0b01, 16, 2, 1 << 25),
            (Granule::K16, 0b10, 0b01, 28, 2, 1 << 25),
            (Granule::K64, 0b01, 0b11, 16, 2, 1 << 29),
            (Granule::K64, 0b01, 0b11, 22, 2, 1 << 29),
        ];
        for (g, tg0, tg1, txsz, blevel, bsize) in cases {
            let m = Mem::new();
            let va_bits = 64 - txsz as u32;
            let root0 = m.alloc(g);
            let root1 = m.alloc(g);
            let page = 1u64 << g.page_shift();
            // A page: VA 0x1_0000_0000-ish (inside the VA size) -> device IPA.
            let va = (0x1234_5678u64 << 4) & ((1 << va_bits) - 1) & !(page - 1);
            m.map(g, root0, va_bits, va, 0x0900_0000, 3, 0);
            // A block.
            let bva = bsize * 3 % (1 << va_bits);
            m.map(g, root0, va_bits, bva, 0x4000_0000 + bsize, blevel, 0);
            // TTBR1: the top page of the address space.
            let hva = !(page - 1);
            m.map(
                g,
                root1,
                va_bits,
                hva,
                0x4080_0000 & !(page - 1),
                3,
                1 << 54,
            );
            let r = regs(
                tcr(txsz, tg0, txsz, tg1, 0b101),
                root0 | 1 << 48,
                root1 | 3 << 48,
            );
            let ctx = format!("{g:?} T0SZ={txsz}");
            let t = translate(&r, va + 0x10, &m).expect(&ctx);
            assert_eq!(t.ipa, 0x0900_0010, "{ctx}");
            let leaf = t.leaf.unwrap();
            assert_eq!((leaf.level, leaf.size, leaf.granule), (3, page, g), "{ctx}");
            let t = translate(&r, bva + bsize - 8, &m).expect(&ctx);
            assert_eq!(t.ipa, 0x4000_0000 + 2 * bsize - 8, "{ctx}");
            assert_eq!(t.leaf.unwrap().level, blevel as u8, "{ctx}");
            let t = translate(&r, u64::MAX - 7, &m).expect(&ctx);
            assert_eq!(t.ipa, (0x4080_0000 & !(page - 1)) + page - 8, "{ctx}");
            assert!(t.leaf.unwrap().uxn, "{ctx}");
            // Unmapped neighbours fault with a translation fault.
            let e = translate(&r, va + page, &m).unwrap_err();
            assert_eq!(e.kind, WalkFaultKind::Translation, "{ctx}");
            // A VA beyond the range of TTBR0 (not sign-extended properly).
            if va_bits < 55 {
                let e = translate(&r, 1u64 << va_bits, &m).unwrap_err();
                assert_eq!(
                    e,
                    WalkFault {
                        level: 0,
                        kind: WalkFaultKind::Translation
                    }
                );
            }
            // Instruction fetch through the same walk.
            m.write(0x4000_0000 + bsize + 0x100, 0xd503_201f_d503_209f);
            assert_eq!(
                fetch_instruction(&r, bva + 0x100, &m),
                Ok(0xd503_209f),
                "{ctx}"
            );
            assert_eq!(
                fetch_instruction(&r, bva + 0x104, &m),
                Ok(0xd503_201f),
                "{ctx}"
            );
        }
    }

    #[test]
    fn start_levels() {
        // (granule, txsz) -> start level, checked by where the root's descriptor sits.
        // 4K: T0SZ 16..=24 -> 0, 25..=33 -> 1, 34..=42 -> 2, 43.. -> 3.
        // 16K: 16 -> 0, 17..=27 -> 1, 28..=38 -> 2, 39.. -> 3.
        // 64K: 12..=21 -> 1, 22..=34 -> 2, 35.. -> 3.
        let cases = [
            (Granule::K4, 16, 0),
            (Granule::K4, 24, 0),
            (Granule::K4, 25, 1),
            (Granule::K4, 33, 1),
            (Granule::K4, 34, 2),
            (Granule::K4, 43, 3),
            (Granule::K16, 16, 0),
            (Granule::K16, 17, 1),
            (Granule::K16, 27, 1),
            (Granule::K16, 28, 2),
            (Granule::K16, 39, 3),
            (Granule::K64, 12, 1),
            (Granule::K64, 16, 1),
            (Granule::K64, 21, 1),
            (Granule::K64, 22, 2),
            (Granule::K64, 34, 2),
            (Granule::K64, 35, 3),
        ];
        for (g, txsz, start) in cases {
            let m = Mem::new();
            let root = m.alloc(g);
            let va_bits = 64 - txsz as u32;
            let page = 1u64 << g.page_shift();
            let va = ((1u64 << va_bits) - 1) & !(page - 1);
            // Write a leaf directly into the root when the start level allows blocks, else
            // build the chain; either way the walk must find it.
            m.map(g, root, va_bits, va, 0x4200_0000 & !(page - 1), 3, 0);
            let tg0 = match g {
                Granule::K4 => 0b00,
                Granule::K16 => 0b10,
                Granule::K64 => 0b01,
            };
            let r = regs(tcr(txsz, tg0, 16, 0b10, 0b110) | 1 << 23, root, 0);
            let t = translate(&r, va, &m).unwrap_or_else(|e| panic!("{g:?} {txsz}: {e}"));
            assert_eq!(t.ipa, 0x4200_0000 & !(page - 1), "{g:?} {txsz}");
            // Count the table levels used: tables allocated = 3 - start (+ the root).
            let tables = (*m.next.borrow() - 0x4100_0000).div_ceil(page);
            assert_eq!(tables, 1 + 3 - start, "{g:?} T0SZ={txsz}");
        }
    }

    #[test]
    fn faults() {
        let g = Granule::K4;
        let m = Mem::new();
        let root = m.alloc(g);
        m.map(g, root, 48, 0x1000, 0x4000_0000, 3, 0);
        let base = regs(tcr(16, 0, 16, 0b10, 0b101), root, 0);
        // Invalid level-0 entry for another VA.
        assert_eq!(
            translate(&base, 0x80_0000_0000, &m),
            Err(WalkFault {
                level: 0,
                kind: WalkFaultKind::Translation
            })
        );
        // Invalid level-3 entry next to the mapped page.
        assert_eq!(
            translate(&base, 0x2000, &m),
            Err(WalkFault {
                level: 3,
                kind: WalkFaultKind::Translation
            })
        );
        // EPD0 disables walks.
        let r = Stage1Regs {
            tcr: base.tcr | TCR_EPD0,
            ..base
        };
        assert_eq!(
            translate(&r, 0x1000, &m).unwrap_err().kind,
            WalkFaultKind::Translation
        );
        // TTBR1 range with EPD1.
        let r = Stage1Regs {
            tcr: base.tcr | TCR_EPD1,
            ..base
        };
        assert_eq!(
            translate(&r, 0xffff_0000_0000_1000, &m).unwrap_err().kind,
            WalkFaultKind::Translation
        );
        // Non-canonical VA (bits 63:48 neither all 0 nor all 1).
        assert_eq!(
            translate(&base, 0x0001_0000_0000_1000, &m).unwrap_err(),
            WalkFault {
                level: 0,
                kind: WalkFaultKind::Translation
            }
        );
        // ... unless TBI0 ignores the top byte.
        let r = Stage1Regs {
            tcr: base.tcr | TCR_TBI0,
            ..base
        };
        assert_eq!(
            translate(&r, 0x5a00_0000_0000_1008, &m).unwrap().ipa,
            0x4000_0008
        );
        assert!(translate(&base, 0x5a00_0000_0000_1008, &m).is_err());
        // Output address beyond IPS = 32 bits.
        m.map(g, root, 48, 0x3000, 0x1_0000_0000, 3, 0);
        let r32 = regs(tcr(16, 0, 16, 0b10, 0b000), root, 0);
        assert_eq!(
            translate(&r32, 0x3000, &m),
            Err(WalkFault {
                level: 3,
                kind: WalkFaultKind::AddressSize
            })
        );
        assert!(translate(&base, 0x3000, &m).is_ok());
        // Bits [51:48] set in a descriptor without 52-bit PAs: address size fault.
        m.map(g, root, 48, 0x4000, 0x4000_0000 | 1 << 48, 3, 0);
        assert_eq!(
            translate(&base, 0x4000, &m).unwrap_err().kind,
            WalkFaultKind::AddressSize
        );
        // Access flag clear.
        m.map(g, root, 48, 0x5000, 0x4000_5000, 3, 0);
        assert!(translate(&base, 0x5000, &m).is_ok());
        let l3 = find_l3_slot(&m, root, 0x5000);
        let d = m.read_u64(l3).unwrap();
        m.write(l3, d & !AF);
        assert_eq!(
            translate(&base, 0x5000, &m),
            Err(WalkFault {
                level: 3,
                kind: WalkFaultKind::AccessFlag
            })
        );
        let r = Stage1Regs {
            tcr: base.tcr | TCR_HA,
            ..base
        };
        assert!(translate(&r, 0x5000, &m).is_ok());
        // Level-3 descriptor with bit 1 clear (reserved).
        m.write(l3, (d & !0b10) | AF);
        assert_eq!(
            translate(&base, 0x5000, &m),
            Err(WalkFault {
                level: 3,
                kind: WalkFaultKind::Translation
            })
        );
        // Table in MMIO space (not RAM).
        let r = regs(base.tcr, 0x0900_0000, 0);
        assert_eq!(
            translate(&r, 0x1000, &m),
            Err(WalkFault {
                level: 0,
                kind: WalkFaultKind::TableNotInRam
            })
        );
        // Block at level 0 (4K) is not allowed.
        let root2 = m.alloc(g);
        m.write(root2, AF | BLOCK);
        let r = regs(base.tcr, root2, 0);
        assert_eq!(
            translate(&r, 0x1000, &m),
            Err(WalkFault {
                level: 0,
                kind: WalkFaultKind::Translation
            })
        );
        // Misaligned fetch.
        assert_eq!(
            fetch_instruction(&base, 0x1002, &m).unwrap_err().kind,
            WalkFaultKind::Alignment
        );
    }

    fn find_l3_slot(m: &Mem, root: u64, va: u64) -> u64 {
        let mut table = root;
        for level in 0..3 {
            let shift = 12 + 9 * (3 - level);
            let d = m.read_u64(table + ((va >> shift) & 511) * 8).unwrap();
            table = d & 0x0000_ffff_ffff_f000;
        }
        table + ((va >> 12) & 511) * 8
    }

    #[test]
    fn permissions_are_combined_with_table_attributes() {
        let g = Granule::K4;
        let m = Mem::new();
        let root = m.alloc(g);
        // AP = 0b01 (EL1 RW, EL0 RW), PXN.
        m.map(
            g,
            root,
            39,
            0x20_0000,
            0x4000_0000,
            3,
            (0b01 << 6) | 1 << 53 | 2 << 2,
        );
        let r = regs(tcr(25, 0, 25, 0b10, 0b101), root, 0);
        let leaf = translate(&r, 0x20_0000, &m).unwrap().leaf.unwrap();
        assert_eq!(
            (leaf.ap, leaf.pxn, leaf.uxn, leaf.attr_index),
            (0b01, true, false, 2)
        );
        // APTable = 0b11 (read-only, no EL0) and UXNTable on the level-1 table descriptor.
        let d = m.read_u64(root).unwrap();
        m.write(root, d | 0b11 << 61 | 1 << 60);
        let leaf = translate(&r, 0x20_0000, &m).unwrap().leaf.unwrap();
        assert_eq!((leaf.ap, leaf.uxn), (0b10, true));
    }

    #[test]
    fn big_endian_tables() {
        let g = Granule::K4;
        let m = Mem::new();
        let root = m.alloc(g);
        m.map(g, root, 39, 0x1000, 0x4000_1000, 3, 0);
        // Byte-swap every descriptor.
        let all: alloc::vec::Vec<_> = m.words.borrow().iter().map(|(k, v)| (*k, *v)).collect();
        for (k, v) in all {
            m.write(k, v.swap_bytes());
        }
        let mut r = regs(tcr(25, 0, 25, 0b10, 0b101), root, 0);
        assert!(translate(&r, 0x1000, &m).is_err());
        r.sctlr |= SCTLR_EE;
        assert_eq!(translate(&r, 0x1000, &m).unwrap().ipa, 0x4000_1000);
    }

    #[test]
    fn pa52_with_64k_granule() {
        let g = Granule::K64;
        let m = Mem::new();
        let root = m.alloc(g);
        // Output address 0xa_0000_4000_0000 (bits 51:48 = 0xa) in descriptor bits 15:12.
        let oa = 0x000a_0000_4000_0000u64;
        let enc = (oa & 0x0000_ffff_ffff_0000) | ((oa >> 48) << 12);
        m.map(g, root, 52, 0x1_0000, enc, 3, 0);
        let r = regs(tcr(12, 0b01, 16, 0b11, 0b110), root, 0);
        assert_eq!(translate(&r, 0x1_0008, &m).unwrap().ipa, oa | 8);
    }

    #[test]
    fn never_panics_on_hostile_registers_and_tables() {
        // Garbage tables: every word of RAM reads as a pseudo-random value.
        struct Garbage(u64);
        impl GuestPhysRead for Garbage {
            fn read_u64(&self, ipa: u64) -> Option<u64> {
                let mut x = ipa ^ self.0;
                x ^= x >> 33;
                x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
                x ^= x >> 33;
                (x & 0xf != 0).then_some(x | 1)
            }
        }
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut oks = 0;
        for _ in 0..200_000 {
            let r = Stage1Regs {
                sctlr: next() | 1,
                tcr: next(),
                ttbr0: next(),
                ttbr1: next(),
            };
            let mem = Garbage(next());
            let va = next();
            oks += translate(&r, va, &mem).is_ok() as u32;
            let _ = fetch_instruction(&r, va & !3, &mem);
        }
        assert!(oks > 0);
    }
}
