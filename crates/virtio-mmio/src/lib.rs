//! The device side of virtio-mmio version 2 (VIRTIO 1.x) for a bare-metal hypervisor.
//!
//! - [`VirtioMmio`] is one device's register window: the host forwards trapped guest MMIO
//!   accesses to [`VirtioMmio::read`] / [`VirtioMmio::write`]. It implements feature
//!   negotiation (VIRTIO_F_VERSION_1 required; EVENT_IDX and INDIRECT_DESC offered), the
//!   status state machine with reset, queue set-up, notifications, interrupt status and the
//!   device configuration space.
//! - [`queue`] holds split virtqueues, read and written only through the host's
//!   [`GuestMemory`]; every descriptor chain is validated before a device sees it, and a
//!   malformed one sets `DEVICE_NEEDS_RESET` instead of touching anything.
//! - [`devices`] are the device models (console, block, net, entropy) behind
//!   [`VirtioDevice`]; [`switch`] is a learning switch between VMs' net devices.
//!
//! The host implements [`GuestMemory`], [`InterruptLine`] and the device backends
//! ([`ConsoleOutput`](devices::console::ConsoleOutput),
//! [`BlockBackend`](devices::block::BlockBackend), [`NetBackend`](devices::net::NetBackend),
//! [`EntropySource`](devices::rng::EntropySource)). The crate depends on no other part of the
//! hypervisor.
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

pub mod device;
pub mod devices;
mod error;
pub mod features;
mod mem;
pub mod queue;
pub mod regs;
pub mod switch;
mod transport;

pub use device::VirtioDevice;
pub use error::{MemError, QueueError, VirtioError};
pub use mem::{GuestMemory, InterruptLine, NoInterrupt, VecMemory};
pub use transport::VirtioMmio;
