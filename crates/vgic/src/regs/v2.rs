//! GICv2 distributor (`GICD`, 4 KiB).

use super::common::*;
use super::offsets::gicd_v2::*;
use super::table::{self, extract, per_irq, raz, reg, wi, word_index, Ctx, Frame, Region, W32, W8};
use crate::model::irq::Irq;
use crate::model::{Vgic, NR_PRIVATE, NR_SGIS};
use crate::VgicError;

/// `GICD_IIDR` value: implementer ARM (0x43B).
pub(crate) const IIDR: u32 = 0x0000_043b;
/// `GICD_PIDR2`: ArchRev 2 in bits `[7:4]`.
pub(crate) const PIDR2_V2: u32 = 0x2b;

/// Peripheral/component ID registers `GICD_PIDR4..GICD_CIDR3` (GIC-400 values).
const ID_REGS: [u32; 12] = [
    0x04, 0x00, 0x00, 0x00, // PIDR4..7
    0x90, 0xb4, PIDR2_V2, 0x00, // PIDR0..3
    0x0d, 0xf0, 0x05, 0xb1, // CIDR0..3
];

fn read_ctlr(v: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    u64::from(v.ctlr & 3)
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
    let cpus = (v.nr_vcpus() as u64 - 1) & 7;
    lines | (cpus << 5)
}

fn read_iidr(_: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    u64::from(IIDR)
}

fn valid_cpus(v: &Vgic) -> u8 {
    ((1u32 << v.nr_vcpus().min(8)) - 1) as u8
}

/// `GICD_ITARGETSR` field: SGIs and PPIs read as the accessing CPU's own bit.
fn get_target(_: &Vgic, c: &Ctx, intid: u32, irq: &Irq) -> u64 {
    if intid < NR_PRIVATE {
        1 << (c.vcpu & 7)
    } else {
        u64::from(irq.targets)
    }
}

/// `GICD_ITARGETSR` field: read-only for SGIs and PPIs, non-existent CPUs dropped.
fn set_target(v: &mut Vgic, c: &Ctx, intid: u32, f: u64) {
    let mask = valid_cpus(v);
    if intid >= NR_PRIVATE {
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.targets = f as u8 & mask;
        }
    }
}

fn read_itargetsr(v: &mut Vgic, c: &Ctx, first: u32, size: u8) -> u64 {
    table::read_irqs(v, c, first, size, 8, get_target)
}

fn write_itargetsr(v: &mut Vgic, c: &Ctx, first: u32, size: u8, val: u64) {
    table::write_irqs(v, c, first, size, 8, val, set_target)
}

/// Decoded `GICD_SGIR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GicdSgir {
    /// TargetListFilter `[25:24]`: 0 = list, 1 = all but self, 2 = self, 3 = reserved.
    pub filter: u8,
    /// CPUTargetList `[23:16]`.
    pub target_list: u8,
    /// SGIINTID `[3:0]`.
    pub intid: u32,
}

impl GicdSgir {
    /// Decodes a written value.
    pub fn decode(val: u32) -> Self {
        Self {
            filter: ((val >> 24) & 3) as u8,
            target_list: (val >> 16) as u8,
            intid: val & 0xf,
        }
    }
    /// Target mask for `sender` among `nr_vcpus` vCPUs (`None`: reserved filter).
    pub fn targets(&self, sender: usize, nr_vcpus: usize) -> Option<u8> {
        let all = ((1u32 << nr_vcpus.min(8)) - 1) as u8;
        let me = 1u8 << (sender & 7);
        match self.filter {
            0 => Some(self.target_list & all),
            1 => Some(all & !me),
            2 => Some(me),
            _ => None,
        }
    }
}

/// `GICD_SGIR` write: pends the SGI at each target (a reserved filter is counted).
fn write_sgir(v: &mut Vgic, c: &Ctx, _: u32, _: u8, val: u64) {
    let sgir = GicdSgir::decode(val as u32);
    match sgir.targets(c.vcpu, v.nr_vcpus()) {
        Some(mut mask) => {
            while mask != 0 {
                let t = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                v.pend_sgi(c.vcpu, t, sgir.intid);
            }
        }
        None => v.stats.reserved_accesses += 1,
    }
}

/// `GICD_CPENDSGIR`/`SPENDSGIR`: one byte per SGI of the accessing vCPU, one bit per source.
fn read_sgi_pending(v: &mut Vgic, c: &Ctx, at: u32, size: u8) -> u64 {
    let mut val = 0;
    for b in 0..u32::from(size) {
        if let Some(irq) = v.irq(c.target, at + b) {
            val |= u64::from(irq.sgi_pending | irq.lr_sgi_pending) << (b * 8);
        }
    }
    val
}

fn write_spendsgir(v: &mut Vgic, c: &Ctx, at: u32, size: u8, val: u64) {
    let mask = valid_cpus(v);
    for b in 0..u32::from(size) {
        let intid = at + b;
        if intid >= NR_SGIS {
            continue;
        }
        let bits = (val >> (b * 8)) as u8 & mask;
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.sgi_pending |= bits;
        }
        v.update(c.target, intid);
    }
}

fn write_cpendsgir(v: &mut Vgic, c: &Ctx, at: u32, size: u8, val: u64) {
    for b in 0..u32::from(size) {
        let intid = at + b;
        if intid >= NR_SGIS {
            continue;
        }
        let bits = (val >> (b * 8)) as u8;
        if let Some(irq) = v.irq_mut(c.target, intid) {
            irq.sgi_pending &= !bits;
            irq.cpend_src |= bits & irq.lr_sgi_pending;
        }
        v.update(c.target, intid);
    }
}

/// ID register read; `at` is the byte offset from `GICD_PIDR4`.
fn read_id(_: &mut Vgic, _: &Ctx, at: u32, size: u8) -> u64 {
    extract(&ID_REGS, at, size)
}

/// The GICv2 distributor (4 KiB): [`GICD_V2_ROWS`] and their word index.
pub(crate) static GICD_V2: Frame = Frame {
    rows: GICD_V2_ROWS,
    index: &GICD_V2_INDEX,
};
static GICD_V2_INDEX: [u8; 0x1000 / 4] = word_index(GICD_V2_ROWS);

/// The GICv2 distributor's registers, sorted by offset. Everything else in the 4 KiB frame
/// (and beyond) is reserved.
#[rustfmt::skip]
pub(crate) const GICD_V2_ROWS: &[Region] = &[
    reg!(GICD_CTLR, 4, W32, read_ctlr, write_ctlr),
    reg!(GICD_TYPER, 4, W32, read_typer, wi),
    reg!(GICD_IIDR, 4, W32, read_iidr, wi),
    per_irq!(GICD_IGROUPR, 1024, 1, W32, read_igroupr, write_igroupr),
    per_irq!(GICD_ISENABLER, 1024, 1, W32, read_enable, write_isenabler),
    per_irq!(GICD_ICENABLER, 1024, 1, W32, read_enable, write_icenabler),
    per_irq!(GICD_ISPENDR, 1024, 1, W32, read_pending, write_ispendr),
    per_irq!(GICD_ICPENDR, 1024, 1, W32, read_pending, write_icpendr),
    per_irq!(GICD_ISACTIVER, 1024, 1, W32, read_active, write_isactiver),
    per_irq!(GICD_ICACTIVER, 1024, 1, W32, read_active, write_icactiver),
    per_irq!(GICD_IPRIORITYR, 1024, 8, W8 | W32, read_ipriorityr, write_ipriorityr),
    per_irq!(GICD_ITARGETSR, 1024, 8, W8 | W32, read_itargetsr, write_itargetsr),
    per_irq!(GICD_ICFGR, 1024, 2, W32, read_icfgr, write_icfgr),
    // PPI/SPI status on the GIC-400 (GICD_PPISR, GICD_SPISR<n>): RAZ/WI.
    reg!(GICD_IMPDEF, 0x100, W32, raz, wi),
    // Single security state: RAZ/WI.
    reg!(GICD_NSACR, 0x100, W32, raz, wi),
    reg!(GICD_SGIR, 4, W32, raz, write_sgir),
    reg!(GICD_CPENDSGIR, 16, W8 | W32, read_sgi_pending, write_cpendsgir),
    reg!(GICD_SPENDSGIR, 16, W8 | W32, read_sgi_pending, write_spendsgir),
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

impl Vgic {
    fn gicd_ctx(&self, vcpu: usize) -> Result<Ctx, VgicError> {
        self.check_vcpu(vcpu)?;
        Ok(Ctx {
            vcpu,
            target: vcpu,
            no_private: self.version == crate::GicVersion::V3,
        })
    }

    /// Emulates a guest read of `size_bytes` at `offset` in the distributor frame (GICv2 or
    /// GICv3 `GICD`, by the configured version).
    ///
    /// Errors: [`VgicError::Reserved`] (RAZ: complete the read with 0 and log),
    /// [`VgicError::BadWidth`]/[`VgicError::Misaligned`] (inject an external abort),
    /// [`VgicError::BadVcpu`].
    pub fn gicd_read(
        &mut self,
        vcpu: usize,
        offset: u64,
        size_bytes: u8,
    ) -> Result<u64, VgicError> {
        let ctx = self.gicd_ctx(vcpu)?;
        match self.version {
            crate::GicVersion::V2 => table::read(&GICD_V2, self, &ctx, offset, size_bytes),
            crate::GicVersion::V3 => {
                table::read(&super::v3::GICD_V3, self, &ctx, offset, size_bytes)
            }
        }
    }

    /// [`Vgic::gicd_read`] of the common access only: an aligned 32-bit read of a register
    /// that allows it, by an existing vCPU. `None`, with nothing done (nothing counted, no
    /// state read), for every other access and every error: the caller then takes
    /// [`Vgic::gicd_read`], which gives the same value or the error. A hot caller (an MMIO
    /// exit) keeps the error handling out of its path this way.
    #[inline(always)]
    pub fn gicd_read_lean(&mut self, vcpu: usize, offset: u64, size_bytes: u8) -> Option<u64> {
        let ctx = self.gicd_ctx(vcpu).ok()?;
        let frame = match self.version {
            crate::GicVersion::V2 => &GICD_V2,
            crate::GicVersion::V3 => &super::v3::GICD_V3,
        };
        table::read_lean(frame, self, &ctx, offset, size_bytes)
    }

    /// Emulates a guest write to the distributor frame; errors as for [`Vgic::gicd_read`]
    /// (a reserved offset ignores the write).
    pub fn gicd_write(
        &mut self,
        vcpu: usize,
        offset: u64,
        size_bytes: u8,
        value: u64,
    ) -> Result<(), VgicError> {
        let ctx = self.gicd_ctx(vcpu)?;
        match self.version {
            crate::GicVersion::V2 => table::write(&GICD_V2, self, &ctx, offset, size_bytes, value),
            crate::GicVersion::V3 => {
                table::write(&super::v3::GICD_V3, self, &ctx, offset, size_bytes, value)
            }
        }
    }
}
