//! The load/store forms the storm uses, as A64 encodings with x1 the address, x0 (and x2)
//! the data, w3 the store-exclusive status, v0..v3 the SIMD data.

use crate::tally::Kind;

/// One load/store form.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    /// Mnemonic for reports.
    pub name: &'static str,
    /// The instruction.
    pub insn: u32,
    /// What it counts as.
    pub kind: Kind,
    /// Bytes accessed.
    pub size: u64,
    /// Natural alignment of the access (the target address is aligned to this unless the
    /// storm wants an unaligned access).
    pub align: u64,
    /// Writes memory.
    pub write: bool,
    /// Allowed at EL0.
    pub el0: bool,
}

const fn f(name: &'static str, insn: u32, kind: Kind, size: u64, align: u64, write: bool) -> Form {
    Form {
        name,
        insn,
        kind,
        size,
        align,
        write,
        el0: true,
    }
}

/// Every form (LSE atomics are used only when `ID_AA64ISAR0_EL1.Atomic` says so).
pub const FORMS: &[Form] = &[
    f("LDRB w0, [x1]", 0x3940_0020, Kind::Load, 1, 1, false),
    f("LDRH w0, [x1]", 0x7940_0020, Kind::Load, 2, 2, false),
    f("LDR w0, [x1]", 0xb940_0020, Kind::Load, 4, 4, false),
    f("LDR x0, [x1]", 0xf940_0020, Kind::Load, 8, 8, false),
    f("LDRSB x0, [x1]", 0x3980_0020, Kind::Load, 1, 1, false),
    f("LDRSH x0, [x1]", 0x7980_0020, Kind::Load, 2, 2, false),
    f("LDRSW x0, [x1]", 0xb980_0020, Kind::Load, 4, 4, false),
    Form {
        el0: false, // x4 is only set for EL1 operations
        ..f("LDR x0, [x1, x4]", 0xf864_6820, Kind::Load, 8, 8, false)
    },
    f("STRB w0, [x1]", 0x3900_0020, Kind::Store, 1, 1, true),
    f("STRH w0, [x1]", 0x7900_0020, Kind::Store, 2, 2, true),
    f("STR w0, [x1]", 0xb900_0020, Kind::Store, 4, 4, true),
    f("STR x0, [x1]", 0xf900_0020, Kind::Store, 8, 8, true),
    f("LDP x0, x2, [x1]", 0xa940_0820, Kind::Pair, 16, 8, false),
    f("STP x0, x2, [x1]", 0xa900_0820, Kind::Pair, 16, 8, true),
    f("LDP w0, w2, [x1]", 0x2940_0820, Kind::Pair, 8, 4, false),
    f("STP w0, w2, [x1]", 0x2900_0820, Kind::Pair, 8, 4, true),
    f("LDNP x0, x2, [x1]", 0xa840_0820, Kind::Pair, 16, 8, false),
    f("STNP x0, x2, [x1]", 0xa800_0820, Kind::Pair, 16, 8, true),
    f("LDPSW x0, x2, [x1]", 0x6940_0820, Kind::Pair, 8, 4, false),
    f(
        "LDR x0, [x1], #8",
        0xf840_8420,
        Kind::Writeback,
        8,
        8,
        false,
    ),
    f(
        "LDR x0, [x1, #0]!",
        0xf840_0c20,
        Kind::Writeback,
        8,
        8,
        false,
    ),
    f("STR x0, [x1], #8", 0xf800_8420, Kind::Writeback, 8, 8, true),
    f(
        "STR x0, [x1, #0]!",
        0xf800_0c20,
        Kind::Writeback,
        8,
        8,
        true,
    ),
    f(
        "LDRB w0, [x1], #1",
        0x3840_1420,
        Kind::Writeback,
        1,
        1,
        false,
    ),
    f(
        "STRB w0, [x1], #1",
        0x3800_1420,
        Kind::Writeback,
        1,
        1,
        true,
    ),
    f(
        "LDP x0, x2, [x1], #16",
        0xa8c1_0820,
        Kind::Writeback,
        16,
        8,
        false,
    ),
    f(
        "STP x0, x2, [x1, #0]!",
        0xa980_0820,
        Kind::Writeback,
        16,
        8,
        true,
    ),
    f("LDXR x0, [x1]", 0xc85f_7c20, Kind::Exclusive, 8, 8, false),
    f(
        "STXR w3, x0, [x1]",
        0xc803_7c20,
        Kind::Exclusive,
        8,
        8,
        true,
    ),
    f("LDAXR x0, [x1]", 0xc85f_fc20, Kind::Exclusive, 8, 8, false),
    f(
        "STLXR w3, x0, [x1]",
        0xc803_fc20,
        Kind::Exclusive,
        8,
        8,
        true,
    ),
    f("LDXRB w0, [x1]", 0x085f_7c20, Kind::Exclusive, 1, 1, false),
    f(
        "STXRB w3, w0, [x1]",
        0x0803_7c20,
        Kind::Exclusive,
        1,
        1,
        true,
    ),
    f(
        "LDXP x0, x2, [x1]",
        0xc87f_0820,
        Kind::Exclusive,
        16,
        16,
        false,
    ),
    f(
        "STXP w3, x0, x2, [x1]",
        0xc823_0820,
        Kind::Exclusive,
        16,
        16,
        true,
    ),
    f("LDAR x0, [x1]", 0xc8df_fc20, Kind::Exclusive, 8, 8, false),
    f("STLR x0, [x1]", 0xc89f_fc20, Kind::Exclusive, 8, 8, true),
    f("LDARB w0, [x1]", 0x08df_fc20, Kind::Exclusive, 1, 1, false),
    f("STLRB w0, [x1]", 0x089f_fc20, Kind::Exclusive, 1, 1, true),
    f("LDADD x0, x2, [x1]", 0xf820_0022, Kind::Atomic, 8, 8, true),
    f("SWP x0, x2, [x1]", 0xf820_8022, Kind::Atomic, 8, 8, true),
    f("CAS x0, x2, [x1]", 0xc8a0_7c22, Kind::Atomic, 8, 8, true),
    f("STADD x0, [x1]", 0xf820_003f, Kind::Atomic, 8, 8, true),
    f("LDADDB w0, w2, [x1]", 0x3820_0022, Kind::Atomic, 1, 1, true),
    f(
        "LDCLRAL x0, x2, [x1]",
        0xf8e0_1022,
        Kind::Atomic,
        8,
        8,
        true,
    ),
    f("LD1 {v0.16b}, [x1]", 0x4c40_7020, Kind::Simd, 16, 1, false),
    f("ST1 {v0.16b}, [x1]", 0x4c00_7020, Kind::Simd, 16, 1, true),
    f(
        "LD1 {v0.16b, v1.16b}, [x1]",
        0x4c40_a020,
        Kind::Simd,
        32,
        1,
        false,
    ),
    f(
        "ST1 {v0.2d, v1.2d}, [x1]",
        0x4c00_ac20,
        Kind::Simd,
        32,
        8,
        true,
    ),
    f(
        "LD4 {v0.4s-v3.4s}, [x1]",
        0x4c40_0820,
        Kind::Simd,
        64,
        4,
        false,
    ),
    f("LD1R {v0.4s}, [x1]", 0x4d40_c820, Kind::Simd, 4, 4, false),
    f(
        "LD1 {v0.16b}, [x1], #16",
        0x4cdf_7020,
        Kind::Simd,
        16,
        1,
        false,
    ),
    f("LDR q0, [x1]", 0x3dc0_0020, Kind::Simd, 16, 16, false),
    f("STR q0, [x1]", 0x3d80_0020, Kind::Simd, 16, 16, true),
    f("LDR d0, [x1]", 0xfd40_0020, Kind::Simd, 8, 8, false),
    f("STR d0, [x1]", 0xfd00_0020, Kind::Simd, 8, 8, true),
    f("LDR s0, [x1]", 0xbd40_0020, Kind::Simd, 4, 4, false),
    f("LDR b0, [x1]", 0x3d40_0020, Kind::Simd, 1, 1, false),
    f("LDP q0, q1, [x1]", 0xad40_0420, Kind::Simd, 32, 16, false),
    f("DC ZVA, x1", 0xd50b_7421, Kind::CacheOp, 64, 64, true),
    f("DC CIVAC, x1", 0xd50b_7e21, Kind::CacheOp, 1, 1, false),
    f("DC CVAC, x1", 0xd50b_7a21, Kind::CacheOp, 1, 1, false),
    f("IC IVAU, x1", 0xd50b_7521, Kind::CacheOp, 1, 1, false),
    f(
        "PRFM PLDL1KEEP, [x1]",
        0xf980_0020,
        Kind::CacheOp,
        1,
        1,
        false,
    ),
    f("LDTR x0, [x1]", 0xf840_0820, Kind::Unpriv, 8, 8, false),
    f("STTR x0, [x1]", 0xf800_0820, Kind::Unpriv, 8, 8, true),
    f("LDTRB w0, [x1]", 0x3840_0820, Kind::Unpriv, 1, 1, false),
];

impl Form {
    /// True for the LSE atomics (need `ID_AA64ISAR0_EL1.Atomic` >= 2).
    pub fn is_lse(&self) -> bool {
        self.kind == Kind::Atomic
    }

    /// True for operations that never fault on any address (prefetch hints).
    pub fn never_faults(&self) -> bool {
        self.insn == 0xf980_0020
    }

    /// True for cache maintenance by VA other than `DC ZVA` (a hypervisor may complete them
    /// on addresses without memory instead of aborting, as KVM does for MMIO).
    pub fn is_cmo(&self) -> bool {
        self.kind == Kind::CacheOp && !self.write && !self.never_faults()
    }

    /// True for the store-exclusives: one without a matching load-exclusive may fail
    /// (status 1 in w3) without accessing memory, so without an abort.
    pub fn is_store_exclusive(&self) -> bool {
        matches!(self.insn & 0x3fa0_0000, 0x0800_0000 | 0x0820_0000) && self.write
    }

    /// How `x1` (the base register) changes when the access completes: post-index forms
    /// add their immediate, everything else leaves it.
    pub fn writeback(&self) -> u64 {
        match self.insn {
            0xf840_8420 | 0xf800_8420 => 8,
            0x3840_1420 | 0x3800_1420 => 1,
            0xa8c1_0820 | 0x4cdf_7020 => 16,
            _ => 0,
        }
    }

    /// What a load puts in x0 and x2: `(register, byte offset, size, sign-extended)` per
    /// destination (`None` for forms whose destinations the storm does not check).
    pub fn destinations(&self) -> [Option<(usize, u64, u64, bool)>; 2] {
        match self.insn {
            0x3940_0020 | 0x3840_1420 | 0x3840_0820 | 0x08df_fc20 | 0x085f_7c20 => {
                [Some((0, 0, 1, false)), None]
            }
            0x7940_0020 => [Some((0, 0, 2, false)), None],
            0xb940_0020 => [Some((0, 0, 4, false)), None],
            0xf940_0020 | 0xf864_6820 | 0xf840_8420 | 0xf840_0c20 | 0xf840_0820 | 0xc8df_fc20
            | 0xc85f_7c20 | 0xc85f_fc20 => [Some((0, 0, 8, false)), None],
            0x3980_0020 => [Some((0, 0, 1, true)), None],
            0x7980_0020 => [Some((0, 0, 2, true)), None],
            0xb980_0020 => [Some((0, 0, 4, true)), None],
            0xa940_0820 | 0xa840_0820 | 0xa8c1_0820 | 0xc87f_0820 => {
                [Some((0, 0, 8, false)), Some((2, 8, 8, false))]
            }
            0x2940_0820 => [Some((0, 0, 4, false)), Some((2, 4, 4, false))],
            0x6940_0820 => [Some((0, 0, 4, true)), Some((2, 4, 4, true))],
            _ => [None, None],
        }
    }

    /// True for `DC ZVA`.
    pub fn is_zva(&self) -> bool {
        self.insn == 0xd50b_7421
    }
}
