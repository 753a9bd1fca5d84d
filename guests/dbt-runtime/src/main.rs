//! The ARMv7-A VM runtime (issue 17): an AArch64 program that the hypervisor loads as the
//! EL1 "kernel" of a VM whose ARMv7-A guest runs under `dbt-armv7`'s translator — on CPUs
//! whose EL1 cannot execute AArch32 (QEMU `a64fx`, ThunderX) or with `dbt = "force"`.
//!
//! The translator and the translated code run inside the VM (EL1, the VM's own Stage-2),
//! never at EL2: a translator bug or a hostile guest reaches only this VM's memory.
//!
//! Entry (from the hypervisor, `crates/hypervisor/src/arch/vm.rs`), on every vCPU: AArch64
//! EL1h, MMU off, interrupts masked, `x0` = the guest's device tree (IPA; the boot vCPU) or
//! its PSCI `CPU_ON` context id, `x1` = the guest's entry, `x2`/`x3` = base and size of this
//! runtime's region (IPA `0x10_0000_0000`, outside the guest's 32-bit physical space),
//! `x4` = the vCPU's index, `x5` = boot or `CPU_ON` (`entry.rs`, `smp.rs`). See `README.md`
//! for the memory map and the isolation argument.

#![cfg_attr(all(target_arch = "aarch64", target_os = "none"), no_std, no_main)]

#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
fn main() {
    eprintln!("dbt-runtime runs inside a VM (aarch64-unknown-none); the hypervisor loads it");
}

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
extern crate alloc;

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod bus;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod calls;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod code;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod console;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod coproc;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod entry;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod frame_asm;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod irq;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod mmu;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod run;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod sgi_count;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod smp;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
mod vectors;
