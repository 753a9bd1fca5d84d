#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]

mod attrs;
mod config;
mod desc;
pub mod dirty;
mod error;
pub mod fault;
mod granule;
mod table;
mod traits;
mod visitors;
mod vmid;
mod walker;

#[cfg(target_arch = "aarch64")]
pub mod hw;

pub use attrs::{MemType, S2Attrs};
pub use config::{Stage2Config, MAX_IPA_BITS, MIN_IPA_BITS};
pub use dirty::DirtyBitmap;
pub use error::Error;
pub use fault::{classify, AbortReason, FaultAction, FaultInput, IpaRegion, S2FaultKind};
pub use granule::Granule;
pub use table::{DefaultTlb, Mapping, NoTlb, Stage2Table};
pub use traits::{vttbr_vmid, TableAllocator, TlbMaintenance, PAGE_SIZE};
pub use vmid::{VmVmid, VmidAllocator};

/// `Result` with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
