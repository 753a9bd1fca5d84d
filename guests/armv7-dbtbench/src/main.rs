//! ARMv7-A benchmark guest for the DBT inside a VM (issue 17's in-VM rows), built for
//! `armv7a-none-eabi`: kernels with the MMU off, then with it on (`mmu.rs`). Each kernel runs once to warm up (under the DBT: to be
//! translated) and is then timed with `CNTVCT` reads around a second run. Under QEMU
//! `-icount shift=0` a counter tick is 16 instructions of the whole machine, so the same
//! binary gives the guest's own instruction count under `qemu-system-arm -cpu cortex-a15`
//! and the host instructions it costs in a VM (translated code, runtime, hypervisor exits)
//! under the hypervisor. Prints `armv7-dbtbench: <kernel> <ticks>` lines, then `done`, and
//! powers off with PSCI `SYSTEM_OFF` over `HVC`.

#![cfg_attr(target_arch = "arm", no_std, no_main)]

#[cfg(not(target_arch = "arm"))]
fn main() {
    eprintln!("armv7-dbtbench runs on armv7a-none-eabi (cargo xtask qemu --guest armv7-dbtbench)");
}

#[cfg(target_arch = "arm")]
mod aborts;
#[cfg(target_arch = "arm")]
mod kernels;
#[cfg(target_arch = "arm")]
mod mmu;
#[cfg(target_arch = "arm")]
mod part1;
#[cfg(target_arch = "arm")]
mod rt;
#[cfg(target_arch = "arm")]
mod syscall;
#[cfg(target_arch = "arm")]
mod uart;
