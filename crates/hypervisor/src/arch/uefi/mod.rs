//! The EFI entry: the image's PE/COFF header (in `arch/boot.rs`) names `hv_efi_entry` as
//! the entry point, so UEFI firmware (EFI shell, a boot entry, GRUB's `chainloader`) can
//! start the same image that boot loaders start through the arm64 Image header. The entry
//! relocates the image for where the firmware loaded it, refuses to go on below EL2, takes
//! the configuration tables (device tree, ACPI), reads the VM package and the command line
//! from the volume it was loaded from ([`files`]), reads the ACPI tables while the
//! firmware's identity map is on, leaves boot services with the memory map ([`exit`]) and
//! enters `_start` with the MMU off, as the arm64 boot protocol wants.

pub mod console;
pub mod exit;
pub mod files;

use core::ptr::addr_of_mut;

use uefi_raw::table::system::SystemTable;
use uefi_raw::{guid, Guid, Handle, Status};

use crate::firmware::acpi;
use crate::firmware::handoff::{Handoff, HANDOFF_MAGIC};
use console::EfiConsole;

/// `EFI_DTB_TABLE_GUID`: the flattened device tree.
const DTB_GUID: Guid = guid!("b1b621d5-f19c-41a5-830b-d9152c69aae0");
/// `EFI_ACPI_20_TABLE_GUID`: the ACPI 2.0+ RSDP.
const ACPI2_GUID: Guid = guid!("8868e871-e4f1-11d3-bc22-0080c73c8881");

/// Where the VM package is on the boot volume (xtask's `uefi::PACKAGE_FILE`).
pub const PACKAGE_PATH: &str = "\\hypervisor\\vms.pkg";
/// Where the command line is (xtask's `uefi::CMDLINE_FILE`); optional.
pub const CMDLINE_PATH: &str = "\\hypervisor\\cmdline.txt";

// In .data, not .bss: `_start` clears .bss after the EFI entry has filled this.
#[link_section = ".data.hv_efi_handoff"]
static mut HANDOFF: Handoff = Handoff::EMPTY;

core::arch::global_asm!(
    r#"
.section .text.boot, "ax"
.global hv_efi_entry
hv_efi_entry:
    stp     x29, x30, [sp, #-32]!
    mov     x29, sp
    stp     x0, x1, [sp, #16]       // image handle, system table
    bl      hv_relocate             // clobbers x1-x7 only
    ldp     x0, x1, [sp, #16]
    bl      hv_efi_main             // returns only on failure, with an EFI status
    ldp     x29, x30, [sp], #32
    ret
"#
);

/// The record the EFI entry filled, if the image was started by UEFI firmware.
pub fn handoff() -> Option<&'static Handoff> {
    // SAFETY: written only by `hv_efi_main` before `_start`; read-only afterwards.
    let h = unsafe { &*core::ptr::addr_of!(HANDOFF) };
    h.is_filled().then_some(h)
}

fn current_el() -> u64 {
    let el: u64;
    // SAFETY: reading CurrentEL has no side effects.
    unsafe { core::arch::asm!("mrs {}, CurrentEL", out(reg) el, options(nomem, nostack)) };
    (el >> 2) & 3
}

fn counter() -> u64 {
    let c: u64;
    // SAFETY: reading CNTPCT_EL0 has no side effects (EL2 always has access).
    unsafe { core::arch::asm!("isb", "mrs {}, cntpct_el0", out(reg) c, options(nomem, nostack)) };
    c
}

/// Rust side of the EFI entry (after relocation).
///
/// # Safety
/// Called once by `hv_efi_entry` with the firmware's image handle and system table.
#[no_mangle]
unsafe extern "efiapi" fn hv_efi_main(image: Handle, st: *const SystemTable) -> Status {
    let entry_counter = counter();
    // SAFETY: the firmware passes a valid system table.
    let st = unsafe { &*st };
    let con = EfiConsole::new(st.stdout);
    con.print("hypervisor: started by UEFI firmware\n");
    if current_el() != 2 {
        con.print(
            "hypervisor: entered at EL1, but it needs EL2: the firmware must start EFI \
             applications at EL2 (virtualization extensions enabled; QEMU: -M \
             virt,virtualization=on). Refusing to start.\n",
        );
        return Status::UNSUPPORTED;
    }
    // SAFETY: nothing else runs yet; this is the only writer of HANDOFF.
    let h = unsafe { &mut *addr_of_mut!(HANDOFF) };
    *h = Handoff::EMPTY;
    h.entry_counter = entry_counter;
    for i in 0..st.number_of_configuration_table_entries {
        // SAFETY: the system table's array has that many entries.
        let t = unsafe { &*st.configuration_table.add(i) };
        if t.vendor_guid == DTB_GUID {
            h.dtb = t.vendor_table as u64;
        } else if t.vendor_guid == ACPI2_GUID {
            h.rsdp = t.vendor_table as u64;
        }
    }
    // SAFETY: boot services are up.
    let bs = unsafe { &*st.boot_services };
    // The VM package: the file on the boot volume, else an initrd a loader offers (GRUB's
    // `initrd` on EFI, through LoadFile2).
    // SAFETY: as above; `image` is our handle.
    let package = unsafe { files::read_file(bs, image, PACKAGE_PATH) };
    match package {
        Ok(r) => h.package = r,
        Err(e) => {
            // SAFETY: as above.
            match unsafe { files::read_initrd_media(bs) } {
                Ok(r) => {
                    con.print("hypervisor: VM package from the loader's initrd (LoadFile2)\n");
                    h.package = r;
                }
                // GRUB's arm64 `linux` loader (2.06) puts the initrd in the device tree's
                // /chosen instead: taken there after boot services.
                Err(_) if h.dtb != 0 => {}
                Err(_) => {
                    con.print("hypervisor: no VM package: neither \\hypervisor\\vms.pkg on the boot volume (");
                    con.print(files::describe(e));
                    con.print(") nor an initrd from the loader (LoadFile2)\n");
                    return e;
                }
            }
        }
    }
    // The command line: the load options (EFI shell arguments, a boot entry's optional
    // data, GRUB chainloader arguments) if they hold one, else hypervisor/cmdline.txt.
    // SAFETY: as above.
    let options = unsafe { files::load_options(bs, image) };
    if !h.set_cmdline_from_load_options(options) {
        // SAFETY: as above.
        if let Ok(r) = unsafe { files::read_file(bs, image, CMDLINE_PATH) } {
            // SAFETY: read_file returns a buffer of that size it allocated and filled.
            let text = unsafe { core::slice::from_raw_parts(r.base as *const u8, r.size as usize) };
            h.set_cmdline(text);
        }
    }
    // Read even when there is a device tree: a loader may install a stub one (GRUB puts
    // only /chosen in it on ACPI machines), and then ACPI describes the machine.
    if h.rsdp != 0 {
        let mut info = crate::platform::PlatformInfo::empty();
        // SAFETY: the RSDP came from the firmware's configuration table; the firmware's
        // identity map covers the tables.
        match unsafe { acpi::read(h.rsdp, &mut info) } {
            Ok(summary) => h.acpi = Some((info, summary)),
            Err(p) => h.acpi_problem = Some(p),
        }
    }
    if h.dtb == 0 && h.acpi.is_none() {
        con.print("hypervisor: the firmware gave neither a device tree nor usable ACPI tables\n");
        return Status::UNSUPPORTED;
    }
    con.print("hypervisor: leaving boot services\n");
    // SAFETY: boot services are up; after this call only the hypervisor runs.
    if let Err(e) = unsafe { exit::exit_boot_services(bs, image, h) } {
        con.print("hypervisor: ExitBootServices failed\n");
        return e;
    }
    h.magic = HANDOFF_MAGIC;
    // SAFETY: boot services are gone; the image, the handoff record and the device tree are
    // cleaned to the point of coherency before the MMU goes off.
    unsafe { exit::enter_start(h.dtb) }
}
