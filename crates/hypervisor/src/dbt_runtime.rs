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
//! hardware AArch32 guest. The vCPU starts at the region's first byte at AArch64 EL1h with
//! `x0` = device tree, `x1` = guest entry, `x2`/`x3` = the region.

/// The runtime's flat binary (empty when this build has none).
pub const IMAGE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/dbt-runtime.bin"));

/// IPA of the runtime's region (its link address: `guests/dbt-runtime/link.ld`).
pub const REGION_IPA: u64 = 0x10_0000_0000;
/// Size of the runtime's region: image, stack, heap (engine tables), code cache (16 MiB).
pub const REGION_SIZE: u64 = 64 << 20;

/// Whether this build embeds the runtime.
pub const AVAILABLE: bool = !IMAGE.is_empty();

/// The boot registers `x0`-`x3` of a DBT vCPU for a guest entered at `entry` with its
/// device tree at `dtb`.
pub fn boot_args(entry: u64, dtb: u64) -> [u64; 4] {
    [dtb, entry, REGION_IPA, REGION_SIZE]
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
    }
}
