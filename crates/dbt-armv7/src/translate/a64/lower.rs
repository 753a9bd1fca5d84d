//! Lowering of single guest instructions (not branches) to A64.
//!
//! Every lowering leaves guest state exactly as the instruction defines it, keeps the guest
//! NZCV in the host flags, and writes a guest register only through `W` forms (so its top
//! 32 bits stay zero). A memory access is one host load or store at the guest address
//! computed in 32 bits (the address wraps as the guest's does); writeback follows the
//! access.

use super::asm::{Asm, Label};
use super::enc::{self, AddSub, Logic, Ls, Sh};
use super::gen::mov32;
use super::{lower_bits, lower_mul, lower_pair, shift_reg};
use super::{T_ADDR, T_CARRY, T_FLAGS, T_OP2, T_PCV, T_RES, T_TMP, ZR};
use crate::decode::{DpOp, Insn, MemOff, Op, Operand2, RevOp, Shift, Size};

/// Result of a lowering attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowered {
    /// Code emitted.
    Done,
    /// Not translated: the instruction runs in the interpreter.
    Unsupported,
}

/// Whether [`lower`] (or the block layout, for branches) translates `i`.
pub fn supported(i: &Insn) -> bool {
    if i.unpredictable || i.is_undefined() {
        return false;
    }
    let f = i.info();
    // LDRT/STRT are sensitive (their permissions are PL0's): with the MMU off (the only
    // state translated now) nothing checks permissions and a plain access is exact; where
    // the guest's PL0 is the host's EL0 the host's unprivileged accesses give PL0's
    // (`Asm::unpriv_forms`).
    if f.sensitive && !matches!(i.op, Op::Mem { unpriv: true, .. }) {
        return false;
    }
    let mut side = None;
    match i.op {
        Op::B { .. } | Op::Bl { .. } | Op::BlxImm { .. } | Op::Cbz { .. } => true,
        Op::Bx { rm } | Op::Blx { rm } => rm != 15,
        _ if f.control_flow => writes_pc(&mut Asm::new(0), i, 0, &mut side) == Lowered::Done,
        _ => lower(&mut Asm::new(0), i, 0, &mut side) == Lowered::Done,
    }
}

/// Emits an instruction that writes the PC (not a branch): `LDR pc`, `LDM {.., pc}`,
/// `TBB/TBH`, and ALU operations without S into the PC. The new PC is left in [`T_PCV`]; the caller
/// makes the (interworking) exit.
pub fn writes_pc(a: &mut Asm, i: &Insn, pc_read: u32, side: &mut Option<Label>) -> Lowered {
    match i.op {
        Op::Dp {
            op,
            s: false,
            rd: 15,
            rn,
            op2,
        } if !op.is_test() => dp(a, op, false, T_PCV, rn, op2, pc_read),
        Op::Mem {
            load: true,
            size: Size::W,
            signed: false,
            rt: 15,
            addr,
            unpriv: false,
        } if !(addr.wback && addr.rn == 15) => {
            mem_to(a, Ls::Ldr, T_PCV, addr, pc_read, Mode::default(), side)
        }
        Op::Multi {
            load: true,
            rn,
            list,
            inc,
            before,
            wback,
            user: false,
        } if list & 0x8000 != 0 => {
            lower_pair::multi(a, true, rn, list, inc, before, wback, pc_read, side)
        }
        Op::Tb { half, rn, rm } if rm != 15 => {
            // TBB/TBH: the table entry at rn + rm (TBH: + 2 * rm), computed in 32 bits,
            // then PC + 4 + 2 * entry (in Thumb: bit 0 set).
            let base = src(a, rn, pc_read, T_ADDR);
            a.put(enc::w_addsub_reg(
                AddSub::Add,
                T_ADDR,
                base,
                rm,
                Sh::Lsl,
                half as u8,
            ));
            let ls = if half { Ls::Ldrh } else { Ls::Ldrb };
            a.put(enc::ls_uimm(ls, T_PCV, T_ADDR, 0));
            mov32(a, T_ADDR, pc_read | 1);
            a.put(enc::w_addsub_reg(
                AddSub::Add,
                T_PCV,
                T_ADDR,
                T_PCV,
                Sh::Lsl,
                1,
            ));
            Lowered::Done
        }
        _ => Lowered::Unsupported,
    }
}

/// Emits `i` (not a branch; its condition is handled by the caller). `pc_read` is the value
/// the instruction reads as PC. A lowering that needs the interpreter at run time (a
/// misaligned `LDM`) branches to `side`, which it creates, and the caller places a side
/// exit there.
pub fn lower(a: &mut Asm, i: &Insn, pc_read: u32, side: &mut Option<Label>) -> Lowered {
    match i.op {
        Op::Vfp { .. } => super::vfp::lower(a, i, pc_read, side),
        Op::Dp { op, s, rd, rn, op2 } if rd != 15 => dp(a, op, s, rd, rn, op2, pc_read),
        Op::Adr { rd, imm } if rd != 15 => {
            mov32(a, rd, (pc_read & !3).wrapping_add(imm as u32));
            Lowered::Done
        }
        Op::Movw { rd, imm } if rd != 15 => {
            a.put(enc::w_movz(rd, imm, 0));
            Lowered::Done
        }
        Op::Movt { rd, imm } if rd != 15 => {
            a.put(enc::w_movk(rd, imm, 1));
            Lowered::Done
        }
        Op::Mul {
            s,
            sub,
            rd,
            rn,
            rm,
            ra,
        } if rd != 15 && rn != 15 && rm != 15 => {
            a.put(enc::w_madd(sub, rd, rn, rm, if ra == 15 { ZR } else { ra }));
            if s {
                lower_mul::mul_s(a, rd);
            }
            Lowered::Done
        }
        Op::MulLong {
            kind,
            s,
            rdlo,
            rdhi,
            rn,
            rm,
        } => lower_mul::mul_long(a, kind, s, rdlo, rdhi, rn, rm),
        Op::MulHalf {
            kind,
            n_high,
            m_high,
            rd,
            rn,
            rm,
            ra,
        } => lower_mul::mul_half(a, kind, n_high, m_high, rd, rn, rm, ra),
        Op::Div { signed, rd, rn, rm } if rd != 15 && rn != 15 && rm != 15 => {
            a.put(enc::w_div(signed, rd, rn, rm));
            Lowered::Done
        }
        Op::Rev { op, rd, rm } if rd != 15 && rm != 15 => {
            let u = match op {
                RevOp::Rev => enc::Unary::Rev,
                RevOp::Rev16 => enc::Unary::Rev16,
                RevOp::Rbit => enc::Unary::Rbit,
                RevOp::Clz => enc::Unary::Clz,
                RevOp::Revsh => return lower_bits::revsh(a, rd, rm),
            };
            a.put(enc::w_unary(u, rd, rm));
            Lowered::Done
        }
        Op::Extend {
            signed,
            size,
            rd,
            rn,
            rm,
            rot,
        } => lower_bits::extend(a, signed, size, rd, rn, rm, rot),
        Op::Bitfield {
            op,
            rd,
            rn,
            lsb,
            width,
        } => lower_bits::bitfield(a, op, rd, rn, lsb, width),
        Op::Mem {
            load,
            size,
            signed,
            rt,
            addr,
            unpriv,
        } => mem(
            a,
            load,
            size,
            signed,
            rt,
            addr,
            pc_read,
            Mode {
                wrap32: false,
                unpriv: unpriv && a.unpriv_forms,
            },
            side,
        ),
        Op::MemDual {
            load,
            rt,
            rt2,
            addr,
        } => lower_pair::dual(a, load, rt, rt2, addr, pc_read, side),
        Op::Multi {
            load,
            rn,
            list,
            inc,
            before,
            wback,
            user: false,
        } if !load || list & 0x8000 == 0 => {
            lower_pair::multi(a, load, rn, list, inc, before, wback, pc_read, side)
        }
        Op::Ldrex {
            size,
            rt,
            rt2,
            rn,
            imm,
        } => lower_pair::ldrex(a, size, rt, rt2, rn, imm),
        Op::Strex {
            size,
            rd,
            rt,
            rt2,
            rn,
            imm,
        } => lower_pair::strex(a, size, rd, rt, rt2, rn, imm, side),
        Op::Clrex => {
            a.put(enc::CLREX);
            Lowered::Done
        }
        Op::Hint(crate::decode::Hint::Nop | crate::decode::Hint::Yield) => Lowered::Done,
        // PLD/PLDW/PLI: hints with no architectural effect that never abort (ARM ARM
        // A8.8.126-A8.8.130); glibc's and Linux's copy loops issue one per cache line.
        Op::Preload { .. } => Lowered::Done,
        Op::Barrier(crate::decode::Barrier::Dmb) => {
            a.put(enc::DMB_ISH);
            Lowered::Done
        }
        Op::Barrier(crate::decode::Barrier::Dsb) => {
            a.put(enc::DSB_ISH);
            Lowered::Done
        }
        // A context synchronization event, which the interpreter runs as a no-op: every
        // context change (CP15 writes, exception levels, interrupt masks, code
        // maintenance) takes effect where it is made, leaving the block when it changes
        // what translations assume, so nothing waits for an ISB. Linux issues one after
        // each translation-register write (some 500 host instructions interpreted).
        Op::Barrier(crate::decode::Barrier::Isb) => {
            a.put(enc::ISB);
            Lowered::Done
        }
        _ => Lowered::Unsupported,
    }
}

/// [`lower`] for an instruction whose host address wrapped past 4 GiB before (a host
/// fault in the guard region): a single load or store computes its address in 32 bits
/// (two instructions), as the guest does, instead of in the host's addressing mode.
pub fn lower_wrapping(a: &mut Asm, i: &Insn, pc_read: u32, side: &mut Option<Label>) -> Lowered {
    match i.op {
        Op::Mem {
            load,
            size,
            signed,
            rt,
            addr,
            unpriv,
        } => mem(
            a,
            load,
            size,
            signed,
            rt,
            addr,
            pc_read,
            Mode {
                wrap32: true,
                unpriv: unpriv && a.unpriv_forms,
            },
            side,
        ),
        _ => lower(a, i, pc_read, side),
    }
}

/// A guest register as a host register: r15 becomes `pc_read` in `scratch`.
fn src(a: &mut Asm, r: u8, pc_read: u32, scratch: u8) -> u8 {
    if r == 15 {
        mov32(a, scratch, pc_read);
        scratch
    } else {
        r
    }
}

/// A shifted register operand that the A64 shifted-register forms take as is
/// (`Ror` only for logical forms), or `None`.
fn direct_shift(shift: Shift, amount: u8, logical: bool) -> Option<(Sh, u8)> {
    match shift {
        Shift::Lsl if amount < 32 => Some((Sh::Lsl, amount)),
        Shift::Lsr if amount < 32 => Some((Sh::Lsr, amount)),
        Shift::Asr if amount < 32 => Some((Sh::Asr, amount)),
        Shift::Ror if logical && amount < 32 => Some((Sh::Ror, amount)),
        _ => None,
    }
}

/// Computes `rm <shift> #amount` into `dst` (any immediate shift, RRX included; reads C).
fn shifted_into(a: &mut Asm, dst: u8, rm: u8, shift: Shift, amount: u8) {
    match shift {
        Shift::Lsl => a.put(enc::w_lsl_imm(dst, rm, amount & 31)),
        Shift::Lsr if amount == 32 => a.put(enc::w_movz(dst, 0, 0)),
        Shift::Lsr => a.put(enc::w_lsr_imm(dst, rm, amount)),
        Shift::Asr => a.put(enc::w_asr_imm(dst, rm, amount.min(31))),
        Shift::Ror => a.put(enc::w_extr(dst, rm, rm, amount & 31)),
        Shift::Rrx => {
            // (C << 31) | (rm >> 1): EXTR of (C:rm) by one. C goes to a register other
            // than `rm` (the PC's constant is in `dst` itself: `ADC r12, r5, pc, RRX`).
            let c = if dst == rm { T_TMP } else { dst };
            a.put(enc::w_cset(c, 2)); // CS
            a.put(enc::w_extr(dst, c, rm, 1));
        }
    }
}

/// The bit of `rm` the shifter carries out, or `None` when C is unchanged (`LSL #0`).
fn shift_carry_bit(shift: Shift, amount: u8) -> Option<u8> {
    match shift {
        Shift::Lsl if amount == 0 => None,
        Shift::Lsl => Some(32 - amount),
        Shift::Lsr | Shift::Ror => Some(amount - 1),
        Shift::Asr => Some(amount.min(32) - 1),
        Shift::Rrx => Some(0),
    }
}

#[allow(clippy::too_many_arguments)]
fn dp(a: &mut Asm, op: DpOp, s: bool, rd: u8, rn: u8, op2: Operand2, pc: u32) -> Lowered {
    if let Operand2::ShiftReg { rm, shift, rs } = op2 {
        if rm == 15 || rs == 15 || rn == 15 {
            return Lowered::Unsupported;
        }
        let carry = s && op.is_logical();
        shift_reg::shift_reg_into(a, rm, shift, rs, carry);
        let op2 = Operand2::ShiftImm {
            rm: T_OP2,
            shift: Shift::Lsl,
            amount: 0,
        };
        return if op.is_logical() {
            logical(a, op, s, rd, rn, op2, pc, carry)
        } else {
            arith(a, op, s, rd, rn, op2, pc)
        };
    }
    if op.is_logical() {
        logical(a, op, s, rd, rn, op2, pc, false)
    } else {
        arith(a, op, s, rd, rn, op2, pc)
    }
}

/// Puts the second operand in one register (for forms without a shift), returning it.
fn op2_reg(a: &mut Asm, op2: Operand2, pc: u32) -> u8 {
    match op2 {
        Operand2::Imm { value, .. } => {
            mov32(a, T_OP2, value);
            T_OP2
        }
        Operand2::ShiftImm { rm, shift, amount } => {
            let rm = src(a, rm, pc, T_OP2);
            if shift == Shift::Lsl && amount == 0 {
                rm
            } else {
                shifted_into(a, T_OP2, rm, shift, amount);
                T_OP2
            }
        }
        Operand2::ShiftReg { .. } => unreachable!(),
    }
}

fn arith(a: &mut Asm, op: DpOp, s: bool, rd: u8, rn: u8, op2: Operand2, pc: u32) -> Lowered {
    let d = if op.is_test() { ZR } else { rd };
    let n = src(a, rn, pc, T_ADDR);
    match op {
        DpOp::Add | DpOp::Sub | DpOp::Cmp | DpOp::Cmn => {
            let sub = matches!(op, DpOp::Sub | DpOp::Cmp);
            let f = match (sub, s) {
                (false, false) => AddSub::Add,
                (false, true) => AddSub::Adds,
                (true, false) => AddSub::Sub,
                (true, true) => AddSub::Subs,
            };
            match op2 {
                Operand2::Imm { value, .. } if value < 4096 => {
                    a.put(enc::w_addsub_imm(f, d, n, value, false))
                }
                Operand2::Imm { value, .. } if value & 0xfff == 0 && value < 1 << 24 => {
                    a.put(enc::w_addsub_imm(f, d, n, value >> 12, true))
                }
                Operand2::ShiftImm { rm, shift, amount } if rm != 15 => {
                    match direct_shift(shift, amount, false) {
                        Some((sh, amt)) => a.put(enc::w_addsub_reg(f, d, n, rm, sh, amt)),
                        None => {
                            let m = op2_reg(a, op2, pc);
                            a.put(enc::w_addsub_reg(f, d, n, m, Sh::Lsl, 0));
                        }
                    }
                }
                _ => {
                    let m = op2_reg(a, op2, pc);
                    a.put(enc::w_addsub_reg(f, d, n, m, Sh::Lsl, 0));
                }
            }
        }
        DpOp::Rsb => {
            let m = op2_reg(a, op2, pc);
            let f = if s { AddSub::Subs } else { AddSub::Sub };
            a.put(enc::w_addsub_reg(f, d, m, n, Sh::Lsl, 0));
        }
        DpOp::Adc | DpOp::Sbc => {
            let m = op2_reg(a, op2, pc);
            a.put(enc::w_adc(op == DpOp::Sbc, s, d, n, m));
        }
        DpOp::Rsc => {
            let m = op2_reg(a, op2, pc);
            a.put(enc::w_adc(true, s, d, m, n));
        }
        _ => return Lowered::Unsupported,
    }
    Lowered::Done
}

/// A logical operation; `carry_in_reg`: the shifter carry-out is already in [`T_CARRY`]
/// (register-shifted operands).
#[allow(clippy::too_many_arguments)]
fn logical(
    a: &mut Asm,
    op: DpOp,
    s: bool,
    rd: u8,
    rn: u8,
    op2: Operand2,
    pc: u32,
    carry_in_reg: bool,
) -> Lowered {
    // The A64 operation, and whether the operand is inverted (BIC/ORN/MVN with immediates).
    let (f, n) = match op {
        DpOp::And | DpOp::Tst => (Logic::And, Some(rn)),
        DpOp::Eor | DpOp::Teq => (Logic::Eor, Some(rn)),
        DpOp::Orr => (Logic::Orr, Some(rn)),
        DpOp::Orn => (Logic::Orn, Some(rn)),
        DpOp::Bic => (Logic::Bic, Some(rn)),
        DpOp::Mov => (Logic::Orr, None),
        DpOp::Mvn => (Logic::Orn, None),
        _ => return Lowered::Unsupported,
    };
    let d = if op.is_test() { T_RES } else { rd };
    if s {
        // Keep V (and C, unless the shifter gives one): save the flags before anything.
        a.put(enc::mrs_nzcv(T_FLAGS));
    }
    // The shifter carry-out, from the operand before the result may overwrite it.
    let carry: Option<Result<bool, ()>> = match op2 {
        _ if carry_in_reg => Some(Err(())),
        Operand2::Imm { carry, .. } => carry.map(Ok),
        Operand2::ShiftImm { rm, shift, amount } => match shift_carry_bit(shift, amount) {
            Some(bit) if s => {
                let m = src(a, rm, pc, T_CARRY);
                a.put(enc::x_ubfx(T_CARRY, m, bit, 1));
                Some(Err(()))
            }
            _ => None,
        },
        Operand2::ShiftReg { .. } => unreachable!(),
    };
    let n = n.map(|r| src(a, r, pc, T_ADDR)).unwrap_or(ZR);
    match op2 {
        Operand2::Imm { value, .. } => {
            let (g, v) = match f {
                Logic::Bic => (Logic::And, !value),
                Logic::Orn => (Logic::Orr, !value),
                g => (g, value),
            };
            if n == ZR && g == Logic::Orr {
                mov32(a, d, v);
            } else if let Some((immr, imms)) = enc::logic_imm32(v) {
                a.put(enc::w_logic_imm(g, d, n, immr, imms));
            } else {
                mov32(a, T_OP2, value);
                a.put(enc::w_logic_reg(f, d, n, T_OP2, Sh::Lsl, 0));
            }
        }
        Operand2::ShiftImm { rm, shift, amount } => {
            let m = src(a, rm, pc, T_OP2);
            match direct_shift(shift, amount, true) {
                Some((sh, amt)) => a.put(enc::w_logic_reg(f, d, n, m, sh, amt)),
                None => {
                    shifted_into(a, T_OP2, m, shift, amount);
                    a.put(enc::w_logic_reg(f, d, n, T_OP2, Sh::Lsl, 0));
                }
            }
        }
        Operand2::ShiftReg { .. } => unreachable!(),
    }
    if s {
        // N and Z from the result; C from the shifter (or kept); V kept.
        a.put(enc::w_logic_reg(Logic::Ands, ZR, d, d, Sh::Lsl, 0));
        a.put(enc::mrs_nzcv(T_ADDR));
        a.put(enc::x_bfxil(T_ADDR, T_FLAGS, 0, 30));
        match carry {
            None => {}
            Some(Ok(c)) => {
                a.put(enc::w_movz(T_CARRY, c as u16, 0));
                a.put(enc::x_bfi(T_ADDR, T_CARRY, 29, 1));
            }
            Some(Err(())) => a.put(enc::x_bfi(T_ADDR, T_CARRY, 29, 1)),
        }
        a.put(enc::msr_nzcv(T_ADDR));
    }
    Lowered::Done
}

/// How a single load or store is made.
#[derive(Clone, Copy, Default)]
struct Mode {
    /// The address is computed in 32 bits (see [`lower_wrapping`]).
    wrap32: bool,
    /// `LDRT/STRT`-style: the host's unprivileged `LDTR*/STTR*`, which check EL0's
    /// permissions at EL1 (the guest's PL0, where its PL0 runs at EL0) and are ordinary
    /// accesses at EL0.
    unpriv: bool,
}

/// One access of `t` at `[rn, #imm]`: unprivileged (`imm` in -256..255), or in the
/// scaled or unscaled immediate form.
fn access(a: &mut Asm, ls: Ls, t: u8, rn: u8, imm: i32, unpriv: bool) {
    if unpriv {
        a.put(enc::ls_unpriv(ls, t, rn, imm));
    } else if imm >= 0 && (imm as u32).is_multiple_of(1 << ls.scale()) {
        a.put(enc::ls_uimm(ls, t, rn, imm as u32));
    } else {
        a.put(enc::ls_unscaled(ls, t, rn, imm));
    }
}

/// `LDR/STR{B,H,SB,SH}` (and their `T` forms) with immediate or (immediately) shifted
/// register offsets.
#[allow(clippy::too_many_arguments)]
fn mem(
    a: &mut Asm,
    load: bool,
    size: Size,
    signed: bool,
    rt: u8,
    addr: crate::decode::Addr,
    pc: u32,
    mode: Mode,
    side: &mut Option<Label>,
) -> Lowered {
    let ls = match (load, size, signed) {
        (false, Size::B, _) => Ls::Strb,
        (false, Size::H, _) => Ls::Strh,
        (false, Size::W, _) => Ls::Str,
        (true, Size::B, false) => Ls::Ldrb,
        (true, Size::B, true) => Ls::Ldrsb,
        (true, Size::H, false) => Ls::Ldrh,
        (true, Size::H, true) => Ls::Ldrsh,
        (true, Size::W, _) => Ls::Ldr,
        _ => return Lowered::Unsupported,
    };
    if load && rt == 15 || addr.wback && addr.rn == 15 {
        return Lowered::Unsupported;
    }
    let t = if !load && rt == 15 {
        mov32(a, T_OP2, pc);
        T_OP2
    } else {
        rt
    };
    mem_to(a, ls, t, addr, pc, mode, side)
}

/// The access `ls` of host register `t` at `addr` (see [`mem`]).
fn mem_to(
    a: &mut Asm,
    ls: Ls,
    t: u8,
    addr: crate::decode::Addr,
    pc: u32,
    mode: Mode,
    side: &mut Option<Label>,
) -> Lowered {
    let Mode { wrap32, unpriv } = mode;
    // The offset as an add/sub operand.
    enum Off {
        Imm(u32),
        Reg(u8, Sh, u8),
    }
    let off = match addr.off {
        MemOff::Imm(i) if i < 4096 => Off::Imm(i),
        MemOff::Reg { rm, shift, amount } if rm != 15 => match direct_shift(shift, amount, false) {
            Some((sh, amt)) => Off::Reg(rm, sh, amt),
            None => return Lowered::Unsupported,
        },
        _ => return Lowered::Unsupported,
    };
    let f = if addr.add { AddSub::Add } else { AddSub::Sub };
    let emit_off = |a: &mut Asm, d: u8, n: u8| match off {
        Off::Imm(i) => a.put(enc::w_addsub_imm(f, d, n, i, false)),
        Off::Reg(rm, sh, amt) => a.put(enc::w_addsub_reg(f, d, n, rm, sh, amt)),
    };
    let base = if addr.rn == 15 {
        mov32(a, T_ADDR, pc & !3);
        T_ADDR
    } else {
        addr.rn
    };
    let scale = ls.scale();
    if a.strict_align && scale > 0 {
        // SCTLR.A: the address (computed in 32 bits, as the guest does) must be a
        // multiple of the size; otherwise the interpreter raises the alignment fault.
        let at = if addr.index {
            emit_off(a, T_TMP, base);
            T_TMP
        } else {
            base
        };
        let l = *side.get_or_insert_with(|| a.label());
        for bit in 0..scale as u8 {
            a.tbnz_to(at, bit, l);
        }
    }
    // `[rn, #+-imm]` in one host instruction: the host adds in 64 bits, so a guest
    // address that wraps past 4 GiB (or below 0) becomes a host address in the guard
    // region above 4 GiB (or in the top of the address space), which faults; the fault
    // path then runs the instruction in the interpreter, which wraps. See the README's
    // host requirements.
    let simm = match off {
        _ if wrap32 => None,
        Off::Imm(i) if addr.add => Some(i as i32),
        Off::Imm(i) if i <= 256 => Some(-(i as i32)),
        _ => None,
    };
    // `[rn, rm, LSL #scale]` (or `#0`) in one host instruction, the host adding in 64
    // bits as for `[rn, #imm]`. Compiled code does wrap there (a base below a negative
    // index): such an access faults in the guard region, and the engine translates the
    // instruction again with `wrap32`.
    if let Off::Reg(rm, Sh::Lsl, amt) = off {
        if !wrap32
            && !unpriv
            && addr.index
            && !addr.wback
            && addr.add
            && (amt == 0 || amt as u32 == scale)
        {
            a.put(enc::ls_reg_lsl(ls, t, base, rm, amt != 0));
            return Lowered::Done;
        }
    }
    if !addr.index {
        // Post-indexed: access at the base, then write back base +- offset (wrapping).
        access(a, ls, t, base, 0, unpriv);
        emit_off(a, addr.rn, addr.rn);
    } else if addr.wback {
        match simm {
            // Pre-indexed with writeback: the access succeeded only below 4 GiB, so the
            // 64-bit sum written back is the zero-extended 32-bit one.
            Some(v) if (-256..256).contains(&v) && base == addr.rn && !unpriv => {
                a.put(enc::ls_pre(ls, t, base, v))
            }
            _ => {
                emit_off(a, T_ADDR, base);
                access(a, ls, t, T_ADDR, 0, unpriv);
                a.put(enc::w_mov(addr.rn, T_ADDR));
            }
        }
    } else {
        match simm {
            Some(v) if v >= 0 && (v as u32).is_multiple_of(1 << scale) && !unpriv => {
                a.put(enc::ls_uimm(ls, t, base, v as u32))
            }
            Some(v) if (-256..256).contains(&v) => access(a, ls, t, base, v, unpriv),
            _ => {
                emit_off(a, T_ADDR, base);
                access(a, ls, t, T_ADDR, 0, unpriv);
            }
        }
    }
    Lowered::Done
}
