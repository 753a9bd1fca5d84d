//! Memory types of stage-1 translations (ARM ARM B3.8): from a short descriptor's `TEX`,
//! `C`, `B` (directly with `SCTLR.TRE` = 0, through `PRRR`/`NMRR` with it set), or from an
//! LPAE descriptor's `AttrIndx` through `MAIR0`/`MAIR1` (the same registers as
//! `PRRR`/`NMRR`). A host that mirrors the guest's stage 1 (the DBT runtime's shadow)
//! gives its own mappings the type found here.

use crate::cp15::Cp15;

/// The cacheability of one level (inner or outer) of Normal memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cacheability {
    /// Non-cacheable.
    NonCacheable,
    /// Write-through.
    WriteThrough,
    /// Write-back.
    WriteBack,
}

/// A translation's memory type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemType {
    /// Strongly-ordered (LPAE: Device-nGnRnE).
    StronglyOrdered,
    /// Device.
    Device,
    /// Normal, with its inner and outer cacheability.
    Normal {
        /// Inner cacheability.
        inner: Cacheability,
        /// Outer cacheability.
        outer: Cacheability,
    },
}

/// `SCTLR.TRE`: TEX remap enabled.
const SCTLR_TRE: u32 = 1 << 28;

/// Normal memory of cacheability `c` at both levels.
const fn normal(c: Cacheability) -> MemType {
    MemType::Normal { inner: c, outer: c }
}

/// The cacheability a two-bit `TEX[1:0]`/`CB`/`NMRR` field encodes (00 non-cacheable,
/// 01 write-back write-allocate, 10 write-through, 11 write-back no write-allocate).
fn cache_field(v: u32) -> Cacheability {
    match v & 3 {
        0 => Cacheability::NonCacheable,
        2 => Cacheability::WriteThrough,
        _ => Cacheability::WriteBack,
    }
}

/// The memory type of a short descriptor with `TEX` field `tex` (3 bits) and bits `C`,
/// `B` under `cp15`'s `SCTLR.TRE`, `PRRR` and `NMRR`. Encodings the architecture reserves
/// give Normal non-cacheable.
pub fn short(cp15: &Cp15, tex: u32, c: bool, b: bool) -> MemType {
    let cb = (c as u32) << 1 | b as u32;
    if cp15.sctlr & SCTLR_TRE != 0 {
        // Remapped: region n = TEX[0]:C:B; PRRR.TRn is its type, NMRR.IRn/ORn its
        // inner/outer cacheability when Normal.
        let n = (tex & 1) << 2 | cb;
        return match (cp15.prrr >> (2 * n)) & 3 {
            0 => MemType::StronglyOrdered,
            1 => MemType::Device,
            2 => MemType::Normal {
                inner: cache_field(cp15.nmrr >> (2 * n)),
                outer: cache_field(cp15.nmrr >> (16 + 2 * n)),
            },
            _ => normal(Cacheability::NonCacheable),
        };
    }
    match (tex & 7, cb) {
        (0, 0b00) => MemType::StronglyOrdered,
        (0, 0b01) | (2, 0b00) => MemType::Device,
        (0, 0b10) => normal(Cacheability::WriteThrough),
        (0, 0b11) | (1, 0b11) => normal(Cacheability::WriteBack),
        (t, _) if t & 4 != 0 => MemType::Normal {
            inner: cache_field(cb),
            outer: cache_field(t),
        },
        _ => normal(Cacheability::NonCacheable),
    }
}

/// The cacheability of one half of a `MAIR` attribute of Normal memory.
fn mair_half(h: u32) -> Cacheability {
    match h & 0xf {
        0b0100 => Cacheability::NonCacheable,
        h if h & 0b0100 != 0 => Cacheability::WriteBack, // 01RW (transient), 11RW
        _ => Cacheability::WriteThrough,                 // 00RW (transient), 10RW
    }
}

/// The memory type of an LPAE descriptor with `AttrIndx` `index` (3 bits): attribute
/// `index` of `MAIR0` (`PRRR`) and `MAIR1` (`NMRR`). Encodings the architecture reserves
/// give Normal non-cacheable.
pub fn lpae(cp15: &Cp15, index: u32) -> MemType {
    let index = index & 7;
    let mair = if index < 4 { cp15.prrr } else { cp15.nmrr };
    let attr = (mair >> (8 * (index & 3))) & 0xff;
    match attr >> 4 {
        // Device: 0b0000_0000 strongly ordered, 0b0000_0100 Device (ARMv7 defines no other
        // 0b0000_dd00; they are taken as Device).
        0 => match attr {
            0 => MemType::StronglyOrdered,
            a if a & 3 == 0 => MemType::Device,
            _ => normal(Cacheability::NonCacheable),
        },
        outer => MemType::Normal {
            inner: if attr & 0xf == 0 {
                Cacheability::NonCacheable // 0bxxxx0000 with xxxx != 0: UNPREDICTABLE
            } else {
                mair_half(attr)
            },
            outer: mair_half(outer),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cacheability::*;

    fn cp15(sctlr: u32, prrr: u32, nmrr: u32) -> Cp15 {
        let mut c = Cp15::new();
        c.sctlr = sctlr;
        c.prrr = prrr;
        c.nmrr = nmrr;
        c
    }

    #[test]
    fn short_without_remap_follows_the_tex_c_b_table() {
        let c = cp15(0, 0, 0);
        assert_eq!(short(&c, 0, false, false), MemType::StronglyOrdered);
        assert_eq!(short(&c, 0, false, true), MemType::Device);
        assert_eq!(short(&c, 2, false, false), MemType::Device);
        assert_eq!(short(&c, 0, true, false), normal(WriteThrough));
        assert_eq!(short(&c, 0, true, true), normal(WriteBack));
        assert_eq!(short(&c, 1, false, false), normal(NonCacheable));
        assert_eq!(short(&c, 1, true, true), normal(WriteBack));
        // TEX = 1BB: outer BB, inner CB.
        assert_eq!(
            short(&c, 0b110, false, true),
            MemType::Normal {
                inner: WriteBack,
                outer: WriteThrough
            }
        );
        assert_eq!(
            short(&c, 0b100, true, false),
            MemType::Normal {
                inner: WriteThrough,
                outer: NonCacheable
            }
        );
    }

    #[test]
    fn short_with_remap_reads_prrr_and_nmrr() {
        // Linux's ARMv7 values (proc-v7-2level.S): PRRR 0xff0a81a8, NMRR 0x40e040e0.
        let c = cp15(SCTLR_TRE, 0xff0a_81a8, 0x40e0_40e0);
        // L_PTE_MT_UNCACHED (n = 0): strongly ordered.
        assert_eq!(short(&c, 0, false, false), MemType::StronglyOrdered);
        // L_PTE_MT_BUFFERABLE (n = 1): Normal non-cacheable.
        assert_eq!(short(&c, 0, false, true), normal(NonCacheable));
        // L_PTE_MT_WRITETHROUGH (n = 2): Normal write-through.
        assert_eq!(short(&c, 0, true, false), normal(WriteThrough));
        // L_PTE_MT_WRITEBACK (n = 3): Normal write-back.
        assert_eq!(short(&c, 0, true, true), normal(WriteBack));
        // L_PTE_MT_DEV_SHARED (n = 4, TEX[0] = 1): Device.
        assert_eq!(short(&c, 1, false, false), MemType::Device);
        // L_PTE_MT_WRITEALLOC (n = 7): Normal write-back.
        assert_eq!(short(&c, 1, true, true), normal(WriteBack));
    }

    #[test]
    fn lpae_reads_mair() {
        // Linux's LPAE MAIR0/MAIR1 (proc-v7-3level.S): 0xeeaa4400, 0xff000004.
        let c = cp15(0, 0xeeaa_4400, 0xff00_0004);
        assert_eq!(lpae(&c, 0), MemType::StronglyOrdered); // UNCACHED
        assert_eq!(lpae(&c, 1), normal(NonCacheable)); // BUFFERABLE
        assert_eq!(lpae(&c, 2), normal(WriteThrough)); // WRITETHROUGH
        assert_eq!(lpae(&c, 3), normal(WriteBack)); // WRITEBACK
        assert_eq!(lpae(&c, 4), MemType::Device); // DEV_SHARED
        assert_eq!(lpae(&c, 7), normal(WriteBack)); // WRITEALLOC
    }
}
