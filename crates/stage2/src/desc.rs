//! VMSAv8-64 stage-2 descriptor layout (4 KiB granule), defined once with
//! `register_bitfields!` so the rest of the crate never uses raw bit numbers.

use tock_registers::fields::FieldValue;
use tock_registers::register_bitfields;

register_bitfields! {u64,
    /// A stage-2 translation table descriptor (block, page or table).
    pub S2_DESC [
        /// Descriptor valid.
        VALID OFFSET(0) NUMBITS(1) [],
        /// At levels 0-2: 1 = table descriptor, 0 = block. At level 3: must be 1 (page).
        TYPE OFFSET(1) NUMBITS(1) [
            Block = 0,
            TableOrPage = 1,
        ],
        /// Stage-2 memory attributes, MemAttr[3:0] (with HCR_EL2.FWB = 0).
        MEMATTR OFFSET(2) NUMBITS(4) [
            /// Device-nGnRnE.
            DeviceNGnRnE = 0b0000,
            /// Device-nGnRE.
            DeviceNGnRE = 0b0001,
            /// Normal, outer and inner non-cacheable.
            NormalNonCacheable = 0b0101,
            /// Normal, outer and inner write-back cacheable.
            NormalWriteBack = 0b1111,
        ],
        /// Stage-2 access permissions S2AP[1:0]: bit 0 = read, bit 1 = write.
        S2AP OFFSET(6) NUMBITS(2) [
            None = 0b00,
            ReadOnly = 0b01,
            WriteOnly = 0b10,
            ReadWrite = 0b11,
        ],
        /// Shareability SH[1:0].
        SH OFFSET(8) NUMBITS(2) [
            NonShareable = 0b00,
            OuterShareable = 0b10,
            InnerShareable = 0b11,
        ],
        /// Access flag.
        AF OFFSET(10) NUMBITS(1) [],
        /// Output address (or next-level table address) bits [47:12].
        ADDR OFFSET(12) NUMBITS(36) [],
        /// Contiguous hint.
        CONTIGUOUS OFFSET(52) NUMBITS(1) [],
        /// XN[1] (stage 2): execute never at EL1 and EL0. (XN[0], bit 53, is FEAT_XNX.)
        XN OFFSET(54) NUMBITS(1) [],
        /// Software bit (ignored by hardware): a writable mapping write-protected for dirty
        /// logging (see `crate::dirty`).
        SW_LOGGED OFFSET(55) NUMBITS(1) [],
    ]
}

/// Mask of the output-address bits [47:12].
pub(crate) const ADDR_MASK: u64 = S2_DESC::ADDR.mask << S2_DESC::ADDR.shift;

/// Mask of every leaf attribute bit this crate manages (MemAttr, S2AP, SH, AF, XN).
pub(crate) fn leaf_attr_mask() -> u64 {
    let m = S2_DESC::MEMATTR::DeviceNGnRnE
        + S2_DESC::S2AP::None
        + S2_DESC::SH::NonShareable
        + S2_DESC::AF::CLEAR
        + S2_DESC::XN::CLEAR;
    m.mask()
}

/// Whether the descriptor is valid.
pub(crate) fn is_valid(d: u64) -> bool {
    S2_DESC::VALID.is_set(d)
}

/// Whether the descriptor at `level` points to a next-level table.
pub(crate) fn is_table(d: u64, level: u32, last_level: u32) -> bool {
    level < last_level && is_valid(d) && S2_DESC::TYPE.is_set(d)
}

/// Output / next-table address held by a valid descriptor.
pub(crate) fn addr(d: u64) -> u64 {
    d & ADDR_MASK
}

/// A table descriptor pointing at `table_pa`.
pub(crate) fn table(table_pa: u64) -> u64 {
    (S2_DESC::VALID::SET + S2_DESC::TYPE::TableOrPage).value | (table_pa & ADDR_MASK)
}

/// A leaf descriptor (block at levels 1-2, page at level 3) with `attr_bits` from
/// [`crate::S2Attrs::descriptor_bits`].
pub(crate) fn leaf(pa: u64, attr_bits: u64, level: u32, last_level: u32) -> u64 {
    let ty: FieldValue<u64, S2_DESC::Register> = if level == last_level {
        S2_DESC::TYPE::TableOrPage
    } else {
        S2_DESC::TYPE::Block
    };
    (S2_DESC::VALID::SET + ty).value | (pa & ADDR_MASK) | attr_bits
}
