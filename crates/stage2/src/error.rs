//! Errors returned by the stage-2 API. Every bad input is an error, never a panic, because
//! IPAs and lengths may come from guest-influenced paths.

use core::fmt;

/// Why a stage-2 operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// An IPA, PA or length is not a multiple of the translation granule (4 KiB).
    Misaligned,
    /// The IPA range does not fit in the configured IPA size (or wraps around).
    OutOfIpaRange,
    /// The output PA range does not fit in the physical address size (`VTCR_EL2.PS`).
    OutOfPaRange,
    /// `map` found a valid mapping in the range; use `map_replace` to overwrite it.
    AlreadyMapped,
    /// The [`crate::TableAllocator`] could not supply a table page.
    OutOfMemory,
    /// The attributes are not allowed (e.g. executable device memory).
    InvalidAttrs,
    /// `ID_AA64MMFR0_EL1.PARange` holds a reserved encoding.
    InvalidPaRange,
    /// The configured IPA limit is below the smallest supported IPA size.
    InvalidIpaLimit,
    /// A CPU index is out of range for the [`crate::VmidAllocator`].
    InvalidCpu,
    /// `start_dirty_log` while another dirty log is running.
    DirtyLogActive,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Error::Misaligned => "address or length not aligned to the translation granule",
            Error::OutOfIpaRange => "IPA range outside the configured IPA size",
            Error::OutOfPaRange => "PA range outside the physical address size",
            Error::AlreadyMapped => "range already (partly) mapped",
            Error::OutOfMemory => "table allocator exhausted",
            Error::InvalidAttrs => "invalid stage-2 attributes",
            Error::InvalidPaRange => "reserved ID_AA64MMFR0_EL1.PARange value",
            Error::InvalidIpaLimit => "IPA limit too small",
            Error::InvalidCpu => "CPU index out of range",
            Error::DirtyLogActive => "a dirty log is already running",
        };
        f.write_str(s)
    }
}
