//! ARMv7-A system test: exceptions from several modes, banked registers, user mode,
//! short-descriptor and LPAE page tables with translation/permission/domain/access-flag/
//! alignment faults. Prints `armv7-systest: <check> ok` lines and `armv7-systest: PASS`
//! on the PL011 at 0x0900_0000, then PSCI SYSTEM_OFF through HVC.
//!
//! The same raw binary runs under `qemu-system-arm -M virt -cpu cortex-a15 -kernel` and in
//! `dbt-armv7`'s interpreter (its `systest` host test).

#![cfg_attr(target_arch = "arm", no_std, no_main)]
#![allow(static_mut_refs)]

// On any other target (e.g. a host `cargo build --workspace`) this is an empty program.
#[cfg(not(target_arch = "arm"))]
fn main() {
    eprintln!("armv7-systest runs on armv7a-none-eabi (see crates/dbt-armv7/README.md)");
}

#[cfg(target_arch = "arm")]
mod identity_map;
#[cfg(target_arch = "arm")]
mod irq_latency;
#[cfg(target_arch = "arm")]
mod section_code;
#[cfg(target_arch = "arm")]
mod section_tlbi;
#[cfg(target_arch = "arm")]
mod smp;
#[cfg(target_arch = "arm")]
mod smp_mmu;
#[cfg(target_arch = "arm")]
mod switch_data;
#[cfg(target_arch = "arm")]
mod switch_mmu;
#[cfg(target_arch = "arm")]
mod systest;
#[cfg(target_arch = "arm")]
mod tlbi_data;
#[cfg(target_arch = "arm")]
mod uart;
#[cfg(target_arch = "arm")]
mod user_syscall;
#[cfg(target_arch = "arm")]
mod vfp_store_fill;
