//! Exceptions taken and returned from inside translated code, PL1 to PL1: `SVC` and
//! UNDEFINED instructions (`UDF` and unallocated encodings) enter the Supervisor or
//! Undefined vector, and `MOVS pc, lr`, `SUBS pc, lr, #imm` and `ERET` return, without
//! leaving the code cache. The code does what [`Cpu::take_exception`] and
//! [`Cpu::exception_return`] do, on the guest [`Cpu`]'s own fields (found through
//! [`GuestState::cpu`], offsets in [`cpu_fields`]), then continues at the vector or the
//! return address through the target cache (the dispatcher on a miss, which fills it).
//!
//! Entry: `SPSR_<mode>` = CPSR (NZCV from the host flags), the banked `R13`/`R14` swapped
//! when the mode changes, `LR_<mode>` = the return address (`SVC`: the next instruction;
//! UNDEFINED: `PC + 4`, Thumb `PC + 2`), CPSR.M = the mode, `I` set, `T` = `SCTLR.TE`,
//! `J`/`E` clear, the local monitor cleared (the model's and the host's: `CLREX`), vector
//! `VBAR + 0x04`/`0x08`. Return: CPSR = `SPSR_<mode>` (mode, banks, NZCV into the host
//! flags), then the target with bit 0 (Thumb) or bits 1:0 (A32) cleared.
//!
//! Only what keeps the translation context (privilege, and so the target cache) and
//! needs no other model state is inline; the rest leaves through a side exit before any
//! state changes, and the interpreter runs the instruction exactly as before: a block
//! translated for PL0 (a `SVC` from User mode changes the privilege), an instruction in
//! an IT block, FIQ mode (banked `R8`-`R12`) or System mode (no SPSR) at the start,
//! `SCTLR.V` (hivecs) or `SCTLR.EE` (big-endian entry, not translated) set, a host that
//! wants `SVC` or exceptions reported (`Cpu::set_exit_on_svc`/`set_exit_on_exception`),
//! and returns whose SPSR names User, FIQ, an unmodelled mode (the interpreter keeps the
//! current one), IT bits, `J` or `E`, or while an interrupt line is raised (the return
//! may unmask it: the dispatcher takes it).
//!
//! [`Cpu`]: crate::Cpu
//! [`Cpu::take_exception`]: crate::Cpu::take_exception
//! [`Cpu::exception_return`]: crate::Cpu
//! [`GuestState::cpu`]: crate::translate::state::GuestState::cpu

use super::asm::{Asm, Label};
use super::cpu_fields::{self as f, access, load_cpu};
use super::enc::{self, AddSub, Logic, Ls};
use super::enc_alu::{self, ShiftV};
use super::enc_excl::CLREX;
use super::gen::mov32;
use super::indirect;
use super::{BUDGET, T_AMT, T_CARRY, T_FLAGS, T_OP2, T_PCV, T_RES, T_TMP, ZR};
use crate::cpu::{psr, Mode};
use crate::decode::{DpOp, Insn, Op, Operand2, Shift};
use crate::translate::backend::Runtime;
use crate::translate::state::EXIT_BX;

/// The `Cpu`'s address while the inline code runs.
const CPU: u8 = super::T_ADDR;

/// What an instruction handled here does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `SVC #imm`.
    Svc,
    /// An UNDEFINED instruction.
    Undefined,
    /// An exception return to `LR - imm`.
    Return(u32),
}

fn kind(insn: &Insn) -> Option<Kind> {
    if insn.unpredictable {
        return None;
    }
    Some(match insn.op {
        Op::Svc { .. } => Kind::Svc,
        Op::Udf { .. } | Op::Undefined => Kind::Undefined,
        Op::Eret => Kind::Return(0),
        Op::Dp {
            op: DpOp::Mov,
            s: true,
            rd: 15,
            op2:
                Operand2::ShiftImm {
                    rm: 14,
                    shift: Shift::Lsl,
                    amount: 0,
                },
            ..
        } => Kind::Return(0),
        Op::Dp {
            op: DpOp::Sub,
            s: true,
            rd: 15,
            rn: 14,
            op2: Operand2::Imm { value, .. },
        } if value < 4096 => Kind::Return(value),
        _ => return None,
    })
}

/// Whether `insn` is lowered here (in a PL0 block, or when its conditions do not hold at
/// run time, as a side exit to the interpreter).
pub fn handles(insn: &Insn) -> bool {
    kind(insn).is_some()
}

/// `bank_sp_lr`/`spsr` index of each mode, a nibble per `CPSR.M[3:0]` (Usr/Sys 0, Fiq 1,
/// Irq 2, Svc 3, Abt 4, Und 5; see [`Mode::bank`]).
const BANK_NIBBLES: u64 = 0x0000_5000_4000_3210;
const _: () = {
    let modes = [
        Mode::Usr,
        Mode::Fiq,
        Mode::Irq,
        Mode::Svc,
        Mode::Abt,
        Mode::Und,
        Mode::Sys,
    ];
    let banks = [0, 1, 2, 3, 4, 5, 0];
    let mut i = 0;
    while i < modes.len() {
        let m = modes[i] as u64 & 15;
        assert!((BANK_NIBBLES >> (4 * m)) & 15 == banks[i]);
        i += 1;
    }
};

/// Modes an inline return may enter (bit `M[4:0]`): the PL1 modes but FIQ.
const RETURN_MODES: u32 = 1 << Mode::Irq as u32
    | 1 << Mode::Svc as u32
    | 1 << Mode::Abt as u32
    | 1 << Mode::Und as u32
    | 1 << Mode::Sys as u32;

/// `Xdst` = the bank index of the mode in `Wmode` (6 instructions; `k` is scratch).
fn bank_index(a: &mut Asm, dst: u8, mode: u8, k: u8) {
    a.put(enc::x_movz(k, BANK_NIBBLES as u16, 0));
    a.put(enc::x_movk(k, (BANK_NIBBLES >> 16) as u16, 1));
    a.put(enc::x_movk(k, (BANK_NIBBLES >> 32) as u16, 2));
    a.put(enc::w_ubfm(dst, mode, 30, 3)); // UBFIZ dst, mode, #2, #4
    a.put(enc_alu::x_shiftv(ShiftV::Lsr, dst, k, dst));
    a.put(enc::x_logic_imm(Logic::And, dst, dst, true, 0, 3));
}

/// `Xd = Xn + off` (one or two `ADD`s).
fn add_off(a: &mut Asm, rd: u8, rn: u8, off: usize) {
    let off = off as u32;
    assert!(off < 1 << 24, "Cpu field offset {off} out of reach");
    let mut src = rn;
    if off >> 12 != 0 {
        a.put(1 << 31 | enc::w_addsub_imm(AddSub::Add, rd, src, off >> 12, true));
        src = rd;
    }
    if off & 0xfff != 0 || src == rn {
        a.put(enc::x_addsub_imm(AddSub::Add, rd, src, off & 0xfff));
    }
}

/// `Wd &= v` / `Wd |= v` for a 32-bit constant (a bitmask immediate, else through `tmp`).
fn logic_const(a: &mut Asm, op: Logic, rd: u8, v: u32, tmp: u8) {
    if let Some((immr, imms)) = enc::logic_imm32(v) {
        a.put(enc::w_logic_imm(op, rd, rd, immr, imms));
    } else {
        mov32(a, tmp, v);
        a.put(enc::w_logic_reg(op, rd, rd, tmp, enc::Sh::Lsl, 0));
    }
}

/// Lowers the exception entry or return `insn` at `pc` (ITSTATE `it`, in a block of
/// this privilege), the `charged`-th instruction of its block. Returns the label of the
/// side exit the caller places (the instruction then runs in the interpreter).
#[allow(clippy::too_many_arguments)]
pub fn lower(
    a: &mut Asm,
    rt: &Runtime,
    insn: &Insn,
    pc: u32,
    thumb: bool,
    it: u8,
    privileged: bool,
    charged: usize,
) -> Label {
    let slow = a.label();
    let kind = kind(insn).expect("handles() said so");
    if !privileged || it != 0 {
        a.b_to(slow);
        return slow;
    }
    match kind {
        Kind::Svc | Kind::Undefined => entry(a, insn, pc, thumb, kind, slow),
        Kind::Return(imm) => exception_return(a, imm, slow),
    }
    a.put(enc::x_addsub_imm(
        AddSub::Sub,
        BUDGET,
        BUDGET,
        charged as u32,
    ));
    // The vector or return address (with the instruction-set bit) is in T_PCV.
    let miss = a.label();
    indirect::lookup(a, T_PCV, miss);
    a.bind(miss);
    a.put(enc::w_mov(super::T_ADDR, T_PCV));
    a.put(enc::x_movn(T_FLAGS, 0, 0)); // NO_LINK
    a.put(enc::w_movz(T_OP2, EXIT_BX as u16, 0));
    a.b_abs(rt.epilogue);
    slow
}

/// `SVC` or UNDEFINED: checks (to `slow`), then `Cpu::take_exception`'s work; leaves the
/// vector address with the instruction-set bit in `T_PCV`.
fn entry(a: &mut Asm, insn: &Insn, pc: u32, thumb: bool, kind: Kind, slow: Label) {
    let (mode, off, lr) = match kind {
        Kind::Svc => (Mode::Svc, 0x08, pc.wrapping_add(insn.len as u32)),
        _ => (Mode::Und, 0x04, pc.wrapping_add(if thumb { 2 } else { 4 })),
    };
    let (cur, sctlr, old, spsr, t) = (T_OP2, T_CARRY, T_RES, T_AMT, T_TMP);
    load_cpu(a, CPU);
    access(a, Ls::Ldrb, cur, CPU, f::MODE, T_FLAGS);
    a.put(enc::w_addsub_imm(
        AddSub::Sub,
        T_FLAGS,
        cur,
        Mode::Fiq as u32,
        false,
    ));
    a.cbz_to(false, T_FLAGS, slow);
    access(a, Ls::Ldrb, T_FLAGS, CPU, f::EXIT_ON_EXCEPTION, T_FLAGS);
    a.cbnz_to(T_FLAGS, slow);
    if kind == Kind::Svc {
        access(a, Ls::Ldrb, T_FLAGS, CPU, f::EXIT_ON_SVC, T_FLAGS);
        a.cbnz_to(T_FLAGS, slow);
    }
    access(a, Ls::Ldr, sctlr, CPU, f::SCTLR, T_FLAGS);
    a.tbnz_to(sctlr, 13, slow); // SCTLR.V: hivecs
    a.tbnz_to(sctlr, 25, slow); // SCTLR.EE: CPSR.E on entry
                                // SPSR = CPSR with the guest's NZCV (the host's).
    access(a, Ls::Ldr, old, CPU, f::CPSR, T_FLAGS);
    a.put(enc::mrs_nzcv(spsr));
    a.put(enc::x_bfxil(spsr, old, 0, 28));
    // SPSR.T is the block's instruction set: the core's CPSR.T is stale after a return or
    // indirect branch that entered this block from the other one inside the code cache.
    if thumb {
        logic_const(a, Logic::Orr, spsr, psr::T, t);
    } else {
        logic_const(a, Logic::And, spsr, !psr::T, t);
    }
    // The banked SP/LR, when the mode changes.
    let same = a.label();
    a.put(enc::w_addsub_imm(AddSub::Sub, t, cur, mode as u32, false));
    a.cbz_to(false, t, same);
    bank_index(a, t, cur, T_FLAGS);
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, t, 3));
    a.put(enc::w_stp(13, 14, t, 0));
    a.put(enc::w_ldp(13, 14, T_FLAGS, 8 * mode.bank() as i32));
    a.bind(same);
    access(a, Ls::Str, spsr, CPU, f::SPSR + 4 * mode.bank(), T_FLAGS);
    mov32(a, 14, lr);
    // CPSR: mode, I set, T = SCTLR.TE, J and E clear.
    logic_const(a, Logic::And, old, !(psr::T | psr::J | psr::E | psr::M), t);
    logic_const(a, Logic::Orr, old, psr::I | mode as u32, t);
    a.put(enc::w_ubfm(t, sctlr, 30, 30)); // UBFX t, sctlr, #30, #1: TE
    a.put(enc::w_bfm(old, t, 27, 0)); // BFI old, t, #5, #1
    access(a, Ls::Str, old, CPU, f::CPSR, T_FLAGS);
    a.put(enc::w_movz(T_FLAGS, mode as u16, 0));
    access(a, Ls::Strb, T_FLAGS, CPU, f::MODE, T_FLAGS);
    access(a, Ls::Str, ZR, CPU, f::MONITOR, T_FLAGS);
    a.put(CLREX);
    access(a, Ls::Ldr, T_PCV, CPU, f::VBAR, T_FLAGS);
    a.put(enc::w_addsub_imm(AddSub::Add, T_PCV, T_PCV, off, false));
    a.put(enc::w_logic_reg(
        Logic::Orr,
        T_PCV,
        T_PCV,
        t,
        enc::Sh::Lsl,
        0,
    ));
}

/// `MOVS pc, lr` / `SUBS pc, lr, #imm` / `ERET`: checks (to `slow`), then
/// `Cpu::exception_return`'s work; leaves the target with the instruction-set bit in
/// `T_PCV`.
fn exception_return(a: &mut Asm, imm: u32, slow: Label) {
    let (cur, spsr, bank, t, new) = (T_OP2, T_RES, T_TMP, T_CARRY, T_AMT);
    load_cpu(a, CPU);
    access(a, Ls::Ldrb, cur, CPU, f::MODE, T_FLAGS);
    a.put(enc::w_addsub_imm(
        AddSub::Sub,
        T_FLAGS,
        cur,
        Mode::Fiq as u32,
        false,
    ));
    a.cbz_to(false, T_FLAGS, slow);
    a.put(enc::w_addsub_imm(
        AddSub::Sub,
        T_FLAGS,
        cur,
        Mode::Sys as u32,
        false,
    ));
    a.cbz_to(false, T_FLAGS, slow);
    bank_index(a, bank, cur, T_FLAGS);
    add_off(a, T_FLAGS, CPU, f::SPSR);
    a.put(enc::ls_reg_lsl(Ls::Ldr, spsr, T_FLAGS, bank, true));
    // No IT bits, J or E in the SPSR; a PL1 mode other than FIQ.
    mov32(a, t, psr::IT_MASK | psr::J | psr::E);
    a.put(enc::w_logic_reg(Logic::And, t, t, spsr, enc::Sh::Lsl, 0));
    a.cbnz_to(t, slow);
    mov32(a, t, RETURN_MODES);
    a.put(enc_alu::w_shiftv(ShiftV::Lsr, t, t, spsr));
    a.tbz_to(t, 0, slow);
    // No interrupt line raised (the return may unmask it).
    access(a, Ls::Ldrb, t, CPU, f::IRQ_LINE, T_FLAGS);
    access(a, Ls::Ldrb, new, CPU, f::FIQ_LINE, T_FLAGS);
    a.put(enc::w_logic_reg(Logic::Orr, t, t, new, enc::Sh::Lsl, 0));
    a.cbnz_to(t, slow);
    // The target, from the current mode's LR.
    if imm == 0 {
        a.put(enc::w_mov(T_PCV, 14));
    } else {
        a.put(enc::w_addsub_imm(AddSub::Sub, T_PCV, 14, imm, false));
    }
    a.put(enc::w_logic_imm(Logic::And, new, spsr, 0, 4)); // AND new, spsr, #0x1f
    let same = a.label();
    a.put(enc::w_addsub_reg(AddSub::Sub, t, new, cur, enc::Sh::Lsl, 0));
    a.cbz_to(false, t, same);
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, bank, 3));
    a.put(enc::w_stp(13, 14, t, 0));
    bank_index(a, bank, new, t);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, bank, 3));
    a.put(enc::w_ldp(13, 14, t, 0));
    a.bind(same);
    access(a, Ls::Str, spsr, CPU, f::CPSR, T_FLAGS);
    access(a, Ls::Strb, new, CPU, f::MODE, T_FLAGS);
    // NZCV from the SPSR.
    let (immr, imms) = enc::logic_imm32(0xf000_0000).expect("bitmask");
    a.put(enc::w_logic_imm(Logic::And, t, spsr, immr, imms));
    a.put(enc::msr_nzcv(t));
    // Thumb: target | 1 (bit 0 clear, then the instruction-set bit); A32: bits 1:0 clear.
    let arm = a.label();
    let done = a.label();
    a.tbz_to(spsr, 5, arm);
    let (immr, imms) = enc::logic_imm32(1).expect("bitmask");
    a.put(enc::w_logic_imm(Logic::Orr, T_PCV, T_PCV, immr, imms));
    a.b_to(done);
    a.bind(arm);
    let (immr, imms) = enc::logic_imm32(!3).expect("bitmask");
    a.put(enc::w_logic_imm(Logic::And, T_PCV, T_PCV, immr, imms));
    a.bind(done);
}
