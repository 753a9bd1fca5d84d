#![doc = include_str!("../README.md")]
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
