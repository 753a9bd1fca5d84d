//! What server firmware hands the hypervisor when it starts as an EFI application: the
//! hand-off record the EFI entry fills before ExitBootServices ([`handoff`]), the UEFI
//! memory map turned into RAM ranges ([`uefi_memmap`]) and the ACPI tables turned into the
//! same [`crate::platform::PlatformInfo`] a device tree gives ([`acpi`]). Plain Rust, tested
//! on the build host; the EFI calls themselves are in `arch/uefi/`.

pub mod acpi;
pub mod handoff;
pub mod uefi_memmap;
