//! AArch64-only parts: boot, EL2 MMU, console, allocators, VM creation and the run loop.

#[macro_use]
pub mod log;
pub mod boot;
pub mod console;
pub mod cpu;
pub mod fatal;
pub mod frames;
pub mod heap;
pub mod mmu;
pub mod power;
pub mod run;
pub mod start;
pub mod stats;
pub mod sysregs;
pub mod vm;
