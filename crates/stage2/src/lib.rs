//! Stage-2 translation tables for AArch64 hypervisors.
//!
//! This crate builds and maintains the tables that translate a guest's intermediate physical
//! addresses (IPAs) to host physical addresses (PAs):
//!
//! - [`Stage2Config`] derives the IPA size, start level, concatenated root tables and the
//!   `VTCR_EL2` value from `ID_AA64MMFR0_EL1.PARange`, a configured IPA limit and
//!   `ID_AA64MMFR1_EL1.VMIDBits`.
//! - [`Stage2Table`] maps, unmaps, re-protects and translates IPA ranges, using 2 MiB and 1 GiB
//!   blocks when alignment allows, splitting live blocks with break-before-make, and freeing
//!   intermediate tables that became empty. All four operations share one walker.
//! - [`VmidAllocator`] hands out VMIDs with generation rollover in the style of Linux's arm64
//!   ASID/VMID allocator.
//!
//! The host supplies table memory through [`TableAllocator`] and TLB maintenance through
//! [`TlbMaintenance`]; on AArch64 the `hw` module (only built for `target_arch = "aarch64"`)
//! provides the real TLB maintenance with `TLBI` instructions.
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
