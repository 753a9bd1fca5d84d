//! GICv3: distributor (`GICD`, affinity routing) and redistributors (`GICR`, 128 KiB per CPU:
//! `RD_base` then `SGI_base`); the CPU interface is in [`super::icc`].

use super::{
    bit_reg, cfg_reg, gicd, icc, read32, read64, this_cpu_data, write32, write8, SPI_BASE,
};

/// `GICD_CTLR`: bit 0 EnableGrp1 (NS view; EnableGrp0 when DS = 1), bit 1 EnableGrp1A
/// (EnableGrp1 when DS = 1), bit 4 ARE_NS (ARE when DS = 1), bit 31 RWP.
const GICD_CTLR: usize = 0x0000;
const GICD_CTLR_ENABLE: u32 = 0b11;
const GICD_CTLR_ARE: u32 = 1 << 4;
const GICD_CTLR_RWP: u32 = 1 << 31;
/// `GICD_TYPER` (ITLinesNumber in bits 4:0).
const GICD_TYPER: usize = 0x0004;
/// `GICD_IGROUPRn`.
const GICD_IGROUPR: usize = 0x0080;
/// `GICD_ISENABLERn` / `GICD_ICENABLERn`.
const GICD_ISENABLER: usize = 0x0100;
const GICD_ICENABLER: usize = 0x0180;
/// `GICD_ISPENDRn` / `GICD_ICPENDRn`.
const GICD_ISPENDR: usize = 0x0200;
const GICD_ICPENDR: usize = 0x0280;
/// `GICD_IPRIORITYRn`.
const GICD_IPRIORITYR: usize = 0x0400;
/// `GICD_ICFGRn` (two bits per interrupt; bit 1 of a field = edge-triggered).
const GICD_ICFGR: usize = 0x0c00;
/// `GICD_IROUTERn` (64-bit, n >= 32).
const GICD_IROUTER: usize = 0x6000;

/// Redistributor frame stride (RD_base + SGI_base, no VLPI frames).
const GICR_STRIDE: usize = 0x2_0000;
/// `GICR_TYPER` (64-bit): bits 63:32 affinity, bit 4 Last.
const GICR_TYPER: usize = 0x0008;
const GICR_TYPER_LAST: u64 = 1 << 4;
/// `GICR_WAKER`: bit 1 ProcessorSleep, bit 2 ChildrenAsleep.
const GICR_WAKER: usize = 0x0014;
const WAKER_PROCESSOR_SLEEP: u32 = 1 << 1;
const WAKER_CHILDREN_ASLEEP: u32 = 1 << 2;
/// `SGI_base` offset within a redistributor frame and its registers.
const SGI_BASE_OFFSET: usize = 0x1_0000;
const GICR_IGROUPR0: usize = 0x0080;
const GICR_ISENABLER0: usize = 0x0100;
const GICR_ICENABLER0: usize = 0x0180;
const GICR_ISPENDR0: usize = 0x0200;
const GICR_ICPENDR0: usize = 0x0280;
const GICR_IPRIORITYR: usize = 0x0400;
const GICR_ICFGR0: usize = 0x0c00;

fn wait_rwp() {
    while read32(gicd() + GICD_CTLR) & GICD_CTLR_RWP != 0 {
        core::hint::spin_loop();
    }
}

/// Disables the distributor, sets all SPIs to group 1 and disabled, then enables it with
/// affinity routing.
pub fn init_distributor() {
    let d = gicd();
    write32(d + GICD_CTLR, 0);
    wait_rwp();
    let lines = ((read32(d + GICD_TYPER) & 0x1f) + 1) * 32;
    for intid in (SPI_BASE..lines.min(1020)).step_by(32) {
        let (off, _) = bit_reg(intid);
        write32(d + GICD_ICENABLER + off, u32::MAX);
        write32(d + GICD_ICPENDR + off, u32::MAX);
        write32(d + GICD_IGROUPR + off, u32::MAX);
    }
    wait_rwp();
    write32(d + GICD_CTLR, GICD_CTLR_ARE | GICD_CTLR_ENABLE);
    wait_rwp();
}

/// Finds the redistributor of `mpidr` in `[gicr, gicr + size)`, wakes it, puts its SGIs/PPIs
/// in group 1 and enables the system-register CPU interface. Returns its `RD_base`.
pub fn init_cpu(gicr: usize, size: usize, mpidr: u64) -> Result<usize, &'static str> {
    let aff = (((mpidr >> 32) & 0xff) << 24) | (mpidr & 0xff_ffff);
    let mut rd = gicr;
    let rd_base = loop {
        if size != 0 && rd >= gicr + size {
            return Err("no redistributor for this CPU's affinity");
        }
        let typer = read64(rd + GICR_TYPER);
        if typer >> 32 == aff {
            break rd;
        }
        if typer & GICR_TYPER_LAST != 0 {
            return Err("no redistributor for this CPU's affinity");
        }
        rd += GICR_STRIDE;
    };
    let waker = read32(rd_base + GICR_WAKER);
    write32(rd_base + GICR_WAKER, waker & !WAKER_PROCESSOR_SLEEP);
    while read32(rd_base + GICR_WAKER) & WAKER_CHILDREN_ASLEEP != 0 {
        core::hint::spin_loop();
    }
    let sgi = rd_base + SGI_BASE_OFFSET;
    write32(sgi + GICR_ICENABLER0, u32::MAX);
    write32(sgi + GICR_ICPENDR0, u32::MAX);
    write32(sgi + GICR_IGROUPR0, u32::MAX);

    icc::set_sre(icc::sre() | icc::SRE_SRE);
    if icc::sre() & icc::SRE_SRE == 0 {
        return Err("ICC_SRE_EL1.SRE stays 0: no system-register CPU interface");
    }
    icc::set_ctlr(icc::ctlr() & !icc::CTLR_EOIMODE);
    icc::set_bpr1(0);
    icc::set_igrpen1(1);
    Ok(rd_base)
}

/// Register base for `intid`: this CPU's `SGI_base` for SGIs/PPIs, else the distributor.
fn base_for(intid: u32) -> (usize, bool) {
    if intid < SPI_BASE {
        (this_cpu_data() + SGI_BASE_OFFSET, true)
    } else {
        (gicd(), false)
    }
}

pub fn set_enable(intid: u32, on: bool) {
    let (base, local) = base_for(intid);
    let (off, bit) = bit_reg(intid);
    if !local && on {
        // Route the SPI to this CPU (Interrupt_Routing_Mode 0, affinity of this CPU).
        set_route(intid, affinity_route(crate::smp::this_mpidr()));
    }
    let reg = match (local, on) {
        (true, true) => GICR_ISENABLER0,
        (true, false) => GICR_ICENABLER0,
        (false, true) => GICD_ISENABLER,
        (false, false) => GICD_ICENABLER,
    };
    write32(base + reg + off, bit);
    if !local {
        wait_rwp();
    }
}

/// The `GICD_IROUTER` value naming the CPU with affinity `mpidr` (`Interrupt_Routing_Mode`
/// 0): Aff3 in [39:32], Aff2..Aff0 in [23:0].
pub fn affinity_route(mpidr: u64) -> u64 {
    ((mpidr >> 32) & 0xff) << 32 | (mpidr & 0xff_ffff)
}

/// Writes SPI `intid`'s `GICD_IROUTER` (two 32-bit halves, low first).
pub fn set_route(intid: u32, route: u64) {
    let addr = gicd() + GICD_IROUTER + intid as usize * 8;
    write32(addr, route as u32);
    write32(addr + 4, (route >> 32) as u32);
}

/// Reads SPI `intid`'s `GICD_IROUTER`.
pub fn route(intid: u32) -> u64 {
    let addr = gicd() + GICD_IROUTER + intid as usize * 8;
    u64::from(read32(addr)) | u64::from(read32(addr + 4)) << 32
}

fn cfg_addr(intid: u32) -> usize {
    let (base, local) = base_for(intid);
    let (off, _) = cfg_reg(intid);
    base + if local { GICR_ICFGR0 } else { GICD_ICFGR } + off
}

pub fn set_edge(intid: u32, edge: bool) {
    let (_, bit) = cfg_reg(intid);
    let addr = cfg_addr(intid);
    let v = read32(addr);
    write32(addr, if edge { v | bit } else { v & !bit });
    if intid >= SPI_BASE {
        wait_rwp();
    }
}

pub fn is_edge(intid: u32) -> bool {
    let (_, bit) = cfg_reg(intid);
    read32(cfg_addr(intid)) & bit != 0
}

pub fn set_priority(intid: u32, priority: u8) {
    let (base, local) = base_for(intid);
    let reg = if local {
        GICR_IPRIORITYR
    } else {
        GICD_IPRIORITYR
    };
    write8(base + reg + intid as usize, priority);
}

pub fn is_pending(intid: u32) -> bool {
    let (base, local) = base_for(intid);
    let (off, bit) = bit_reg(intid);
    let reg = if local { GICR_ISPENDR0 } else { GICD_ISPENDR };
    read32(base + reg + off) & bit != 0
}

pub fn set_pending(intid: u32, on: bool) {
    let (base, local) = base_for(intid);
    let (off, bit) = bit_reg(intid);
    let reg = match (local, on) {
        (true, true) => GICR_ISPENDR0,
        (true, false) => GICR_ICPENDR0,
        (false, true) => GICD_ISPENDR,
        (false, false) => GICD_ICPENDR,
    };
    write32(base + reg + off, bit);
}
