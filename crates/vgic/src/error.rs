//! Errors and access outcomes.

use core::fmt;

/// What went wrong with an emulated register access or an API call.
///
/// Register accesses (`gicd_*`, `gicr_*`) produce two kinds of error that the caller treats
/// differently; see [`VgicError::is_abort`]:
///
/// - [`VgicError::Reserved`]: the architectural answer is RAZ/WI. The caller completes a read
///   with the value 0, drops a write, and logs the access.
/// - [`VgicError::BadWidth`] / [`VgicError::Misaligned`]: the guest used an access the GIC
///   architecture does not allow; the caller injects an external (synchronous) abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VgicError {
    /// The offset is reserved or not implemented: RAZ/WI, to be logged.
    Reserved {
        /// Offset of the access within its frame.
        offset: u64,
    },
    /// The register does not allow accesses of this size.
    BadWidth {
        /// Offset of the access within its frame.
        offset: u64,
        /// Access size in bytes.
        size: u8,
        /// Architectural name of the register at `offset` (`"GICD_ISENABLER"`, the name of
        /// its row in the register table and of its constant in [`crate::offsets`]); `None`
        /// if the offset is reserved.
        register: Option<&'static str>,
    },
    /// The access is not naturally aligned.
    Misaligned {
        /// Offset of the access within its frame.
        offset: u64,
        /// Access size in bytes.
        size: u8,
        /// Architectural name of the register at `offset`, as for [`VgicError::BadWidth`].
        register: Option<&'static str>,
    },
    /// A vCPU index out of range (a caller bug, not guest input).
    BadVcpu(usize),
    /// An INTID that does not exist or is the wrong kind for the call.
    BadIntid(u32),
    /// The call does not apply to this GIC version.
    WrongVersion,
    /// The configuration passed to [`crate::Vgic::new`] is invalid.
    BadConfig(&'static str),
}

impl VgicError {
    /// True when the caller should answer the guest's access with an external abort;
    /// false for [`VgicError::Reserved`] (RAZ/WI) and for caller-side errors.
    pub fn is_abort(&self) -> bool {
        matches!(self, Self::BadWidth { .. } | Self::Misaligned { .. })
    }
}

impl fmt::Display for VgicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reserved { offset } => write!(f, "reserved register offset {offset:#x} (RAZ/WI)"),
            Self::BadWidth {
                offset,
                size,
                register,
            } => {
                write!(f, "{size}-byte access not allowed at offset {offset:#x}")?;
                register_suffix(f, *register)
            }
            Self::Misaligned {
                offset,
                size,
                register,
            } => {
                write!(f, "misaligned {size}-byte access at offset {offset:#x}")?;
                register_suffix(f, *register)
            }
            Self::BadVcpu(v) => write!(f, "no vCPU {v}"),
            Self::BadIntid(i) => write!(f, "invalid INTID {i}"),
            Self::WrongVersion => write!(f, "operation not valid for this GIC version"),
            Self::BadConfig(s) => write!(f, "bad vGIC configuration: {s}"),
        }
    }
}

/// ` (GICD_ISENABLER)` after an access error, if the offset is in a register.
fn register_suffix(f: &mut fmt::Formatter<'_>, register: Option<&'static str>) -> fmt::Result {
    match register {
        Some(name) => write!(f, " ({name})"),
        None => Ok(()),
    }
}
