//! The dynamic binary translator (seed 004, STAR, across ISAs): guest A32 code is translated
//! a block at a time into host code in a bounded code cache, found through a metadata
//! cache keyed by guest PC, instruction set, privilege and address space, and run with the
//! interpreter as the fallback for every instruction the back end does not translate.
//!
//! - [`frontend`]: block discovery (fetch, decode, classify), independent of the host.
//! - [`backend`]: the [`CodeGen`] trait between the front end and a code generator.
//! - [`contexts`]: the translation contexts' return stacks and target caches, and the
//!   address-space switch inside a block.
//! - [`copy`]: register-file copies between translated code and the system model.
//! - [`a64`]: the AArch64 code generator.
//! - [`engine`]: [`Dbt`], the dispatcher: metadata cache, code cache, block linking and
//!   unlinking, invalidation, and the interpreter fallback.
//! - [`exc_assume`]: what inline exception entries are translated for.
//! - [`fault_sites`]: translated loads and stores that took a guest Data Abort, for the
//!   host's fault handler to deliver the next one itself.
//! - [`fetch_aborts`]: guest pages whose fetch a valid entry refuses (Prefetch Aborts).
//! - [`state`]: the [`GuestState`] that translated code and the dispatcher share.
//! - [`host`]: [`CodeMemory`], the executable memory the host provides.
//! - [`sys_call`]: instructions that translated code runs in the system model through a
//!   call, without leaving the code cache.

pub mod a64;
pub mod backend;
pub mod contexts;
pub mod copy;
pub mod engine;
pub mod exc_assume;
pub mod fault_sites;
pub mod fetch_aborts;
pub mod frontend;
pub mod host;
pub mod state;
pub mod sys_call;

pub use a64::A64Gen;
pub use backend::CodeGen;
pub use engine::{Dbt, Stats};
pub use frontend::Key;
pub use host::CodeMemory;
pub use state::GuestState;
