//! Stage-2 mapping attributes: memory type and R/W/X permissions, and their encoding in
//! descriptor bits (MemAttr, S2AP, SH, AF, XN).

use crate::desc::S2_DESC;

/// Stage-2 memory type (`MemAttr[3:0]`, with `HCR_EL2.FWB` = 0). The resulting type is the
/// more restrictive of this and the guest's stage-1 type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemType {
    /// Normal memory, inner and outer write-back cacheable (`MemAttr` = 0b1111).
    NormalWriteBack,
    /// Normal memory, non-cacheable (`MemAttr` = 0b0101), e.g. for framebuffers.
    NormalNonCacheable,
    /// Device-nGnRE (`MemAttr` = 0b0001): the usual type for MMIO.
    DeviceNGnRE,
    /// Device-nGnRnE (`MemAttr` = 0b0000): strongly ordered MMIO.
    DeviceNGnRnE,
}

impl MemType {
    /// Whether this is a Device memory type.
    pub const fn is_device(self) -> bool {
        matches!(self, MemType::DeviceNGnRE | MemType::DeviceNGnRnE)
    }
}

/// Attributes of a stage-2 mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct S2Attrs {
    /// Memory type.
    pub mem: MemType,
    /// Guest may read (`S2AP[0]`).
    pub read: bool,
    /// Guest may write (`S2AP[1]`).
    pub write: bool,
    /// Guest may execute (clear `XN`). Not allowed for device memory.
    pub exec: bool,
}

impl S2Attrs {
    /// Normal write-back RAM, read/write/execute.
    pub const RAM: S2Attrs = S2Attrs {
        mem: MemType::NormalWriteBack,
        read: true,
        write: true,
        exec: true,
    };
    /// Normal write-back RAM, read/write, execute-never.
    pub const RAM_NX: S2Attrs = S2Attrs {
        exec: false,
        ..Self::RAM
    };
    /// Normal write-back RAM, read-only and executable (e.g. ROM, write-protected pages).
    pub const RAM_RO: S2Attrs = S2Attrs {
        write: false,
        ..Self::RAM
    };
    /// Device-nGnRE, read/write, execute-never: MMIO passed through to a guest.
    pub const DEVICE: S2Attrs = S2Attrs {
        mem: MemType::DeviceNGnRE,
        read: true,
        write: true,
        exec: false,
    };
    /// Device-nGnRnE, read/write, execute-never.
    pub const DEVICE_STRICT: S2Attrs = S2Attrs {
        mem: MemType::DeviceNGnRnE,
        ..Self::DEVICE
    };

    /// Same attributes without write permission.
    pub const fn read_only(self) -> S2Attrs {
        S2Attrs {
            write: false,
            ..self
        }
    }

    /// Whether the attributes are allowed: device memory must be execute-never (speculative
    /// instruction fetches must never reach MMIO).
    pub const fn is_valid(self) -> bool {
        !(self.mem.is_device() && self.exec)
    }

    /// Leaf descriptor attribute bits: MemAttr, S2AP, SH = inner shareable, AF = 1, XN.
    pub fn descriptor_bits(self) -> u64 {
        let mem = match self.mem {
            MemType::NormalWriteBack => S2_DESC::MEMATTR::NormalWriteBack,
            MemType::NormalNonCacheable => S2_DESC::MEMATTR::NormalNonCacheable,
            MemType::DeviceNGnRE => S2_DESC::MEMATTR::DeviceNGnRE,
            MemType::DeviceNGnRnE => S2_DESC::MEMATTR::DeviceNGnRnE,
        };
        let ap = match (self.read, self.write) {
            (false, false) => S2_DESC::S2AP::None,
            (true, false) => S2_DESC::S2AP::ReadOnly,
            (false, true) => S2_DESC::S2AP::WriteOnly,
            (true, true) => S2_DESC::S2AP::ReadWrite,
        };
        let xn = if self.exec {
            S2_DESC::XN::CLEAR
        } else {
            S2_DESC::XN::SET
        };
        (mem + ap + S2_DESC::SH::InnerShareable + S2_DESC::AF::SET + xn).value
    }

    /// Decodes the attributes of a leaf descriptor written by this crate. Returns `None` for
    /// a `MemAttr` encoding this crate never writes.
    pub fn from_descriptor(d: u64) -> Option<S2Attrs> {
        let mem = match S2_DESC::MEMATTR.read_as_enum(d)? {
            S2_DESC::MEMATTR::Value::NormalWriteBack => MemType::NormalWriteBack,
            S2_DESC::MEMATTR::Value::NormalNonCacheable => MemType::NormalNonCacheable,
            S2_DESC::MEMATTR::Value::DeviceNGnRE => MemType::DeviceNGnRE,
            S2_DESC::MEMATTR::Value::DeviceNGnRnE => MemType::DeviceNGnRnE,
        };
        let ap = S2_DESC::S2AP.read(d);
        Some(S2Attrs {
            mem,
            read: ap & 1 != 0,
            write: ap & 2 != 0,
            exec: !S2_DESC::XN.is_set(d),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_bits_match_the_architecture() {
        // MemAttr=0b1111 (bits 5:2), S2AP=0b11 (7:6), SH=0b11 (9:8), AF (10), XN clear.
        assert_eq!(S2Attrs::RAM.descriptor_bits(), 0x7fc);
        // S2AP=0b01.
        assert_eq!(S2Attrs::RAM_RO.descriptor_bits(), 0x77c);
        // + XN (bit 54).
        assert_eq!(S2Attrs::RAM_NX.descriptor_bits(), (1 << 54) | 0x7fc);
        // MemAttr=0b0001, S2AP=0b11, SH=0b11, AF, XN.
        assert_eq!(S2Attrs::DEVICE.descriptor_bits(), (1 << 54) | 0x7c4);
        // MemAttr=0b0000.
        assert_eq!(S2Attrs::DEVICE_STRICT.descriptor_bits(), (1 << 54) | 0x7c0);
        for a in [
            S2Attrs::RAM,
            S2Attrs::RAM_RO,
            S2Attrs::RAM_NX,
            S2Attrs::DEVICE,
            S2Attrs::DEVICE_STRICT,
        ] {
            assert_eq!(S2Attrs::from_descriptor(a.descriptor_bits() | 3), Some(a));
        }
        assert!(!S2Attrs {
            exec: true,
            ..S2Attrs::DEVICE
        }
        .is_valid());
    }
}
