//! Translation granule geometry: the one place that knows page size, bits per level, which
//! levels may hold blocks, and how the granule is encoded in `VTCR_EL2`.
//!
//! Only the 4 KiB granule is implemented. A 16 KiB or 64 KiB granule is a new variant here
//! (plus its `VTCR_EL2.TG0`/`SL0` encodings); the walker and the table code only ask this type.

use aarch64_cpu::registers::VTCR_EL2;
use tock_registers::fields::FieldValue;

/// Stage-2 translation granule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granule {
    /// 4 KiB pages, 512 entries per table, levels 0..=3, blocks at levels 1 and 2.
    K4,
}

/// The last lookup level (page level) for every granule.
pub(crate) const LAST_LEVEL: u32 = 3;

impl Granule {
    /// log2 of the page size.
    pub const fn page_shift(self) -> u32 {
        match self {
            Granule::K4 => 12,
        }
    }

    /// Page (and table) size in bytes.
    pub const fn page_size(self) -> u64 {
        1 << self.page_shift()
    }

    /// IPA bits resolved by one lookup level (`page_shift - 3`, 8-byte descriptors).
    pub const fn bits_per_level(self) -> u32 {
        self.page_shift() - 3
    }

    /// Descriptors in one table.
    pub const fn entries_per_table(self) -> usize {
        1 << self.bits_per_level()
    }

    /// log2 of the IPA range covered by one descriptor at `level`.
    pub const fn level_shift(self, level: u32) -> u32 {
        self.page_shift() + self.bits_per_level() * (LAST_LEVEL - level)
    }

    /// Bytes covered by one descriptor at `level`.
    pub const fn level_size(self, level: u32) -> u64 {
        1 << self.level_shift(level)
    }

    /// Whether a leaf (block or page) descriptor is allowed at `level`
    /// (4 KiB: 1 GiB blocks at level 1, 2 MiB blocks at level 2, pages at level 3; level-0
    /// blocks need FEAT_LPA2).
    pub const fn leaf_allowed(self, level: u32) -> bool {
        match self {
            Granule::K4 => level >= 1 && level <= LAST_LEVEL,
        }
    }

    /// Lowest start level this crate supports for the granule.
    pub const fn min_start_level(self) -> u32 {
        match self {
            Granule::K4 => 0,
        }
    }

    /// Most tables that may be concatenated at the stage-2 start level (Arm ARM: up to 16).
    pub const fn max_concatenated(self) -> u32 {
        16
    }

    /// `VTCR_EL2.TG0` encoding for this granule.
    pub(crate) fn vtcr_tg0(self) -> FieldValue<u64, VTCR_EL2::Register> {
        match self {
            Granule::K4 => VTCR_EL2::TG0::Granule4KB,
        }
    }

    /// `VTCR_EL2.SL0` encoding of `start_level` for this granule (4 KiB: 0b10 = level 0,
    /// 0b01 = level 1, 0b00 = level 2).
    pub(crate) fn vtcr_sl0(self, start_level: u32) -> FieldValue<u64, VTCR_EL2::Register> {
        match (self, start_level) {
            (Granule::K4, 0) => VTCR_EL2::SL0::Granule4KBLevel0,
            (Granule::K4, 1) => VTCR_EL2::SL0::Granule4KBLevel1,
            (Granule::K4, _) => VTCR_EL2::SL0::Granule4KBLevel2,
        }
    }
}
