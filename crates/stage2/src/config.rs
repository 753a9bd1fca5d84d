//! Stage-2 configuration derived from the hardware: IPA size, start level, concatenated root
//! tables and the `VTCR_EL2` value. `Stage2Config::vtcr` is the one place `VTCR_EL2` is built.

use aarch64_cpu::registers::{ID_AA64MMFR0_EL1, ID_AA64MMFR1_EL1, VTCR_EL2};

use crate::granule::{Granule, LAST_LEVEL};
use crate::{Error, Result};

/// Smallest IPA size accepted (`VTCR_EL2.T0SZ` at most 39 without FEAT_TTST).
pub const MIN_IPA_BITS: u32 = 25;
/// Largest IPA size supported with the 4 KiB granule (52 bits would need FEAT_LPA2).
pub const MAX_IPA_BITS: u32 = 48;

/// `VTCR_EL2.PS` / `ID_AA64MMFR0_EL1.PARange` encoding of a 48-bit physical address size.
const PARANGE_48: u64 = 0b101;

/// Stage-2 translation configuration shared by every VM on a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage2Config {
    granule: Granule,
    ipa_bits: u32,
    pa_bits: u32,
    ps: u64,
    start_level: u32,
    root_tables: u32,
    vmid16: bool,
}

/// Physical address bits for an `ID_AA64MMFR0_EL1.PARange` encoding.
fn parange_bits(parange: u64) -> Option<u32> {
    Some(match parange {
        0b0000 => 32,
        0b0001 => 36,
        0b0010 => 40,
        0b0011 => 42,
        0b0100 => 44,
        0b0101 => 48,
        0b0110 => 52,
        0b0111 => 56,
        _ => return None,
    })
}

impl Stage2Config {
    /// Computes the configuration for the 4 KiB granule.
    ///
    /// - `parange`: the `ID_AA64MMFR0_EL1.PARange` field (0b0000 = 32 bits ... 0b0110 = 52
    ///   bits). Sizes above 48 bits are capped at 48 (`VTCR_EL2.PS` = 0b101), since 52-bit
    ///   output addresses with a 4 KiB granule need FEAT_LPA2.
    /// - `ipa_limit_bits`: the IPA size the host wants; the result is
    ///   `min(ipa_limit_bits, PA size, 48)`.
    /// - `vmid16`: `ID_AA64MMFR1_EL1.VMIDBits` says 16-bit VMIDs are supported; sets
    ///   `VTCR_EL2.VS`.
    ///
    /// The start level is the deepest one that resolves the IPA with at most 16 concatenated
    /// tables (e.g. 40 bits -> level 1 with 2 tables, 32 bits -> level 2 with 4 tables).
    pub fn new(parange: u64, ipa_limit_bits: u32, vmid16: bool) -> Result<Self> {
        Self::with_granule(Granule::K4, parange, ipa_limit_bits, vmid16)
    }

    /// Like [`Stage2Config::new`], reading the fields from raw `ID_AA64MMFR0_EL1` and
    /// `ID_AA64MMFR1_EL1` values.
    pub fn from_id_regs(id_aa64mmfr0: u64, id_aa64mmfr1: u64, ipa_limit_bits: u32) -> Result<Self> {
        let parange = ID_AA64MMFR0_EL1::PARange.read(id_aa64mmfr0);
        let vmid16 = ID_AA64MMFR1_EL1::VMIDBits::Bits16.matches_all(id_aa64mmfr1);
        Self::new(parange, ipa_limit_bits, vmid16)
    }

    /// Computes the configuration for an explicit granule (only [`Granule::K4`] exists today).
    pub fn with_granule(
        granule: Granule,
        parange: u64,
        ipa_limit_bits: u32,
        vmid16: bool,
    ) -> Result<Self> {
        let hw_pa_bits = parange_bits(parange).ok_or(Error::InvalidPaRange)?;
        if ipa_limit_bits < MIN_IPA_BITS {
            return Err(Error::InvalidIpaLimit);
        }
        let (pa_bits, ps) = if hw_pa_bits > MAX_IPA_BITS {
            (MAX_IPA_BITS, PARANGE_48)
        } else {
            (hw_pa_bits, parange)
        };
        let ipa_bits = ipa_limit_bits.min(pa_bits);

        // Deepest start level whose descriptors, in up to 16 concatenated tables, cover the
        // whole IPA space (Arm ARM: stage-2 start level and concatenation constraints).
        let max_bits_per_start =
            granule.bits_per_level() + granule.max_concatenated().trailing_zeros();
        let mut start_level = LAST_LEVEL - 1;
        while ipa_bits - granule.level_shift(start_level) > max_bits_per_start {
            if start_level == granule.min_start_level() {
                return Err(Error::InvalidIpaLimit);
            }
            start_level -= 1;
        }
        let resolved = ipa_bits - granule.level_shift(start_level);
        let root_tables = if resolved > granule.bits_per_level() {
            1 << (resolved - granule.bits_per_level())
        } else {
            1
        };
        Ok(Self {
            granule,
            ipa_bits,
            pa_bits,
            ps,
            start_level,
            root_tables,
            vmid16,
        })
    }

    /// The `VTCR_EL2` value: T0SZ, SL0, TG0, SH0 = inner shareable, ORGN0/IRGN0 = write-back
    /// read/write-allocate, PS, VS, and the RES1 bit 31.
    pub fn vtcr(&self) -> u64 {
        let vs = if self.vmid16 {
            VTCR_EL2::VS::Bits16
        } else {
            VTCR_EL2::VS::Bits8
        };
        let v = VTCR_EL2::RES1::SET
            + VTCR_EL2::T0SZ.val(u64::from(64 - self.ipa_bits))
            + self.granule.vtcr_sl0(self.start_level)
            + self.granule.vtcr_tg0()
            + VTCR_EL2::SH0::Inner
            + VTCR_EL2::ORGN0::NormalWBRAWA
            + VTCR_EL2::IRGN0::NormalWBRAWA
            + VTCR_EL2::PS.val(self.ps)
            + vs;
        v.value
    }

    /// The translation granule.
    pub fn granule(&self) -> Granule {
        self.granule
    }

    /// IPA size in bits (`64 - VTCR_EL2.T0SZ`).
    pub fn ipa_bits(&self) -> u32 {
        self.ipa_bits
    }

    /// Size of the IPA space in bytes.
    pub fn ipa_size(&self) -> u64 {
        1 << self.ipa_bits
    }

    /// Output (physical) address size in bits, from `VTCR_EL2.PS`.
    pub fn pa_bits(&self) -> u32 {
        self.pa_bits
    }

    /// Lookup level of the root table (`VTCR_EL2.SL0`).
    pub fn start_level(&self) -> u32 {
        self.start_level
    }

    /// Number of concatenated tables at the start level (1, 2, 4, 8 or 16); the root is this
    /// many contiguous pages, aligned to its own size.
    pub fn root_tables(&self) -> u32 {
        self.root_tables
    }

    /// VMID width in bits: 16 when `VTCR_EL2.VS` is set, else 8.
    pub fn vmid_bits(&self) -> u32 {
        if self.vmid16 {
            16
        } else {
            8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_concatenation() {
        let c = |pr, ipa| {
            let c = Stage2Config::new(pr, ipa, false).unwrap();
            (c.ipa_bits(), c.start_level(), c.root_tables())
        };
        assert_eq!(c(2, 40), (40, 1, 2));
        assert_eq!(c(0, 40), (32, 2, 4));
        assert_eq!(c(1, 40), (36, 1, 1));
        assert_eq!(c(5, 48), (48, 0, 1));
        assert_eq!(c(5, 43), (43, 1, 16));
        assert_eq!(c(5, 44), (44, 0, 1));
        assert_eq!(c(5, 34), (34, 2, 16));
        assert_eq!(c(5, 39), (39, 1, 1));
        assert_eq!(c(6, 52), (48, 0, 1));
        assert_eq!(c(5, 25), (25, 2, 1));
    }

    #[test]
    fn bad_inputs() {
        assert_eq!(Stage2Config::new(8, 40, false), Err(Error::InvalidPaRange));
        assert_eq!(
            Stage2Config::new(0xf, 40, false),
            Err(Error::InvalidPaRange)
        );
        assert_eq!(Stage2Config::new(2, 24, false), Err(Error::InvalidIpaLimit));
        assert_eq!(Stage2Config::new(2, 0, false), Err(Error::InvalidIpaLimit));
    }
}
