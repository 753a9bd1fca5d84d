//! AArch64-only parts: boot, EL2 MMU, console, allocators, VM creation and the run loop.

#[macro_use]
pub mod log;
pub mod below_el2;
pub mod boot;
pub mod cache;
pub mod console;
pub mod cpu;
pub mod cpu_loop;
pub mod cpuif_trap;
pub mod debug_regs;
pub mod dirty_log;
pub mod discover;
pub mod errata_boot;
pub mod fatal;
pub mod firmware_log;
pub mod frames;
pub mod gic;
pub mod heap;
pub mod host_virtio;
pub mod lrs;
pub mod mmu;
pub mod percpu;
pub mod power;
pub mod run;
pub mod sched;
pub mod smp;
pub mod start;
pub mod sysregs;
pub mod timer;
pub mod uefi;
pub mod vcpu_host;
pub mod vgic_glue;
pub mod virtio_glue;
pub mod vm;
pub mod vm_console;
