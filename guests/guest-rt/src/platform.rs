//! What the runtime needs from the device tree: CPUs, GIC version and regions, timer PPIs,
//! bootargs. Every address comes from the DTB the loader passed in x0.

use fdt::Fdt;

/// Most CPUs recorded from `/cpus` (matches [`crate::smp::MAX_CPUS`]).
pub const MAX_DT_CPUS: usize = crate::smp::MAX_CPUS;

/// The interrupt controller the DTB describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GicInfo {
    /// GICv2 (`arm,cortex-a15-gic` or `arm,gic-400`): distributor and CPU interface.
    V2 {
        /// `GICD` base.
        gicd: usize,
        /// `GICC` base.
        gicc: usize,
    },
    /// GICv3 (`arm,gic-v3`): distributor and the (first) redistributor region.
    V3 {
        /// `GICD` base.
        gicd: usize,
        /// Base of the first redistributor region (128 KiB frames, one per CPU).
        gicr: usize,
        /// Size of that region in bytes.
        gicr_size: usize,
    },
}

/// Generic-timer interrupts as GIC INTIDs (PPI number + 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerPpis {
    /// Non-secure EL1 physical timer (`CNTP_*`), 30 on QEMU `virt`.
    pub phys: u32,
    /// Virtual timer (`CNTV_*`), 27 on QEMU `virt`.
    pub virt: u32,
}

/// The device-tree facts the runtime and guests use.
#[derive(Clone, Copy, Debug)]
pub struct Platform {
    /// Physical address of the DTB.
    pub dtb: usize,
    /// `reg` (MPIDR affinity) of each `/cpus/cpu@*` node, in DTB order; `ncpus` are valid.
    pub cpus: [u64; MAX_DT_CPUS],
    /// Number of CPU nodes (at most [`MAX_DT_CPUS`] recorded; more are ignored).
    pub ncpus: usize,
    /// The GIC.
    pub gic: GicInfo,
    /// Timer PPIs.
    pub timer: TimerPpis,
    /// `/chosen/bootargs`, empty when absent.
    pub bootargs: &'static str,
    /// The first `/memory` region: (base, size) in bytes.
    pub ram: (u64, u64),
}

impl Platform {
    /// Parses the DTB at `dtb`; `Err` names what is missing.
    pub fn from_dtb(dtb: usize) -> Result<Self, &'static str> {
        // SAFETY: x0 at entry is the device tree's physical address per the boot protocol;
        // it is identity mapped (MMU off or guest-rt's map), and the header bounds the reads.
        let fdt: Fdt<'static> =
            unsafe { Fdt::from_ptr(dtb as *const u8) }.map_err(|_| "cannot parse the DTB")?;
        let mut cpus = [0; MAX_DT_CPUS];
        let mut ncpus = 0;
        let cpu_nodes = fdt.find_node("/cpus").ok_or("no /cpus node")?;
        for cpu in cpu_nodes
            .children()
            .filter(|c| c.name.split('@').next() == Some("cpu"))
        {
            let reg = cpu
                .reg()
                .and_then(|mut r| r.next())
                .ok_or("cpu without reg")?;
            if ncpus < MAX_DT_CPUS {
                cpus[ncpus] = reg.starting_address as u64;
                ncpus += 1;
            }
        }
        let bootargs = fdt
            .find_node("/chosen")
            .and_then(|c| c.property("bootargs"))
            .and_then(|p| p.as_str())
            .unwrap_or("");
        let ram = fdt
            .find_node("/memory")
            .and_then(|m| m.reg())
            .and_then(|mut r| r.next())
            .map(|r| (r.starting_address as u64, r.size.unwrap_or(0) as u64))
            .ok_or("no /memory region")?;
        Ok(Self {
            dtb,
            cpus,
            ncpus,
            gic: gic_info(&fdt)?,
            timer: timer_ppis(&fdt),
            bootargs,
            ram,
        })
    }

    /// True if `word` is one of the whitespace-separated words of the bootargs.
    pub fn bootarg(&self, word: &str) -> bool {
        self.bootargs.split_whitespace().any(|w| w == word)
    }

    /// The valid CPU affinities.
    pub fn cpu_ids(&self) -> &[u64] {
        &self.cpus[..self.ncpus]
    }
}

/// Finds the GIC node by `compatible` and reads its regions.
fn gic_info(fdt: &Fdt<'static>) -> Result<GicInfo, &'static str> {
    if let Some(node) = fdt.find_compatible(&["arm,gic-v3"]) {
        let mut reg = node.reg().ok_or("gic-v3 without reg")?;
        let gicd = reg.next().ok_or("gic-v3: no GICD region")?;
        let gicr = reg.next().ok_or("gic-v3: no GICR region")?;
        return Ok(GicInfo::V3 {
            gicd: gicd.starting_address as usize,
            gicr: gicr.starting_address as usize,
            gicr_size: gicr.size.unwrap_or(0),
        });
    }
    if let Some(node) = fdt.find_compatible(&["arm,cortex-a15-gic", "arm,gic-400"]) {
        let mut reg = node.reg().ok_or("gic-v2 without reg")?;
        let gicd = reg.next().ok_or("gic-v2: no GICD region")?;
        let gicc = reg.next().ok_or("gic-v2: no GICC region")?;
        return Ok(GicInfo::V2 {
            gicd: gicd.starting_address as usize,
            gicc: gicc.starting_address as usize,
        });
    }
    Err("no arm,gic-v3 / arm,cortex-a15-gic / arm,gic-400 node")
}

/// Reads the `arm,armv8-timer` node's `interrupts` (3 cells each: type, number, flags; in the
/// order secure phys, non-secure phys, virtual, hypervisor). Defaults: 30 and 27.
fn timer_ppis(fdt: &Fdt<'static>) -> TimerPpis {
    let mut ppis = TimerPpis { phys: 30, virt: 27 };
    let Some(prop) = fdt
        .find_compatible(&["arm,armv8-timer", "arm,armv7-timer"])
        .and_then(|n| n.property("interrupts"))
    else {
        return ppis;
    };
    let cell = |i: usize| -> Option<u32> {
        let b = prop.value.get(i * 4..i * 4 + 4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    // GIC binding: type 1 = PPI, INTID = number + 16.
    let ppi = |entry: usize| -> Option<u32> {
        (cell(entry * 3)? == 1).then_some(cell(entry * 3 + 1)? + 16)
    };
    if let Some(p) = ppi(1) {
        ppis.phys = p;
    }
    if let Some(v) = ppi(2) {
        ppis.virt = v;
    }
    ppis
}
