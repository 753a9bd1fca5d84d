//! What the host machine is, read from its device tree with the `fdt` crate: RAM, CPUs,
//! the GIC, timer interrupts, the console UART, the PSCI conduit, the boot loader's
//! initrd (our VM package) and the command line. Platform facts live here as data, not in
//! `#[cfg]`s.

use fdt::Fdt;

mod fdt_check;

pub use fdt_check::strip_nops as strip_fdt_nops;

/// Largest number of RAM ranges recorded (a UEFI memory map, merged, can have dozens).
pub const MAX_MEM_RANGES: usize = 64;
/// Largest number of CPUs recorded.
pub const MAX_CPUS: usize = 256;

/// A physical address range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    /// First byte.
    pub base: u64,
    /// Length in bytes.
    pub size: u64,
}

impl Range {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }
}

/// The host interrupt controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostGic {
    /// GICv2 (e.g. GIC-400): distributor, CPU interface, virtual interface control (GICH)
    /// and virtual CPU interface (GICV).
    V2 {
        /// GICD.
        dist: Range,
        /// GICC.
        cpu: Range,
        /// GICH, if the virtualization extensions are described.
        hyp: Option<Range>,
        /// GICV, if described.
        vcpu: Option<Range>,
    },
    /// GICv3: distributor and redistributor region(s).
    V3 {
        /// GICD.
        dist: Range,
        /// First redistributor region.
        redist: Range,
    },
}

impl HostGic {
    /// 2 or 3.
    pub fn version(&self) -> u8 {
        match self {
            HostGic::V2 { .. } => 2,
            HostGic::V3 { .. } => 3,
        }
    }
}

/// The register interface of the console UART.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UartKind {
    /// Arm PL011 (or an SBSA generic UART, its subset).
    #[default]
    Pl011,
    /// A 16550-compatible UART, registers `1 << shift` bytes apart (`reg-shift`).
    Ns16550 {
        /// log2 of the register stride (0: byte registers, 2: 32-bit registers).
        shift: u8,
    },
}

/// Device tree `compatible`s of 16550-style UARTs the console drives.
const NS16550_COMPATIBLE: [&str; 3] = ["ns16550a", "ns16550", "snps,dw-apb-uart"];

/// How firmware PSCI calls are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsciConduit {
    /// `smc #0`.
    Smc,
    /// `hvc #0`.
    Hvc,
}

/// Everything the hypervisor needs to know about the host.
#[derive(Debug, Clone)]
pub struct PlatformInfo<'a> {
    /// RAM ranges (`/memory` nodes).
    pub mem: [Range; MAX_MEM_RANGES],
    /// Number of valid entries in `mem`.
    pub mem_count: usize,
    /// MPIDR affinity values of the CPUs (`/cpus/cpu@*/reg`).
    pub cpus: [u64; MAX_CPUS],
    /// Number of valid entries in `cpus`.
    pub cpu_count: usize,
    /// The console UART, from `stdout-path` or the first PL011 / 16550.
    pub uart: Option<Range>,
    /// The console UART's register interface.
    pub uart_kind: UartKind,
    /// The console UART's interrupt (INTID), if the device tree gives one.
    pub uart_intid: Option<u32>,
    /// The GIC.
    pub gic: Option<HostGic>,
    /// Timer PPIs (INTIDs) from `arm,armv8-timer`: secure, non-secure, virtual, hyp.
    pub timer_ppis: Option<[u32; 4]>,
    /// The PSCI conduit.
    pub psci: Option<PsciConduit>,
    /// The initrd the boot loader loaded (`linux,initrd-start/end`).
    pub initrd: Option<Range>,
    /// `/chosen/bootargs`.
    pub bootargs: &'a str,
    /// The machine is QEMU's `virt` board (`linux,dummy-virt`).
    pub is_qemu_virt: bool,
    /// The device tree blob itself (must stay reserved).
    pub dtb: Range,
    /// virtio-mmio windows (`virtio,mmio` nodes), for the hypervisor's own drivers.
    pub virtio: [Range; MAX_VIRTIO],
    /// Number of valid entries in `virtio`.
    pub virtio_count: usize,
    /// The interrupt (INTID) of each `virtio` window; 0 when the node gives none.
    pub virtio_intid: [u32; MAX_VIRTIO],
}

/// Largest number of host virtio-mmio windows recorded.
pub const MAX_VIRTIO: usize = 32;

/// Why the host device tree could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlatformError {
    /// Not a valid flattened device tree.
    BadDtb,
    /// No `/memory` node with a usable range.
    NoMemory,
}

fn range_of(node: &fdt::node::FdtNode<'_, '_>, index: usize) -> Option<Range> {
    let r = node.reg()?.nth(index)?;
    Some(Range {
        base: r.starting_address as u64,
        size: r.size.unwrap_or(0) as u64,
    })
}

/// `/chosen`'s `linux,initrd-start/end` of a device tree that may describe nothing else
/// (a loader's stub); `None` if there is none or the blob is not sound.
pub fn chosen_initrd(dtb: &[u8]) -> Option<Range> {
    if !fdt_check::is_walkable(dtb) {
        return None;
    }
    let fdt = Fdt::new(dtb).ok()?;
    let chosen = fdt.find_node("/chosen")?;
    let start = chosen.property("linux,initrd-start")?.as_usize()?;
    let end = chosen.property("linux,initrd-end")?.as_usize()?;
    (end > start).then(|| Range {
        base: start as u64,
        size: (end - start) as u64,
    })
}

/// The two 4 KiB pages of a GICv2 CPU interface (GICC, or the virtual one, GICV) as one
/// contiguous 8 KiB window. A GIC-400 wired on a 64 KiB-aligned bus (AMD Seattle:
/// `arm,gic-400` with 128 KiB GICC and GICV regions) decodes each page over a 64 KiB frame,
/// so the second page (GICC_DIR / GICV_DIR at offset 0x1000 architecturally) appears at
/// +0x10000; the alias of the first page at +0xf000 makes the pair contiguous again (what
/// Linux's `gic_check_eoimode` does). Other sizes are kept as they are.
pub fn gicv2_page_pair(r: Range) -> Range {
    const ALIASED: u64 = 0x2_0000;
    if r.size >= ALIASED && r.base.is_multiple_of(0x1_0000) {
        Range {
            base: r.base + 0xf000,
            size: 0x2000,
        }
    } else {
        r
    }
}

/// Converts a GIC `interrupts` specifier (type, number, flags) into an INTID.
fn intid(kind: u32, number: u32) -> u32 {
    // Saturating: a device tree's number can be anything.
    if kind == 1 {
        number.saturating_add(16) // PPI
    } else {
        number.saturating_add(32) // SPI
    }
}

impl<'a> PlatformInfo<'a> {
    /// A machine with nothing found yet (what ACPI discovery starts from).
    pub const fn empty() -> Self {
        PlatformInfo {
            mem: [Range { base: 0, size: 0 }; MAX_MEM_RANGES],
            mem_count: 0,
            cpus: [0; MAX_CPUS],
            cpu_count: 0,
            uart: None,
            uart_kind: UartKind::Pl011,
            uart_intid: None,
            gic: None,
            timer_ppis: None,
            psci: None,
            initrd: None,
            bootargs: "",
            is_qemu_virt: false,
            dtb: Range { base: 0, size: 0 },
            virtio: [Range { base: 0, size: 0 }; MAX_VIRTIO],
            virtio_count: 0,
            virtio_intid: [0; MAX_VIRTIO],
        }
    }

    /// Replaces the RAM ranges (e.g. by the UEFI memory map's), up to [`MAX_MEM_RANGES`].
    pub fn set_memory(&mut self, ram: &[Range]) {
        self.mem_count = ram.len().min(MAX_MEM_RANGES);
        self.mem[..self.mem_count].copy_from_slice(&ram[..self.mem_count]);
    }

    /// Parses the device tree blob `dtb` located at physical address `dtb_pa`.
    pub fn parse(dtb: &'a [u8], dtb_pa: u64) -> Result<Self, PlatformError> {
        // The `fdt` crate panics on a malformed structure block: check it first.
        if !fdt_check::is_walkable(dtb) {
            return Err(PlatformError::BadDtb);
        }
        let fdt = Fdt::new(dtb).map_err(|_| PlatformError::BadDtb)?;
        let mut info = PlatformInfo::empty();
        info.dtb = Range {
            base: dtb_pa,
            size: fdt.total_size() as u64,
        };
        for node in fdt.all_nodes() {
            if node.name == "memory" || node.name.starts_with("memory@") {
                if let Some(regs) = node.reg() {
                    for r in regs {
                        let size = r.size.unwrap_or(0) as u64;
                        if size > 0 && info.mem_count < MAX_MEM_RANGES {
                            info.mem[info.mem_count] = Range {
                                base: r.starting_address as u64,
                                size,
                            };
                            info.mem_count += 1;
                        }
                    }
                }
            }
        }
        if info.mem_count == 0 {
            return Err(PlatformError::NoMemory);
        }
        // Not `fdt.cpus()`/`cpu.ids()`: they panic without `/cpus`, without a `reg` or with
        // more than two address cells.
        let cpus = fdt.find_node("/cpus");
        let address_cells = cpus.map_or(0, |c| c.cell_sizes().address_cells);
        for cpu in cpus.iter().flat_map(|c| c.children()) {
            if cpu.name.split('@').next() != Some("cpu") {
                continue;
            }
            let id = cpu.property("reg").and_then(|r| match address_cells {
                1 => r
                    .value
                    .get(..4)
                    .map(|v| u64::from(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))),
                2 => r
                    .value
                    .get(..8)
                    .and_then(|v| v.try_into().ok())
                    .map(u64::from_be_bytes),
                _ => None,
            });
            if let (Some(id), true) = (id, info.cpu_count < MAX_CPUS) {
                info.cpus[info.cpu_count] = id;
                info.cpu_count += 1;
            }
        }
        info.is_qemu_virt = fdt
            .find_node("/")
            .and_then(|root| root.compatible())
            .is_some_and(|c| c.all().any(|c| c == "linux,dummy-virt"));
        let chosen = fdt.find_node("/chosen");
        if let Some(chosen) = chosen {
            info.bootargs = chosen
                .property("bootargs")
                .and_then(|p| p.as_str())
                .unwrap_or("");
            let start = chosen
                .property("linux,initrd-start")
                .and_then(|p| p.as_usize());
            let end = chosen
                .property("linux,initrd-end")
                .and_then(|p| p.as_usize());
            if let (Some(s), Some(e)) = (start, end) {
                if e > s {
                    info.initrd = Some(Range {
                        base: s as u64,
                        size: (e - s) as u64,
                    });
                }
            }
        }
        let stdout = chosen
            .and_then(|c| c.property("stdout-path"))
            .and_then(|p| p.as_str())
            .map(|s| s.split(':').next().unwrap_or(s))
            .and_then(|path| fdt.find_node(path))
            .filter(|n| {
                n.compatible().is_some_and(|c| {
                    c.all()
                        .any(|c| c == "arm,pl011" || NS16550_COMPATIBLE.contains(&c))
                })
            });
        let uart = stdout
            .or_else(|| fdt.find_compatible(&["arm,pl011"]))
            .or_else(|| fdt.find_compatible(&NS16550_COMPATIBLE));
        info.uart = uart.as_ref().and_then(|n| range_of(n, 0));
        if let Some(n) = uart.as_ref().filter(|n| {
            n.compatible()
                .is_some_and(|c| c.all().any(|c| NS16550_COMPATIBLE.contains(&c)))
        }) {
            let shift = n
                .property("reg-shift")
                .and_then(|p| p.as_usize())
                .filter(|&s| s <= 3)
                .unwrap_or(0) as u8;
            info.uart_kind = UartKind::Ns16550 { shift };
        }
        info.uart_intid = uart
            .as_ref()
            .and_then(|n| n.property("interrupts"))
            .map(|p| heapless_cells::Cells::from_be(p.value))
            .filter(|c| c.len >= 2)
            .map(|c| intid(c.v[0], c.v[1]));
        if let Some(gic) = fdt.find_compatible(&["arm,gic-v3"]) {
            if let (Some(dist), Some(redist)) = (range_of(&gic, 0), range_of(&gic, 1)) {
                info.gic = Some(HostGic::V3 { dist, redist });
            }
        } else if let Some(gic) =
            fdt.find_compatible(&["arm,gic-400", "arm,cortex-a15-gic", "arm,cortex-a9-gic"])
        {
            if let (Some(dist), Some(cpu)) = (range_of(&gic, 0), range_of(&gic, 1)) {
                info.gic = Some(HostGic::V2 {
                    dist,
                    cpu: gicv2_page_pair(cpu),
                    hyp: range_of(&gic, 2),
                    vcpu: range_of(&gic, 3).map(gicv2_page_pair),
                });
            }
        }
        if let Some(timer) = fdt.find_compatible(&["arm,armv8-timer", "arm,armv7-timer"]) {
            if let Some(p) = timer.property("interrupts") {
                let cells: heapless_cells::Cells = heapless_cells::Cells::from_be(p.value);
                if cells.len >= 12 {
                    let c = &cells.v;
                    info.timer_ppis = Some([
                        intid(c[0], c[1]),
                        intid(c[3], c[4]),
                        intid(c[6], c[7]),
                        intid(c[9], c[10]),
                    ]);
                }
            }
        }
        for node in fdt.all_nodes() {
            if node
                .compatible()
                .is_some_and(|c| c.all().any(|c| c == "virtio,mmio"))
            {
                if let Some(r) = range_of(&node, 0) {
                    if info.virtio_count < MAX_VIRTIO {
                        info.virtio_intid[info.virtio_count] = node
                            .property("interrupts")
                            .map(|p| heapless_cells::Cells::from_be(p.value))
                            .filter(|c| c.len >= 2)
                            .map_or(0, |c| intid(c.v[0], c.v[1]));
                        info.virtio[info.virtio_count] = r;
                        info.virtio_count += 1;
                    }
                }
            }
        }
        if let Some(psci) = fdt.find_compatible(&["arm,psci-1.0", "arm,psci-0.2", "arm,psci"]) {
            info.psci = match psci.property("method").and_then(|p| p.as_str()) {
                Some("smc") => Some(PsciConduit::Smc),
                Some("hvc") => Some(PsciConduit::Hvc),
                _ => None,
            };
        }
        Ok(info)
    }

    /// The RAM ranges.
    pub fn memory(&self) -> &[Range] {
        &self.mem[..self.mem_count]
    }

    /// The host's virtio-mmio windows.
    pub fn virtio_windows(&self) -> &[Range] {
        &self.virtio[..self.virtio_count]
    }

    /// The interrupts of [`Self::virtio_windows`], in the same order (0: none given).
    pub fn virtio_intids(&self) -> &[u32] {
        &self.virtio_intid[..self.virtio_count]
    }

    /// The CPUs' MPIDR values.
    pub fn cpu_mpidrs(&self) -> &[u64] {
        &self.cpus[..self.cpu_count]
    }
}

/// Fixed-capacity big-endian cell decoding (no allocation: this runs before the heap).
mod heapless_cells {
    /// Up to 16 big-endian 32-bit cells.
    pub struct Cells {
        pub v: [u32; 16],
        pub len: usize,
    }

    impl Cells {
        pub fn from_be(bytes: &[u8]) -> Self {
            let mut c = Cells { v: [0; 16], len: 0 };
            for chunk in bytes.chunks_exact(4).take(16) {
                c.v[c.len] = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                c.len += 1;
            }
            c
        }
    }
}

/// Reads the `totalsize` field of a flattened device tree header at `ptr` without trusting
/// anything else; returns `None` when the magic is wrong.
///
/// # Safety
/// `ptr` must be readable for 8 bytes.
pub unsafe fn fdt_total_size(ptr: *const u8) -> Option<usize> {
    // SAFETY: the caller guarantees 8 readable bytes at `ptr`.
    let head = unsafe { core::slice::from_raw_parts(ptr, 8) };
    let magic = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let size = u32::from_be_bytes([head[4], head[5], head[6], head[7]]) as usize;
    (magic == 0xd00d_feed && (64..=(64 << 20)).contains(&size)).then_some(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vm_fdt::FdtWriter;

    /// A device tree shaped like QEMU virt's (virtualization=on, GICv3, 2 CPUs).
    fn qemu_like(gic3: bool) -> Vec<u8> {
        let mut w = FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property_string_list("compatible", vec!["linux,dummy-virt".into()])
            .unwrap();
        w.property_u32("#address-cells", 2).unwrap();
        w.property_u32("#size-cells", 2).unwrap();
        let chosen = w.begin_node("chosen").unwrap();
        w.property_string("bootargs", "backend=nvhe exit=semihosting")
            .unwrap();
        w.property_string("stdout-path", "/pl011@9000000").unwrap();
        w.property_u64("linux,initrd-start", 0x4800_0000).unwrap();
        w.property_u64("linux,initrd-end", 0x4801_0000).unwrap();
        w.end_node(chosen).unwrap();
        let mem = w.begin_node("memory@40000000").unwrap();
        w.property_string("device_type", "memory").unwrap();
        w.property_array_u64("reg", &[0x4000_0000, 0x1800_0000])
            .unwrap();
        w.end_node(mem).unwrap();
        let cpus = w.begin_node("cpus").unwrap();
        w.property_u32("#address-cells", 1).unwrap();
        w.property_u32("#size-cells", 0).unwrap();
        for (i, mpidr) in [0u32, 0x100].iter().enumerate() {
            let c = w.begin_node(&format!("cpu@{i}")).unwrap();
            w.property_string("device_type", "cpu").unwrap();
            w.property_u32("reg", *mpidr).unwrap();
            w.end_node(c).unwrap();
        }
        w.end_node(cpus).unwrap();
        let uart = w.begin_node("pl011@9000000").unwrap();
        w.property_string_list(
            "compatible",
            vec!["arm,pl011".into(), "arm,primecell".into()],
        )
        .unwrap();
        w.property_array_u64("reg", &[0x900_0000, 0x1000]).unwrap();
        w.end_node(uart).unwrap();
        let gic = w.begin_node("intc@8000000").unwrap();
        if gic3 {
            w.property_string("compatible", "arm,gic-v3").unwrap();
            w.property_array_u64("reg", &[0x800_0000, 0x1_0000, 0x80a_0000, 0xf6_0000])
                .unwrap();
        } else {
            w.property_string("compatible", "arm,cortex-a15-gic")
                .unwrap();
            w.property_array_u64(
                "reg",
                &[
                    0x800_0000, 0x1_0000, 0x801_0000, 0x1_0000, 0x803_0000, 0x1_0000, 0x804_0000,
                    0x1_0000,
                ],
            )
            .unwrap();
        }
        w.end_node(gic).unwrap();
        let timer = w.begin_node("timer").unwrap();
        w.property_string("compatible", "arm,armv8-timer").unwrap();
        w.property_array_u32(
            "interrupts",
            &[1, 13, 0x104, 1, 14, 0x104, 1, 11, 0x104, 1, 10, 0x104],
        )
        .unwrap();
        w.end_node(timer).unwrap();
        let psci = w.begin_node("psci").unwrap();
        w.property_string_list(
            "compatible",
            vec!["arm,psci-1.0".into(), "arm,psci-0.2".into()],
        )
        .unwrap();
        w.property_string("method", "smc").unwrap();
        w.end_node(psci).unwrap();
        w.end_node(root).unwrap();
        w.finish().unwrap()
    }

    /// A GIC-400 with 128 KiB GICC/GICV regions, each page aliased over 64 KiB (the Seattle
    /// layout; the addresses are made up).
    fn seattle_gic() -> Vec<u8> {
        let mut w = vm_fdt::FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property_string("compatible", "amd,seattle").unwrap();
        w.property_u32("#address-cells", 2).unwrap();
        w.property_u32("#size-cells", 2).unwrap();
        let mem = w.begin_node("memory@8000000000").unwrap();
        w.property_string("device_type", "memory").unwrap();
        w.property_array_u64("reg", &[0x80_0000_0000, 0x4_0000_0000])
            .unwrap();
        w.end_node(mem).unwrap();
        let gic = w.begin_node("interrupt-controller@e1101000").unwrap();
        w.property_string("compatible", "arm,gic-400").unwrap();
        w.property_array_u64(
            "reg",
            &[
                0xe110_1000,
                0x1000,
                0xe112_f000,
                0x2_0000,
                0xe114_f000,
                0x2_0000,
                0xe116_0000,
                0x2_0000,
            ],
        )
        .unwrap();
        w.end_node(gic).unwrap();
        w.end_node(root).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn a_stub_tree_gives_only_its_initrd() {
        let mut w = vm_fdt::FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        let chosen = w.begin_node("chosen").unwrap();
        w.property_u64("linux,initrd-start", 0x1_2340_0000).unwrap();
        w.property_u64("linux,initrd-end", 0x1_2341_0000).unwrap();
        w.end_node(chosen).unwrap();
        w.end_node(root).unwrap();
        let stub = w.finish().unwrap();
        assert_eq!(
            PlatformInfo::parse(&stub, 0).err(),
            Some(PlatformError::NoMemory)
        );
        assert_eq!(
            chosen_initrd(&stub),
            Some(Range {
                base: 0x1_2340_0000,
                size: 0x1_0000
            })
        );
        let qemu = qemu_like(false);
        assert_eq!(
            chosen_initrd(&qemu),
            Some(Range {
                base: 0x4800_0000,
                size: 0x1_0000
            })
        );
        assert_eq!(chosen_initrd(b"garbage"), None);
    }

    #[test]
    fn a_16550_console_is_found_with_its_register_stride() {
        let mut w = vm_fdt::FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property_u32("#address-cells", 2).unwrap();
        w.property_u32("#size-cells", 2).unwrap();
        let mem = w.begin_node("memory@80000000").unwrap();
        w.property_string("device_type", "memory").unwrap();
        w.property_array_u64("reg", &[0x8000_0000, 0x1000_0000])
            .unwrap();
        w.end_node(mem).unwrap();
        let u = w.begin_node("serial@1c28000").unwrap();
        w.property_string_list("compatible", vec!["snps,dw-apb-uart".into()])
            .unwrap();
        w.property_array_u64("reg", &[0x1c2_8000, 0x400]).unwrap();
        w.property_u32("reg-shift", 2).unwrap();
        w.end_node(u).unwrap();
        w.end_node(root).unwrap();
        let dtb = w.finish().unwrap();
        let p = PlatformInfo::parse(&dtb, 0).unwrap();
        assert_eq!(
            p.uart,
            Some(Range {
                base: 0x1c2_8000,
                size: 0x400
            })
        );
        assert_eq!(p.uart_kind, UartKind::Ns16550 { shift: 2 });
        // QEMU's tree: a PL011.
        let qemu = qemu_like(true);
        let q = PlatformInfo::parse(&qemu, 0).unwrap();
        assert_eq!(q.uart_kind, UartKind::Pl011);
    }

    #[test]
    fn seattle_gic400_cpu_interfaces_are_made_contiguous() {
        let dtb = seattle_gic();
        let p = PlatformInfo::parse(&dtb, 0).unwrap();
        let Some(HostGic::V2 { cpu, vcpu, hyp, .. }) = p.gic else {
            panic!("{:?}", p.gic)
        };
        // A region that does not start on 64 KiB (a tree that already points at the alias)
        // is kept; a 64 KiB-aligned 128 KiB one moves to the 0xf000 alias.
        assert_eq!(
            cpu,
            Range {
                base: 0xe112_f000,
                size: 0x2_0000
            }
        );
        assert_eq!(
            vcpu,
            Some(Range {
                base: 0xe116_f000,
                size: 0x2000
            })
        );
        assert_eq!(
            hyp,
            Some(Range {
                base: 0xe114_f000,
                size: 0x2_0000
            })
        );
        assert_eq!(
            gicv2_page_pair(Range {
                base: 0x801_0000,
                size: 0x1_0000
            })
            .size,
            0x1_0000
        );
    }

    #[test]
    fn parses_qemu_virt_gicv3() {
        let dtb = qemu_like(true);
        let p = PlatformInfo::parse(&dtb, 0x4000_0000).unwrap();
        assert!(p.is_qemu_virt);
        assert_eq!(
            p.memory(),
            &[Range {
                base: 0x4000_0000,
                size: 0x1800_0000
            }]
        );
        assert_eq!(p.cpu_mpidrs(), &[0, 0x100]);
        assert_eq!(
            p.uart,
            Some(Range {
                base: 0x900_0000,
                size: 0x1000
            })
        );
        assert_eq!(p.psci, Some(PsciConduit::Smc));
        assert_eq!(
            p.initrd,
            Some(Range {
                base: 0x4800_0000,
                size: 0x1_0000
            })
        );
        assert_eq!(p.bootargs, "backend=nvhe exit=semihosting");
        assert_eq!(p.timer_ppis, Some([29, 30, 27, 26]));
        assert_eq!(p.dtb.size, dtb.len() as u64);
        assert_eq!(
            p.gic,
            Some(HostGic::V3 {
                dist: Range {
                    base: 0x800_0000,
                    size: 0x1_0000
                },
                redist: Range {
                    base: 0x80a_0000,
                    size: 0xf6_0000
                },
            })
        );
    }

    #[test]
    fn parses_gicv2_with_virtualization_regions() {
        let dtb = qemu_like(false);
        let p = PlatformInfo::parse(&dtb, 0).unwrap();
        let Some(HostGic::V2 { hyp, vcpu, .. }) = p.gic else {
            panic!("{:?}", p.gic)
        };
        assert_eq!(
            hyp,
            Some(Range {
                base: 0x803_0000,
                size: 0x1_0000
            })
        );
        assert_eq!(
            vcpu,
            Some(Range {
                base: 0x804_0000,
                size: 0x1_0000
            })
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert_eq!(
            PlatformInfo::parse(&[0u8; 64], 0).unwrap_err(),
            PlatformError::BadDtb
        );
        let mut dtb = qemu_like(true);
        dtb[0] ^= 0xff;
        assert!(PlatformInfo::parse(&dtb, 0).is_err());
        // SAFETY: the buffers are at least 8 bytes long.
        assert_eq!(unsafe { fdt_total_size(dtb.as_ptr()) }, None);
        let good = qemu_like(true);
        // SAFETY: as above.
        assert_eq!(unsafe { fdt_total_size(good.as_ptr()) }, Some(good.len()));
    }

    /// Found by `cargo xtask fuzz host_dtb`: QEMU virt's tree with one bit flipped in the
    /// structure block made the `fdt` crate assert ("bad node") inside `fdt.cpus()`.
    #[test]
    fn fuzz_bad_node_is_an_error() {
        let dtb = include_bytes!("platform/fuzz-crash-bad-node.dtb");
        assert_eq!(
            PlatformInfo::parse(dtb, 0).unwrap_err(),
            PlatformError::BadDtb
        );
    }

    /// Device trees the `fdt` crate's helpers panic on, but that are well formed: no
    /// `/cpus`, a CPU without `reg`, a root without `compatible`, three address cells.
    #[test]
    fn odd_but_well_formed_trees_do_not_panic() {
        let mut w = FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property_u32("#address-cells", 2).unwrap();
        w.property_u32("#size-cells", 2).unwrap();
        let mem = w.begin_node("memory@40000000").unwrap();
        w.property_array_u64("reg", &[0x4000_0000, 0x1000_0000])
            .unwrap();
        w.end_node(mem).unwrap();
        let gic = w.begin_node("intc@8000000").unwrap();
        w.property_string("compatible", "arm,gic-v3").unwrap();
        w.property_array_u32("interrupts", &[0, u32::MAX, 4])
            .unwrap();
        w.end_node(gic).unwrap();
        w.end_node(root).unwrap();
        let no_cpus = w.finish().unwrap();
        let info = PlatformInfo::parse(&no_cpus, 0).unwrap();
        assert!(info.cpu_mpidrs().is_empty());

        let mut w = FdtWriter::new().unwrap();
        let root = w.begin_node("").unwrap();
        w.property_u32("#address-cells", 1).unwrap();
        w.property_u32("#size-cells", 1).unwrap();
        let mem = w.begin_node("memory@0").unwrap();
        w.property_array_u32("reg", &[0x4000_0000, 0x1000_0000])
            .unwrap();
        w.end_node(mem).unwrap();
        let cpus = w.begin_node("cpus").unwrap();
        w.property_u32("#address-cells", 3).unwrap();
        let c = w.begin_node("cpu@0").unwrap();
        w.property_array_u32("reg", &[0, 0, 1]).unwrap();
        w.end_node(c).unwrap();
        let c = w.begin_node("cpu@1").unwrap();
        w.end_node(c).unwrap();
        w.end_node(cpus).unwrap();
        w.end_node(root).unwrap();
        let odd_cpus = w.finish().unwrap();
        let info = PlatformInfo::parse(&odd_cpus, 0).unwrap();
        assert!(info.cpu_mpidrs().is_empty());
    }
}
