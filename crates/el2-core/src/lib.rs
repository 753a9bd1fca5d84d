#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), no_std)]

extern crate alloc;

pub mod aarch32;
pub mod exit;
pub mod inject;
pub mod mmio;
pub mod mmio_decode;
pub mod psci;
pub mod s1walk;
pub mod smccc;
pub mod switch;
pub mod sysreg;
pub mod vcpu;
