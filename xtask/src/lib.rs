//! The commands of `cargo xtask` as a library: the binary (`main.rs`) dispatches them, and
//! the fuzz targets (`fuzz/`) reach the parsers of user input (VM configuration files,
//! scenario files) through it.

pub mod bench;
pub mod bench_blk;
pub mod bench_dbt;
pub mod bench_dbt_vm;
pub mod bench_dbt_vm_profile;
pub mod bench_dbt_vm_split;
pub mod bench_linux;
pub mod bench_profile;
pub mod bench_smp;
pub mod build;
pub mod check;
pub mod cli;
pub mod config;
pub mod cpio;
pub mod dist;
pub mod error;
pub mod fuzz;
pub mod linux;
pub mod platform;
pub mod qemu;
pub mod scenarios;
pub mod setup;
pub mod test_cmd;
pub mod uefi;
