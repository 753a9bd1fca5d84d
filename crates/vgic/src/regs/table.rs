//! Register regions: the distributor and redistributor are described as sorted tables of
//! `(offset, length, bits per interrupt, allowed widths, read, write)` instead of one large
//! `match`. A lookup finds the region, checks alignment and width, and turns the offset into
//! the first INTID (per-interrupt regions) or the byte offset inside the region.

use crate::model::irq::Irq;
use crate::model::Vgic;
use crate::VgicError;

/// Byte accesses allowed.
pub(crate) const W8: u8 = 1;
/// 32-bit accesses allowed.
pub(crate) const W32: u8 = 4;
/// 64-bit accesses allowed.
pub(crate) const W64: u8 = 8;

/// Who accesses which banked copy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    /// The vCPU performing the access.
    pub vcpu: usize,
    /// The vCPU whose banked interrupts the frame shows (the accessor for GICD, the frame's
    /// owner for a GICR frame).
    pub target: usize,
    /// Private INTIDs are not visible here (GICv3 GICD with affinity routing): RAZ/WI.
    pub no_private: bool,
}

/// Read handler: `arg` is the first INTID for per-interrupt regions, otherwise the byte
/// offset inside the region.
pub(crate) type ReadFn = fn(&mut Vgic, &Ctx, u32, u8) -> u64;
/// Write handler, same `arg` as [`ReadFn`].
pub(crate) type WriteFn = fn(&mut Vgic, &Ctx, u32, u8, u64);

/// One register region.
pub(crate) struct Region {
    pub offset: u64,
    pub len: u64,
    /// Bits per interrupt, 0 for registers that are not per-interrupt.
    pub bpi: u8,
    /// Allowed access sizes (bitwise or of `W8`, `W32`, `W64`).
    pub widths: u8,
    pub read: ReadFn,
    pub write: WriteFn,
}

impl Region {
    /// A per-interrupt region covering 1024 INTIDs.
    pub const fn per_irq(offset: u64, bpi: u8, widths: u8, read: ReadFn, write: WriteFn) -> Self {
        Self {
            offset,
            len: bpi as u64 * 1024 / 8,
            bpi,
            widths,
            read,
            write,
        }
    }
    /// A per-interrupt region of explicit length (redistributor SGI_base).
    pub const fn per_irq_len(
        offset: u64,
        len: u64,
        bpi: u8,
        widths: u8,
        read: ReadFn,
        write: WriteFn,
    ) -> Self {
        Self {
            offset,
            len,
            bpi,
            widths,
            read,
            write,
        }
    }
    /// A plain register (or block of registers) of `len` bytes.
    pub const fn reg(offset: u64, len: u64, widths: u8, read: ReadFn, write: WriteFn) -> Self {
        Self {
            offset,
            len,
            bpi: 0,
            widths,
            read,
            write,
        }
    }
}

/// Finds the region and the handler argument, or the error for this access.
fn lookup(table: &[Region], offset: u64, size: u8) -> Result<(&Region, u32), VgicError> {
    if !matches!(size, 1 | 2 | 4 | 8) {
        return Err(VgicError::BadWidth { offset, size });
    }
    if !offset.is_multiple_of(u64::from(size)) {
        return Err(VgicError::Misaligned { offset, size });
    }
    let idx = table.partition_point(|r| r.offset.saturating_add(r.len) <= offset);
    let r = table
        .get(idx)
        .filter(|r| r.offset <= offset)
        .ok_or(VgicError::Reserved { offset })?;
    if r.widths & size == 0 || offset.saturating_add(u64::from(size)) > r.offset + r.len {
        return Err(VgicError::BadWidth { offset, size });
    }
    let rel = offset - r.offset;
    let arg = if r.bpi == 0 {
        rel
    } else {
        rel * 8 / u64::from(r.bpi)
    };
    Ok((r, arg as u32))
}

/// Dispatches a read through `table`.
pub(crate) fn read(
    table: &[Region],
    v: &mut Vgic,
    ctx: &Ctx,
    offset: u64,
    size: u8,
) -> Result<u64, VgicError> {
    match lookup(table, offset, size) {
        Ok((r, arg)) => Ok((r.read)(v, ctx, arg, size)),
        Err(e) => {
            if matches!(e, VgicError::Reserved { .. }) {
                v.stats.reserved_accesses += 1;
            }
            Err(e)
        }
    }
}

/// Dispatches a write through `table`.
pub(crate) fn write(
    table: &[Region],
    v: &mut Vgic,
    ctx: &Ctx,
    offset: u64,
    size: u8,
    value: u64,
) -> Result<(), VgicError> {
    match lookup(table, offset, size) {
        Ok((r, arg)) => {
            let value = if size == 8 {
                value
            } else {
                value & ((1u64 << (u32::from(size) * 8)) - 1)
            };
            (r.write)(v, ctx, arg, size, value);
            Ok(())
        }
        Err(e) => {
            if matches!(e, VgicError::Reserved { .. }) {
                v.stats.reserved_accesses += 1;
            }
            Err(e)
        }
    }
}

/// Checks a table is sorted and non-overlapping (used by tests).
#[cfg(test)]
pub(crate) fn well_formed(table: &[Region]) -> bool {
    table
        .windows(2)
        .all(|w| w[0].offset + w[0].len <= w[1].offset)
}

/// Field getter of a per-interrupt register.
pub(crate) type GetFn = fn(&Vgic, &Ctx, u32, &Irq) -> u64;
/// Field setter of a per-interrupt register (the model's `update` runs afterwards).
pub(crate) type SetFn = fn(&mut Vgic, &Ctx, u32, u64);

fn visible(v: &Vgic, ctx: &Ctx, intid: u32) -> bool {
    !(ctx.no_private && intid < 32) && intid < v.nr_irqs()
}

/// Assembles a per-interrupt read of `size` bytes from `bpi`-bit fields.
pub(crate) fn read_irqs(v: &Vgic, ctx: &Ctx, first: u32, size: u8, bpi: u8, get: GetFn) -> u64 {
    let n = u32::from(size) * 8 / u32::from(bpi);
    let mask = (1u64 << bpi) - 1;
    let mut val = 0;
    for i in 0..n {
        let intid = first + i;
        if !visible(v, ctx, intid) {
            continue;
        }
        if let Some(irq) = v.irq(ctx.target, intid) {
            val |= (get(v, ctx, intid, irq) & mask) << (i * u32::from(bpi));
        }
    }
    val
}

/// Splits a per-interrupt write of `size` bytes into `bpi`-bit fields.
pub(crate) fn write_irqs(
    v: &mut Vgic,
    ctx: &Ctx,
    first: u32,
    size: u8,
    bpi: u8,
    val: u64,
    set: SetFn,
) {
    let n = u32::from(size) * 8 / u32::from(bpi);
    let mask = (1u64 << bpi) - 1;
    for i in 0..n {
        let intid = first + i;
        if !visible(v, ctx, intid) {
            continue;
        }
        set(v, ctx, intid, (val >> (i * u32::from(bpi))) & mask);
        v.update(ctx.target, intid);
    }
}

/// Read-as-zero handler.
pub(crate) fn raz(_: &mut Vgic, _: &Ctx, _: u32, _: u8) -> u64 {
    0
}

/// Write-ignored handler.
pub(crate) fn wi(_: &mut Vgic, _: &Ctx, _: u32, _: u8, _: u64) {}

/// Reads `size` bytes at byte `at` of a little-endian register block given as 32-bit words.
pub(crate) fn extract(words: &[u32], at: u32, size: u8) -> u64 {
    let mut val = 0u64;
    for b in 0..u32::from(size) {
        let byte = at + b;
        let w = words.get((byte / 4) as usize).copied().unwrap_or(0);
        val |= u64::from((w >> ((byte % 4) * 8)) & 0xff) << (b * 8);
    }
    val
}
