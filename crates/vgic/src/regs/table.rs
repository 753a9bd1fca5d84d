//! Register regions: the distributor and redistributor are described as sorted tables of
//! rows `(name, offset, length, bits per interrupt, allowed widths, read, write)` instead of
//! one large `match`, in the shape of Linux's `vgic-mmio.h` `REGISTER_DESC_*` tables. Every
//! row is built by [`reg!`] or [`per_irq!`] from an offset constant of
//! [`offsets`](crate::offsets), whose name becomes the row's [`Region::name`]: `grep
//! GICD_ISENABLER` finds the offset and the row, and an error for a row names its register.
//!
//! A lookup finds the row through the frame's word index (one load: [`Frame::index`], built
//! from the rows at compile time; the name is only read to build an error), checks
//! alignment and width, and turns the offset into the handler's argument: the first INTID
//! (per-interrupt rows) or a byte offset (other rows).

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
/// offset inside the region (see [`Region::arg_from`]).
pub(crate) type ReadFn = fn(&mut Vgic, &Ctx, u32, u8) -> u64;
/// Write handler, same `arg` as [`ReadFn`].
pub(crate) type WriteFn = fn(&mut Vgic, &Ctx, u32, u8, u64);

/// One row: a register, or an array of registers (`GICD_ISENABLER<n>`).
#[derive(Clone, Copy)]
pub(crate) struct Region {
    /// Architectural name (`"GICD_ISENABLER"`), for errors and logs only: never compared.
    pub name: &'static str,
    /// First byte of the row.
    pub offset: u64,
    /// One past its last byte.
    pub end: u64,
    /// The offset the handler argument counts from: [`Region::offset`] unless the row is
    /// part of a larger array (`GICR_ICFGR1`, the ID registers).
    pub base: u64,
    /// Bits per interrupt, 0 for registers that are not per-interrupt.
    pub bpi: u8,
    /// Allowed access sizes (bitwise or of `W8`, `W32`, `W64`).
    pub widths: u8,
    pub read: ReadFn,
    pub write: WriteFn,
}

impl Region {
    /// A per-interrupt row covering `nr_irqs` INTIDs of `bpi` bits each; the handlers get the
    /// first INTID of the access. Use [`per_irq!`].
    pub const fn per_irq(
        name: &'static str,
        offset: u64,
        nr_irqs: u32,
        bpi: u8,
        widths: u8,
        read: ReadFn,
        write: WriteFn,
    ) -> Self {
        Self {
            name,
            offset,
            end: offset + nr_irqs as u64 * bpi as u64 / 8,
            base: offset,
            bpi,
            widths,
            read,
            write,
        }
    }

    /// A plain register (or block of registers) of `len` bytes; the handlers get the byte
    /// offset of the access inside it. Use [`reg!`].
    pub const fn reg(
        name: &'static str,
        offset: u64,
        len: u64,
        widths: u8,
        read: ReadFn,
        write: WriteFn,
    ) -> Self {
        Self {
            name,
            offset,
            end: offset + len,
            base: offset,
            bpi: 0,
            widths,
            read,
            write,
        }
    }

    /// The handlers count their argument from `base` instead of the row's own offset: the
    /// row continues an array that starts there (`GICR_ICFGR1` continues `GICR_ICFGR0`, so
    /// its first INTID is 16; `GICD_PIDR2` is byte 0x18 of the ID block at `GICD_PIDR4`).
    pub const fn arg_from(self, base: u64) -> Self {
        Self { base, ..self }
    }
}

/// `reg!(NAME, len, widths, read, write)`: a [`Region::reg`] row at offset constant `NAME`
/// (in scope), named `"NAME"`. Handlers are function paths, never closures.
macro_rules! reg {
    ($name:ident, $len:expr, $widths:expr, $read:path, $write:path $(,)?) => {
        $crate::regs::table::Region::reg(stringify!($name), $name, $len, $widths, $read, $write)
    };
}
pub(crate) use reg;

/// `per_irq!(NAME, nr_irqs, bpi, widths, read, write)`: a [`Region::per_irq`] row at offset
/// constant `NAME` (in scope), named `"NAME"`.
macro_rules! per_irq {
    ($name:ident, $nr:expr, $bpi:expr, $widths:expr, $read:path, $write:path $(,)?) => {
        $crate::regs::table::Region::per_irq(
            stringify!($name),
            $name,
            $nr,
            $bpi,
            $widths,
            $read,
            $write,
        )
    };
}
pub(crate) use per_irq;

/// A register frame (a distributor, a redistributor's `RD_base` or `SGI_base`): its rows,
/// and for each 4-byte word of the frame the row holding it, so that a lookup is one load
/// whatever the offset (built at compile time by [`word_index`]).
pub(crate) struct Frame {
    /// The rows, sorted by offset.
    pub rows: &'static [Region],
    /// Per 4-byte word of the frame: 1 + the index of its row in `rows`, 0 if reserved.
    pub index: &'static [u8],
}

/// [`Frame::index`] of `rows` for a frame of `WORDS` 4-byte words. Every row starts and
/// ends on a word boundary and there are fewer than 255 rows: checked here, so a table
/// that breaks either does not compile.
pub(crate) const fn word_index<const WORDS: usize>(rows: &[Region]) -> [u8; WORDS] {
    assert!(
        rows.len() < u8::MAX as usize,
        "too many rows for a u8 index"
    );
    let mut index = [0u8; WORDS];
    let mut i = 0;
    while i < rows.len() {
        let r = &rows[i];
        assert!(
            r.offset.is_multiple_of(4) && r.end.is_multiple_of(4),
            "a row is not whole words"
        );
        assert!(r.end as usize <= WORDS * 4, "a row beyond the frame");
        let mut w = (r.offset / 4) as usize;
        while w < (r.end / 4) as usize {
            index[w] = i as u8 + 1;
            w += 1;
        }
        i += 1;
    }
    index
}

/// Finds the row and the handler argument, or the error for this access. The common case,
/// an aligned 32-bit access to a row that allows it, is decided here with no more checks
/// than it needs (rows are whole words, so an aligned word inside a row ends inside it);
/// everything else, errors included, goes through [`lookup_general`].
#[inline(always)]
fn lookup(frame: &Frame, offset: u64, size: u8) -> Result<(&Region, u32), VgicError> {
    match lean_row(frame, offset, size) {
        Some(found) => Ok(found),
        None => lookup_general(frame, offset, size),
    }
}

/// The row and handler argument of an aligned 32-bit access to a row that allows it, else
/// `None` (any other access, or an error: [`lookup_general`] tells which).
#[inline(always)]
fn lean_row(frame: &Frame, offset: u64, size: u8) -> Option<(&Region, u32)> {
    if size != W32 || offset & 3 != 0 {
        return None;
    }
    let slot = usize::try_from(offset / 4)
        .ok()
        .and_then(|w| frame.index.get(w))
        .copied()
        .unwrap_or(0);
    let r = frame.rows.get(usize::from(slot).wrapping_sub(1))?;
    (r.widths & W32 != 0).then(|| (r, argument(r, offset)))
}

/// The handler argument for an access at `offset` in row `r`: the first INTID of a
/// per-interrupt row, else the byte offset from [`Region::base`].
#[inline(always)]
fn argument(r: &Region, offset: u64) -> u32 {
    let rel = offset - r.base;
    let arg = if r.bpi == 0 {
        rel
    } else {
        rel * 8 / u64::from(r.bpi)
    };
    arg as u32
}

/// [`lookup`] for any width and alignment: checks all of them and builds the error.
#[inline(never)]
fn lookup_general(frame: &Frame, offset: u64, size: u8) -> Result<(&Region, u32), VgicError> {
    // 1, 2, 4 or 8 bytes, naturally aligned.
    if size.wrapping_sub(1) & size != 0 || size > 8 || size == 0 {
        return Err(bad_width(frame.rows, offset, size));
    }
    if offset & u64::from(size - 1) != 0 {
        return Err(misaligned(frame.rows, offset, size));
    }
    let slot = usize::try_from(offset / 4)
        .ok()
        .and_then(|w| frame.index.get(w))
        .copied()
        .unwrap_or(0);
    let Some(r) = frame.rows.get(usize::from(slot).wrapping_sub(1)) else {
        return Err(VgicError::Reserved { offset });
    };
    // `offset < r.end`, so the sum cannot overflow.
    if r.widths & size == 0 || offset + u64::from(size) > r.end {
        return Err(VgicError::BadWidth {
            offset,
            size,
            register: Some(r.name),
        });
    }
    Ok((r, argument(r, offset)))
}

/// The row holding `offset`, if any (by binary search: the reference [`Frame::index`] is
/// checked against, and the name for an error).
pub(crate) fn row_at(table: &[Region], offset: u64) -> Option<&Region> {
    let idx = table.partition_point(|r| r.end <= offset);
    table.get(idx).filter(|r| r.offset <= offset)
}

#[cold]
#[inline(never)]
fn bad_width(table: &[Region], offset: u64, size: u8) -> VgicError {
    VgicError::BadWidth {
        offset,
        size,
        register: row_at(table, offset).map(|r| r.name),
    }
}

#[cold]
#[inline(never)]
fn misaligned(table: &[Region], offset: u64, size: u8) -> VgicError {
    VgicError::Misaligned {
        offset,
        size,
        register: row_at(table, offset).map(|r| r.name),
    }
}

/// Counts an access to a reserved offset.
#[cold]
#[inline(never)]
fn count_reserved(v: &mut Vgic, e: &VgicError) {
    if matches!(e, VgicError::Reserved { .. }) {
        v.stats.reserved_accesses += 1;
    }
}

/// Dispatches a read through `frame`.
#[inline(always)]
pub(crate) fn read(
    frame: &Frame,
    v: &mut Vgic,
    ctx: &Ctx,
    offset: u64,
    size: u8,
) -> Result<u64, VgicError> {
    match lookup(frame, offset, size) {
        Ok((r, arg)) => Ok((r.read)(v, ctx, arg, size)),
        Err(e) => {
            count_reserved(v, &e);
            Err(e)
        }
    }
}

/// A read through `frame` of the common access, an aligned 32-bit read of a register that
/// allows it; `None`, with nothing done (no handler run, nothing counted), for any other
/// access: [`read`] then gives the full answer. Lets a caller keep its fast path free of the
/// error handling.
#[inline(always)]
pub(crate) fn read_lean(
    frame: &Frame,
    v: &mut Vgic,
    ctx: &Ctx,
    offset: u64,
    size: u8,
) -> Option<u64> {
    let (r, arg) = lean_row(frame, offset, size)?;
    Some((r.read)(v, ctx, arg, size))
}

/// Dispatches a write through `frame`.
#[inline(always)]
pub(crate) fn write(
    frame: &Frame,
    v: &mut Vgic,
    ctx: &Ctx,
    offset: u64,
    size: u8,
    value: u64,
) -> Result<(), VgicError> {
    match lookup(frame, offset, size) {
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
            count_reserved(v, &e);
            Err(e)
        }
    }
}

/// Field getter of a per-interrupt register.
pub(crate) type GetFn = fn(&Vgic, &Ctx, u32, &Irq) -> u64;
/// Field setter of a per-interrupt register (the model's `update` runs afterwards).
pub(crate) type SetFn = fn(&mut Vgic, &Ctx, u32, u64);

fn visible(v: &Vgic, ctx: &Ctx, intid: u32) -> bool {
    !(ctx.no_private && intid < 32) && intid < v.nr_irqs()
}

/// Assembles a per-interrupt read of `size` bytes from `bpi`-bit fields. Inlined into each
/// handler, so that `get` is a direct (inlined) call.
#[inline(always)]
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

/// Splits a per-interrupt write of `size` bytes into `bpi`-bit fields. Inlined into each
/// handler, so that `set` is a direct (inlined) call.
#[inline(always)]
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
