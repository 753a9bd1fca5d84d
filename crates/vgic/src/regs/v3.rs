//! GICv3 distributor (`GICD`, 64 KiB) and redistributors (`GICR`, one 128 KiB frame per vCPU:
//! RD_base then SGI_base).
//!
//! The VM sees a GIC with a single security state (`GICD_CTLR.DS` = 1, like KVM): bit 0 of
//! `GICD_CTLR` enables group 0, bit 1 group 1 (`EnableGrp1A` in the non-secure naming Linux
//! uses), affinity routing is always on (`ARE` reads as one) and `RWP` is always zero.
//! `IGRPMODR` is RAZ/WI as the architecture requires with `DS` = 1. No LPIs, no ITS.

use super::common::*;
use super::table::{self, extract, raz, wi, Ctx, Region, W32, W64, W8};
use crate::config::MPIDR_AFF_MASK;
use crate::model::{Vgic, NR_PRIVATE};
use crate::VgicError;

/// `GICD_IROUTER.Interrupt_Routing_Mode`: 1-of-N.
pub(crate) const IROUTER_IRM: u64 = 1 << 31;
/// Writable bits of `GICD_IROUTER`: Aff0-2, IRM, Aff3.
const IROUTER_MASK: u64 = 0xff_8000_0000 | 0xff_ffff;
/// `GICD_PIDR2`/`GICR_PIDR2`: ArchRev 3.
pub(crate) const PIDR2_V3: u32 = 0x3b;
/// Size of one redistributor frame (RD_base + SGI_base).
pub const GICR_FRAME_SIZE: u64 = 0x2_0000;
/// Offset of SGI_base inside a redistributor frame.
pub const GICR_SGI_BASE: u64 = 0x1_0000;

const CTLR_ARE: u32 = 1 << 4;
const CTLR_DS: u32 = 1 << 6;
const WAKER_PS: u32 = 1 << 1;
const WAKER_CA: u32 = 1 << 2;

/// ID registers at 0xFFD0..0x10000.
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

/// The GICv3 distributor, sorted by offset. Registers of private interrupts are RAZ/WI here
/// (affinity routing: they live in the redistributors).
pub(crate) static GICD_V3: &[Region] = &[
    Region::reg(0x0000, 4, W32, read_ctlr, write_ctlr),
    Region::reg(0x0004, 4, W32, read_typer, wi),
    Region::reg(0x0008, 4, W32, read_iidr, wi),
    // TYPER2 (no vSGIs, no extended ranges) and STATUSR.
    Region::reg(0x000c, 8, W32, raz, wi),
    Region::per_irq(0x0080, 1, W32, read_group, write_group),
    Region::per_irq(0x0100, 1, W32, read_enable, write_senable),
    Region::per_irq(0x0180, 1, W32, read_enable, write_cenable),
    Region::per_irq(0x0200, 1, W32, read_pending, write_spending),
    Region::per_irq(0x0280, 1, W32, read_pending, write_cpending),
    Region::per_irq(0x0300, 1, W32, read_active, write_sactive),
    Region::per_irq(0x0380, 1, W32, read_active, write_cactive),
    Region::per_irq(0x0400, 8, W8 | W32, read_priority, write_priority),
    // ITARGETSR: RAZ/WI with affinity routing.
    Region::per_irq(0x0800, 8, W8 | W32, raz, wi),
    Region::per_irq(0x0c00, 2, W32, read_config, write_config),
    // IGRPMODR (RAZ/WI with DS=1), NSACR.
    Region::reg(0x0d00, 0x80, W32, raz, wi),
    Region::reg(0x0e00, 0x100, W32, raz, wi),
    // SGIR, CPENDSGIR, SPENDSGIR: RAZ/WI with affinity routing.
    Region::reg(0x0f00, 4, W32, raz, wi),
    Region::reg(0x0f10, 0x20, W8 | W32, raz, wi),
    Region::reg(0x6000, 8 * 1024, W32 | W64, read_irouter, write_irouter),
    Region::reg(0xffd0, 0x30, W32, read_id, wi),
];

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

/// RD_base and SGI_base of one redistributor frame, sorted by offset within the frame.
pub(crate) static GICR: &[Region] = &[
    // CTLR: no LPIs, RWP/UWP zero.
    Region::reg(0x0000, 4, W32, raz, wi),
    Region::reg(0x0004, 4, W32, read_iidr, wi),
    Region::reg(0x0008, 8, W32 | W64, read_gicr_typer, wi),
    Region::reg(0x0010, 4, W32, raz, wi),
    Region::reg(0x0014, 4, W32, read_waker, write_waker),
    // PROPBASER, PENDBASER: no LPIs.
    Region::reg(0x0070, 0x10, W32 | W64, raz, wi),
    Region::reg(0xffd0, 0x30, W32, read_id, wi),
    Region::per_irq_len(0x1_0080, 4, 1, W32, read_group, write_group),
    Region::per_irq_len(0x1_0100, 4, 1, W32, read_enable, write_senable),
    Region::per_irq_len(0x1_0180, 4, 1, W32, read_enable, write_cenable),
    Region::per_irq_len(0x1_0200, 4, 1, W32, read_pending, write_spending),
    Region::per_irq_len(0x1_0280, 4, 1, W32, read_pending, write_cpending),
    Region::per_irq_len(0x1_0300, 4, 1, W32, read_active, write_sactive),
    Region::per_irq_len(0x1_0380, 4, 1, W32, read_active, write_cactive),
    Region::per_irq_len(0x1_0400, 32, 8, W8 | W32, read_priority, write_priority),
    Region::per_irq_len(0x1_0c00, 8, 2, W32, read_config, write_config),
    // IGRPMODR0 (RAZ/WI with DS=1), NSACR.
    Region::reg(0x1_0d00, 4, W32, raz, wi),
    Region::reg(0x1_0e00, 4, W32, raz, wi),
    Region::reg(0x1_ffd0, 0x30, W32, read_id, wi),
];

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
        table::read(GICR, self, &ctx, off, size_bytes).map_err(|e| rebase(e, offset - off))
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
        table::write(GICR, self, &ctx, off, size_bytes, value).map_err(|e| rebase(e, offset - off))
    }
}

/// Reports errors with the offset relative to the region base.
fn rebase(e: VgicError, base: u64) -> VgicError {
    match e {
        VgicError::Reserved { offset } => VgicError::Reserved {
            offset: offset + base,
        },
        VgicError::BadWidth { offset, size } => VgicError::BadWidth {
            offset: offset + base,
            size,
        },
        VgicError::Misaligned { offset, size } => VgicError::Misaligned {
            offset: offset + base,
            size,
        },
        e => e,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tables_sorted() {
        assert!(super::table::well_formed(super::GICD_V3));
        assert!(super::table::well_formed(super::GICR));
    }
}
