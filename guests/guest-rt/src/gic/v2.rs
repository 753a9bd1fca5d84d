//! GICv2: distributor (`GICD`) and memory-mapped CPU interface (`GICC`) registers.

use super::{bit_reg, cfg_reg, cpu_if_base, gicd, read32, write32, write8, SPI_BASE};
use aarch64_cpu::asm::barrier;

/// `GICD_CTLR` (bit 0 EnableGrp0, bit 1 EnableGrp1).
const GICD_CTLR: usize = 0x000;
/// `GICD_TYPER` (ITLinesNumber in bits 4:0).
const GICD_TYPER: usize = 0x004;
/// `GICD_ISENABLERn`.
const GICD_ISENABLER: usize = 0x100;
/// `GICD_ICENABLERn`.
const GICD_ICENABLER: usize = 0x180;
/// `GICD_ISPENDRn`.
const GICD_ISPENDR: usize = 0x200;
/// `GICD_ICPENDRn`.
const GICD_ICPENDR: usize = 0x280;
/// `GICD_IPRIORITYRn` (byte accessible).
const GICD_IPRIORITYR: usize = 0x400;
/// `GICD_ITARGETSRn` (byte accessible; 0..7 read as the reading CPU's own mask).
const GICD_ITARGETSR: usize = 0x800;
/// `GICD_ICFGRn` (two bits per interrupt; bit 1 of a field = edge-triggered).
const GICD_ICFGR: usize = 0xc00;
/// `GICD_SGIR`.
const GICD_SGIR: usize = 0xf00;
/// `GICD_SGIR.TargetListFilter` = 0b10: only the requesting CPU.
const SGIR_FILTER_SELF: u32 = 0b10 << 24;

/// `GICC_CTLR` (bit 0 EnableGrp0, bit 1 EnableGrp1; FIQEn = 0: group 0 is IRQ).
const GICC_CTLR: usize = 0x00;
/// `GICC_PMR`.
const GICC_PMR: usize = 0x04;
/// `GICC_IAR`.
const GICC_IAR: usize = 0x0c;
/// `GICC_EOIR`.
const GICC_EOIR: usize = 0x10;

/// Where an SGI goes.
pub enum SgiTarget {
    /// `GICD_SGIR.CPUTargetList` (bit n = CPU interface n).
    List(u32),
    /// The requesting CPU only.
    SelfOnly,
}

/// Enables forwarding of group 0 and 1; SPIs stay disabled until [`set_enable`].
pub fn init_distributor() {
    let d = gicd();
    write32(d + GICD_CTLR, 0);
    let lines = ((read32(d + GICD_TYPER) & 0x1f) + 1) * 32;
    for intid in (SPI_BASE..lines).step_by(32) {
        let (off, _) = bit_reg(intid);
        write32(d + GICD_ICENABLER + off, u32::MAX);
        write32(d + GICD_ICPENDR + off, u32::MAX);
    }
    write32(d + GICD_CTLR, 0b11);
}

/// Enables this CPU's interface and returns its CPU-interface mask (from `GICD_ITARGETSR0`;
/// 0 on a uniprocessor GIC, where the register is RAZ).
pub fn init_cpu() -> usize {
    let c = cpu_if_base();
    write32(c + GICC_CTLR, 0b11);
    (read32(gicd() + GICD_ITARGETSR) & 0xff) as usize
}

pub fn set_enable(intid: u32, on: bool) {
    let (off, bit) = bit_reg(intid);
    let reg = if on { GICD_ISENABLER } else { GICD_ICENABLER };
    if intid >= SPI_BASE {
        // Route SPIs to this CPU.
        let mask = super::this_cpu_data() as u8;
        write8(gicd() + GICD_ITARGETSR + intid as usize, mask.max(1));
    }
    write32(gicd() + reg + off, bit);
}

/// Sets SPI `intid`'s `GICD_ITARGETSR` byte (bit n = CPU interface n).
pub fn set_targets(intid: u32, mask: u8) {
    write8(gicd() + GICD_ITARGETSR + intid as usize, mask);
}

/// Reads `intid`'s `GICD_ITARGETSR` byte.
pub fn targets(intid: u32) -> u8 {
    let word = read32(gicd() + GICD_ITARGETSR + (intid as usize & !3));
    (word >> ((intid % 4) * 8)) as u8
}

pub fn set_edge(intid: u32, edge: bool) {
    let (off, bit) = cfg_reg(intid);
    let addr = gicd() + GICD_ICFGR + off;
    let v = read32(addr);
    write32(addr, if edge { v | bit } else { v & !bit });
}

pub fn is_edge(intid: u32) -> bool {
    let (off, bit) = cfg_reg(intid);
    read32(gicd() + GICD_ICFGR + off) & bit != 0
}

pub fn set_priority(intid: u32, priority: u8) {
    write8(gicd() + GICD_IPRIORITYR + intid as usize, priority);
}

pub fn is_pending(intid: u32) -> bool {
    let (off, bit) = bit_reg(intid);
    read32(gicd() + GICD_ISPENDR + off) & bit != 0
}

pub fn set_pending(intid: u32, on: bool) {
    let (off, bit) = bit_reg(intid);
    let reg = if on { GICD_ISPENDR } else { GICD_ICPENDR };
    write32(gicd() + reg + off, bit);
}

pub fn set_pmr(pmr: u8) {
    write32(cpu_if_base() + GICC_PMR, u32::from(pmr));
}

pub fn pmr() -> u8 {
    read32(cpu_if_base() + GICC_PMR) as u8
}

pub fn send_sgi(intid: u32, target: SgiTarget) {
    let v = match target {
        SgiTarget::List(mask) => ((mask & 0xff) << 16) | (intid & 0xf),
        SgiTarget::SelfOnly => SGIR_FILTER_SELF | (intid & 0xf),
    };
    // Make earlier memory writes visible to the target before it can take the SGI.
    barrier::dsb(barrier::ISHST);
    write32(gicd() + GICD_SGIR, v);
}

pub fn iar() -> u32 {
    read32(cpu_if_base() + GICC_IAR)
}

pub fn eoir(raw: u32) {
    write32(cpu_if_base() + GICC_EOIR, raw);
}
