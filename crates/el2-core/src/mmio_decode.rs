//! Decoding the A64 load/store instruction behind a data abort with `ISV` = 0.
//!
//! When a guest load or store to emulated MMIO has no valid instruction syndrome (a load/store
//! pair, an access with base-register writeback, a register-offset form on some cores, ...),
//! `ESR_EL2` tells the hypervisor neither the register nor the size. The hypervisor then
//! fetches the 32-bit instruction at `ELR_EL2` (a guest virtual address: translate it with
//! [`crate::s1walk`] and read it through stage 2), decodes it here, and emulates it element
//! by element on the MMIO bus.
//!
//! Supported (general-purpose registers, 32- and 64-bit):
//! - `LDR`/`STR` with unsigned scaled immediate, unscaled immediate (`LDUR`/`STUR`),
//!   pre-index and post-index immediate (writeback), register offset with `LSL`/`UXTW`/
//!   `SXTW`/`SXTX` and optional shift; the unprivileged forms `LDTR`/`STTR` (stage-1 checks
//!   already passed when stage 2 faults, so they behave like `LDUR`/`STUR` here);
//! - the byte/halfword/word variants `LDRB`/`LDRH`/`LDRSB`/`LDRSH`/`LDRSW`, `STRB`/`STRH`;
//! - `LDP`/`STP` (W and X), `LDPSW`, `LDNP`/`STNP`, with signed offset, pre-index and
//!   post-index;
//! - load-acquire / store-release without exclusivity (`LDAR`/`STLR`/`LDLAR`/`STLLR` and byte,
//!   halfword variants), for completeness: these normally report a valid syndrome anyway.
//!
//! Rejected with an [`Unsupported`] reason, for which the hypervisor injects an external
//! abort into the guest and logs the reason:
//! - every SIMD&FP load/store (`LDR q0`, `LDP d0, d1`, `LD1 {v0.16b}` ...): emulating them
//!   needs the guest's FP/SIMD registers, which may be lazily switched, and no device driver
//!   uses them for MMIO;
//! - exclusives (`LDXR`/`STXR`/`LDAXP` ...), atomics (`LDADD`, `SWP`, `CAS` ...) and
//!   `LDAPR`: architecturally they need not work on Device memory, so a guest using them on
//!   MMIO gets an abort as real hardware may give it;
//! - PC-relative literal loads, pointer-authenticated loads (`LDRAA`), memory-tagging forms
//!   (`STGP`, `STG` ...), RCpc unscaled forms (`LDAPUR`), unallocated encodings, and the
//!   CONSTRAINED UNPREDICTABLE cases (writeback with `Rn` == `Rt`, `LDP` with `Rt` == `Rt2`);
//! - `PRFM` is reported as [`Unsupported::Prefetch`]: a prefetch never takes a data abort, so
//!   the caller may simply skip it.
//!
//! The decoder is total: any 32-bit word yields `Ok` or `Err`, never a panic.
//!
//! Little-endian guests are assumed (`SCTLR_EL1.EE` = 0); the values handed to and from the
//! MMIO bus are register values, so the bus does not care.
//!
//! Typical use:
//!
//! ```text
//! let insn = fetch_guest_u32(s1walk::translate(&ctx_regs, elr)?)?;
//! let decoded = mmio_decode::decode(insn)?;                 // Err: inject abort + log
//! let resolved = decoded.resolve(&regs, abort.ipa, (!abort.fnv).then_some(abort.far))?;
//! for el in resolved.elements() {
//!     let access = el.to_mmio();
//!     let value = if access.is_write { regs.read_rt(el.rt) } else { 0 };
//!     match bus.dispatch(&access, value, &mut caller) {
//!         MmioOutcome::Read(v) => regs.write_rt(el.rt, access.load_value(v)),
//!         MmioOutcome::WriteDone => {}
//!         _ => { inject_dabt(); return; }
//!     }
//! }
//! if let Some((reg, value)) = resolved.writeback { regs.write_base(reg, value) }
//! pc += 4;
//! ```

use core::fmt;

use crate::mmio::{AccessSize, MmioAccess};

/// The register number that means SP as a base register and XZR/WZR as a transfer register.
pub const REG_SP_OR_ZR: u8 = 31;

/// Why an instruction word cannot be emulated as an MMIO access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// Not in the A64 load/store encoding group at all.
    NotLoadStore,
    /// A SIMD&FP register load or store (any form, including structure loads).
    SimdFp,
    /// A load/store exclusive (`LDXR`, `STXR`, `LDAXP`, ...).
    Exclusive,
    /// An atomic memory operation (`LDADD`, `SWP`, `CAS`, `LDAPR`, ...).
    Atomic,
    /// A PC-relative literal load (`LDR Xt, label`).
    Literal,
    /// A prefetch (`PRFM`, `PRFUM`): never takes a data abort; the caller may skip it.
    Prefetch,
    /// A pointer-authenticated load (`LDRAA`, `LDRAB`).
    PointerAuth,
    /// A memory-tagging load/store (`STGP`, `STG`, `LDG`, ...).
    MemoryTagging,
    /// An RCpc load/store with unscaled offset (`LDAPUR`, `STLUR`).
    RcpcUnscaled,
    /// An unallocated encoding in the load/store group.
    Unallocated,
    /// A CONSTRAINED UNPREDICTABLE form: writeback with `Rn` == `Rt` (or `Rt2`), or a pair
    /// load into the same register twice.
    Unpredictable,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unsupported::NotLoadStore => "not a load/store instruction",
            Unsupported::SimdFp => "SIMD&FP load/store",
            Unsupported::Exclusive => "load/store exclusive",
            Unsupported::Atomic => "atomic memory operation",
            Unsupported::Literal => "PC-relative literal load",
            Unsupported::Prefetch => "prefetch",
            Unsupported::PointerAuth => "pointer-authenticated load",
            Unsupported::MemoryTagging => "memory-tagging load/store",
            Unsupported::RcpcUnscaled => "RCpc unscaled load/store",
            Unsupported::Unallocated => "unallocated load/store encoding",
            Unsupported::Unpredictable => "CONSTRAINED UNPREDICTABLE load/store form",
        })
    }
}

/// How a register offset is extended before it is added to the base (`option` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extend {
    /// `UXTW`: the low 32 bits of `Wm`, zero-extended.
    Uxtw,
    /// `LSL` / `UXTX`: all 64 bits of `Xm`.
    Lsl,
    /// `SXTW`: the low 32 bits of `Wm`, sign-extended.
    Sxtw,
    /// `SXTX`: all 64 bits of `Xm` (same value as `LSL`).
    Sxtx,
}

impl Extend {
    /// Applies the extension to a register value.
    pub const fn apply(self, value: u64) -> u64 {
        match self {
            Extend::Uxtw => value & 0xffff_ffff,
            Extend::Sxtw => value as u32 as i32 as i64 as u64,
            Extend::Lsl | Extend::Sxtx => value,
        }
    }
}

/// What is added to the base register to form the address of the first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offset {
    /// A constant (0 for post-index forms, which access at the unmodified base).
    Imm(i64),
    /// `extend(Xm/Wm) << shift`; `rm` = 31 means XZR here.
    Reg {
        /// The offset register `Rm`.
        rm: u8,
        /// The extension applied to it.
        extend: Extend,
        /// The left shift after extension (0 or log2 of the access size).
        shift: u8,
    },
}

/// One register transfer of a decoded instruction (one for `LDR`/`STR`, two for a pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element {
    /// Byte offset of this element from the address of the first element (0, or the element
    /// size for the second register of a pair).
    pub offset: u64,
    /// Access size.
    pub size: AccessSize,
    /// Transfer register; 31 is XZR/WZR (a store writes zero, a load result is discarded).
    pub rt: u8,
    /// A load sign-extends the value (`LDRSB`/`LDRSH`/`LDRSW`/`LDPSW`).
    pub sign_extend: bool,
    /// The transfer register is 64 bits wide (X); otherwise W, and a load clears bits 63:32.
    pub sf: bool,
}

/// A decoded load/store instruction that the hypervisor can emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedAccess {
    /// The transfers, in register order (`Rt`, then `Rt2`); only the first
    /// [`DecodedAccess::count`] are meaningful. Use [`DecodedAccess::elements`].
    pub elements: [Element; 2],
    /// Number of valid entries of `elements` (1 or 2).
    pub count: usize,
    /// True for a store.
    pub is_write: bool,
    /// Base register `Rn`; 31 is SP.
    pub base: u8,
    /// Added to the base to form the address of the first element (before any writeback).
    pub offset: Offset,
    /// With writeback: the new base is `base + imm` (the value of `base` before the
    /// instruction). For pre-index forms that is also the accessed address.
    pub writeback: Option<i64>,
    /// Post-index: the access uses the unmodified base (`offset` is `Imm(0)`).
    pub post_index: bool,
    /// Load-acquire / store-release semantics (`LDAR`/`STLR`).
    pub acquire_release: bool,
}

/// The guest's general-purpose registers, as the hypervisor saved them at the exit.
pub trait GuestRegisters {
    /// `Xn` for `n` in 0..=30.
    fn x(&self, n: u8) -> u64;
    /// The stack pointer the faulting instruction used (`SP_EL1` or `SP_EL0`, per
    /// `SPSR_EL2.M`).
    fn sp(&self) -> u64;

    /// A transfer or offset register: `Xn`, or 0 for 31 (XZR).
    fn read_zr(&self, n: u8) -> u64 {
        if n >= REG_SP_OR_ZR {
            0
        } else {
            self.x(n)
        }
    }

    /// A base register: `Xn`, or SP for 31.
    fn read_sp(&self, n: u8) -> u64 {
        if n >= REG_SP_OR_ZR {
            self.sp()
        } else {
            self.x(n)
        }
    }
}

/// Why a decoded access cannot be resolved to IPAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolveError {
    /// The elements do not all lie in the same 4 KiB page, so the second one's IPA is not
    /// known from `HPFAR_EL2`.
    CrossesPage,
    /// The address computed from the registers is not in the page `FAR_EL2` reports: the
    /// instruction fetched is not the one that faulted (the guest changed its code or page
    /// tables meanwhile) — inject an abort or retry the guest.
    FarMismatch,
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResolveError::CrossesPage => "access crosses a 4 KiB page",
            ResolveError::FarMismatch => "computed address does not match FAR_EL2",
        })
    }
}

/// One element with its guest addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedElement {
    /// The guest virtual address accessed.
    pub va: u64,
    /// The IPA accessed.
    pub ipa: u64,
    /// Access size.
    pub size: AccessSize,
    /// Transfer register (31 = XZR/WZR).
    pub rt: u8,
    /// A load sign-extends.
    pub sign_extend: bool,
    /// X (64-bit) transfer register.
    pub sf: bool,
    /// True for a store.
    pub is_write: bool,
    /// Load-acquire / store-release.
    pub acquire_release: bool,
}

impl ResolvedElement {
    /// The element as an [`MmioAccess`] for [`crate::mmio::MmioBus::dispatch`]; use
    /// [`MmioAccess::load_value`] to form the register value of a load.
    pub const fn to_mmio(&self) -> MmioAccess {
        MmioAccess {
            ipa: self.ipa,
            size: self.size,
            is_write: self.is_write,
            rt: self.rt,
            sign_extend: self.sign_extend,
            sf: self.sf,
            acquire_release: self.acquire_release,
        }
    }
}

/// A decoded access with the addresses each element hits and the base-register update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedAccess {
    /// The elements, in order; only the first `count` are meaningful.
    pub elements: [ResolvedElement; 2],
    /// Number of valid elements (1 or 2).
    pub count: usize,
    /// Base-register writeback: (register, new value); register 31 is SP. Apply it after all
    /// elements succeeded (an aborted instruction must leave the base unchanged).
    pub writeback: Option<(u8, u64)>,
}

impl ResolvedAccess {
    /// The valid elements.
    pub fn elements(&self) -> &[ResolvedElement] {
        &self.elements[..self.count.min(2)]
    }
}

/// Bits of a VA that name its 4 KiB page, ignoring the top byte (which may hold a tag with
/// `TCR_EL1.TBI`, and is UNKNOWN in `FAR_EL2` then).
const VA_PAGE_MASK: u64 = 0x00ff_ffff_ffff_f000;

impl DecodedAccess {
    /// The valid elements.
    pub fn elements(&self) -> &[Element] {
        &self.elements[..self.count.min(2)]
    }

    /// Total bytes transferred.
    pub fn total_bytes(&self) -> u64 {
        self.elements().iter().map(|e| e.size.bytes()).sum()
    }

    /// The guest virtual address of the first element, computed from the registers.
    pub fn address<R: GuestRegisters + ?Sized>(&self, regs: &R) -> u64 {
        let base = regs.read_sp(self.base);
        let off = match self.offset {
            Offset::Imm(i) => i as u64,
            Offset::Reg { rm, extend, shift } => extend.apply(regs.read_zr(rm)) << (shift & 63),
        };
        base.wrapping_add(off)
    }

    /// Works out which IPA each element accesses and the writeback value.
    ///
    /// `fault_ipa` is the faulting IPA (`HPFAR_EL2` page + `FAR_EL2[11:0]`), `far` is
    /// `FAR_EL2` when valid (`FnV` = 0). All elements must lie in one 4 KiB page (the page of
    /// `far` when given): the IPA of each is `fault_ipa`'s page plus its page offset. This
    /// does not depend on which element faulted first (the architecture does not order the
    /// two accesses of a pair).
    pub fn resolve<R: GuestRegisters + ?Sized>(
        &self,
        regs: &R,
        fault_ipa: u64,
        far: Option<u64>,
    ) -> Result<ResolvedAccess, ResolveError> {
        let va0 = self.address(regs);
        let page = va0 & VA_PAGE_MASK;
        let last = va0.wrapping_add(self.total_bytes().max(1) - 1);
        if last & VA_PAGE_MASK != page {
            return Err(ResolveError::CrossesPage);
        }
        if far.is_some_and(|far| far & VA_PAGE_MASK != page) {
            return Err(ResolveError::FarMismatch);
        }
        let ipa_page = fault_ipa & !0xfff;
        let empty = ResolvedElement {
            va: 0,
            ipa: 0,
            size: AccessSize::Byte,
            rt: REG_SP_OR_ZR,
            sign_extend: false,
            sf: false,
            is_write: self.is_write,
            acquire_release: self.acquire_release,
        };
        let mut out = [empty; 2];
        for (slot, e) in out.iter_mut().zip(self.elements()) {
            let va = va0.wrapping_add(e.offset);
            *slot = ResolvedElement {
                va,
                ipa: ipa_page | (va & 0xfff),
                size: e.size,
                rt: e.rt,
                sign_extend: e.sign_extend,
                sf: e.sf,
                is_write: self.is_write,
                acquire_release: self.acquire_release,
            };
        }
        let writeback = self
            .writeback
            .map(|imm| (self.base, regs.read_sp(self.base).wrapping_add(imm as u64)));
        Ok(ResolvedAccess {
            elements: out,
            count: self.count.min(2),
            writeback,
        })
    }
}

/// Bits `[hi:lo]` of `insn`.
const fn bits(insn: u32, hi: u32, lo: u32) -> u32 {
    (insn >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// Sign-extends the low `width` bits of `v`.
const fn sext(v: u32, width: u32) -> i64 {
    let shift = 64 - width;
    ((v as u64) << shift) as i64 >> shift
}

/// Size, sign extension and register width for a single-register GPR load/store from its
/// `size` and `opc` fields. `Ok(None)` for a prefetch.
fn single_kind(size: u32, opc: u32) -> Result<(AccessSize, bool, bool, bool), Unsupported> {
    let sz = AccessSize::from_sas(size as u8);
    // (is_write, sign_extend, sf)
    let (w, se, sf) = match (opc, size) {
        (0b00, _) => (true, false, size == 3),
        (0b01, _) => (false, false, size == 3),
        (0b10, 3) => return Err(Unsupported::Prefetch),
        (0b10, _) => (false, true, true),
        (0b11, 0 | 1) => (false, true, false),
        _ => return Err(Unsupported::Unallocated),
    };
    Ok((sz, w, se, sf))
}

/// Builds a single-element access.
#[allow(clippy::too_many_arguments)]
fn single(
    size: AccessSize,
    is_write: bool,
    sign_extend: bool,
    sf: bool,
    rt: u8,
    rn: u8,
    offset: Offset,
    writeback: Option<i64>,
    post_index: bool,
) -> Result<DecodedAccess, Unsupported> {
    if writeback.is_some() && rn == rt && rn != REG_SP_OR_ZR {
        return Err(Unsupported::Unpredictable);
    }
    let e = Element {
        offset: 0,
        size,
        rt,
        sign_extend,
        sf,
    };
    Ok(DecodedAccess {
        elements: [e; 2],
        count: 1,
        is_write,
        base: rn,
        offset,
        writeback,
        post_index,
        acquire_release: false,
    })
}

/// Decodes one A64 instruction word. Never panics.
pub fn decode(insn: u32) -> Result<DecodedAccess, Unsupported> {
    // Loads and stores: op0 = x1x0 (bits 28:25 with bit 27 = 1, bit 25 = 0).
    if bits(insn, 27, 27) != 1 || bits(insn, 25, 25) != 0 {
        return Err(Unsupported::NotLoadStore);
    }
    if bits(insn, 26, 26) == 1 {
        return Err(Unsupported::SimdFp);
    }
    let rt = bits(insn, 4, 0) as u8;
    let rn = bits(insn, 9, 5) as u8;
    match bits(insn, 29, 28) {
        0b00 => decode_exclusive_class(insn, rt, rn),
        0b01 => {
            if bits(insn, 24, 24) == 0 {
                Err(Unsupported::Literal)
            } else if bits(insn, 31, 30) == 0b11 && bits(insn, 21, 21) == 1 {
                Err(Unsupported::MemoryTagging)
            } else {
                Err(Unsupported::RcpcUnscaled)
            }
        }
        0b10 => decode_pair(insn, rt, rn),
        _ => decode_single(insn, rt, rn),
    }
}

/// Bits 29:24 = 0b001000: exclusives and (non-exclusive) load-acquire/store-release; with
/// bit 24 set, newer pair forms (`CASP`-like, `LDIAPP`).
fn decode_exclusive_class(insn: u32, rt: u8, rn: u8) -> Result<DecodedAccess, Unsupported> {
    if bits(insn, 24, 24) == 1 {
        return Err(Unsupported::Atomic);
    }
    let o2 = bits(insn, 23, 23);
    let o1 = bits(insn, 21, 21);
    let l = bits(insn, 22, 22);
    if (o2 == 1 && o1 == 1) || (o2 == 0 && o1 == 1 && bits(insn, 31, 31) == 0) {
        // CAS (o2 = o1 = 1) and CASP (o2 = 0, o1 = 1, size 0x) of FEAT_LSE.
        return Err(Unsupported::Atomic);
    }
    if o2 == 0 {
        return Err(Unsupported::Exclusive);
    }
    // LDAR/STLR (o0 = 1) and LDLAR/STLLR (o0 = 0): Rs and Rt2 must be all ones.
    if bits(insn, 20, 16) != 0b11111 || bits(insn, 14, 10) != 0b11111 {
        return Err(Unsupported::Unallocated);
    }
    let size = bits(insn, 31, 30);
    let mut d = single(
        AccessSize::from_sas(size as u8),
        l == 0,
        false,
        size == 3,
        rt,
        rn,
        Offset::Imm(0),
        None,
        false,
    )?;
    d.acquire_release = true;
    Ok(d)
}

/// Bits 29:27 = 0b101, V = 0: `LDP`/`STP`/`LDPSW`/`LDNP`/`STNP`/`STGP`.
fn decode_pair(insn: u32, rt: u8, rn: u8) -> Result<DecodedAccess, Unsupported> {
    let opc = bits(insn, 31, 30);
    let mode = bits(insn, 24, 23);
    let load = bits(insn, 22, 22) == 1;
    let rt2 = bits(insn, 14, 10) as u8;
    let (size, sign_extend, sf) = match (opc, load) {
        (0b00, _) => (AccessSize::Word, false, false),
        (0b01, true) if mode != 0b00 => (AccessSize::Word, true, true),
        (0b01, false) if mode != 0b00 => return Err(Unsupported::MemoryTagging),
        (0b10, _) => (AccessSize::Double, false, true),
        _ => return Err(Unsupported::Unallocated),
    };
    let imm = sext(bits(insn, 21, 15), 7) * size.bytes() as i64;
    let (offset, writeback, post_index) = match mode {
        0b00 | 0b10 => (imm, None, false),
        0b01 => (0, Some(imm), true),
        _ => (imm, Some(imm), false),
    };
    if load && rt == rt2 {
        return Err(Unsupported::Unpredictable);
    }
    if writeback.is_some() && rn != REG_SP_OR_ZR && (rn == rt || rn == rt2) {
        return Err(Unsupported::Unpredictable);
    }
    let e0 = Element {
        offset: 0,
        size,
        rt,
        sign_extend,
        sf,
    };
    let e1 = Element {
        offset: size.bytes(),
        rt: rt2,
        ..e0
    };
    Ok(DecodedAccess {
        elements: [e0, e1],
        count: 2,
        is_write: !load,
        base: rn,
        offset: Offset::Imm(offset),
        writeback,
        post_index,
        acquire_release: false,
    })
}

/// Bits 29:27 = 0b111, V = 0: single-register loads/stores, atomics, `LDRAA`.
fn decode_single(insn: u32, rt: u8, rn: u8) -> Result<DecodedAccess, Unsupported> {
    let size = bits(insn, 31, 30);
    let opc = bits(insn, 23, 22);
    if bits(insn, 24, 24) == 1 {
        // Unsigned scaled 12-bit immediate.
        let (sz, w, se, sf) = single_kind(size, opc)?;
        let imm = (bits(insn, 21, 10) as i64) << size;
        return single(sz, w, se, sf, rt, rn, Offset::Imm(imm), None, false);
    }
    if bits(insn, 21, 21) == 1 {
        return match bits(insn, 11, 10) {
            0b10 => {
                // Register offset.
                let option = bits(insn, 15, 13);
                let extend = match option {
                    0b010 => Extend::Uxtw,
                    0b011 => Extend::Lsl,
                    0b110 => Extend::Sxtw,
                    0b111 => Extend::Sxtx,
                    _ => return Err(Unsupported::Unallocated),
                };
                let (sz, w, se, sf) = single_kind(size, opc)?;
                let shift = if bits(insn, 12, 12) == 1 {
                    size as u8
                } else {
                    0
                };
                let rm = bits(insn, 20, 16) as u8;
                let offset = Offset::Reg { rm, extend, shift };
                single(sz, w, se, sf, rt, rn, offset, None, false)
            }
            0b00 => Err(Unsupported::Atomic),
            _ => {
                if size == 0b11 {
                    Err(Unsupported::PointerAuth)
                } else {
                    Err(Unsupported::Unallocated)
                }
            }
        };
    }
    let imm = sext(bits(insn, 20, 12), 9);
    match bits(insn, 11, 10) {
        // Unscaled (LDUR/STUR, PRFUM) and unprivileged (LDTR/STTR; no prefetch form).
        mode @ (0b00 | 0b10) => {
            let (sz, w, se, sf) = match single_kind(size, opc) {
                Err(Unsupported::Prefetch) if mode == 0b10 => Err(Unsupported::Unallocated),
                r => r,
            }?;
            single(sz, w, se, sf, rt, rn, Offset::Imm(imm), None, false)
        }
        mode => {
            let (sz, w, se, sf) = match single_kind(size, opc) {
                Err(Unsupported::Prefetch) => Err(Unsupported::Unallocated),
                r => r,
            }?;
            if mode == 0b01 {
                single(sz, w, se, sf, rt, rn, Offset::Imm(0), Some(imm), true)
            } else {
                single(sz, w, se, sf, rt, rn, Offset::Imm(imm), Some(imm), false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Encodings come from `llvm-mc -triple=aarch64 -show-encoding` (the assembly is beside
    //! each word), except the CONSTRAINED UNPREDICTABLE ones, which the assembler refuses
    //! and which were encoded by hand.
    use super::*;
    use AccessSize::*;

    struct Regs([u64; 31], u64);

    impl GuestRegisters for Regs {
        fn x(&self, n: u8) -> u64 {
            self.0[n as usize]
        }
        fn sp(&self) -> u64 {
            self.1
        }
    }

    fn regs() -> Regs {
        let mut r = [0u64; 31];
        for (i, v) in r.iter_mut().enumerate() {
            *v = 0x1000 * i as u64;
        }
        Regs(r, 0x4010_0000)
    }

    fn el(offset: u64, size: AccessSize, rt: u8, sign_extend: bool, sf: bool) -> Element {
        Element {
            offset,
            size,
            rt,
            sign_extend,
            sf,
        }
    }

    /// (elements, is_write, base, offset, writeback, post_index)
    fn check(
        insn: u32,
        els: &[Element],
        is_write: bool,
        base: u8,
        offset: Offset,
        writeback: Option<i64>,
    ) {
        let d = decode(insn).unwrap_or_else(|e| panic!("{insn:#010x}: {e}"));
        assert_eq!(d.elements(), els, "{insn:#010x}");
        assert_eq!(d.is_write, is_write, "{insn:#010x}");
        assert_eq!(d.base, base, "{insn:#010x}");
        assert_eq!(d.offset, offset, "{insn:#010x}");
        assert_eq!(d.writeback, writeback, "{insn:#010x}");
        let post = matches!(offset, Offset::Imm(0)) && writeback.is_some_and(|w| w != 0);
        if d.post_index {
            assert!(post, "{insn:#010x}");
        }
    }

    #[test]
    fn pairs() {
        let w = |rt, rt2| {
            [
                el(0, Word, rt, false, false),
                el(4, Word, rt2, false, false),
            ]
        };
        let x = |rt, rt2| {
            [
                el(0, Double, rt, false, true),
                el(8, Double, rt2, false, true),
            ]
        };
        // ldp w2, w3, [x1]
        check(0x2940_0c22, &w(2, 3), false, 1, Offset::Imm(0), None);
        // ldp w2, w3, [x1, #8]
        check(0x2941_0c22, &w(2, 3), false, 1, Offset::Imm(8), None);
        // stp w2, w3, [x1, #-8]
        check(0x293f_0c22, &w(2, 3), true, 1, Offset::Imm(-8), None);
        // ldp x2, x3, [x1, #16]!
        check(0xa9c1_0c22, &x(2, 3), false, 1, Offset::Imm(16), Some(16));
        // stp x29, x30, [sp, #-16]!
        check(
            0xa9bf_7bfd,
            &x(29, 30),
            true,
            31,
            Offset::Imm(-16),
            Some(-16),
        );
        // ldp x29, x30, [sp], #16
        check(0xa8c1_7bfd, &x(29, 30), false, 31, Offset::Imm(0), Some(16));
        assert!(decode(0xa8c1_7bfd).unwrap().post_index);
        // ldpsw x4, x5, [x6, #-4]
        let sw = [el(0, Word, 4, true, true), el(4, Word, 5, true, true)];
        check(0x697f_94c4, &sw, false, 6, Offset::Imm(-4), None);
        // stnp x1, x2, [x3, #32]
        check(0xa802_0861, &x(1, 2), true, 3, Offset::Imm(32), None);
        // ldp x1, x2, [x1] (no writeback: fine)
        check(0xa940_0821, &x(1, 2), false, 1, Offset::Imm(0), None);
    }

    #[test]
    fn single_immediate_forms() {
        let one = |size, rt, se, sf| [el(0, size, rt, se, sf)];
        // ldr x0, [x1], #8
        check(
            0xf840_8420,
            &one(Double, 0, false, true),
            false,
            1,
            Offset::Imm(0),
            Some(8),
        );
        assert!(decode(0xf840_8420).unwrap().post_index);
        // ldr w0, [x1, #-4]!
        let d = decode(0xb85f_cc20).unwrap();
        assert!(!d.post_index);
        check(
            0xb85f_cc20,
            &one(Word, 0, false, false),
            false,
            1,
            Offset::Imm(-4),
            Some(-4),
        );
        // str x5, [x6, #32760]
        check(
            0xf93f_fcc5,
            &one(Double, 5, false, true),
            true,
            6,
            Offset::Imm(32760),
            None,
        );
        // strb w5, [x6, #4095]
        check(
            0x393f_fcc5,
            &one(Byte, 5, false, false),
            true,
            6,
            Offset::Imm(4095),
            None,
        );
        // strh w5, [x6, #2]
        check(
            0x7900_04c5,
            &one(Half, 5, false, false),
            true,
            6,
            Offset::Imm(2),
            None,
        );
        // ldrb w0, [x1, #1]; ldrh w0, [x1, #2]
        check(
            0x3940_0420,
            &one(Byte, 0, false, false),
            false,
            1,
            Offset::Imm(1),
            None,
        );
        check(
            0x7940_0420,
            &one(Half, 0, false, false),
            false,
            1,
            Offset::Imm(2),
            None,
        );
        // ldrsb x0, [x1]; ldrsb w0, [x1]
        check(
            0x3980_0020,
            &one(Byte, 0, true, true),
            false,
            1,
            Offset::Imm(0),
            None,
        );
        check(
            0x39c0_0020,
            &one(Byte, 0, true, false),
            false,
            1,
            Offset::Imm(0),
            None,
        );
        // ldrsh x2, [x1, #4066]; ldrsh w2, [x1, #2]
        check(
            0x799f_c422,
            &one(Half, 2, true, true),
            false,
            1,
            Offset::Imm(4066),
            None,
        );
        check(
            0x79c0_0422,
            &one(Half, 2, true, false),
            false,
            1,
            Offset::Imm(2),
            None,
        );
        // ldrsw x3, [x1, #4]
        check(
            0xb980_0423,
            &one(Word, 3, true, true),
            false,
            1,
            Offset::Imm(4),
            None,
        );
        // ldur x0, [x1, #-1]; stur wzr, [x1, #255]; sturh w1, [x2, #-256]
        check(
            0xf85f_f020,
            &one(Double, 0, false, true),
            false,
            1,
            Offset::Imm(-1),
            None,
        );
        check(
            0xb80f_f03f,
            &one(Word, 31, false, false),
            true,
            1,
            Offset::Imm(255),
            None,
        );
        check(
            0x7810_0041,
            &one(Half, 1, false, false),
            true,
            2,
            Offset::Imm(-256),
            None,
        );
        // ldtrsw x0, [x1]; sttrb w0, [x1, #1]
        check(
            0xb880_0820,
            &one(Word, 0, true, true),
            false,
            1,
            Offset::Imm(0),
            None,
        );
        check(
            0x3800_1820,
            &one(Byte, 0, false, false),
            true,
            1,
            Offset::Imm(1),
            None,
        );
        // ldr xzr, [x1]
        check(
            0xf940_003f,
            &one(Double, 31, false, true),
            false,
            1,
            Offset::Imm(0),
            None,
        );
        // str x1, [sp, #8]! (base SP is not Rt 1)
        check(
            0xf800_8fe1,
            &one(Double, 1, false, true),
            true,
            31,
            Offset::Imm(8),
            Some(8),
        );
    }

    #[test]
    fn register_offset_forms() {
        let one = |size, rt, se, sf| [el(0, size, rt, se, sf)];
        let reg = |rm, extend, shift| Offset::Reg { rm, extend, shift };
        // ldr x3, [x1, x2, lsl #3]; ldr x3, [x1, x2]
        check(
            0xf862_7823,
            &one(Double, 3, false, true),
            false,
            1,
            reg(2, Extend::Lsl, 3),
            None,
        );
        check(
            0xf862_6823,
            &one(Double, 3, false, true),
            false,
            1,
            reg(2, Extend::Lsl, 0),
            None,
        );
        // ldrb w3, [x1, w2, sxtw]
        check(
            0x3862_c823,
            &one(Byte, 3, false, false),
            false,
            1,
            reg(2, Extend::Sxtw, 0),
            None,
        );
        // ldrh w3, [x1, w2, uxtw #1]
        check(
            0x7862_5823,
            &one(Half, 3, false, false),
            false,
            1,
            reg(2, Extend::Uxtw, 1),
            None,
        );
        // str w3, [x1, x2, sxtx #2]
        check(
            0xb822_f823,
            &one(Word, 3, false, false),
            true,
            1,
            reg(2, Extend::Sxtx, 2),
            None,
        );
        // ldrsw x3, [sp, w4, uxtw]
        check(
            0xb8a4_4be3,
            &one(Word, 3, true, true),
            false,
            31,
            reg(4, Extend::Uxtw, 0),
            None,
        );
    }

    #[test]
    fn acquire_release() {
        // ldarb w1, [x2]
        let d = decode(0x08df_fc41).unwrap();
        assert_eq!(d.elements(), &[el(0, Byte, 1, false, false)]);
        assert!(d.acquire_release && !d.is_write);
        // stlrh w1, [x2]
        let d = decode(0x489f_fc41).unwrap();
        assert_eq!(d.elements(), &[el(0, Half, 1, false, false)]);
        assert!(d.acquire_release && d.is_write);
        // ldlar x1, [x2]
        let d = decode(0xc8df_7c41).unwrap();
        assert_eq!(d.elements(), &[el(0, Double, 1, false, true)]);
    }

    #[test]
    fn unsupported_classes() {
        use Unsupported::*;
        let cases: &[(u32, Unsupported, &str)] = &[
            (0xc85f_fc20, Exclusive, "ldaxr x0, [x1]"),
            (0xc802_7c20, Exclusive, "stxr w2, x0, [x1]"),
            (0xc87f_0440, Exclusive, "ldxp x0, x1, [x2]"),
            (0xc8e0_fc41, Atomic, "casal x0, x1, [x2]"),
            (0x4860_fc82, Atomic, "caspal x0, x1, x2, x3, [x4]"),
            (0xf820_8041, Atomic, "swp x0, x1, [x2]"),
            (0xb8e0_3041, Atomic, "ldsetal w0, w1, [x2]"),
            (0xf820_0041, Atomic, "ldadd x0, x1, [x2]"),
            (0xf8bf_c020, Atomic, "ldapr x0, [x1]"),
            (0xfd40_0420, SimdFp, "ldr d0, [x1, #8]"),
            (0x3dc0_0020, SimdFp, "ldr q0, [x1]"),
            (0xadbf_07e0, SimdFp, "stp q0, q1, [sp, #-32]!"),
            (0x4c00_7820, SimdFp, "st1 {v0.4s}, [x1]"),
            (0x0d60_e000, SimdFp, "ld4r {v0.8b-v3.8b}, [x0]"),
            (0x1800_0800, Literal, "ldr w0, #256"),
            (0x9800_0800, Literal, "ldrsw x0, #256"),
            (0xf980_0420, Prefetch, "prfm pldl1keep, [x1, #8]"),
            (0xf89f_f020, Prefetch, "prfum pldl1keep, [x1, #-1]"),
            (0xf8a2_6820, Prefetch, "prfm pldl1keep, [x1, x2]"),
            (0xf820_1c20, PointerAuth, "ldraa x0, [x1, #8]!"),
            (0xf8a0_0420, PointerAuth, "ldrab x0, [x1]"),
            (0x6900_8440, MemoryTagging, "stgp x0, x1, [x2, #16]"),
            (0xd920_0820, MemoryTagging, "stg x0, [x1]"),
            (0xd960_0020, MemoryTagging, "ldg x0, [x1]"),
            (0x9940_4020, RcpcUnscaled, "ldapur w0, [x1, #4]"),
            (0xd900_0020, RcpcUnscaled, "stlur x0, [x1]"),
            (0x8b02_0020, NotLoadStore, "add x0, x1, x2"),
            (0x1400_0040, NotLoadStore, "b #256"),
            (0xd50b_7420, NotLoadStore, "dc zva, x0"),
            (0x0000_0000, NotLoadStore, "udf #0"),
            (0xf840_8421, Unpredictable, "ldr x1, [x1], #8"),
            (0xf800_8c21, Unpredictable, "str x1, [x1, #8]!"),
            (0xa940_0441, Unpredictable, "ldp x1, x1, [x2]"),
            (0xa8c1_0821, Unpredictable, "ldp x1, x2, [x1], #16"),
            (0xa981_0841, Unpredictable, "stp x1, x2, [x2, #16]!"),
            (0xe940_0821, Unallocated, "ldp with opc = 0b11"),
            (
                0x6840_0821,
                Unallocated,
                "ldnp with opc = 0b01 (LDNPSW does not exist)",
            ),
            (0xb8c0_0420, Unallocated, "ldrsw-to-w (size 10, opc 11)"),
            (0xf880_0c20, Unallocated, "prfm with pre-index"),
            (0xf862_0823, Unallocated, "register offset, option = 0b000"),
        ];
        for &(insn, want, what) in cases {
            assert_eq!(decode(insn), Err(want), "{insn:#010x} {what}");
        }
    }

    #[test]
    fn resolve_pair_and_writeback() {
        let r = regs();
        // ldp w2, w3, [x1, #8] with x1 = 0x1000 -> VA 0x1008, 0x100c.
        let d = decode(0x2941_0c22).unwrap();
        let res = d.resolve(&r, 0x0900_0008, Some(0x1008)).unwrap();
        let e = res.elements();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].va, e[0].ipa, e[0].rt), (0x1008, 0x0900_0008, 2));
        assert_eq!((e[1].va, e[1].ipa, e[1].rt), (0x100c, 0x0900_000c, 3));
        assert_eq!(res.writeback, None);
        // The same with FAR reporting the second element: same IPAs.
        let res2 = d.resolve(&r, 0x0900_000c, Some(0x100c)).unwrap();
        assert_eq!(res2.elements(), res.elements());
        // FnV: no FAR.
        assert_eq!(d.resolve(&r, 0x0900_0008, None).unwrap(), res);
        // stp x29, x30, [sp, #-16]! with SP = 0x4010_0000.
        let d = decode(0xa9bf_7bfd).unwrap();
        let res = d.resolve(&r, 0x0a00_0ff0, Some(0x400f_fff0)).unwrap();
        assert_eq!(res.elements()[0].ipa, 0x0a00_0ff0);
        assert_eq!(res.elements()[1].ipa, 0x0a00_0ff8);
        assert!(res.elements()[1].is_write);
        assert_eq!(res.writeback, Some((31, 0x400f_fff0)));
        // ldr x0, [x1], #8: accesses x1, then x1 += 8.
        let d = decode(0xf840_8420).unwrap();
        let res = d.resolve(&r, 0x0900_0000, Some(0x1000)).unwrap();
        assert_eq!(res.count, 1);
        assert_eq!(res.elements()[0].ipa, 0x0900_0000);
        assert_eq!(res.writeback, Some((1, 0x1008)));
        let m = res.elements()[0].to_mmio();
        assert_eq!(
            (m.ipa, m.size, m.rt, m.sf, m.is_write),
            (0x0900_0000, Double, 0, true, false)
        );
    }

    #[test]
    fn resolve_register_offsets() {
        let mut r = regs();
        r.0[2] = (-2i64) as u64; // w2 = -2 (sxtw), or 0xffff_fffe (uxtw)
                                 // ldrb w3, [x1, w2, sxtw]: 0x1000 - 2.
        let d = decode(0x3862_c823).unwrap();
        assert_eq!(d.address(&r), 0x0ffe);
        // ldrh w3, [x1, w2, uxtw #1]: 0x1000 + 0x1_ffff_fffc.
        let d = decode(0x7862_5823).unwrap();
        assert_eq!(d.address(&r), 0x1000 + 0x1_ffff_fffc);
        // ldr x3, [x1, x2, lsl #3]
        r.0[2] = 4;
        let d = decode(0xf862_7823).unwrap();
        assert_eq!(d.address(&r), 0x1020);
    }

    #[test]
    fn resolve_rejects_page_crossing_and_mismatch() {
        let mut r = regs();
        // ldp x2, x3, [x1, #16]! with x1 = 0x1ff0 -> 0x2000, 0x2008: fine (one page).
        r.0[1] = 0x1ff0;
        let d = decode(0xa9c1_0c22).unwrap();
        assert!(d.resolve(&r, 0x0900_0000, Some(0x2000)).is_ok());
        // x1 = 0x1fe8 -> 0x1ff8 and 0x2000: crosses.
        r.0[1] = 0x1fe8;
        assert_eq!(
            d.resolve(&r, 0x0900_0ff8, Some(0x1ff8)),
            Err(ResolveError::CrossesPage)
        );
        assert_eq!(
            d.resolve(&r, 0x0900_1000, Some(0x2000)),
            Err(ResolveError::CrossesPage)
        );
        // A single unaligned doubleword crossing a page.
        r.0[1] = 0x1ffc;
        let d = decode(0xf940_0022).unwrap(); // ldr x2, [x1]
        assert_eq!(d.resolve(&r, 0, None), Err(ResolveError::CrossesPage));
        // FAR in another page than the registers say.
        r.0[1] = 0x1000;
        assert_eq!(
            d.resolve(&r, 0x0900_0000, Some(0x5000)),
            Err(ResolveError::FarMismatch)
        );
        // A tagged FAR top byte is ignored.
        assert!(d
            .resolve(&r, 0x0900_0000, Some(0x5a00_0000_0000_1000))
            .is_ok());
    }

    /// xorshift64*, so the sweep is reproducible without a dev-dependency.
    fn rng(state: &mut u64) -> u32 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Invariants every successful decode must satisfy.
    fn check_invariants(insn: u32, r: &Regs) {
        if let Ok(d) = decode(insn) {
            assert!(d.count == 1 || d.count == 2, "{insn:#010x}");
            let els = d.elements();
            assert!(
                d.base <= 31 && els.iter().all(|e| e.rt <= 31),
                "{insn:#010x}"
            );
            if d.count == 2 {
                assert_eq!(els[1].offset, els[0].size.bytes(), "{insn:#010x}");
                assert_eq!(els[0].size, els[1].size, "{insn:#010x}");
            }
            if d.post_index {
                assert_eq!(d.offset, Offset::Imm(0), "{insn:#010x}");
                assert!(d.writeback.is_some(), "{insn:#010x}");
            }
            if let (Some(wb), Offset::Imm(off)) = (d.writeback, d.offset) {
                assert!(d.post_index || wb == off, "{insn:#010x}");
            }
            // Never panics, whatever the registers and addresses.
            let _ = d.resolve(
                r,
                u64::from(insn) << 20,
                Some(u64::from(insn).rotate_left(17)),
            );
            let _ = d.resolve(r, u64::MAX, None);
        }
    }

    #[test]
    fn never_panics_on_random_words() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut r = regs();
        r.1 = u64::MAX - 3;
        r.0[7] = u64::MAX;
        let mut ok = 0;
        for _ in 0..2_000_000 {
            let insn = rng(&mut s);
            check_invariants(insn, &r);
            // Force the load/store group too (bit 27 = 1, bit 25 = 0), where most paths are.
            let ls = (insn | 1 << 27) & !(1 << 25);
            check_invariants(ls, &r);
            ok += decode(ls).is_ok() as u32;
        }
        assert!(ok > 100_000, "the sweep reaches the decodable forms ({ok})");
    }

    #[test]
    fn every_load_store_opcode_pattern() {
        // All combinations of the fields that select the form (bits 31:21 and 15:10), with
        // the register fields set to a few interesting values.
        let r = regs();
        for top in 0..(1u32 << 11) {
            for mid in 0..(1u32 << 6) {
                for regs_bits in [0u32, 0x1f, 0x3ff, 0x3e0 | 2] {
                    let insn = (top << 21) | (mid << 10) | regs_bits | (0x15 << 16);
                    check_invariants(insn, &r);
                }
            }
        }
    }
}
