//! Instruction decoding: A32 ([`a32`]), 16-bit Thumb ([`t16`]), 32-bit Thumb-2 ([`t32`]),
//! VFP/Advanced SIMD classification ([`vfp`]) and the sensitive-instruction classifier
//! ([`classify`]).
//!
//! Every decoder produces the same [`Insn`]: an executable [`Op`] (shared by both
//! instruction sets, as QEMU's `trans_*` functions are), the encoding [`Class`] it came
//! from (for coverage), and flags for UNDEFINED/UNPREDICTABLE encodings. [`Insn::info`]
//! derives register usage, control flow, sensitivity and PC use from the `Op`.

pub mod a32;
pub mod class;
pub mod classify;
pub mod t16;
pub mod t32;
pub mod vfp;

pub use class::Class;
pub use classify::Info;

/// Shift types of the barrel shifter. `Rrx` is `ROR #0` in the immediate forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    /// Logical shift left.
    Lsl,
    /// Logical shift right.
    Lsr,
    /// Arithmetic shift right.
    Asr,
    /// Rotate right.
    Ror,
    /// Rotate right by one through carry.
    Rrx,
}

impl Shift {
    /// Decodes an immediate shift (`type`, `imm5`) as `DecodeImmShift` does.
    pub fn decode_imm(ty: u32, imm5: u32) -> (Shift, u8) {
        match ty & 3 {
            0 => (Shift::Lsl, imm5 as u8),
            1 => (Shift::Lsr, if imm5 == 0 { 32 } else { imm5 as u8 }),
            2 => (Shift::Asr, if imm5 == 0 { 32 } else { imm5 as u8 }),
            _ => {
                if imm5 == 0 {
                    (Shift::Rrx, 1)
                } else {
                    (Shift::Ror, imm5 as u8)
                }
            }
        }
    }

    /// Decodes a register-controlled shift type.
    pub fn decode_reg(ty: u32) -> Shift {
        match ty & 3 {
            0 => Shift::Lsl,
            1 => Shift::Lsr,
            2 => Shift::Asr,
            _ => Shift::Ror,
        }
    }
}

/// The flexible second operand of data-processing instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand2 {
    /// An expanded immediate; `carry` is the shifter carry-out when the encoding defines one.
    Imm {
        /// The expanded value.
        value: u32,
        /// Carry-out, `None` when the carry flag is left unchanged.
        carry: Option<bool>,
    },
    /// A register shifted by an immediate amount.
    ShiftImm {
        /// Register shifted.
        rm: u8,
        /// Shift type.
        shift: Shift,
        /// Shift amount (1..=32; 0 only for LSL).
        amount: u8,
    },
    /// A register shifted by the bottom byte of another register.
    ShiftReg {
        /// Register shifted.
        rm: u8,
        /// Shift type (never `Rrx`).
        shift: Shift,
        /// Register holding the amount.
        rs: u8,
    },
}

/// Data-processing operations (A32 opcode order, plus Thumb-2 ORN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum DpOp {
    And,
    Eor,
    Sub,
    Rsb,
    Add,
    Adc,
    Sbc,
    Rsc,
    Tst,
    Teq,
    Cmp,
    Cmn,
    Orr,
    Mov,
    Bic,
    Mvn,
    Orn,
}

impl DpOp {
    /// The A32 4-bit opcode order.
    pub fn from_a32(op: u32) -> DpOp {
        use DpOp::*;
        [
            And, Eor, Sub, Rsb, Add, Adc, Sbc, Rsc, Tst, Teq, Cmp, Cmn, Orr, Mov, Bic, Mvn,
        ][(op & 15) as usize]
    }
    /// Compare/test operations: they write no register.
    pub fn is_test(self) -> bool {
        matches!(self, DpOp::Tst | DpOp::Teq | DpOp::Cmp | DpOp::Cmn)
    }
    /// Move operations: they read no `rn`.
    pub fn is_move(self) -> bool {
        matches!(self, DpOp::Mov | DpOp::Mvn)
    }
    /// Logical operations (flags C from the shifter, V unchanged).
    pub fn is_logical(self) -> bool {
        use DpOp::*;
        matches!(self, And | Eor | Tst | Teq | Orr | Mov | Bic | Mvn | Orn)
    }
}

/// Long multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum MulLong {
    Umull,
    Umlal,
    Smull,
    Smlal,
    Umaal,
}

/// Halfword multiplies (`SMLA<x><y>`, `SMLAW<y>`, `SMULW<y>`, `SMLAL<x><y>`, `SMUL<x><y>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum MulHalf {
    Smla,
    Smlaw,
    Smulw,
    Smlal,
    Smul,
}

/// Dual 16-bit multiplies (`SMLAD`, `SMLSD`, `SMLALD`, `SMLSLD`; `SMUAD`/`SMUSD` have `ra == 15`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum MulDual {
    Smlad,
    Smlsd,
    Smlald,
    Smlsld,
}

/// Saturating add/subtract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum QOp {
    Qadd,
    Qsub,
    Qdadd,
    Qdsub,
}

/// Prefix of parallel add/subtract instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ParPrefix {
    S,
    Q,
    Sh,
    U,
    Uq,
    Uh,
}

/// Operation of parallel add/subtract instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ParOp {
    Add16,
    Asx,
    Sax,
    Sub16,
    Add8,
    Sub8,
}

/// Extension size of `SXT*`/`UXT*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ExtSize {
    B,
    H,
    B16,
}

/// Bit-reversal-like single-operand operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum RevOp {
    Rev,
    Rev16,
    Revsh,
    Rbit,
    Clz,
}

/// Bit-field operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BfOp {
    Sbfx,
    Ubfx,
    Bfi,
    Bfc,
}

/// Memory access size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Size {
    B,
    H,
    W,
    D,
}

impl Size {
    /// Bytes accessed.
    pub fn bytes(self) -> u32 {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::D => 8,
        }
    }
}

/// Offset of a single load/store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOff {
    /// Immediate offset magnitude.
    Imm(u32),
    /// Register offset, shifted by an immediate.
    Reg {
        /// Offset register.
        rm: u8,
        /// Shift type.
        shift: Shift,
        /// Shift amount.
        amount: u8,
    },
}

/// Addressing of loads/stores: offset, pre/post-index, writeback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    /// Base register.
    pub rn: u8,
    /// Offset.
    pub off: MemOff,
    /// Add (true) or subtract the offset.
    pub add: bool,
    /// Pre-indexed (offset applied before the access).
    pub index: bool,
    /// Base register written back.
    pub wback: bool,
}

/// Hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Hint {
    Nop,
    Yield,
    Wfe,
    Wfi,
    Sev,
    Dbg,
}

/// Barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Barrier {
    Dmb,
    Dsb,
    Isb,
}

/// Source of `MSR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsrSrc {
    /// Register.
    Reg(u8),
    /// Immediate.
    Imm(u32),
}

/// VFP/Advanced SIMD instruction groups (classified with core-register usage; executed by
/// `exec::vfp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VfpKind {
    DataProc,
    LoadStore,
    Transfer,
    Vmrs,
    Vmsr,
    NeonDataProc,
    NeonLoadStore,
}

/// An executable operation, shared by A32 and T32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Op {
    /// Data processing; `rd == 15` with `s` is an exception return (`SUBS PC, LR`).
    Dp {
        op: DpOp,
        s: bool,
        rd: u8,
        rn: u8,
        op2: Operand2,
    },
    /// Thumb `ADR`: `rd = Align(PC,4) +/- imm`.
    Adr {
        rd: u8,
        imm: i32,
    },
    Movw {
        rd: u8,
        imm: u16,
    },
    Movt {
        rd: u8,
        imm: u16,
    },
    /// `MUL` (`ra == 15`), `MLA` (`sub == false`), `MLS` (`sub == true`).
    Mul {
        s: bool,
        sub: bool,
        rd: u8,
        rn: u8,
        rm: u8,
        ra: u8,
    },
    MulLong {
        kind: MulLong,
        s: bool,
        rdlo: u8,
        rdhi: u8,
        rn: u8,
        rm: u8,
    },
    /// For `SMLAL<x><y>`, `rd` is RdHi and `ra` RdLo.
    MulHalf {
        kind: MulHalf,
        n_high: bool,
        m_high: bool,
        rd: u8,
        rn: u8,
        rm: u8,
        ra: u8,
    },
    /// For the long forms `rd` is RdHi and `ra` RdLo; otherwise `ra == 15` means none.
    MulDual {
        kind: MulDual,
        swap: bool,
        rd: u8,
        rn: u8,
        rm: u8,
        ra: u8,
    },
    /// `SMMLA`/`SMMUL` (`ra == 15`) or `SMMLS` (`sub`).
    MulMost {
        sub: bool,
        round: bool,
        rd: u8,
        rn: u8,
        rm: u8,
        ra: u8,
    },
    Div {
        signed: bool,
        rd: u8,
        rn: u8,
        rm: u8,
    },
    /// `USAD8` (`ra == 15`) / `USADA8`.
    Usad8 {
        rd: u8,
        rn: u8,
        rm: u8,
        ra: u8,
    },
    QAddSub {
        op: QOp,
        rd: u8,
        rn: u8,
        rm: u8,
    },
    /// `SSAT`/`USAT`: `sat` is the encoded field (SSAT saturates to `sat+1` bits).
    Sat {
        signed: bool,
        rd: u8,
        sat: u8,
        rn: u8,
        shift: Shift,
        amount: u8,
    },
    Sat16 {
        signed: bool,
        rd: u8,
        sat: u8,
        rn: u8,
    },
    Parallel {
        prefix: ParPrefix,
        op: ParOp,
        rd: u8,
        rn: u8,
        rm: u8,
    },
    /// `SXT*`/`UXT*` (`rn == 15`) and `SXTA*`/`UXTA*`; `rot` in bits.
    Extend {
        signed: bool,
        size: ExtSize,
        rd: u8,
        rn: u8,
        rm: u8,
        rot: u8,
    },
    Pkh {
        tb: bool,
        rd: u8,
        rn: u8,
        rm: u8,
        amount: u8,
    },
    Sel {
        rd: u8,
        rn: u8,
        rm: u8,
    },
    Rev {
        op: RevOp,
        rd: u8,
        rm: u8,
    },
    /// `lsb` and `width` (for BFI/BFC `width = msb - lsb + 1`, may be <= 0 → UNPREDICTABLE).
    Bitfield {
        op: BfOp,
        rd: u8,
        rn: u8,
        lsb: u8,
        width: u8,
    },
    Mem {
        load: bool,
        size: Size,
        signed: bool,
        rt: u8,
        addr: Addr,
        unpriv: bool,
    },
    MemDual {
        load: bool,
        rt: u8,
        rt2: u8,
        addr: Addr,
    },
    Ldrex {
        size: Size,
        rt: u8,
        rt2: u8,
        rn: u8,
        imm: u32,
    },
    Strex {
        size: Size,
        rd: u8,
        rt: u8,
        rt2: u8,
        rn: u8,
        imm: u32,
    },
    Clrex,
    Swp {
        byte: bool,
        rt: u8,
        rt2: u8,
        rn: u8,
    },
    /// LDM/STM; `user` is the `^` form (user registers, or exception return with PC).
    Multi {
        load: bool,
        rn: u8,
        list: u16,
        inc: bool,
        before: bool,
        wback: bool,
        user: bool,
    },
    B {
        off: i32,
    },
    Bl {
        off: i32,
    },
    /// `BLX imm`: target state is the other instruction set.
    BlxImm {
        off: i32,
    },
    Bx {
        rm: u8,
    },
    Blx {
        rm: u8,
    },
    Bxj {
        rm: u8,
    },
    Cbz {
        nonzero: bool,
        rn: u8,
        off: u32,
    },
    Tb {
        half: bool,
        rn: u8,
        rm: u8,
    },
    It {
        firstcond: u8,
        mask: u8,
    },
    Mrs {
        rd: u8,
        spsr: bool,
    },
    Msr {
        spsr: bool,
        mask: u8,
        src: MsrSrc,
    },
    MrsBanked {
        rd: u8,
        r: bool,
        sysm: u8,
    },
    MsrBanked {
        rn: u8,
        r: bool,
        sysm: u8,
    },
    /// `imod`: 0 none, 2 enable (IE), 3 disable (ID).
    Cps {
        imod: u8,
        aif: u8,
        mode: Option<u8>,
    },
    Setend {
        big: bool,
    },
    Srs {
        mode: u8,
        inc: bool,
        before: bool,
        wback: bool,
    },
    Rfe {
        rn: u8,
        inc: bool,
        before: bool,
        wback: bool,
    },
    Eret,
    /// `MCR` (`to_cp`) / `MRC`; `rt == 15` for MRC is `APSR_nzcv`.
    Mcr {
        to_cp: bool,
        cp: u8,
        opc1: u8,
        crn: u8,
        crm: u8,
        opc2: u8,
        rt: u8,
    },
    Mcrr {
        to_cp: bool,
        cp: u8,
        opc1: u8,
        crm: u8,
        rt: u8,
        rt2: u8,
    },
    Ldc {
        load: bool,
        cp: u8,
        rn: u8,
        wback: bool,
    },
    Cdp {
        cp: u8,
    },
    Vfp {
        kind: VfpKind,
        reads: u16,
        writes: u16,
        sysreg: u8,
    },
    Svc {
        imm: u32,
    },
    Bkpt {
        imm: u16,
    },
    Hvc {
        imm: u16,
    },
    Smc {
        imm: u8,
    },
    Udf {
        imm: u16,
    },
    Hint(Hint),
    Barrier(Barrier),
    /// `PLD`/`PLDW`/`PLI`: no architectural effect; reads the base (and offset) register.
    Preload {
        rn: u8,
        rm: u8,
    },
    /// No instruction: UNDEFINED.
    Undefined,
}

/// A decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    /// The encoding (T32: first halfword in the high half).
    pub raw: u32,
    /// Length in bytes (2 or 4).
    pub len: u8,
    /// Thumb encoding.
    pub thumb: bool,
    /// Condition (14 = always; T32 instructions other than `B<c>` take theirs from IT).
    pub cond: u8,
    /// The operation.
    pub op: Op,
    /// Encoding class.
    pub class: Class,
    /// The encoding is UNPREDICTABLE; the interpreter takes it as UNDEFINED.
    pub unpredictable: bool,
}

impl Insn {
    pub(crate) fn new(raw: u32, len: u8, thumb: bool, cond: u8, op: Op, class: Class) -> Insn {
        Insn {
            raw,
            len,
            thumb,
            cond,
            op,
            class,
            unpredictable: false,
        }
    }

    pub(crate) fn unpred(mut self, cond: bool) -> Insn {
        self.unpredictable |= cond;
        self
    }

    /// UNDEFINED encoding.
    pub fn is_undefined(&self) -> bool {
        matches!(self.op, Op::Undefined | Op::Udf { .. })
    }

    /// Register usage and classification (see [`classify`]).
    pub fn info(&self) -> Info {
        classify::info(self)
    }
}

/// Decodes one A32 instruction word.
pub fn decode_a32(word: u32) -> Insn {
    a32::decode(word)
}

/// Decodes one Thumb instruction: `hw1` is the first halfword; `hw2` the next one, used
/// only when `hw1` starts a 32-bit encoding (see [`t32_is_32bit`]).
pub fn decode_thumb(hw1: u16, hw2: u16) -> Insn {
    if t32_is_32bit(hw1) {
        t32::decode(hw1, hw2)
    } else {
        t16::decode(hw1)
    }
}

/// Whether a Thumb halfword starts a 32-bit instruction.
pub fn t32_is_32bit(hw1: u16) -> bool {
    (hw1 >> 11) >= 0b11101
}

/// `ARMExpandImm_C`: the rotated 8-bit immediate of A32 data processing.
pub fn a32_expand_imm(imm12: u32) -> (u32, Option<bool>) {
    let rot = (imm12 >> 8) * 2;
    let v = (imm12 & 0xff).rotate_right(rot);
    (v, if rot == 0 { None } else { Some(v >> 31 != 0) })
}

/// `ThumbExpandImm_C`; `None` for the UNPREDICTABLE zero-byte forms.
pub fn t32_expand_imm(imm12: u32) -> Option<(u32, Option<bool>)> {
    if imm12 >> 10 == 0 {
        let b = imm12 & 0xff;
        let v = match (imm12 >> 8) & 3 {
            0 => b,
            1 => {
                if b == 0 {
                    return None;
                }
                b << 16 | b
            }
            2 => {
                if b == 0 {
                    return None;
                }
                b << 24 | b << 8
            }
            _ => {
                if b == 0 {
                    return None;
                }
                b << 24 | b << 16 | b << 8 | b
            }
        };
        Some((v, None))
    } else {
        let v = (0x80 | (imm12 & 0x7f)).rotate_right(imm12 >> 7);
        Some((v, Some(v >> 31 != 0)))
    }
}

#[inline]
pub(crate) fn bits(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

#[inline]
pub(crate) fn bit(w: u32, n: u32) -> bool {
    (w >> n) & 1 != 0
}

#[inline]
pub(crate) fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}
