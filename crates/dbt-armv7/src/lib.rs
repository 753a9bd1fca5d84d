#![doc = include_str!("../README.md")]
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod bus;
pub mod cp14;
pub mod cp15;
pub mod cpu;
pub mod decode;
pub mod exec;
pub mod mmu;
pub mod translate;

pub use bus::{Bus, BusFault, FlatRam};
pub use cpu::{Cpu, Exit, Mode};
pub use decode::{decode_a32, decode_thumb, Class, Info, Insn, Op};
