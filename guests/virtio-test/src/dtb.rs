//! Finding the virtio-mmio transports in the device tree.

use fdt::Fdt;

/// One `virtio,mmio` node.
#[derive(Clone, Copy, Debug)]
pub struct VirtioNode {
    /// Base address of the register window.
    pub base: usize,
    /// Size of the window.
    pub size: usize,
    /// The interrupt as the node gives it: (type, number) of a GIC `interrupts` triple
    /// (type 0 = SPI, so the INTID is number + 32), if present.
    pub irq: Option<(u32, u32)>,
}

/// The most transports looked at (QEMU `virt` has 32).
pub const MAX_NODES: usize = 64;

/// Parses the device tree at `dtb`. Returns the bootargs and the virtio-mmio nodes.
pub fn scan(dtb: usize) -> Option<(&'static str, [Option<VirtioNode>; MAX_NODES])> {
    // SAFETY: x0 at entry is the device tree's physical address per the boot protocol; with
    // the MMU off it is directly addressable, and the FDT header bounds the parser's reads.
    let fdt: Fdt<'static> = unsafe { Fdt::from_ptr(dtb as *const u8) }.ok()?;
    let bootargs = fdt.chosen().bootargs().unwrap_or("");
    let mut nodes = [None; MAX_NODES];
    let mut n = 0;
    for node in fdt.all_nodes() {
        let Some(compatible) = node.compatible() else {
            continue;
        };
        if !compatible.all().any(|c| c == "virtio,mmio") {
            continue;
        }
        let Some(region) = node.reg().and_then(|mut r| r.next()) else {
            continue;
        };
        let irq = node.property("interrupts").and_then(|p| {
            let v = p.value;
            (v.len() >= 8).then(|| {
                (
                    u32::from_be_bytes([v[0], v[1], v[2], v[3]]),
                    u32::from_be_bytes([v[4], v[5], v[6], v[7]]),
                )
            })
        });
        if n < MAX_NODES {
            nodes[n] = Some(VirtioNode {
                base: region.starting_address as usize,
                size: region.size.unwrap_or(0x200),
                irq,
            });
            n += 1;
        }
    }
    Some((bootargs, nodes))
}
