//! `reset_once` on the kernel command line (the device tree's `bootargs`): the first boot
//! leaves a marker in RAM the hypervisor does not reload (not the image, initrd or device
//! tree) and calls PSCI `SYSTEM_RESET`; a VM the hypervisor restarts (`vm_reset=restart`)
//! boots again, finds the marker, clears it and goes on with the checks. Shows that a
//! restart re-enters the guest as the boot protocol says — in hardware AArch32 and, under
//! the DBT, through a fresh runtime.

use core::ptr::{read_volatile, write_volatile};

use crate::rt::{hvc, PSCI_SYSTEM_RESET};
use crate::uart::puts;

/// Where the marker lives: 112 MiB into RAM, below the device tree, above the image.
const MARK: u32 = 0x4700_0000;
/// The marker's value.
const MAGIC: u32 = 0x5245_5345; // "RESE"

/// Whether the device tree at `dtb` (header checked by the caller) holds `what`.
pub fn dtb_mentions(dtb: u32, what: &[u8]) -> bool {
    // SAFETY: `totalsize` (big-endian) of the device tree the boot protocol passed, in RAM.
    let size = u32::from_be(unsafe { read_volatile((dtb + 4) as *const u32) }).min(1 << 20);
    // SAFETY: the tree's bytes, in RAM (MMU off).
    let tree = unsafe { core::slice::from_raw_parts(dtb as *const u8, size as usize) };
    tree.windows(what.len()).any(|w| w == what)
}

/// With `reset_once`: resets the VM on the first boot, reports the second.
pub fn reset_once(dtb: u32) {
    if !dtb_mentions(dtb, b"reset_once") {
        return;
    }
    let mark = MARK as *mut u32;
    // SAFETY: a word of this guest's RAM that nothing else uses (MMU off).
    if unsafe { read_volatile(mark) } != MAGIC {
        // SAFETY: as above.
        unsafe { write_volatile(mark, MAGIC) };
        puts("armv7-hello: reset_once: first boot, SYSTEM_RESET\n");
        loop {
            hvc([PSCI_SYSTEM_RESET, 0, 0, 0]);
        }
    }
    // SAFETY: as above.
    unsafe { write_volatile(mark, 0) };
    puts("armv7-hello: reset_once: booted again after SYSTEM_RESET ok\n");
}
