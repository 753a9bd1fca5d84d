//! A hostile ARMv7-A guest for the hypervisor's hardware AArch32 EL1 (`HCR_EL2.RW` = 0),
//! built for `armv7a-none-eabi`: reads every CP15 `MRC`/`MRRC` encoding (generated at run
//! time), calls `HVC`/`SMC` with pseudo-random function IDs and arguments, and loads (and,
//! above its RAM, stores) across the whole 32-bit IPA space from A32 and T32, including
//! forms without a syndrome; then turns its MMU on with page tables pointing anywhere
//! (`mmu_storm.rs`). Whatever comes back (a value, `NOT_SUPPORTED`, an UNDEFINED
//! exception, an external abort), it counts and goes on. Last, a seeded storm of random
//! `MCR`/`MRC`/`MCRR`/`MRRC` to CP15 and CP14 (`seed=N` on the command line; see the
//! README for the writes it leaves out) at PL1, then at PL0 (User mode) with fixed probes
//! of what PL0 may and may not reach. It prints the counts and
//! `armv7-hostile: PASS` and ends with PSCI `SYSTEM_OFF`: the hypervisor kept running.

#![cfg_attr(target_arch = "arm", no_std, no_main)]

#[cfg(not(target_arch = "arm"))]
fn main() {
    eprintln!("armv7-hostile runs on armv7a-none-eabi under the hypervisor (cargo xtask qemu --guest armv7-hostile)");
}

#[cfg(target_arch = "arm")]
mod cp14_sweep;
#[cfg(target_arch = "arm")]
mod mmu_storm;
#[cfg(target_arch = "arm")]
mod probes;
#[cfg(target_arch = "arm")]
mod rt;
#[cfg(target_arch = "arm")]
mod seed;
#[cfg(target_arch = "arm")]
mod storm;
#[cfg(target_arch = "arm")]
mod storm_pl0;
#[cfg(target_arch = "arm")]
mod storm_report;
#[cfg(target_arch = "arm")]
mod uart;
