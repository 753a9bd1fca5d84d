//! Exceptions taken and returned from inside translated code, PL1 to PL1: `SVC` and
//! UNDEFINED instructions (`UDF` and unallocated encodings) enter the Supervisor or
//! Undefined vector, and `MOVS pc, lr`, `SUBS pc, lr, #imm` and `ERET` return, without
//! leaving the code cache. The code does what [`Cpu::take_exception`] and
//! [`Cpu::exception_return`] do, on the guest [`Cpu`]'s own fields (found through
//! [`GuestState::cpu`], offsets in [`cpu_fields`]), then continues at the vector (a
//! linkable direct exit, or the target cache when the vector is in the other instruction
//! set) or at the return address (the target cache; the dispatcher on a miss, which
//! fills it).
//!
//! Entry: `SPSR_<mode>` = CPSR (NZCV from the host flags, T from the block's instruction
//! set), the banked `R13`/`R14` swapped when the mode changes, `LR_<mode>` = the return
//! address (`SVC`: the next instruction; UNDEFINED: `PC + 4`, Thumb `PC + 2`), CPSR.M =
//! the mode, `I` set, `T` = `SCTLR.TE`, `J` clear, the local monitor cleared (the
//! model's and the host's: `CLREX`), vector base + `0x04`/`0x08`. `SCTLR.TE`/`EE`, the
//! vector base (`VBAR` or hivecs) and the host's reporting choices are translation-time
//! assumptions ([`ExcAssume`]; the engine flushes when they change). Return: CPSR =
//! `SPSR_<mode>` (mode, banks, NZCV into the host flags), then the target with bit 0
//! (Thumb) or bits 1:0 (A32) cleared. Per-mode facts (bank index, whether an entry or a
//! return may start or end there) come from [`MODE_INFO`] in the `GuestState`.
//!
//! Only what keeps the translation context (privilege, and so the target cache) and
//! needs no other model state is inline; the rest leaves through a side exit before any
//! state changes, and the interpreter runs the instruction exactly as before: a block
//! translated for PL0 (a `SVC` from User mode changes the privilege), an instruction in
//! an IT block, FIQ mode (banked `R8`-`R12`) at an entry, System or FIQ mode at a return
//! (no SPSR; banked registers), `SCTLR.EE` set (big-endian entry, not translated), a host
//! that wants `SVC` or exceptions reported (`Cpu::set_exit_on_svc`/
//! `set_exit_on_exception`), and returns whose SPSR names User, FIQ, an unmodelled mode
//! (the interpreter keeps the current one), IT bits, `J` or `E`, or while an interrupt
//! line is raised (the return may unmask it: the dispatcher takes it).
//!
//! [`MODE_INFO`]: crate::translate::state::MODE_INFO
//! [`Cpu`]: crate::Cpu
//! [`Cpu::take_exception`]: crate::Cpu::take_exception
//! [`Cpu::exception_return`]: crate::Cpu
//! [`GuestState::cpu`]: crate::translate::state::GuestState::cpu

use super::asm::{Asm, Label};
use super::cpu_fields::{self as f, access, load_cpu};
use super::enc::{self, AddSub, Logic, Ls};
use super::enc_alu;
use super::enc_excl::CLREX;
use super::gen::mov32;
use super::indirect;
use super::{BUDGET, STATE, T_AMT, T_CARRY, T_FLAGS, T_OP2, T_PCV, T_RES, T_TMP, ZR};
use crate::cpu::{psr, Mode};
use crate::decode::{DpOp, Insn, Op, Operand2, Shift};
use crate::translate::backend::Runtime;
use crate::translate::exc_assume::ExcAssume;
use crate::translate::frontend::GuestBlock;
use crate::translate::state::{
    EXIT_BX, MODE_BANK, MODE_NOT_TARGET_BIT, MODE_NO_ENTRY_BIT, MODE_NO_RETURN_BIT, OFF_MODE_INFO,
};

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

/// `Wd op= #v` for a 32-bit bitmask immediate `v`.
fn logic_imm(a: &mut Asm, op: Logic, rd: u8, rn: u8, v: u32) {
    let (immr, imms) = enc::logic_imm32(v).expect("a bitmask immediate");
    a.put(enc::w_logic_imm(op, rd, rn, immr, imms));
}

/// `Winfo` = [`MODE_INFO`](crate::translate::state::MODE_INFO)`[Wmode]` (the mode in
/// bits 4:0 of `Wmode`, nothing above; `addr` is scratch): 2 instructions.
fn mode_info(a: &mut Asm, info: u8, mode: u8, addr: u8) {
    a.put(1 << 31 | enc_alu::w_add_ext(addr, STATE, mode, enc_alu::Ext::Uxtb));
    a.put(enc::ls_uimm(Ls::Ldrb, info, addr, OFF_MODE_INFO));
}

/// What [`lower`] leaves to its caller.
pub struct Lowered {
    /// The side exit the caller places (the instruction then runs in the interpreter).
    pub side: Label,
    /// An entry whose vector is in the block's instruction set: the caller charges the
    /// block's instructions and makes a linkable exit to this guest address. Otherwise
    /// the code continued through the target cache itself.
    pub link: Option<u32>,
}

/// Lowers the exception entry or return `insn` at `pc` of `block` (ITSTATE `it`), the
/// `charged`-th instruction of its block.
pub fn lower(
    a: &mut Asm,
    rt: &Runtime,
    block: &GuestBlock,
    insn: &Insn,
    pc: u32,
    it: u8,
    charged: usize,
) -> Lowered {
    let slow = a.label();
    let kind = kind(insn).expect("handles() said so");
    let exc = block.exc;
    let reported = match kind {
        Kind::Svc => ExcAssume::REPORT_SVC | ExcAssume::REPORT_ALL | ExcAssume::EE,
        Kind::Undefined => ExcAssume::REPORT_ALL | ExcAssume::EE,
        Kind::Return(_) => 0,
    };
    if !block.key.privileged || it != 0 || exc.flags & reported != 0 {
        a.b_to(slow);
        return Lowered {
            side: slow,
            link: None,
        };
    }
    let thumb = block.key.thumb;
    if let Kind::Return(imm) = kind {
        exception_return(a, imm, slow);
    } else {
        let vector = entry(a, insn, pc, thumb, exc, kind, slow);
        if exc.te() == thumb {
            return Lowered {
                side: slow,
                link: Some(vector),
            };
        }
        mov32(a, T_PCV, vector | exc.te() as u32);
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
    Lowered {
        side: slow,
        link: None,
    }
}

/// `SVC` or UNDEFINED: checks (to `slow`), then `Cpu::take_exception`'s work. Returns the
/// vector's address.
fn entry(
    a: &mut Asm,
    insn: &Insn,
    pc: u32,
    thumb: bool,
    exc: ExcAssume,
    kind: Kind,
    slow: Label,
) -> u32 {
    let (mode, off, lr) = match kind {
        Kind::Svc => (Mode::Svc, 0x08, pc.wrapping_add(insn.len as u32)),
        _ => (Mode::Und, 0x04, pc.wrapping_add(if thumb { 2 } else { 4 })),
    };
    let (cur, info, old, spsr, t) = (T_OP2, T_CARRY, T_RES, T_AMT, T_TMP);
    // `mt` = the new CPSR's M and T fields (bits 5:0: the mode, `SCTLR.TE`).
    let mt = T_PCV;
    const _: () = assert!(psr::M == 0x1f && psr::T == 1 << 5);
    load_cpu(a, CPU);
    access(a, Ls::Ldrb, cur, CPU, f::MODE, T_FLAGS);
    // SPSR = CPSR with the guest's NZCV (the host's) and the block's instruction set (the
    // core's CPSR.T is stale after a return or indirect branch that entered this block
    // from the other set inside the code cache).
    access(a, Ls::Ldr, old, CPU, f::CPSR, T_FLAGS);
    a.put(enc::mrs_nzcv(spsr));
    a.put(enc::x_bfxil(spsr, old, 0, 28));
    if thumb {
        logic_imm(a, Logic::Orr, spsr, spsr, psr::T);
    } else {
        logic_imm(a, Logic::And, spsr, spsr, !psr::T);
    }
    a.put(enc::w_movz(mt, mode as u16 | (exc.te() as u16) << 5, 0));
    // Another mode: not FIQ (banked R8-R12), the banked SP/LR swapped, the mode stored.
    let same = a.label();
    a.put(enc::w_addsub_imm(AddSub::Sub, t, cur, mode as u32, false));
    a.cbz_to(false, t, same);
    mode_info(a, info, cur, T_FLAGS);
    a.tbnz_to(info, MODE_NO_ENTRY_BIT, slow);
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    logic_imm(a, Logic::And, info, info, MODE_BANK as u32);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, info, 3));
    a.put(enc::w_stp(13, 14, t, 0));
    a.put(enc::w_ldp(13, 14, T_FLAGS, 8 * mode.bank() as i32));
    if exc.te() {
        a.put(enc::w_movz(cur, mode as u16, 0));
        access(a, Ls::Strb, cur, CPU, f::MODE, t);
    } else {
        access(a, Ls::Strb, mt, CPU, f::MODE, t);
    }
    a.bind(same);
    access(a, Ls::Str, spsr, CPU, f::SPSR + 4 * mode.bank(), T_FLAGS);
    mov32(a, 14, lr);
    // CPSR: M = the mode and T = TE (one BFI of bits 5:0), J clear, I set (E is clear in
    // translated code: `Dbt::translatable`).
    a.put(enc::x_bfi(old, mt, 0, 6));
    logic_imm(a, Logic::And, old, old, !psr::J);
    logic_imm(a, Logic::Orr, old, old, psr::I);
    access(a, Ls::Str, old, CPU, f::CPSR, t);
    access(a, Ls::Str, ZR, CPU, f::MONITOR, t);
    a.put(CLREX);
    exc.vector_base.wrapping_add(off)
}

/// `MOVS pc, lr` / `SUBS pc, lr, #imm` / `ERET`: checks (to `slow`), then
/// `Cpu::exception_return`'s work; leaves the target with the instruction-set bit in
/// `T_PCV`.
fn exception_return(a: &mut Asm, imm: u32, slow: Label) {
    let (cur, spsr, info, t, new) = (T_OP2, T_RES, T_TMP, T_CARRY, T_AMT);
    load_cpu(a, CPU);
    access(a, Ls::Ldrb, cur, CPU, f::MODE, T_FLAGS);
    mode_info(a, info, cur, T_FLAGS);
    a.tbnz_to(info, MODE_NO_RETURN_BIT, slow); // User/System: no SPSR; FIQ
    logic_imm(a, Logic::And, info, info, MODE_BANK as u32);
    add_off(a, T_FLAGS, CPU, f::SPSR);
    a.put(enc::ls_reg_lsl(Ls::Ldr, spsr, T_FLAGS, info, true));
    // No interrupt line raised (the return may unmask it: the dispatcher takes it).
    if f::FIQ_LINE == f::IRQ_LINE + 1 && f::IRQ_LINE.is_multiple_of(2) {
        access(a, Ls::Ldrh, T_FLAGS, CPU, f::IRQ_LINE, T_FLAGS);
    } else {
        access(a, Ls::Ldrb, T_FLAGS, CPU, f::IRQ_LINE, T_FLAGS);
        access(a, Ls::Ldrb, T_PCV, CPU, f::FIQ_LINE, T_PCV);
        a.put(enc::w_logic_reg(
            Logic::Orr,
            T_FLAGS,
            T_FLAGS,
            T_PCV,
            enc::Sh::Lsl,
            0,
        ));
    }
    a.cbnz_to(T_FLAGS, slow);
    // The target, from the current mode's LR.
    if imm == 0 {
        a.put(enc::w_mov(T_PCV, 14));
    } else {
        a.put(enc::w_addsub_imm(AddSub::Sub, T_PCV, 14, imm, false));
    }
    // `t` = SPSR's IT, J, E and M bits with the current mode taken out of M: zero for a
    // return to the same mode without IT/J/E (the common case: only CPSR changes).
    mov32(a, t, psr::IT_MASK | psr::J | psr::E | psr::M);
    a.put(enc::w_logic_reg(Logic::And, t, t, spsr, enc::Sh::Lsl, 0));
    a.put(enc::w_logic_reg(Logic::Eor, t, t, cur, enc::Sh::Lsl, 0));
    let same = a.label();
    a.cbz_to(false, t, same);
    // No IT bits, J or E in the SPSR (not translated): bits above M (`cur` < 32).
    logic_imm(a, Logic::And, T_FLAGS, t, !psr::M);
    a.cbnz_to(T_FLAGS, slow);
    // Another mode: a PL1 mode but FIQ.
    logic_imm(a, Logic::And, new, spsr, psr::M);
    mode_info(a, t, new, T_FLAGS);
    a.tbnz_to(t, MODE_NOT_TARGET_BIT, slow);
    // The banked SP/LR (the modes differ).
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    a.put(enc_alu::x_add_lsl(info, T_FLAGS, info, 3));
    a.put(enc::w_stp(13, 14, info, 0));
    logic_imm(a, Logic::And, t, t, MODE_BANK as u32);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, t, 3));
    a.put(enc::w_ldp(13, 14, t, 0));
    access(a, Ls::Strb, new, CPU, f::MODE, T_FLAGS);
    a.bind(same);
    access(a, Ls::Str, spsr, CPU, f::CPSR, T_FLAGS);
    // NZCV from the SPSR.
    logic_imm(a, Logic::And, t, spsr, 0xf000_0000);
    a.put(enc::msr_nzcv(t));
    // Thumb: target | 1 (bit 0 clear, then the instruction-set bit); A32: bits 1:0 clear.
    let arm = a.label();
    let done = a.label();
    a.tbz_to(spsr, 5, arm);
    logic_imm(a, Logic::Orr, T_PCV, T_PCV, 1);
    a.b_to(done);
    a.bind(arm);
    logic_imm(a, Logic::And, T_PCV, T_PCV, !3);
    a.bind(done);
}
