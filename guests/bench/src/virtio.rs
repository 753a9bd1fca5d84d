//! `virtio-notify`: a `QueueNotify` write (queue 0) to the first virtio-mmio transport of the
//! device tree that has a device behind it. The device is not set up (status 0), so the
//! notify is a full trip to the device model that finds nothing to do: the cost of reaching
//! the virtio emulation, not of processing a request.

use crate::{measure, say};
use fdt::Fdt;

/// `MagicValue` ("virt").
const MAGIC: u32 = 0x7472_6976;
/// Register offsets.
const REG_MAGIC: usize = 0x000;
const REG_DEVICE_ID: usize = 0x008;
const REG_QUEUE_NOTIFY: usize = 0x050;

fn read32(addr: usize) -> u32 {
    // SAFETY: `addr` is a register of a virtio-mmio window the device tree lists.
    unsafe { core::ptr::read_volatile(addr as *const u32) }
}

/// Base of the first virtio-mmio transport with a device (DeviceID != 0).
fn find(dtb: usize) -> Option<(usize, u32)> {
    // SAFETY: x0 at entry is the device tree's address; the FDT header bounds the reads.
    let fdt: Fdt<'static> = unsafe { Fdt::from_ptr(dtb as *const u8) }.ok()?;
    let mut best: Option<(usize, u32)> = None;
    for node in fdt.all_nodes() {
        if !node
            .compatible()
            .is_some_and(|c| c.all().any(|c| c == "virtio,mmio"))
        {
            continue;
        }
        let Some(base) = node
            .reg()
            .and_then(|mut r| r.next())
            .map(|r| r.starting_address as usize)
        else {
            continue;
        };
        if read32(base + REG_MAGIC) != MAGIC {
            continue;
        }
        let id = read32(base + REG_DEVICE_ID);
        // Lowest address first, so the choice does not depend on the DTB's node order.
        if id != 0 && best.is_none_or(|(b, _)| base < b) {
            best = Some((base, id));
        }
    }
    best
}

/// Times the notify write, or prints `n/a` without a device.
pub fn run(dtb: usize, n: u64, freq: u64) {
    let Some((base, id)) = find(dtb) else {
        say!("virtio-notify n/a (no virtio-mmio device)");
        return;
    };
    say!("virtio device {id} at {base:#x}");
    measure::run("virtio-notify", n, freq, || {
        // SAFETY: QueueNotify of an unconfigured device is ignored by the device.
        unsafe { core::ptr::write_volatile((base + REG_QUEUE_NOTIFY) as *mut u32, 0) };
    });
}
