//! ARMv7-A translation core for the DBT fallback (seed 004, STAR): an A32/T32 decoder with
//! a sensitive-instruction classifier, and an interpreter with an ARMv7-A system model
//! (modes, banked registers, exceptions, CP15, short-descriptor and LPAE MMU with a
//! software TLB). Memory and devices are reached through [`Bus`]; the crate is `no_std`
//! with `alloc`, so the same core runs in host tests and inside the hypervisor.
//!
//! ```
//! use dbt_armv7::{Cpu, FlatRam, Exit};
//! // mov r0, #42 ; svc #0
//! let mut ram = FlatRam::new(0, 0x1000);
//! ram.load(0, &[0xe3a0002a_u32.to_le_bytes(), 0xef000000_u32.to_le_bytes()].concat());
//! let mut cpu = Cpu::new();
//! cpu.set_pc(0);
//! cpu.set_exit_on_svc(true);
//! let exit = cpu.run(&mut ram, 100);
//! assert_eq!(exit, Exit::Svc(0));
//! assert_eq!(cpu.reg(0), 42);
//! ```
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod bus;
pub mod cp15;
pub mod cpu;
pub mod decode;
pub mod exec;
pub mod mmu;

pub use bus::{Bus, BusFault, FlatRam};
pub use cpu::{Cpu, Exit, Mode};
pub use decode::{decode_a32, decode_thumb, Class, Info, Insn, Op};
