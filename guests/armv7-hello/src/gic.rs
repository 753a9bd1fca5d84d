//! Just enough of the GIC (v2 or v3, told apart by `GICD_PIDR2.ArchRev`) at QEMU virt's
//! addresses to take the virtual timer's PPI: enable it, and acknowledge and end it.

use core::arch::asm;
use core::ptr::{read_volatile, write_volatile};

/// Distributor.
const GICD: usize = 0x0800_0000;
/// `GICD_CTLR`.
const GICD_CTLR: usize = 0x0;
/// `GICD_PIDR2`: `ArchRev` in bits [7:4].
const GICD_PIDR2: usize = 0xffe8;
/// GICv2 CPU interface.
const GICC: usize = 0x0801_0000;
/// `GICC_CTLR`, `GICC_PMR`, `GICC_IAR`, `GICC_EOIR`.
const GICC_CTLR: usize = 0x0;
const GICC_PMR: usize = 0x4;
const GICC_IAR: usize = 0xc;
const GICC_EOIR: usize = 0x10;
/// `GICD_ISENABLER0` (GICv2) / `GICR_ISENABLER0` in `SGI_base` (GICv3).
const ISENABLER0: usize = 0x100;
/// `GICR_IGROUPR0` in `SGI_base`.
const IGROUPR0: usize = 0x80;
/// The first redistributor (vCPU 0) and its `SGI_base` frame.
const GICR: usize = 0x080a_0000;
const GICR_WAKER: usize = 0x14;
const SGI_BASE: usize = 0x1_0000;
/// `GICR_WAKER.ProcessorSleep`, `ChildrenAsleep`.
const WAKER_SLEEP: u32 = 1 << 1;
const WAKER_ASLEEP: u32 = 1 << 2;
/// `GICD_CTLR` for GICv3: `ARE_NS` and both group enables.
const GICD_CTLR_V3: u32 = (1 << 4) | 0b11;
/// Lowest priority mask: everything passes.
const PMR_ALL: u32 = 0xff;
/// The mask of an INTID in `IAR`.
const INTID_MASK: u32 = 0x3ff;

/// The GIC version of the machine.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V2,
    V3,
}

fn rd(a: usize) -> u32 {
    // SAFETY: a GIC register of QEMU virt's map (MMU off).
    unsafe { read_volatile(a as *const u32) }
}

fn wr(a: usize, v: u32) {
    // SAFETY: as for `rd`.
    unsafe { write_volatile(a as *mut u32, v) }
}

/// The GIC's architecture version.
pub fn version() -> Version {
    if (rd(GICD + GICD_PIDR2) >> 4) & 0xf >= 3 {
        Version::V3
    } else {
        Version::V2
    }
}

/// Enables the distributor, this CPU's interface and PPI `intid` (Group 1).
pub fn enable(v: Version, intid: u32) {
    match v {
        Version::V2 => {
            wr(GICD + GICD_CTLR, 1);
            wr(GICD + ISENABLER0, 1 << intid);
            wr(GICC + GICC_PMR, PMR_ALL);
            wr(GICC + GICC_CTLR, 1);
        }
        Version::V3 => {
            wr(GICD + GICD_CTLR, GICD_CTLR_V3);
            wr(GICR + GICR_WAKER, rd(GICR + GICR_WAKER) & !WAKER_SLEEP);
            while rd(GICR + GICR_WAKER) & WAKER_ASLEEP != 0 {}
            wr(GICR + SGI_BASE + IGROUPR0, u32::MAX);
            wr(GICR + SGI_BASE + ISENABLER0, 1 << intid);
            // SAFETY: the GICv3 CPU interface in AArch32: ICC_SRE (SRE), ICC_PMR,
            // ICC_IGRPEN1; the hypervisor's virtual interface serves them.
            unsafe {
                asm!(
                    "mrc p15, 0, {t}, c12, c12, 5",
                    "orr {t}, {t}, #1",
                    "mcr p15, 0, {t}, c12, c12, 5",
                    "isb",
                    "mcr p15, 0, {pmr}, c4, c6, 0",
                    "mcr p15, 0, {one}, c12, c12, 7",
                    "isb",
                    t = out(reg) _,
                    pmr = in(reg) PMR_ALL,
                    one = in(reg) 1u32,
                    options(nostack),
                );
            }
        }
    }
}

/// Acknowledges the highest-priority pending interrupt: its INTID (1023: none).
pub fn ack(v: Version) -> u32 {
    match v {
        Version::V2 => rd(GICC + GICC_IAR) & INTID_MASK,
        Version::V3 => {
            let iar: u32;
            // SAFETY: ICC_IAR1 read.
            unsafe { asm!("mrc p15, 0, {}, c12, c12, 0", out(reg) iar, options(nostack)) };
            iar & INTID_MASK
        }
    }
}

/// Ends interrupt `intid`.
pub fn eoi(v: Version, intid: u32) {
    match v {
        Version::V2 => wr(GICC + GICC_EOIR, intid),
        // SAFETY: ICC_EOIR1 write.
        Version::V3 => unsafe {
            asm!("mcr p15, 0, {}, c12, c12, 1", "isb", in(reg) intid, options(nostack))
        },
    }
}
