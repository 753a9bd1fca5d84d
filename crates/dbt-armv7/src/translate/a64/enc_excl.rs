//! A64 encodings of exclusive and pair accesses (ARM ARM for A-profile, C4). Re-exported
//! by [`super::enc`].

/// Exclusive access sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExSize {
    /// Byte.
    B = 0,
    /// Halfword.
    H = 1,
    /// Word.
    W = 2,
}

/// `LDXRB/LDXRH/LDXR Wt, [Xn]`.
pub fn ldxr(size: ExSize, rt: u8, rn: u8) -> u32 {
    0x085f_7c00 | (size as u32) << 30 | (rn as u32) << 5 | rt as u32
}

/// `STXRB/STXRH/STXR Ws, Wt, [Xn]` (`Ws` = 0 on success, 1 on failure).
pub fn stxr(size: ExSize, rs: u8, rt: u8, rn: u8) -> u32 {
    0x0800_7c00 | (size as u32) << 30 | (rs as u32) << 16 | (rn as u32) << 5 | rt as u32
}

/// `LDXP Wt, Wt2, [Xn]`.
pub fn w_ldxp(rt: u8, rt2: u8, rn: u8) -> u32 {
    0x887f_0000 | (rt2 as u32) << 10 | (rn as u32) << 5 | rt as u32
}

/// `STXP Ws, Wt, Wt2, [Xn]`.
pub fn w_stxp(rs: u8, rt: u8, rt2: u8, rn: u8) -> u32 {
    0x8820_0000 | (rs as u32) << 16 | (rt2 as u32) << 10 | (rn as u32) << 5 | rt as u32
}

/// `CLREX`.
pub const CLREX: u32 = 0xd503_3f5f;
