//! Processor modes and register banking.

/// ARMv7-A processor modes (`CPSR.M`). Monitor and Hyp exist in the encoding but are not
/// modelled: the guest sees a CPU without EL3/EL2 (like QEMU `virt` without
/// `secure=on`/`virtualization=on`), so switching to them is ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Mode {
    Usr = 0x10,
    Fiq = 0x11,
    Irq = 0x12,
    Svc = 0x13,
    Abt = 0x17,
    Und = 0x1b,
    Sys = 0x1f,
}

impl Mode {
    /// The mode for a `CPSR.M` value, `None` for reserved/unmodelled values.
    pub fn from_bits(m: u32) -> Option<Mode> {
        Some(match m & 0x1f {
            0x10 => Mode::Usr,
            0x11 => Mode::Fiq,
            0x12 => Mode::Irq,
            0x13 => Mode::Svc,
            0x17 => Mode::Abt,
            0x1b => Mode::Und,
            0x1f => Mode::Sys,
            _ => return None,
        })
    }

    /// Index of the SP/LR bank (usr/sys share bank 0).
    pub fn bank(self) -> usize {
        match self {
            Mode::Usr | Mode::Sys => 0,
            Mode::Fiq => 1,
            Mode::Irq => 2,
            Mode::Svc => 3,
            Mode::Abt => 4,
            Mode::Und => 5,
        }
    }

    /// Whether the mode has an SPSR.
    pub fn has_spsr(self) -> bool {
        !matches!(self, Mode::Usr | Mode::Sys)
    }

    /// PL1 (privileged) mode.
    pub fn privileged(self) -> bool {
        self != Mode::Usr
    }
}

/// `CPSR` bit positions.
pub mod psr {
    /// Negative.
    pub const N: u32 = 1 << 31;
    /// Zero.
    pub const Z: u32 = 1 << 30;
    /// Carry.
    pub const C: u32 = 1 << 29;
    /// Overflow.
    pub const V: u32 = 1 << 28;
    /// Saturation.
    pub const Q: u32 = 1 << 27;
    /// Jazelle.
    pub const J: u32 = 1 << 24;
    /// `GE[3:0]` at 19:16.
    pub const GE_SHIFT: u32 = 16;
    /// Big-endian data.
    pub const E: u32 = 1 << 9;
    /// Asynchronous abort mask.
    pub const A: u32 = 1 << 8;
    /// IRQ mask.
    pub const I: u32 = 1 << 7;
    /// FIQ mask.
    pub const F: u32 = 1 << 6;
    /// Thumb.
    pub const T: u32 = 1 << 5;
    /// `IT[1:0]` at 26:25 and `IT[7:2]` at 15:10.
    pub const IT_MASK: u32 = 0x0600_fc00;
    /// Mode field.
    pub const M: u32 = 0x1f;
}
