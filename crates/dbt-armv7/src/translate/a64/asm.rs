//! A buffer of A64 instructions placed at a known offset of the code cache, with local
//! labels and forward-branch fixups.

use alloc::vec::Vec;

use super::enc::{self, Cond};

/// A local label: an index into [`Asm`]'s label table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

#[derive(Clone, Copy)]
enum Fix {
    B,
    BCond(Cond),
    Tbnz(u8, u8),
    Tbz(u8, u8),
    Adr(u8),
    Cbnz(u8),
    Cbz(u8),
    LdrLit(u8),
}

/// A point in an [`Asm`] to go back to ([`Asm::mark`], [`Asm::reset`]).
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    words: usize,
    labels: usize,
    fixups: usize,
    literals: usize,
    aligned: u16,
}

/// An instruction buffer whose first word will live at byte offset `base` of the code
/// cache, so that branches to other cache offsets (the epilogue, linked blocks) can be
/// encoded directly.
pub struct Asm {
    /// Code cache offset of the first instruction.
    pub base: usize,
    /// The instructions.
    pub words: Vec<u32>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label, Fix)>,
    /// 32-bit literals placed after the code: (label, value).
    literals: Vec<(Label, u32)>,
    /// Guest registers (bit n = rN) known to hold a word-aligned value at this point of
    /// the block, so that `LDM`/`STM`/`LDRD`/`STRD` need not check them again.
    pub aligned: u16,
    /// `SCTLR.A` was set when the block was translated: every halfword and word access
    /// checks its alignment (a misaligned one leaves through a side exit).
    pub strict_align: bool,
    /// `LDRT`-style accesses become the host's unprivileged `LDTR*/STTR*`: only where the
    /// guest's PL0 permissions are the host's EL0 ones (translation with the guest's MMU
    /// on, mapped so). Off while translated code runs with the guest's MMU off, where
    /// nothing checks permissions and a host running translated code at EL1 need not give
    /// EL0 access to guest memory (the hypervisor's DBT runtime does not).
    pub unpriv_forms: bool,
    /// The host FPCR holds the Advanced SIMD "standard FPSCR value" (left so by an
    /// unconditional NEON floating-point lowering for the next one); the block lowers
    /// anything else only after `vfp::guest_fpcr` gave FPCR back the guest's controls.
    pub neon_fpcr: bool,
    /// The instruction being lowered is unconditional, so it may leave [`neon_fpcr`]
    /// set (a conditional one could be skipped, and the mode with it).
    ///
    /// [`neon_fpcr`]: Asm::neon_fpcr
    pub unconditional: bool,
}

impl Asm {
    /// An empty buffer that will be placed at cache offset `base` (4-aligned).
    pub fn new(base: usize) -> Asm {
        Asm {
            base,
            words: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
            literals: Vec::new(),
            aligned: 0,
            strict_align: false,
            unpriv_forms: false,
            neon_fpcr: false,
            unconditional: false,
        }
    }

    /// Appends one instruction.
    pub fn put(&mut self, w: u32) {
        self.words.push(w);
    }

    /// Cache offset of the next instruction.
    pub fn here(&self) -> usize {
        self.base + 4 * self.words.len()
    }

    /// A new, unbound label.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the next instruction.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.words.len());
    }

    fn fix(&mut self, l: Label, f: Fix) {
        self.fixups.push((self.words.len(), l, f));
        self.words.push(enc::NOP);
    }

    /// `B l`.
    pub fn b_to(&mut self, l: Label) {
        self.fix(l, Fix::B);
    }

    /// `B.cond l`.
    pub fn b_cond_to(&mut self, c: Cond, l: Label) {
        self.fix(l, Fix::BCond(c));
    }

    /// `TBNZ Xt, #bit, l`.
    pub fn tbnz_to(&mut self, rt: u8, bit: u8, l: Label) {
        self.fix(l, Fix::Tbnz(rt, bit));
    }

    /// `CBNZ Xt, l`.
    pub fn cbnz_to(&mut self, rt: u8, l: Label) {
        self.fix(l, Fix::Cbnz(rt));
    }

    /// `CBNZ Xt, l` (`nonzero`) or `CBZ Xt, l`.
    pub fn cbz_to(&mut self, nonzero: bool, rt: u8, l: Label) {
        self.fix(l, if nonzero { Fix::Cbnz(rt) } else { Fix::Cbz(rt) });
    }

    /// `TBZ Xt, #bit, l`.
    pub fn tbz_to(&mut self, rt: u8, bit: u8, l: Label) {
        self.fix(l, Fix::Tbz(rt, bit));
    }

    /// `ADR Xd, l`.
    pub fn adr_to(&mut self, rd: u8, l: Label) {
        self.fix(l, Fix::Adr(rd));
    }

    /// `LDR Wt, =value`: a load of a 32-bit literal that [`Asm::finish`] places after
    /// the code (one instruction where `MOVZ`+`MOVK` take two).
    pub fn ldr_lit32(&mut self, rt: u8, value: u32) {
        let l = match self.literals.iter().find(|x| x.1 == value) {
            Some(&(l, _)) => l,
            None => {
                let l = self.label();
                self.literals.push((l, value));
                l
            }
        };
        self.fix(l, Fix::LdrLit(rt));
    }

    /// The buffer's current extent, to [`Asm::reset`] to after a lowering that gave up.
    pub fn mark(&self) -> Mark {
        Mark {
            words: self.words.len(),
            labels: self.labels.len(),
            fixups: self.fixups.len(),
            literals: self.literals.len(),
            aligned: self.aligned,
        }
    }

    /// Drops everything emitted (instructions, labels, fixups, literals) since `m`.
    pub fn reset(&mut self, m: Mark) {
        self.words.truncate(m.words);
        self.labels.truncate(m.labels);
        self.fixups.truncate(m.fixups);
        self.literals.truncate(m.literals);
        self.aligned = m.aligned;
    }

    /// `B` to an absolute code cache offset.
    pub fn b_abs(&mut self, target: usize) {
        let off = target as i64 - self.here() as i64;
        self.put(enc::b(off));
    }

    /// Resolves the fixups and returns the instructions as little-endian bytes.
    pub fn finish(mut self) -> Vec<u8> {
        for (l, v) in core::mem::take(&mut self.literals) {
            self.bind(l);
            self.put(v);
        }
        for &(at, l, f) in &self.fixups {
            let to = self.labels[l.0].expect("unbound label");
            let off = (to as i64 - at as i64) * 4;
            self.words[at] = match f {
                Fix::B => enc::b(off),
                Fix::BCond(c) => enc::b_cond(c, off),
                Fix::Tbnz(rt, bit) => enc::tbnz(rt, bit, off),
                Fix::Tbz(rt, bit) => enc::tbnz(rt, bit, off) & !(1 << 24),
                Fix::Adr(rd) => enc::adr(rd, off),
                Fix::Cbnz(rt) => enc::x_cbz(true, rt, off),
                Fix::Cbz(rt) => enc::x_cbz(false, rt, off),
                Fix::LdrLit(rt) => enc::ldr_lit32(rt, off),
            };
        }
        self.fixups.clear();
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
