//! Which description of the machine the hypervisor goes by, with the MMU off: the device
//! tree in x0 (a boot loader's, or the UEFI firmware's), else the ACPI tables the EFI
//! entry read. Under UEFI, RAM is the firmware's memory map and the VM package and
//! command line come from the boot volume, whichever describes the rest.

use crate::firmware::acpi::AcpiSummary;
use crate::firmware::handoff::Handoff;
use crate::platform::{
    chosen_initrd as chosen_initrd_of, fdt_total_size, strip_fdt_nops, PlatformInfo,
};

/// Where the platform description came from (for the boot log).
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A device tree; `nops` FDT_NOP tokens were removed before reading it.
    DeviceTree {
        /// NOP tokens removed.
        nops: usize,
    },
    /// The ACPI tables (no device tree was given).
    Acpi(AcpiSummary),
}

/// The machine, from the device tree at `dtb_pa` (0: none) or `handoff`'s ACPI reading;
/// under UEFI the VM package is the one the EFI entry read, else the device tree's
/// `/chosen` initrd (GRUB's arm64 loader puts it there).
/// `None` when neither gives a usable description (no console to say so yet).
pub fn discover(
    dtb_pa: u64,
    handoff: Option<&'static Handoff>,
) -> Option<(PlatformInfo<'static>, Source)> {
    let acpi = handoff.and_then(|h| h.acpi.as_ref());
    let mut chosen_initrd = None;
    let mut from_dt = None;
    if dtb_pa != 0 {
        // SAFETY: the boot protocol (or the EFI entry) puts a device tree at x0; only its
        // 8-byte header is read before validation.
        let size = unsafe { fdt_total_size(dtb_pa as *const u8) }?;
        // SAFETY: the header says the blob is `size` bytes; it is the hypervisor's now (the
        // boot protocol hands it over; UEFI boot services are gone) and stays reserved
        // (cut out of the frame allocator). Removing NOP tokens is its only write.
        let blob: &'static mut [u8] =
            unsafe { core::slice::from_raw_parts_mut(dtb_pa as *mut u8, size) };
        let nops = strip_fdt_nops(blob).unwrap_or(0);
        let blob: &'static [u8] = blob;
        chosen_initrd = chosen_initrd_of(blob);
        from_dt = PlatformInfo::parse(blob, dtb_pa)
            .ok()
            .map(|info| (info, Source::DeviceTree { nops }));
    }
    // The device tree wins; ACPI when there is none or it does not describe the machine
    // (a loader's stub with only /chosen).
    let (mut info, source) = match (from_dt, acpi) {
        (Some(dt), _) => dt,
        (None, Some((info, summary))) => (info.clone(), Source::Acpi(*summary)),
        (None, None) => return None,
    };
    if let Some(h) = handoff {
        info.set_memory(h.ram());
        info.initrd = if h.package.size > 0 {
            Some(h.package)
        } else {
            chosen_initrd.or(info.initrd)
        };
        if !h.cmdline().is_empty() || info.bootargs.is_empty() {
            info.bootargs = h.cmdline();
        }
    }
    Some((info, source))
}
