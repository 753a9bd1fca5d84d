//! Minimal runtime for bare-metal AArch64 EL1 test guests.
//!
//! A guest binary links this crate, names its entry point with [`entry!`] and gets:
//! - an arm64 Linux `Image` header and entry code ([`entry`]): stack, `.bss`, `VBAR_EL1`,
//!   `CPACR_EL1.FPEN`, then the guest's `main(dtb)`;
//! - a PL011 console at 0x0900_0000 with [`print!`] / [`println!`] ([`console`]);
//! - SMCCC calls over HVC or SMC ([`smccc`]) and PSCI helpers on top ([`psci`]);
//! - EL1 exception vectors ([`exception`]) that either record an *expected* synchronous
//!   fault for the guest to inspect ([`fault`]) or report an unexpected one and reset;
//! - a panic handler that prints the panic and requests PSCI `SYSTEM_RESET`.
//!
//! The MMU stays off: every data access is to Device-nGnRnE memory, so the target's
//! `+strict-align` matters and neither atomics nor exclusives are used anywhere.
#![no_std]
#![warn(missing_docs)]

pub mod console;
pub mod entry;
pub mod exception;
pub mod fault;
mod panic;
pub mod psci;
pub mod smccc;
mod volatile_cell;

pub use fault::Fault;
