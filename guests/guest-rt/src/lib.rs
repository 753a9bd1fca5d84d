//! Minimal runtime for bare-metal AArch64 EL1 test guests.
//!
//! A guest binary links this crate, names its entry point with [`entry!`] and gets:
//! - an arm64 Linux `Image` header and entry code ([`entry`]): stack, `.bss`, `VBAR_EL1`,
//!   `CPACR_EL1.FPEN`, then the guest's `main(dtb)`;
//! - a PL011 console at 0x0900_0000 with [`print!`] / [`println!`] ([`console`]);
//! - SMCCC calls over HVC or SMC ([`smccc`]) and PSCI helpers on top ([`psci`]);
//! - EL1 exception vectors ([`exception`]) that either record an *expected* synchronous
//!   fault for the guest to inspect ([`fault`]) or report an unexpected one and reset;
//! - a panic handler that prints the panic and requests PSCI `SYSTEM_RESET`;
//! - for SMP/interrupt/timer guests: an optional identity-mapped MMU ([`mmu`]), secondary CPU
//!   start-up ([`smp`]), the device-tree facts ([`platform`]), a GICv2/v3 driver ([`gic`]),
//!   IRQ dispatch ([`irq`]) and generic-timer helpers ([`timer`]);
//! - for benchmarks: the hypervisor's per-vCPU exit counters ([`exit_count`]) and an
//!   ISB-fenced counter read ([`timer::stamp`]);
//! - the virtio-mmio register offsets for guests that drive a device by hand
//!   ([`virtio_mmio`]).
//!
//! The MMU stays off unless the guest calls [`mmu::enable`]: then every data access is to
//! Device-nGnRnE memory, so the target's `+strict-align` matters, and the runtime itself
//! uses no exclusives (atomics only as plain loads and stores) on any path a guest without
//! the MMU can reach. Guests that share data between CPUs enable the MMU first.
#![no_std]
#![warn(missing_docs)]

mod cache;
pub mod console;
pub mod entry;
pub mod exception;
pub mod exit_count;
pub mod fault;
pub mod gic;
pub mod irq;
pub mod mmu;
mod panic;
pub mod platform;
pub mod probe;
pub mod psci;
pub mod report;
pub mod smccc;
pub mod smp;
pub mod timer;
pub mod virtio_mmio;
mod volatile_cell;

pub use fault::Fault;
