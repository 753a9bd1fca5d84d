//! The ARMv7-A VM runtime (`guests/dbt-runtime`): the AArch64 EL1 program that runs an
//! ARMv7-A guest through `dbt-armv7`'s translator inside the guest's own VM (issue 17).
//! `cargo xtask build` builds it first and hands its flat binary to this crate's build
//! script (`HV_DBT_RUNTIME`); a build without it (host tests, `cargo clippy`) embeds
//! nothing and refuses ARMv7-A VMs that need the DBT, with the reason.
//!
//! Where it lives in a DBT VM: its own RAM, [`REGION_SIZE`] bytes at IPA [`REGION_IPA`]
//! (64 GiB): outside the guest's 32-bit physical space, so the guest cannot address it, and
//! beyond what translated code can form (a zero-extended 32-bit register plus an immediate
//! or a second such register shifted by at most 2: below 21 GiB). The
//! guest kernel and device tree are where the ARM boot protocol puts them, as for a
//! hardware AArch32 guest. Every vCPU starts at the region's first byte at AArch64 EL1h
//! with the registers [`boot_args`] (vCPU 0 at boot and at a restart) or
//! [`cpu_on_args`] (a vCPU the guest started with PSCI `CPU_ON`) give it.

/// The runtime's flat binary (empty when this build has none).
pub const IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dbt-runtime.bin"));

/// IPA of the runtime's region (its link address: `guests/dbt-runtime/link.ld`).
pub const REGION_IPA: u64 = 0x10_0000_0000;
/// Size of the runtime's region: image, stack, heap (engine tables), code cache (16 MiB).
pub const REGION_SIZE: u64 = 64 << 20;

/// Whether this build embeds the runtime.
pub const AVAILABLE: bool = !IMAGE.is_empty();

/// Most vCPUs of a DBT VM: the runtime has a stack and a share of the code cache for each
/// (`guests/dbt-runtime/link.ld` `MAX_VCPUS`).
pub const MAX_VCPUS: u32 = 8;

/// `x5` of a vCPU the runtime boots: the guest's boot (ARM boot protocol, `x0` = DTB).
pub const START_BOOT: u64 = 0;
/// `x5` of a vCPU the guest started with PSCI `CPU_ON` (`x0` = its context id).
pub const START_CPU_ON: u64 = 1;

/// The boot registers `x0`-`x5` of vCPU 0 of a DBT VM whose guest is entered at `entry`
/// with its device tree at `dtb`: `x0` = `dtb`, `x1` = `entry`, `x2`/`x3` = the region,
/// `x4` = the vCPU's index, `x5` = [`START_BOOT`].
pub fn boot_args(entry: u64, dtb: u64) -> [u64; 6] {
    [dtb, entry, REGION_IPA, REGION_SIZE, 0, START_BOOT]
}

/// The registers `x0`-`x5` of vCPU `index` of a DBT VM that PSCI `CPU_ON` started at guest
/// `entry` with `context_id`: `x0` = `context_id`, `x1` = `entry`, `x2`/`x3` = the region,
/// `x4` = `index`, `x5` = [`START_CPU_ON`].
pub fn cpu_on_args(index: usize, entry: u64, context_id: u64) -> [u64; 6] {
    [
        context_id,
        entry,
        REGION_IPA,
        REGION_SIZE,
        index as u64,
        START_CPU_ON,
    ]
}

// The region lies outside the guest's 32-bit space and beyond what translated code can
// address: at most [xn, xm, LSL #2] with 32-bit xn, xm, i.e. below 21 GiB.
const _: () = assert!(REGION_IPA >= 1 << 32 && REGION_IPA >= 21 << 30);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_fits_the_image_and_boot_args_carry_the_entry() {
        assert!((IMAGE.len() as u64) < REGION_SIZE / 4);
        assert_eq!(boot_args(0x4001_0000, 0x47e0_0000)[1], 0x4001_0000);
        assert_eq!(boot_args(0x4001_0000, 0x47e0_0000)[4..], [0, START_BOOT]);
    }

    #[test]
    fn cpu_on_args_name_the_vcpu_entry_and_context() {
        let a = cpu_on_args(3, 0x4000_8001, 0xdead_beef);
        assert_eq!(
            a,
            [
                0xdead_beef,
                0x4000_8001,
                REGION_IPA,
                REGION_SIZE,
                3,
                START_CPU_ON
            ]
        );
    }
}
