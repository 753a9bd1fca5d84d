//! The device tree each guest receives in `X0`, describing exactly the machine it gets.
//!
//! Layout and naming follow QEMU's `virt` machine, so that guests (and people) who know that
//! machine find everything where they expect it:
//!
//! ```text
//! / { compatible = "linux,dummy-virt"; #address-cells = <2>; #size-cells = <2>;
//!     interrupt-parent = <&gic>;
//!     psci { compatible = "arm,psci-1.0", "arm,psci-0.2"; method = "hvc"; };
//!     memory@40000000 { device_type = "memory"; reg = <...>; };
//!     cpus { #address-cells = <1>; #size-cells = <0>;
//!            cpu@0 { device_type = "cpu"; compatible = "arm,armv8"; reg = <0>;
//!                    enable-method = "psci"; }; ... };
//!     apb-pclk { compatible = "fixed-clock"; #clock-cells = <0>; clock-frequency = <24000000>; };
//!     pl011@9000000 { compatible = "arm,pl011", "arm,primecell"; reg; interrupts = <0 1 4>;
//!                     clocks = <&clk &clk>; clock-names = "uartclk", "apb_pclk"; };
//!     intc@8000000 { compatible = "arm,cortex-a15-gic" | "arm,gic-v3"; ... };
//!     timer { compatible = "arm,armv8-timer", "arm,armv7-timer"; interrupts = <...>; };
//!     virtio_mmio@a000000 { compatible = "virtio,mmio"; reg; interrupts; dma-coherent; };
//!     chosen { bootargs; stdout-path; linux,initrd-start; linux,initrd-end; };
//! };
//! ```

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use vm_fdt::{FdtWriter, FdtWriterNode};

/// The phandle of the interrupt controller.
const PHANDLE_GIC: u32 = 1;
/// The phandle of the fixed APB clock.
const PHANDLE_CLK: u32 = 2;

/// `interrupts` cell 0: shared peripheral interrupt.
const GIC_SPI: u32 = 0;
/// `interrupts` cell 0: private peripheral interrupt.
const GIC_PPI: u32 = 1;
/// `interrupts` flags: edge, rising.
const IRQ_EDGE_RISING: u32 = 1;
/// `interrupts` flags: level, active high.
const IRQ_LEVEL_HIGH: u32 = 4;
/// `interrupts` flags: level, active low.
const IRQ_LEVEL_LOW: u32 = 8;

/// The PL011 reference clock frequency advertised (QEMU virt's `apb-pclk`).
pub const UART_CLOCK_HZ: u32 = 24_000_000;

/// An emulated PL011 UART.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UartNode {
    /// Guest physical base address.
    pub base: u64,
    /// Size of the register frame (0x1000).
    pub size: u64,
    /// The SPI number (interrupt ID minus 32) when the UART has an interrupt.
    pub spi: Option<u32>,
}

/// The guest's interrupt controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GicNode {
    /// GICv2: distributor and CPU interface.
    V2 {
        /// Distributor base.
        dist_base: u64,
        /// Distributor size (0x1000 architecturally; QEMU virt reserves 0x10000).
        dist_size: u64,
        /// CPU interface base.
        cpu_base: u64,
        /// CPU interface size (0x2000, or 0x10000 with the 64 KiB alias).
        cpu_size: u64,
    },
    /// GICv3: distributor and one contiguous redistributor region.
    V3 {
        /// Distributor base.
        dist_base: u64,
        /// Distributor size (0x10000).
        dist_size: u64,
        /// First redistributor.
        redist_base: u64,
        /// Total size of the redistributor region (vCPUs x 0x20000).
        redist_size: u64,
    },
}

impl GicNode {
    /// GICv2 at QEMU virt's addresses: GICD 0x0800_0000, GICC 0x0801_0000.
    pub const fn v2_virt() -> GicNode {
        GicNode::V2 {
            dist_base: 0x0800_0000,
            dist_size: 0x1_0000,
            cpu_base: 0x0801_0000,
            cpu_size: 0x1_0000,
        }
    }

    /// GICv3 at QEMU virt's addresses for `cpus` vCPUs: GICD 0x0800_0000, GICR 0x080A_0000
    /// with a 128 KiB frame pair per vCPU.
    pub const fn v3_virt(cpus: u64) -> GicNode {
        GicNode::V3 {
            dist_base: 0x0800_0000,
            dist_size: 0x1_0000,
            redist_base: 0x080A_0000,
            redist_size: cpus.saturating_mul(0x2_0000),
        }
    }

    const fn dist_base(&self) -> u64 {
        match self {
            GicNode::V2 { dist_base, .. } | GicNode::V3 { dist_base, .. } => *dist_base,
        }
    }
}

/// Generic-timer PPI numbers (interrupt ID minus 16), QEMU virt's values by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerPpis {
    /// Secure physical timer (13).
    pub secure: u32,
    /// Non-secure physical timer (14).
    pub non_secure: u32,
    /// Virtual timer (11).
    pub virt: u32,
    /// Hypervisor timer (10).
    pub hyp: u32,
}

/// INTID of PPI 0: a device tree names PPIs by their number, INTID - 16.
const FIRST_PPI_INTID: u32 = 16;

impl Default for TimerPpis {
    /// The SBSA assignment (`vtimer`'s INTIDs), which QEMU `virt` follows.
    fn default() -> TimerPpis {
        TimerPpis {
            secure: vtimer::SECURE_PHYS_TIMER_PPI - FIRST_PPI_INTID,
            non_secure: vtimer::PHYS_TIMER_PPI - FIRST_PPI_INTID,
            virt: vtimer::VIRT_TIMER_PPI - FIRST_PPI_INTID,
            hyp: vtimer::HYP_TIMER_PPI - FIRST_PPI_INTID,
        }
    }
}

/// The GIC maintenance interrupt PPI (the `vgic` crate's INTID as a PPI number).
pub const GIC_MAINTENANCE_PPI: u32 = vgic::maintenance_intid() - FIRST_PPI_INTID;

/// A virtio-mmio transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VirtioMmioNode {
    /// Guest physical base address.
    pub base: u64,
    /// Size of the register frame (0x200).
    pub size: u64,
    /// SPI number.
    pub spi: u32,
    /// A network device's MAC address, as `local-mac-address` (the driver reads the
    /// device's configuration space; this is for tools that look at the device tree).
    pub mac: Option<[u8; 6]>,
}

/// How the guest calls PSCI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PsciConduit {
    /// `HVC` (the hypervisor answers).
    #[default]
    Hvc,
    /// `SMC` (trapped by `HCR_EL2.TSC`).
    Smc,
}

/// Everything the generated device tree describes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GuestFdtConfig {
    /// Guest RAM base (IPA).
    pub ram_base: u64,
    /// Guest RAM size in bytes.
    pub ram_size: u64,
    /// `MPIDR_EL1` of each vCPU (only the affinity fields are used), boot CPU first.
    pub cpu_mpidrs: Vec<u64>,
    /// The console UART.
    pub uart: Option<UartNode>,
    /// The interrupt controller; without one, no node that needs interrupts is emitted
    /// (the timer, and the `interrupts` of the UART and virtio devices).
    pub gic: Option<GicNode>,
    /// Timer PPIs.
    pub timer: TimerPpis,
    /// PSCI conduit.
    pub psci: PsciConduit,
    /// Kernel command line (`/chosen/bootargs`); omitted when empty.
    pub bootargs: String,
    /// Initial ramdisk `[start, end)` in guest physical memory.
    pub initrd: Option<(u64, u64)>,
    /// virtio-mmio transports.
    pub virtio_mmio: Vec<VirtioMmioNode>,
    /// `/chosen/stdout-path`; `None` means the UART's node when there is a UART.
    pub stdout_path: Option<String>,
    /// The guest is ARMv7-A (AArch32): its CPUs are `arm,cortex-a15` (what 32-bit kernels
    /// and QEMU's `-M virt -cpu cortex-a15` know) and its timer `arm,armv7-timer`.
    pub armv7: bool,
}

/// `compatible` of the CPU nodes of an AArch64 guest.
const CPU_ARMV8: &str = "arm,armv8";
/// `compatible` of the CPU nodes of an ARMv7-A guest.
const CPU_ARMV7: &str = "arm,cortex-a15";
/// `compatible` of the ARMv8 generic timer.
const TIMER_ARMV8: &str = "arm,armv8-timer";
/// `compatible` of the ARMv7 generic timer.
const TIMER_ARMV7: &str = "arm,armv7-timer";

/// Why no device tree could be built.
#[derive(Debug)]
pub enum FdtError {
    /// The configuration is inconsistent (the text says how).
    Config(&'static str),
    /// The FDT writer failed.
    Writer(vm_fdt::Error),
}

impl fmt::Display for FdtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FdtError::Config(why) => write!(f, "bad guest device-tree configuration: {why}"),
            FdtError::Writer(e) => write!(f, "device-tree writer: {e:?}"),
        }
    }
}

impl From<vm_fdt::Error> for FdtError {
    fn from(e: vm_fdt::Error) -> FdtError {
        FdtError::Writer(e)
    }
}

/// The MPIDR affinity fields Aff3 [39:32], Aff2 [23:16], Aff1 [15:8], Aff0 [7:0].
const MPIDR_AFFINITY_MASK: u64 = 0xff_00ff_ffff;

/// The path of the UART node for `uart` (used as the default `stdout-path`).
pub fn uart_path(uart: &UartNode) -> String {
    format!("/pl011@{:x}", uart.base)
}

/// Build the flattened device tree blob for `cfg`.
pub fn build(cfg: &GuestFdtConfig) -> Result<Vec<u8>, FdtError> {
    validate(cfg)?;
    let mut fdt = FdtWriter::new()?;
    let root = fdt.begin_node("")?;
    fdt.property_string("compatible", "linux,dummy-virt")?;
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    if cfg.gic.is_some() {
        fdt.property_u32("interrupt-parent", PHANDLE_GIC)?;
    }

    psci_node(&mut fdt, cfg.psci)?;
    memory_node(&mut fdt, cfg)?;
    cpus_node(&mut fdt, &cfg.cpu_mpidrs, cfg.armv7)?;
    if let Some(gic) = &cfg.gic {
        gic_node(&mut fdt, gic)?;
        timer_node(&mut fdt, gic, &cfg.timer, cfg.cpu_mpidrs.len(), cfg.armv7)?;
    }
    if let Some(uart) = &cfg.uart {
        uart_node(&mut fdt, uart, cfg.gic.is_some())?;
    }
    for dev in &cfg.virtio_mmio {
        let node = fdt.begin_node(&format!("virtio_mmio@{:x}", dev.base))?;
        fdt.property_string("compatible", "virtio,mmio")?;
        fdt.property_array_u64("reg", &[dev.base, dev.size])?;
        if cfg.gic.is_some() {
            fdt.property_array_u32("interrupts", &[GIC_SPI, dev.spi, IRQ_EDGE_RISING])?;
        }
        fdt.property_null("dma-coherent")?;
        if let Some(mac) = &dev.mac {
            fdt.property("local-mac-address", mac)?;
        }
        fdt.end_node(node)?;
    }
    chosen_node(&mut fdt, cfg)?;

    fdt.end_node(root)?;
    Ok(fdt.finish()?)
}

fn validate(cfg: &GuestFdtConfig) -> Result<(), FdtError> {
    if cfg.cpu_mpidrs.is_empty() {
        return Err(FdtError::Config("no vCPUs"));
    }
    if cfg.ram_size == 0 || cfg.ram_base.checked_add(cfg.ram_size).is_none() {
        return Err(FdtError::Config("empty or overflowing RAM range"));
    }
    let mut affinities: Vec<u64> = cfg
        .cpu_mpidrs
        .iter()
        .map(|m| m & MPIDR_AFFINITY_MASK)
        .collect();
    affinities.sort_unstable();
    if affinities.windows(2).any(|w| w[0] == w[1]) {
        return Err(FdtError::Config("two vCPUs with the same MPIDR affinity"));
    }
    if let Some((start, end)) = cfg.initrd {
        if end < start {
            return Err(FdtError::Config("initrd ends before it starts"));
        }
    }
    Ok(())
}

fn psci_node(fdt: &mut FdtWriter, conduit: PsciConduit) -> Result<(), FdtError> {
    let node = fdt.begin_node("psci")?;
    fdt.property_string_list(
        "compatible",
        vec!["arm,psci-1.0".to_string(), "arm,psci-0.2".to_string()],
    )?;
    let method = match conduit {
        PsciConduit::Hvc => "hvc",
        PsciConduit::Smc => "smc",
    };
    fdt.property_string("method", method)?;
    fdt.end_node(node)?;
    Ok(())
}

fn memory_node(fdt: &mut FdtWriter, cfg: &GuestFdtConfig) -> Result<(), FdtError> {
    let node = fdt.begin_node(&format!("memory@{:x}", cfg.ram_base))?;
    fdt.property_string("device_type", "memory")?;
    fdt.property_array_u64("reg", &[cfg.ram_base, cfg.ram_size])?;
    fdt.end_node(node)?;
    Ok(())
}

fn cpus_node(fdt: &mut FdtWriter, mpidrs: &[u64], armv7: bool) -> Result<(), FdtError> {
    let cpus = fdt.begin_node("cpus")?;
    // One cell is enough unless some vCPU has a non-zero Aff3.
    let two_cells = mpidrs.iter().any(|m| m & 0xff_0000_0000 != 0);
    fdt.property_u32("#address-cells", if two_cells { 2 } else { 1 })?;
    fdt.property_u32("#size-cells", 0)?;
    for &mpidr in mpidrs {
        let reg = mpidr & MPIDR_AFFINITY_MASK;
        let node = fdt.begin_node(&format!("cpu@{reg:x}"))?;
        fdt.property_string("device_type", "cpu")?;
        fdt.property_string("compatible", if armv7 { CPU_ARMV7 } else { CPU_ARMV8 })?;
        if two_cells {
            fdt.property_u64("reg", reg)?;
        } else {
            fdt.property_u32("reg", reg as u32)?;
        }
        fdt.property_string("enable-method", "psci")?;
        fdt.end_node(node)?;
    }
    fdt.end_node(cpus)?;
    Ok(())
}

fn gic_node(fdt: &mut FdtWriter, gic: &GicNode) -> Result<(), FdtError> {
    let node = fdt.begin_node(&format!("intc@{:x}", gic.dist_base()))?;
    match gic {
        GicNode::V2 {
            dist_base,
            dist_size,
            cpu_base,
            cpu_size,
        } => {
            fdt.property_string("compatible", "arm,cortex-a15-gic")?;
            fdt.property_array_u64("reg", &[*dist_base, *dist_size, *cpu_base, *cpu_size])?;
        }
        GicNode::V3 {
            dist_base,
            dist_size,
            redist_base,
            redist_size,
        } => {
            fdt.property_string("compatible", "arm,gic-v3")?;
            fdt.property_array_u64("reg", &[*dist_base, *dist_size, *redist_base, *redist_size])?;
            fdt.property_u32("#redistributor-regions", 1)?;
        }
    }
    fdt.property_u32("#interrupt-cells", 3)?;
    fdt.property_null("interrupt-controller")?;
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_array_u32(
        "interrupts",
        &[GIC_PPI, GIC_MAINTENANCE_PPI, IRQ_LEVEL_HIGH],
    )?;
    fdt.property_phandle(PHANDLE_GIC)?;
    fdt.end_node(node)?;
    Ok(())
}

fn timer_node(
    fdt: &mut FdtWriter,
    gic: &GicNode,
    ppis: &TimerPpis,
    cpus: usize,
    armv7: bool,
) -> Result<(), FdtError> {
    // GICv2 bindings carry a CPU mask (one bit per CPU, at most 8) in flags bits [15:8].
    let flags = match gic {
        GicNode::V2 { .. } => {
            let mask = (1u32 << cpus.clamp(1, 8)) - 1;
            (mask << 8) | IRQ_LEVEL_LOW
        }
        GicNode::V3 { .. } => IRQ_LEVEL_LOW,
    };
    let node = fdt.begin_node("timer")?;
    let compatible = if armv7 {
        vec![TIMER_ARMV7.to_string()]
    } else {
        vec![TIMER_ARMV8.to_string(), TIMER_ARMV7.to_string()]
    };
    fdt.property_string_list("compatible", compatible)?;
    let mut interrupts = Vec::with_capacity(12);
    for ppi in [ppis.secure, ppis.non_secure, ppis.virt, ppis.hyp] {
        interrupts.extend_from_slice(&[GIC_PPI, ppi, flags]);
    }
    fdt.property_array_u32("interrupts", &interrupts)?;
    fdt.property_null("always-on")?;
    fdt.end_node(node)?;
    Ok(())
}

fn uart_node(fdt: &mut FdtWriter, uart: &UartNode, has_gic: bool) -> Result<(), FdtError> {
    let clk = fdt.begin_node("apb-pclk")?;
    fdt.property_string("compatible", "fixed-clock")?;
    fdt.property_u32("#clock-cells", 0)?;
    fdt.property_u32("clock-frequency", UART_CLOCK_HZ)?;
    fdt.property_string("clock-output-names", "clk24mhz")?;
    fdt.property_phandle(PHANDLE_CLK)?;
    fdt.end_node(clk)?;

    let node: FdtWriterNode = fdt.begin_node(&format!("pl011@{:x}", uart.base))?;
    fdt.property_string_list(
        "compatible",
        vec!["arm,pl011".to_string(), "arm,primecell".to_string()],
    )?;
    fdt.property_array_u64("reg", &[uart.base, uart.size])?;
    if let (Some(spi), true) = (uart.spi, has_gic) {
        fdt.property_array_u32("interrupts", &[GIC_SPI, spi, IRQ_LEVEL_HIGH])?;
    }
    fdt.property_array_u32("clocks", &[PHANDLE_CLK, PHANDLE_CLK])?;
    fdt.property_string_list(
        "clock-names",
        vec!["uartclk".to_string(), "apb_pclk".to_string()],
    )?;
    fdt.end_node(node)?;
    Ok(())
}

fn chosen_node(fdt: &mut FdtWriter, cfg: &GuestFdtConfig) -> Result<(), FdtError> {
    let node = fdt.begin_node("chosen")?;
    if !cfg.bootargs.is_empty() {
        fdt.property_string("bootargs", &cfg.bootargs)?;
    }
    let stdout = match (&cfg.stdout_path, &cfg.uart) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(uart)) => Some(uart_path(uart)),
        (None, None) => None,
    };
    if let Some(path) = stdout {
        fdt.property_string("stdout-path", &path)?;
    }
    if let Some((start, end)) = cfg.initrd {
        fdt.property_u64("linux,initrd-start", start)?;
        fdt.property_u64("linux,initrd-end", end)?;
    }
    fdt.end_node(node)?;
    Ok(())
}

#[cfg(test)]
mod tests;
