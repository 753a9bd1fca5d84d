//! Where the storm aims: the VM's RAM (from `/memory`), every device the device tree
//! describes (any node with a `reg` outside RAM: PL011, GIC distributor, redistributors or
//! CPU interface, virtio-mmio transports, ...), the edges of RAM and of the IPA space, and
//! random IPAs anywhere below 2^48; plus the scratch areas at the top of RAM that the storm
//! may write (and let devices write).

use fdt::Fdt;

use crate::rng::Rng;

/// Most device regions recorded.
pub const MAX_REGIONS: usize = 48;

/// What a device region is, for the rules on what the storm may write there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevKind {
    /// `arm,pl011`: the console.
    Pl011,
    /// GIC distributor (`GICD`).
    Gicd,
    /// GICv3 redistributors (`GICR`), 128 KiB per vCPU.
    Gicr,
    /// GICv2 CPU interface (`GICC`), banked per vCPU.
    Gicc,
    /// `virtio,mmio` transport.
    Virtio,
    /// Anything else with a `reg`.
    Other,
}

/// One device region.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// Base IPA.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// What it is.
    pub kind: DevKind,
}

/// The VM as the device tree describes it, and the storm's memory plan.
pub struct Targets {
    /// RAM base IPA.
    pub ram: u64,
    /// RAM end IPA (exclusive).
    pub ram_end: u64,
    /// `ID_AA64MMFR0_EL1.PARange` of the VM in bits (its IPA size).
    pub ipa_bits: u32,
    /// Device regions.
    pub regions: [Region; MAX_REGIONS],
    /// How many of `regions` are valid.
    pub nregions: usize,
    /// Interrupt of each virtio transport's SPI is not used; their bases are in `regions`.
    pub mpidrs: [u64; 8],
    /// vCPUs of this VM.
    pub ncpus: usize,
}

/// Bytes at the top of RAM that devices may write (virtqueue buffers and used rings).
pub const DMA_BUF_SIZE: u64 = 1 << 20;
/// Used rings, just below the DMA buffers.
pub const DMA_USED_SIZE: u64 = 256 << 10;
/// Descriptor tables and available rings (devices only read them), below the used rings.
pub const DMA_DESC_SIZE: u64 = 768 << 10;
/// Per-vCPU scratch the storm stores to (through its windows, atomics, `DC ZVA`, dirty-log
/// bitmaps), below the descriptor area.
pub const CPU_SCRATCH_SIZE: u64 = 256 << 10;

impl Targets {
    /// Reads the device tree at `dtb`.
    pub fn from_dtb(dtb: usize, ipa_bits: u32) -> Result<Self, &'static str> {
        // SAFETY: x0 at entry is the device tree's address per the boot protocol; the
        // header bounds the reads and RAM is identity mapped.
        let fdt: Fdt<'static> =
            unsafe { Fdt::from_ptr(dtb as *const u8) }.map_err(|_| "cannot parse the DTB")?;
        let mem = fdt
            .find_node("/memory")
            .and_then(|m| m.reg())
            .and_then(|mut r| r.next())
            .ok_or("no /memory")?;
        let ram = mem.starting_address as u64;
        let ram_end = ram + mem.size.unwrap_or(0) as u64;
        let mut t = Targets {
            ram,
            ram_end,
            ipa_bits,
            regions: [Region {
                base: 0,
                size: 0,
                kind: DevKind::Other,
            }; MAX_REGIONS],
            nregions: 0,
            mpidrs: [0; 8],
            ncpus: 0,
        };
        for node in fdt.all_nodes() {
            if node.name.starts_with("memory") {
                continue;
            }
            let Some(reg) = node.reg() else { continue };
            let compat = |c: &str| node.compatible().is_some_and(|l| l.all().any(|x| x == c));
            if node.name.starts_with("cpu@") {
                if let Some(r) = node.reg().and_then(|mut r| r.next()) {
                    if t.ncpus < t.mpidrs.len() {
                        t.mpidrs[t.ncpus] = r.starting_address as u64;
                        t.ncpus += 1;
                    }
                }
                continue;
            }
            let gic3 = compat("arm,gic-v3");
            let gic2 = compat("arm,cortex-a15-gic") || compat("arm,gic-400");
            for (i, r) in reg.enumerate() {
                let Some(size) = r.size.filter(|&s| s > 0) else {
                    continue;
                };
                let base = r.starting_address as u64;
                if base < ram_end && base + size as u64 > ram {
                    continue;
                }
                let kind = match (gic3, gic2, i) {
                    (true, _, 0) | (_, true, 0) => DevKind::Gicd,
                    (true, _, 1) => DevKind::Gicr,
                    (_, true, 1) => DevKind::Gicc,
                    _ if compat("arm,pl011") => DevKind::Pl011,
                    _ if compat("virtio,mmio") => DevKind::Virtio,
                    _ => DevKind::Other,
                };
                if t.nregions < MAX_REGIONS {
                    t.regions[t.nregions] = Region {
                        base,
                        size: size as u64,
                        kind,
                    };
                    t.nregions += 1;
                }
            }
        }
        Ok(t)
    }

    /// The device regions.
    pub fn regions(&self) -> &[Region] {
        &self.regions[..self.nregions]
    }

    /// The region holding all of `[ipa, ipa + len)`, if one does.
    pub fn device_at(&self, ipa: u64, len: u64) -> Option<&Region> {
        self.regions()
            .iter()
            .find(|r| ipa >= r.base && ipa.saturating_add(len) <= r.base + r.size)
    }

    /// True if `[ipa, ipa + len)` touches any device region.
    pub fn touches_device(&self, ipa: u64, len: u64) -> bool {
        self.regions()
            .iter()
            .any(|r| ipa < r.base + r.size && ipa.saturating_add(len) > r.base)
    }

    /// True if all of `[ipa, ipa + len)` is RAM.
    pub fn in_ram(&self, ipa: u64, len: u64) -> bool {
        ipa >= self.ram && ipa.saturating_add(len) <= self.ram_end
    }

    /// True if `[ipa, ipa + len)` touches RAM.
    pub fn touches_ram(&self, ipa: u64, len: u64) -> bool {
        ipa < self.ram_end && ipa.saturating_add(len) > self.ram
    }

    /// Start of the DMA buffers (devices may write `[dma_buf, ram_end)`).
    pub fn dma_buf(&self) -> u64 {
        self.ram_end - DMA_BUF_SIZE
    }

    /// Start of the used-ring area.
    pub fn dma_used(&self) -> u64 {
        self.dma_buf() - DMA_USED_SIZE
    }

    /// Start of the descriptor/available-ring area.
    pub fn dma_desc(&self) -> u64 {
        self.dma_used() - DMA_DESC_SIZE
    }

    /// Start of vCPU `cpu`'s scratch.
    pub fn scratch(&self, cpu: usize) -> u64 {
        self.dma_desc() - (cpu as u64 + 1) * CPU_SCRATCH_SIZE
    }

    /// Lowest address of the areas at the top of RAM the storm and its devices write.
    pub fn writable_floor(&self) -> u64 {
        self.scratch(crate::vectors::MAX_CPUS - 1)
    }

    /// True if the storm on vCPU `cpu` may store to all of `[ipa, ipa + len)` of RAM: its
    /// own scratch or the DMA buffers.
    pub fn storable(&self, cpu: usize, ipa: u64, len: u64) -> bool {
        let s = self.scratch(cpu);
        let in_range = |a: u64, b: u64| ipa >= a && ipa.saturating_add(len) <= b;
        in_range(s, s + CPU_SCRATCH_SIZE) || in_range(self.dma_buf(), self.ram_end)
    }

    /// An address outside RAM and every device (often far away, sometimes just past RAM).
    pub fn outside(&self, rng: &mut Rng) -> u64 {
        loop {
            let a = match rng.below(4) {
                0 => self.ram_end + rng.below(1 << 20),
                1 => rng.below(self.ram),
                2 => rng.below(1 << self.ipa_bits.min(48)),
                _ => rng.below(1 << 48),
            } & !7;
            if !self.touches_ram(a, 64) && !self.touches_device(a, 64) {
                return a;
            }
        }
    }
}
