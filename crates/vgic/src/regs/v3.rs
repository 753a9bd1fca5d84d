//! GICv3 distributor (`GICD`, 64 KiB) and redistributors (`GICR`, one 128 KiB frame per vCPU:
//! RD_base then SGI_base).
//!
//! The VM sees a GIC with a single security state (`GICD_CTLR.DS` = 1, like KVM): bit 0 of
//! `GICD_CTLR` enables group 0, bit 1 group 1 (`EnableGrp1A` in the non-secure naming Linux
//! uses), affinity routing is always on (`ARE` reads as one) and `RWP` is always zero.
//! `IGRPMODR` is RAZ/WI as the architecture requires with `DS` = 1. No LPIs, no ITS.

use super::common::*;
use super::offsets::gicd_v3::*;
use super::offsets::gicr::*;
use super::table::{
    self, extract, per_irq, raz, reg, wi, word_index, Ctx, Frame, Region, W32, W64, W8,
};
use crate::config::MPIDR_AFF_MASK;
use crate::model::{Vgic, NR_PRIVATE};
use crate::VgicError;

/// `GICD_IROUTER.Interrupt_Routing_Mode`: 1-of-N.
pub(crate) const IROUTER_IRM: u64 = 1 << 31;
/// Writable bits of `GICD_IROUTER`: Aff0-2, IRM, Aff3.
const IROUTER_MASK: u64 = 0xff_8000_0000 | 0xff_ffff;
/// `GICD_PIDR2`/`GICR_PIDR2`: ArchRev 3.
pub(crate) const PIDR2_V3: u32 = 0x3b;

const CTLR_ARE: u32 = 1 << 4;
const CTLR_DS: u32 = 1 << 6;
const WAKER_PS: u32 = 1 << 1;
const WAKER_CA: u32 = 1 << 2;

/// ID registers `GICD_PIDR4..GICD_CIDR3` and `GICR_PIDR4..GICR_CIDR3` (GIC-500 values).
const ID_REGS: [u32; 12] = [
    0x04, 0x00, 0x00, 0x00, // PIDR4..7
    0x92, 0xb4, PIDR2_V3, 0x00, // PIDR0..3
    0x0d, 0xf0, 0x05, 0xb1, // CIDR0..3
];

/// MPIDR-layout affinity named by an `IROUTER` value: the layouts coincide (Aff0-2 in
/// `[23:0]`, Aff3 in `[39:32]`); only IRM has to go.
pub(crate) fn irouter_to_mpidr(route: u64) -> u64 {
    route & MPIDR_AFF_MASK
}

fn read_ctlr(v: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    u64::from((v.ctlr & 3) | CTLR_ARE | CTLR_DS)
}

fn write_ctlr(v: &mut Vgic, _: &Ctx, _: u32, _: u8, val: u64) {
    let old = v.ctlr;
    v.ctlr = (val & 3) as u32;
    if v.ctlr != old {
        v.update_all();
    }
}

fn read_typer(v: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    let lines = u64::from((NR_PRIVATE + v.nr_spis) / 32 - 1);
    // IDbits [23:19] = 9 (10 INTID bits), A3V [24] = 1, No1N [25] = 0, LPIS = 0.
    lines | (9 << 19) | (1 << 24)
}

fn read_iidr(_: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    u64::from(super::v2::IIDR)
}

/// ID register read; `at` is the byte offset from `GICD_PIDR4`/`GICR_PIDR4`.
fn read_id(_: &mut Vgic, _: &Ctx, at: u32, size: u8) -> u64 {
    extract(&ID_REGS, at, size)
}

fn read_irouter(v: &mut Vgic, _: &Ctx, at: u32, size: u8) -> u64 {
    let intid = at / 8;
    if intid < NR_PRIVATE {
        return 0;
    }
    let Some(irq) = v.irq(0, intid) else {
        return 0;
    };
    if at % 8 == 4 {
        irq.route >> 32
    } else if size == 4 {
        irq.route & 0xffff_ffff
    } else {
        irq.route
    }
}

fn write_irouter(v: &mut Vgic, _: &Ctx, at: u32, size: u8, val: u64) {
    let intid = at / 8;
    if intid < NR_PRIVATE {
        return;
    }
    let Some(irq) = v.irq_mut(0, intid) else {
        return;
    };
    let new = if at % 8 == 4 {
        (irq.route & 0xffff_ffff) | (val << 32)
    } else if size == 4 {
        (irq.route & !0xffff_ffff) | val
    } else {
        val
    };
    irq.route = new & IROUTER_MASK;
    v.update(0, intid);
}

/// The GICv3 distributor (64 KiB): [`GICD_V3_ROWS`] and their word index.
pub(crate) static GICD_V3: Frame = Frame {
    rows: GICD_V3_ROWS,
    index: &GICD_V3_INDEX,
};
static GICD_V3_INDEX: [u8; 0x1_0000 / 4] = word_index(GICD_V3_ROWS);

/// The GICv3 distributor's registers, sorted by offset. Registers of private interrupts are
/// RAZ/WI here (affinity routing: they live in the redistributors).
#[rustfmt::skip]
pub(crate) const GICD_V3_ROWS: &[Region] = &[
    reg!(GICD_CTLR, 4, W32, read_ctlr, write_ctlr),
    reg!(GICD_TYPER, 4, W32, read_typer, wi),
    reg!(GICD_IIDR, 4, W32, read_iidr, wi),
    // No vSGIs, no extended ranges.
    reg!(GICD_TYPER2, 4, W32, raz, wi),
    reg!(GICD_STATUSR, 4, W32, raz, wi),
    per_irq!(GICD_IGROUPR, 1024, 1, W32, read_igroupr, write_igroupr),
    per_irq!(GICD_ISENABLER, 1024, 1, W32, read_enable, write_isenabler),
    per_irq!(GICD_ICENABLER, 1024, 1, W32, read_enable, write_icenabler),
    per_irq!(GICD_ISPENDR, 1024, 1, W32, read_pending, write_ispendr),
    per_irq!(GICD_ICPENDR, 1024, 1, W32, read_pending, write_icpendr),
    per_irq!(GICD_ISACTIVER, 1024, 1, W32, read_active, write_isactiver),
    per_irq!(GICD_ICACTIVER, 1024, 1, W32, read_active, write_icactiver),
    per_irq!(GICD_IPRIORITYR, 1024, 8, W8 | W32, read_ipriorityr, write_ipriorityr),
    // RAZ/WI with affinity routing.
    per_irq!(GICD_ITARGETSR, 1024, 8, W8 | W32, raz, wi),
    per_irq!(GICD_ICFGR, 1024, 2, W32, read_icfgr, write_icfgr),
    // RAZ/WI with DS = 1.
    reg!(GICD_IGRPMODR, 0x80, W32, raz, wi),
    reg!(GICD_NSACR, 0x100, W32, raz, wi),
    // RAZ/WI with affinity routing.
    reg!(GICD_SGIR, 4, W32, raz, wi),
    reg!(GICD_CPENDSGIR, 16, W8 | W32, raz, wi),
    reg!(GICD_SPENDSGIR, 16, W8 | W32, raz, wi),
    reg!(GICD_IROUTER, 8 * 1024, W32 | W64, read_irouter, write_irouter),
    reg!(GICD_PIDR4, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR5, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR6, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR7, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR0, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR1, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR2, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_PIDR3, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_CIDR0, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_CIDR1, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_CIDR2, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
    reg!(GICD_CIDR3, 4, W32, read_id, wi).arg_from(GICD_PIDR4),
];

/// `GICR_TYPER`: Processor_Number, affinity, `Last` on the last frame; 32- or 64-bit.
fn read_gicr_typer(v: &mut Vgic, c: &Ctx, at: u32, size: u8) -> u64 {
    let n = c.target;
    let mpidr = v.vcpus.get(n).map_or(0, |d| d.mpidr);
    let aff = (mpidr & 0xff_ffff) | ((mpidr >> 8) & 0xff00_0000);
    let last = u64::from(n + 1 == v.nr_vcpus());
    let val = (aff << 32) | (((n as u64) & 0xffff) << 8) | (last << 4);
    if at == 4 {
        val >> 32
    } else if size == 4 {
        val & 0xffff_ffff
    } else {
        val
    }
}

fn read_waker(v: &mut Vgic, c: &Ctx, _: u32, _: u8) -> u64 {
    match v.vcpus.get(c.target) {
        Some(d) if d.sleep => u64::from(WAKER_PS | WAKER_CA),
        _ => 0,
    }
}

fn write_waker(v: &mut Vgic, c: &Ctx, _: u32, _: u8, val: u64) {
    if let Some(d) = v.vcpus.get_mut(c.target) {
        d.sleep = val as u32 & WAKER_PS != 0;
    }
}

/// `RD_base` of a redistributor frame: [`GICR_RD_ROWS`] and their word index.
pub(crate) static GICR_RD: Frame = Frame {
    rows: GICR_RD_ROWS,
    index: &GICR_RD_INDEX,
};
static GICR_RD_INDEX: [u8; GICR_SGI_BASE as usize / 4] = word_index(GICR_RD_ROWS);

/// The registers of `RD_base`, sorted by offset.
#[rustfmt::skip]
pub(crate) const GICR_RD_ROWS: &[Region] = &[
    // No LPIs: EnableLPIs, RWP, UWP zero.
    reg!(GICR_CTLR, 4, W32, raz, wi),
    reg!(GICR_IIDR, 4, W32, read_iidr, wi),
    reg!(GICR_TYPER, 8, W32 | W64, read_gicr_typer, wi),
    reg!(GICR_STATUSR, 4, W32, raz, wi),
    reg!(GICR_WAKER, 4, W32, read_waker, write_waker),
    // No LPIs.
    reg!(GICR_PROPBASER, 8, W32 | W64, raz, wi),
    reg!(GICR_PENDBASER, 8, W32 | W64, raz, wi),
    reg!(GICR_PIDR4, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR5, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR6, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR7, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR0, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR1, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR2, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR3, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR0, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR1, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR2, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR3, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
];

/// `SGI_base` of a redistributor frame: [`GICR_SGI_ROWS`] and their word index.
pub(crate) static GICR_SGI: Frame = Frame {
    rows: GICR_SGI_ROWS,
    index: &GICR_SGI_INDEX,
};
static GICR_SGI_INDEX: [u8; (GICR_FRAME_SIZE - GICR_SGI_BASE) as usize / 4] =
    word_index(GICR_SGI_ROWS);

/// The registers of `SGI_base` (offsets from `SGI_base`), sorted by offset.
#[rustfmt::skip]
pub(crate) const GICR_SGI_ROWS: &[Region] = &[
    per_irq!(GICR_IGROUPR0, 32, 1, W32, read_igroupr, write_igroupr),
    per_irq!(GICR_ISENABLER0, 32, 1, W32, read_enable, write_isenabler),
    per_irq!(GICR_ICENABLER0, 32, 1, W32, read_enable, write_icenabler),
    per_irq!(GICR_ISPENDR0, 32, 1, W32, read_pending, write_ispendr),
    per_irq!(GICR_ICPENDR0, 32, 1, W32, read_pending, write_icpendr),
    per_irq!(GICR_ISACTIVER0, 32, 1, W32, read_active, write_isactiver),
    per_irq!(GICR_ICACTIVER0, 32, 1, W32, read_active, write_icactiver),
    per_irq!(GICR_IPRIORITYR, 32, 8, W8 | W32, read_ipriorityr, write_ipriorityr),
    per_irq!(GICR_ICFGR0, 16, 2, W32, read_icfgr, write_icfgr),
    // PPIs 16..31: the array continues from GICR_ICFGR0.
    per_irq!(GICR_ICFGR1, 16, 2, W32, read_icfgr, write_icfgr).arg_from(GICR_ICFGR0),
    // RAZ/WI with DS = 1.
    reg!(GICR_IGRPMODR0, 4, W32, raz, wi),
    reg!(GICR_NSACR, 4, W32, raz, wi),
    // The ID registers again, as in RD_base.
    reg!(GICR_PIDR4, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR5, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR6, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR7, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR0, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR1, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR2, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_PIDR3, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR0, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR1, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR2, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
    reg!(GICR_CIDR3, 4, W32, read_id, wi).arg_from(GICR_PIDR4),
];

/// The table for an offset inside a redistributor frame, and the offset of that table's
/// frame (`RD_base` or `SGI_base`).
fn gicr_table(off: u64) -> (&'static Frame, u64) {
    if off < GICR_SGI_BASE {
        (&GICR_RD, 0)
    } else {
        (&GICR_SGI, GICR_SGI_BASE)
    }
}

impl Vgic {
    fn gicr_ctx(&mut self, vcpu: usize, offset: u64) -> Result<(Ctx, u64), VgicError> {
        self.check_vcpu(vcpu)?;
        if self.version != crate::GicVersion::V3 {
            return Err(VgicError::WrongVersion);
        }
        let frame = offset / GICR_FRAME_SIZE;
        if frame >= self.nr_vcpus() as u64 {
            self.stats.reserved_accesses += 1;
            return Err(VgicError::Reserved { offset });
        }
        let ctx = Ctx {
            vcpu,
            target: frame as usize,
            no_private: false,
        };
        Ok((ctx, offset % GICR_FRAME_SIZE))
    }

    /// Emulates a guest read in the redistributor region. `offset` is relative to the base of
    /// the region, which holds one [`GICR_FRAME_SIZE`] frame per vCPU in vCPU order;
    /// `accessing_vcpu` is the vCPU doing the access (any vCPU may read any frame). Errors as
    /// for [`Vgic::gicd_read`]; [`VgicError::WrongVersion`] on a GICv2 VM.
    pub fn gicr_read(
        &mut self,
        accessing_vcpu: usize,
        offset: u64,
        size_bytes: u8,
    ) -> Result<u64, VgicError> {
        let (ctx, off) = self.gicr_ctx(accessing_vcpu, offset)?;
        let (table, base) = gicr_table(off);
        table::read(table, self, &ctx, off - base, size_bytes)
            .map_err(|e| rebase(e, offset - off + base))
    }

    /// [`Vgic::gicr_read`] of the common access only, as [`Vgic::gicd_read_lean`] is for
    /// the distributor: `None`, with nothing done, for every other access and every error
    /// (a frame beyond the last vCPU included: [`Vgic::gicr_read`] counts it).
    #[inline(always)]
    pub fn gicr_read_lean(
        &mut self,
        accessing_vcpu: usize,
        offset: u64,
        size_bytes: u8,
    ) -> Option<u64> {
        let vcpus = self.nr_vcpus() as u64;
        let frame = offset / GICR_FRAME_SIZE;
        if accessing_vcpu as u64 >= vcpus || frame >= vcpus || self.version != crate::GicVersion::V3
        {
            return None;
        }
        let ctx = Ctx {
            vcpu: accessing_vcpu,
            target: frame as usize,
            no_private: false,
        };
        let off = offset % GICR_FRAME_SIZE;
        let (table, base) = gicr_table(off);
        table::read_lean(table, self, &ctx, off - base, size_bytes)
    }

    /// Emulates a guest write in the redistributor region; see [`Vgic::gicr_read`].
    pub fn gicr_write(
        &mut self,
        accessing_vcpu: usize,
        offset: u64,
        size_bytes: u8,
        value: u64,
    ) -> Result<(), VgicError> {
        let (ctx, off) = self.gicr_ctx(accessing_vcpu, offset)?;
        let (table, base) = gicr_table(off);
        table::write(table, self, &ctx, off - base, size_bytes, value)
            .map_err(|e| rebase(e, offset - off + base))
    }
}

/// Reports errors with the offset relative to the region base.
fn rebase(e: VgicError, base: u64) -> VgicError {
    match e {
        VgicError::Reserved { offset } => VgicError::Reserved {
            offset: offset + base,
        },
        VgicError::BadWidth {
            offset,
            size,
            register,
        } => VgicError::BadWidth {
            offset: offset + base,
            size,
            register,
        },
        VgicError::Misaligned {
            offset,
            size,
            register,
        } => VgicError::Misaligned {
            offset: offset + base,
            size,
            register,
        },
        e => e,
    }
}
