//! A small GIC driver for the guest: GICv2 (memory-mapped CPU interface) and GICv3 (system
//! register CPU interface, per-CPU redistributors), chosen from the device tree.
//!
//! Only what the test guests use: SGIs and PPIs (banked per CPU), SPIs enable/priority/
//! routing, trigger mode, priority mask, SGI send, acknowledge and EOI (EOImode 0: EOI drops
//! priority and deactivates). All interrupts are delivered as IRQs: group 0 on GICv2 (`GICC_CTLR.FIQEn`
//! = 0), group 1 on GICv3.
//!
//! Call [`init`] once on the boot CPU and [`init_cpu`] on every secondary before it unmasks
//! interrupts. State is kept in atomics used only with plain loads and stores, so the driver
//! also works with the MMU off.

mod icc;
mod v2;
mod v3;

use crate::platform::GicInfo;
use crate::smp::{this_cpu, this_mpidr, MAX_CPUS};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// First SGI INTID.
pub const SGI_BASE: u32 = 0;
/// First PPI INTID.
pub const PPI_BASE: u32 = 16;
/// First SPI INTID.
pub const SPI_BASE: u32 = 32;
/// INTIDs 1020..1023 are special (1023 = spurious, nothing pending).
pub const SPECIAL_BASE: u32 = 1020;
/// Default priority the driver gives every SGI/PPI (lower value = higher priority).
pub const DEFAULT_PRIORITY: u8 = 0xa0;
/// Priority mask the driver sets at init: everything with priority < 0xf0 is signalled.
pub const DEFAULT_PMR: u8 = 0xf0;

/// Architecture version found in the DTB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// GICv2.
    V2,
    /// GICv3.
    V3,
}

static VERSION: AtomicU64 = AtomicU64::new(0);
static GICD: AtomicUsize = AtomicUsize::new(0);
/// GICv2: `GICC` base. GICv3: first redistributor region base.
static CPU_IF: AtomicUsize = AtomicUsize::new(0);
/// GICv3: redistributor region size.
static GICR_SIZE: AtomicUsize = AtomicUsize::new(0);
/// Per CPU index: MPIDR affinity (for GICv3 SGI targets).
static CPU_MPIDR: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(u64::MAX) }; MAX_CPUS];
/// Per CPU index: GICv2 CPU-interface mask (`GICD_ITARGETSR0` as read by that CPU), or the
/// GICv3 `RD_base` of its redistributor.
static CPU_IF_DATA: [AtomicUsize; MAX_CPUS] = [const { AtomicUsize::new(0) }; MAX_CPUS];

/// An acknowledged interrupt, to be passed back to [`eoi`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// The raw `GICC_IAR` / `ICC_IAR1_EL1` value (GICv2 keeps the source CPU in bits 12:10).
    pub raw: u32,
}

impl Ack {
    /// The interrupt ID.
    pub fn intid(self) -> u32 {
        match version() {
            Some(Version::V2) => self.raw & 0x3ff,
            _ => self.raw & 0xff_ffff,
        }
    }

    /// True for a spurious/special INTID (nothing to handle, no EOI needed).
    pub fn is_special(self) -> bool {
        (SPECIAL_BASE..1024).contains(&self.intid())
    }
}

/// The detected GIC version, once [`init`] ran.
pub fn version() -> Option<Version> {
    match VERSION.load(Ordering::Relaxed) {
        2 => Some(Version::V2),
        3 => Some(Version::V3),
        _ => None,
    }
}

pub(crate) fn gicd() -> usize {
    GICD.load(Ordering::Relaxed)
}

pub(crate) fn cpu_if_base() -> usize {
    CPU_IF.load(Ordering::Relaxed)
}

pub(crate) fn this_cpu_data() -> usize {
    CPU_IF_DATA[this_cpu()].load(Ordering::Relaxed)
}

/// Initialises the distributor and the calling (boot) CPU's interface.
pub fn init(info: &GicInfo) -> Result<(), &'static str> {
    match *info {
        GicInfo::V2 { gicd, gicc } => {
            GICD.store(gicd, Ordering::Relaxed);
            CPU_IF.store(gicc, Ordering::Relaxed);
            VERSION.store(2, Ordering::Relaxed);
            v2::init_distributor();
        }
        GicInfo::V3 {
            gicd,
            gicr,
            gicr_size,
        } => {
            GICD.store(gicd, Ordering::Relaxed);
            CPU_IF.store(gicr, Ordering::Relaxed);
            GICR_SIZE.store(gicr_size, Ordering::Relaxed);
            VERSION.store(3, Ordering::Relaxed);
            v3::init_distributor();
        }
    }
    init_cpu()
}

/// Initialises the calling CPU's interface (GICv2 `GICC`, GICv3 redistributor + `ICC_*`),
/// sets every SGI/PPI to [`DEFAULT_PRIORITY`] and the priority mask to [`DEFAULT_PMR`].
pub fn init_cpu() -> Result<(), &'static str> {
    let cpu = this_cpu();
    if cpu >= MAX_CPUS {
        return Err("CPU index beyond MAX_CPUS");
    }
    CPU_MPIDR[cpu].store(this_mpidr(), Ordering::Relaxed);
    let data = match version() {
        Some(Version::V2) => v2::init_cpu(),
        Some(Version::V3) => v3::init_cpu(
            cpu_if_base(),
            GICR_SIZE.load(Ordering::Relaxed),
            this_mpidr(),
        )?,
        None => return Err("gic::init has not run"),
    };
    CPU_IF_DATA[cpu].store(data, Ordering::Relaxed);
    for intid in 0..SPI_BASE {
        set_priority(intid, DEFAULT_PRIORITY);
    }
    set_priority_mask(DEFAULT_PMR);
    Ok(())
}

/// Enables (forwards) `intid`; SGIs/PPIs on the calling CPU.
pub fn enable(intid: u32) {
    match version() {
        Some(Version::V2) => v2::set_enable(intid, true),
        Some(Version::V3) => v3::set_enable(intid, true),
        None => {}
    }
}

/// Disables `intid`; SGIs/PPIs on the calling CPU.
pub fn disable(intid: u32) {
    match version() {
        Some(Version::V2) => v2::set_enable(intid, false),
        Some(Version::V3) => v3::set_enable(intid, false),
        None => {}
    }
}

/// Routes SPI `intid` to the CPU with index `cpu` (which must have run [`init_cpu`]): on
/// GICv2 `GICD_ITARGETSR<n>` gets that CPU's interface bit, on GICv3 `GICD_IROUTER<n>` its
/// MPIDR affinity (`Interrupt_Routing_Mode` 0). Returns the value written (the `ITARGETSR`
/// byte or the `IROUTER` value). [`enable`] of an SPI routes it to the calling CPU, so call
/// this after it.
pub fn route_spi(intid: u32, cpu: usize) -> Result<u64, &'static str> {
    if !(SPI_BASE..SPECIAL_BASE).contains(&intid) {
        return Err("not an SPI");
    }
    let mpidr = CPU_MPIDR
        .get(cpu)
        .map(|m| m.load(Ordering::Relaxed))
        .filter(|&m| m != u64::MAX)
        .ok_or("target CPU has not run gic::init_cpu")?;
    match version() {
        Some(Version::V2) => {
            let mask = CPU_IF_DATA[cpu].load(Ordering::Relaxed) as u8;
            if mask == 0 {
                return Err("target CPU has no GICv2 CPU interface bit");
            }
            v2::set_targets(intid, mask);
            Ok(u64::from(mask))
        }
        Some(Version::V3) => {
            let route = v3::affinity_route(mpidr);
            v3::set_route(intid, route);
            Ok(route)
        }
        None => Err("gic::init has not run"),
    }
}

/// Reads back the routing of SPI `intid`: the `GICD_ITARGETSR<n>` byte (GICv2) or
/// `GICD_IROUTER<n>` (GICv3).
pub fn spi_route(intid: u32) -> u64 {
    match version() {
        Some(Version::V2) => u64::from(v2::targets(intid)),
        Some(Version::V3) => v3::route(intid),
        None => 0,
    }
}

/// Trigger mode of an interrupt (`GICD_ICFGR` / `GICR_ICFGR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Level-sensitive: pending while the input line is asserted.
    Level,
    /// Edge-triggered: a rising edge makes it pending.
    Edge,
}

/// Sets the trigger mode of PPI or SPI `intid` (PPIs on the calling CPU; an implementation
/// may fix a PPI's mode, making the write ignored).
pub fn set_trigger(intid: u32, trigger: Trigger) {
    let edge = trigger == Trigger::Edge;
    match version() {
        Some(Version::V2) => v2::set_edge(intid, edge),
        Some(Version::V3) => v3::set_edge(intid, edge),
        None => {}
    }
}

/// Reads the trigger mode of `intid`.
pub fn trigger(intid: u32) -> Trigger {
    let edge = match version() {
        Some(Version::V2) => v2::is_edge(intid),
        Some(Version::V3) => v3::is_edge(intid),
        None => false,
    };
    if edge {
        Trigger::Edge
    } else {
        Trigger::Level
    }
}

/// Sets the priority of `intid` (lower = more urgent; an implementation may ignore low bits,
/// so use multiples of 0x10).
pub fn set_priority(intid: u32, priority: u8) {
    match version() {
        Some(Version::V2) => v2::set_priority(intid, priority),
        Some(Version::V3) => v3::set_priority(intid, priority),
        None => {}
    }
}

/// Whether `intid` is pending (SGIs/PPIs: on the calling CPU).
pub fn is_pending(intid: u32) -> bool {
    match version() {
        Some(Version::V2) => v2::is_pending(intid),
        Some(Version::V3) => v3::is_pending(intid),
        None => false,
    }
}

/// Makes PPI or SPI `intid` pending (SGIs: use [`send_sgi_self`]).
pub fn set_pending(intid: u32) {
    match version() {
        Some(Version::V2) => v2::set_pending(intid, true),
        Some(Version::V3) => v3::set_pending(intid, true),
        None => {}
    }
}

/// Clears the pending state of `intid`.
pub fn clear_pending(intid: u32) {
    match version() {
        Some(Version::V2) => v2::set_pending(intid, false),
        Some(Version::V3) => v3::set_pending(intid, false),
        None => {}
    }
}

/// Sets the calling CPU's priority mask (`GICC_PMR` / `ICC_PMR_EL1`): only interrupts with
/// a priority value *below* `pmr` are signalled.
pub fn set_priority_mask(pmr: u8) {
    match version() {
        Some(Version::V2) => v2::set_pmr(pmr),
        Some(Version::V3) => icc::set_pmr(pmr),
        None => {}
    }
}

/// Reads the calling CPU's priority mask.
pub fn priority_mask() -> u8 {
    match version() {
        Some(Version::V2) => v2::pmr(),
        Some(Version::V3) => icc::pmr(),
        None => 0,
    }
}

/// Sends SGI `intid` (0..16) to the CPU with index `cpu` (which must have run [`init_cpu`]).
pub fn send_sgi(intid: u32, cpu: usize) {
    let Some(target) = CPU_MPIDR.get(cpu).map(|m| m.load(Ordering::Relaxed)) else {
        return;
    };
    match version() {
        Some(Version::V2) => {
            let mask = CPU_IF_DATA[cpu].load(Ordering::Relaxed) as u32;
            v2::send_sgi(intid, v2::SgiTarget::List(mask));
        }
        Some(Version::V3) => icc::send_sgi1(intid, target),
        None => {}
    }
}

/// Sends SGI `intid` to the calling CPU.
pub fn send_sgi_self(intid: u32) {
    match version() {
        Some(Version::V2) => v2::send_sgi(intid, v2::SgiTarget::SelfOnly),
        Some(Version::V3) => icc::send_sgi1(intid, this_mpidr()),
        None => {}
    }
}

/// Acknowledges the highest-priority pending interrupt (`GICC_IAR` / `ICC_IAR1_EL1`).
pub fn ack() -> Ack {
    let raw = match version() {
        Some(Version::V2) => v2::iar(),
        Some(Version::V3) => icc::iar1(),
        None => 1023,
    };
    Ack { raw }
}

/// Ends an acknowledged interrupt (`GICC_EOIR` / `ICC_EOIR1_EL1`; EOImode 0 also deactivates).
pub fn eoi(ack: Ack) {
    match version() {
        Some(Version::V2) => v2::eoir(ack.raw),
        Some(Version::V3) => icc::eoir1(ack.raw),
        None => {}
    }
}

/// Volatile 32-bit MMIO read.
fn read32(addr: usize) -> u32 {
    // SAFETY: callers pass addresses inside the GIC regions from the DTB, which are device
    // memory (identity mapped, or MMU off), aligned to 4.
    unsafe { (addr as *const u32).read_volatile() }
}

/// Volatile 32-bit MMIO write.
fn write32(addr: usize, value: u32) {
    // SAFETY: as in `read32`.
    unsafe { (addr as *mut u32).write_volatile(value) }
}

/// Volatile 8-bit MMIO write (byte-accessible registers such as `IPRIORITYR`).
fn write8(addr: usize, value: u8) {
    // SAFETY: as in `read32`; the registers written this way allow byte access.
    unsafe { (addr as *mut u8).write_volatile(value) }
}

/// Volatile 64-bit MMIO read (`GICR_TYPER`).
fn read64(addr: usize) -> u64 {
    // SAFETY: as in `read32`, aligned to 8.
    unsafe { (addr as *const u64).read_volatile() }
}

/// Register offset and `Int_config[1]` bit (1 = edge) of `intid` in `ICFGR` (two bits per
/// interrupt).
fn cfg_reg(intid: u32) -> (usize, u32) {
    ((intid / 16) as usize * 4, 1 << ((intid % 16) * 2 + 1))
}

/// Register index and bit of `intid` in a one-bit-per-interrupt register bank.
fn bit_reg(intid: u32) -> (usize, u32) {
    ((intid / 32) as usize * 4, 1 << (intid % 32))
}
