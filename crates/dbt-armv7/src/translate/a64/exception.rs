//! Exceptions taken and returned from inside translated code: `SVC` and
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
//! What changes the translation context (privilege, and so the host's shadow and the
//! return stack and target cache the code holds) is inline up to the state change, then
//! the engine switches the context from inside translated code ([`privilege`]: one call)
//! and the code continues at the vector or return address through the new context's
//! target cache (the dispatcher when the engine declines or the cache misses): an entry
//! from a block translated for PL0 (a system call) and a return whose SPSR names User
//! mode. What needs other model
//! state leaves through a side exit before any state changes, and the interpreter runs
//! the instruction exactly as before: an exception return in a PL0 block, an
//! instruction in an IT block, FIQ mode (banked `R8`-`R12`) at an entry, System or FIQ
//! mode at a return (no SPSR; banked registers), `SCTLR.EE` set (big-endian entry, not
//! translated), a host that wants `SVC` or exceptions reported
//! (`Cpu::set_exit_on_svc`/`set_exit_on_exception`), and returns whose SPSR names FIQ,
//! an unmodelled mode (the interpreter keeps the current one), IT bits, `J` or `E`, or
//! while an interrupt line is raised (the return may unmask it: the dispatcher takes
//! it).
//!
//! Each entry and return first tries a fast path specialised on the block's
//! [`ExcHint`] (the mode, its SPSR and LR when the block was translated): the current
//! mode (entry: and the CPSR's T), and for a return the SPSR's bits 27:0, no raised
//! interrupt line and LR are checked against it, then the work runs with every bank index,
//! offset and mode constant, through the `Cpu` address kept in
//! [`CPU_REG`](f::CPU_REG), and a return leaves by a linkable exit to the hinted return
//! address. A failed check runs the general sequence described above. A return whose
//! hinted SPSR names User mode takes the same fast path, then switches to the User context
//! ([`privilege`]) and continues through its target cache; an entry from a block
//! translated for PL0 needs no check at all (such a block runs only in User mode) and has
//! no general sequence.
//!
//! [`ExcHint`]: crate::translate::exc_assume::ExcHint
//! [`MODE_INFO`]: crate::translate::state::MODE_INFO
//! [`Cpu`]: crate::Cpu
//! [`Cpu::take_exception`]: crate::Cpu::take_exception
//! [`Cpu::exception_return`]: crate::Cpu
//! [`GuestState::cpu`]: crate::translate::state::GuestState::cpu

mod privilege;

use super::asm::{Asm, Label};
use super::cpu_fields::{self as f, access, field, load_cpu};
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
    EXIT_BX, MODE_BANK, MODE_INFO, MODE_NOT_TARGET_BIT, MODE_NO_ENTRY_BIT, MODE_NO_RETURN_BIT,
    OFF_MODE_INFO,
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

/// Lowers the exception entry or return `insn` at `pc` of `block` (ITSTATE `it`), the
/// `charged`-th instruction of its block. `link_to` charges the block's instructions and
/// makes a linkable exit to a guest address in the block's instruction set (the vector,
/// or a predicted return address). Returns the side exit's label, which the caller
/// places (the instruction then runs in the interpreter).
///
/// When the block's [`ExcHint`](crate::translate::exc_assume::ExcHint) names a mode that the instruction may run in, a fast
/// path specialised on it comes first: the current mode (and for a return the `SPSR`'s
/// mode, instruction set and `LR`) checked against the hint, then the work with every
/// bank index, offset and mode constant known at translation time, ending in a linkable
/// exit. A failed check goes to the general sequence, which follows the fast path.
#[allow(clippy::too_many_arguments)]
pub fn lower(
    a: &mut Asm,
    rt: &Runtime,
    block: &GuestBlock,
    insn: &Insn,
    pc: u32,
    it: u8,
    charged: usize,
    link_to: &mut dyn FnMut(&mut Asm, u32),
) -> Label {
    let slow = a.label();
    let kind = kind(insn).expect("handles() said so");
    let exc = block.exc;
    let reported = match kind {
        Kind::Svc => ExcAssume::REPORT_SVC | ExcAssume::REPORT_ALL | ExcAssume::EE,
        Kind::Undefined => ExcAssume::REPORT_ALL | ExcAssume::EE,
        Kind::Return(_) => 0,
    };
    // A PL0 block's entries change the translation context: the engine switches to
    // PL1's shadow, return stack and target cache before the code goes on at the vector.
    let from_pl0 = !block.key.privileged;
    let pl0_return = from_pl0 && matches!(kind, Kind::Return(_));
    if pl0_return || it != 0 || exc.flags & reported != 0 {
        a.b_to(slow);
        return slow;
    }
    let thumb = block.key.thumb;
    let general = a.label();
    if let Kind::Return(imm) = kind {
        if let Some(h) = return_hint(block, charged - 1, imm) {
            fast_return(a, &h, general);
            if h.to == Mode::Usr {
                // Another privilege: the return address (in `T_PCV`) through the User
                // context's target cache once the code switched to it.
                to_other_privilege(a, rt, charged);
            } else {
                link_to(a, h.target);
            }
        }
        a.bind(general);
        let to_user = a.label();
        exception_return(a, imm, slow, to_user);
        through_target_cache(a, rt, charged);
        a.bind(to_user);
        return_to_user(a, rt, charged, slow);
        return slow;
    }
    let mut leave = |a: &mut Asm, vector: u32| {
        if from_pl0 {
            mov32(a, T_PCV, vector | exc.te() as u32);
            to_other_privilege(a, rt, charged);
        } else if exc.te() == thumb {
            link_to(a, vector);
        } else {
            mov32(a, T_PCV, vector | exc.te() as u32);
            through_target_cache(a, rt, charged);
        }
    };
    if from_pl0 {
        // A block translated for PL0 runs only in User mode: the dispatcher enters it
        // only then, it is reached only through the User context's tables, and no User
        // mode instruction changes `CPSR.M` (`MSR` keeps the mode, `CPS` is a no-op, an
        // exception ends the block). So the entry needs no check and no general sequence.
        let vector = fast_entry(a, insn, pc, thumb, exc, kind, Mode::Usr, None);
        leave(a, vector);
        return slow;
    }
    if let Some(h) = entry_hint(block) {
        let vector = fast_entry(a, insn, pc, thumb, exc, kind, h, Some(general));
        leave(a, vector);
    }
    a.bind(general);
    let vector = entry(a, insn, pc, thumb, exc, kind, slow);
    leave(a, vector);
    slow
}

/// Charges the `charged` instructions and continues at the guest address (with the
/// instruction-set bit) in `T_PCV`: the target cache, else the dispatcher.
fn through_target_cache(a: &mut Asm, rt: &Runtime, charged: usize) {
    a.put(enc::x_addsub_imm(
        AddSub::Sub,
        BUDGET,
        BUDGET,
        charged as u32,
    ));
    let miss = a.label();
    indirect::lookup(a, T_PCV, miss);
    a.bind(miss);
    exit_bx(a, rt);
}

/// Charges the `charged` instructions and leaves to the dispatcher at the guest address
/// (with the instruction-set bit) in `T_PCV`, without the target cache: the exception
/// changed the privilege and the engine did not switch the translation context whose
/// tables the code holds.
fn to_dispatcher(a: &mut Asm, rt: &Runtime, charged: usize) {
    a.put(enc::x_addsub_imm(
        AddSub::Sub,
        BUDGET,
        BUDGET,
        charged as u32,
    ));
    exit_bx(a, rt);
}

/// After a change of privilege: the code switches the host's shadow and the return
/// stack and target cache to the new privilege's (the switch cache, [`privilege::cached`];
/// else the engine, [`privilege::call`]), then the code
/// charges the `charged` instructions and continues at the guest address in `T_PCV`
/// through the new context's target cache; the dispatcher when the engine declines or
/// the cache misses.
fn to_other_privilege(a: &mut Asm, rt: &Runtime, charged: usize) {
    let (miss, declined) = (a.label(), a.label());
    privilege::cached(a, miss);
    through_target_cache(a, rt, charged);
    a.bind(miss);
    privilege::call(a, declined);
    through_target_cache(a, rt, charged);
    a.bind(declined);
    to_dispatcher(a, rt, charged);
}

/// An unlinked indirect exit to the guest address in `T_PCV` (the dispatcher).
fn exit_bx(a: &mut Asm, rt: &Runtime) {
    a.put(enc::w_mov(super::T_ADDR, T_PCV));
    a.put(enc::x_movn(T_FLAGS, 0, 0)); // NO_LINK
    a.put(enc::w_movz(T_OP2, EXIT_BX as u16, 0));
    a.b_abs(rt.epilogue);
}

/// The mode an entry's fast path assumes it is taken from: the block's hint, when
/// an inline entry may start there (not FIQ).
fn entry_hint(block: &GuestBlock) -> Option<Mode> {
    let h = Mode::from_bits(block.hint.mode as u32)?;
    (block.hint.mode == h as u8 && MODE_INFO[h as usize] & 1 << MODE_NO_ENTRY_BIT == 0).then_some(h)
}

/// What a return's fast path assumes.
struct ReturnHint {
    /// The current mode.
    from: Mode,
    /// The `SPSR`'s mode.
    to: Mode,
    /// The `SPSR`.
    spsr: u32,
    /// The current mode's `LR`.
    lr: u32,
    /// The guest address returned to (in the block's instruction set).
    target: u32,
    /// The return's `imm` (`LR - imm`).
    imm: u32,
}

/// The block's hint as a return's fast path uses it: a mode that may return inline, an
/// `SPSR` naming a mode it may return to in the block's instruction set without IT, J
/// or E bits, and no instruction before the return (the `index`-th) that writes `LR`
/// or system state other than by reading it (`MRS`): the `SPSR` or the mode at the
/// return would not be the hinted ones. A return to User mode needs only the first
/// three (in either instruction set).
fn return_hint(block: &GuestBlock, index: usize, imm: u32) -> Option<ReturnHint> {
    let hint = block.hint;
    let from = Mode::from_bits(hint.mode as u32)?;
    let to = Mode::from_bits(hint.spsr)?;
    let thumb = hint.spsr & psr::T != 0;
    // User mode is no inline target of the general sequence (it changes the privilege),
    // but the fast path returns to it: the checks below hold it to exactly the hinted
    // SPSR (User, its instruction set, no IT/J/E), and the code then switches to the User
    // context and continues through its target cache, in either instruction set.
    // Its return address is LR's at run time, so instructions before it may write LR
    // or system state (Linux's `msr spsr_cxsf` + `ldmdb sp, {r1 - lr}^` before
    // `movs pc, lr`): the mode, the SPSR and the lines are checked when it runs.
    let to_user = to == Mode::Usr;
    let ok = hint.mode == from as u8
        && MODE_INFO[from as usize] & 1 << MODE_NO_RETURN_BIT == 0
        && (to_user || MODE_INFO[to as usize] & 1 << MODE_NOT_TARGET_BIT == 0)
        && hint.spsr & (psr::IT_MASK | psr::J | psr::E) == 0
        && (to_user || thumb == block.key.thumb)
        && (to_user
            || block.insns[..index].iter().all(|g| {
                let info = g.insn.info();
                info.writes & 1 << 14 == 0
                    && (!info.sensitive || matches!(g.insn.op, Op::Mrs { .. }))
            }));
    let target = hint.lr.wrapping_sub(imm) & if thumb { !1 } else { !3 };
    ok.then_some(ReturnHint {
        from,
        to,
        spsr: hint.spsr,
        lr: hint.lr,
        target,
        imm,
    })
}

/// Goes to `l` when an interrupt line is raised (an exception return may unmask it:
/// the dispatcher takes it). Uses `T_FLAGS` and `T_PCV`.
fn lines_raised(a: &mut Asm, l: Label) {
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
    a.cbnz_to(T_FLAGS, l);
}

/// The banked SP/LR of `from` saved and those of `to` loaded (through
/// [`CPU_REG`](f::CPU_REG)): 2 host instructions.
fn swap_banks(a: &mut Asm, from: Mode, to: Mode) {
    let bank = f::biased(f::BANK_SP_LR);
    a.put(enc::w_stp(
        13,
        14,
        f::CPU_REG,
        bank + 8 * from.bank() as i32,
    ));
    a.put(enc::w_ldp(13, 14, f::CPU_REG, bank + 8 * to.bank() as i32));
}

/// An entry's fast path, taken from mode `from` in the block's instruction set (checked
/// on `CPSR.M` and `CPSR.T`: else `general`; with no `general`, the mode is known to be
/// `from` and the block's instruction set is taken for T). Returns the vector's address.
#[allow(clippy::too_many_arguments)]
fn fast_entry(
    a: &mut Asm,
    insn: &Insn,
    pc: u32,
    thumb: bool,
    exc: ExcAssume,
    kind: Kind,
    from: Mode,
    general: Option<Label>,
) -> u32 {
    let (mode, off, lr) = entry_facts(insn, pc, thumb, kind);
    let (old, new, spsr, t) = (T_OP2, T_RES, T_AMT, T_TMP);
    // The CPSR's M and T as assumed (`Cpu.mode` is always `CPSR.M`; T is the block's
    // unless an instruction-set change inside the code cache left it stale).
    field(a, Ls::Ldr, old, f::CPSR);
    let assumed = from as u32 | (thumb as u32) << 5;
    if let Some(general) = general {
        logic_imm(a, Logic::And, t, old, psr::M | psr::T);
        a.put(enc::w_addsub_imm(AddSub::Sub, t, t, assumed, false));
        a.cbnz_to(t, general);
    }
    // SPSR = the CPSR with the host's NZCV (and, when the mode is known without a check,
    // the block's instruction set: the stored T may be stale).
    a.put(enc::mrs_nzcv(spsr));
    a.put(enc::x_bfxil(spsr, old, 0, 28));
    if general.is_none() {
        if thumb {
            logic_imm(a, Logic::Orr, spsr, spsr, psr::T);
        } else {
            logic_imm(a, Logic::And, spsr, spsr, !psr::T);
        }
    }
    // The new CPSR's M and T (bits 5:0).
    let mt = mode as u32 | (exc.te() as u32) << 5;
    if mt != assumed {
        a.put(enc::w_movz(t, mt as u16, 0));
    }
    if from != mode {
        swap_banks(a, from, mode);
        if exc.te() {
            a.put(enc::w_movz(old, mode as u16, 0));
            field(a, Ls::Strb, old, f::MODE);
        } else {
            field(a, Ls::Strb, t, f::MODE);
        }
    }
    field(a, Ls::Str, spsr, f::SPSR + 4 * mode.bank());
    mov32(a, 14, lr);
    // CPSR = the SPSR with I set and the new M and T (J is clear: `Dbt::translatable`).
    logic_imm(a, Logic::Orr, new, spsr, psr::I);
    if mt != assumed {
        a.put(enc::x_bfi(new, t, 0, 6));
    }
    field(a, Ls::Str, new, f::CPSR);
    field(a, Ls::Str, ZR, f::MONITOR);
    a.put(CLREX);
    exc.vector_base.wrapping_add(off)
}

/// A return's fast path under hint `h` (checked: else `general`); the caller links to
/// `h.target`, or for a return to User mode (target in `T_PCV`) switches to the User
/// context first.
fn fast_return(a: &mut Asm, h: &ReturnHint, general: Label) {
    let (cur, spsr, t, lr) = (T_OP2, T_RES, T_TMP, T_AMT);
    // The mode as hinted, and no interrupt line raised (the return may unmask it: the
    // dispatcher takes it).
    let word = f::IRQ_LINE & !7;
    if f::FIQ_LINE == f::IRQ_LINE + 1
        && f::MODE == f::IRQ_LINE + 2
        && f::IT == f::IRQ_LINE + 3
        && f::IRQ_LINE + 4 <= word + 8
    {
        // One doubleword holds the IRQ line, FIQ line, mode and ITSTATE (0 in translated
        // code): 0, 0, the mode, 0.
        field(a, Ls::LdrX, cur, word);
        a.put(enc::x_ubfx(cur, cur, 8 * (f::IRQ_LINE - word) as u8, 32));
        a.put(enc::w_addsub_imm(
            AddSub::Sub,
            cur,
            cur,
            (h.from as u32) << 4,
            true,
        ));
        a.cbnz_to(cur, general);
        field(a, Ls::Ldr, spsr, f::SPSR + 4 * h.from.bank());
    } else {
        field(a, Ls::Ldrb, cur, f::MODE);
        a.put(enc::w_addsub_imm(
            AddSub::Sub,
            cur,
            cur,
            h.from as u32,
            false,
        ));
        a.cbnz_to(cur, general);
        field(a, Ls::Ldr, spsr, f::SPSR + 4 * h.from.bank());
        field(a, Ls::Ldrb, t, f::IRQ_LINE);
        field(a, Ls::Ldrb, lr, f::FIQ_LINE);
        a.put(enc::w_logic_reg(Logic::Orr, t, t, lr, enc::Sh::Lsl, 0));
        a.cbnz_to(t, general);
    }
    // SPSR bits 27:0 as hinted (mode, T, no IT/J/E; also A, I, F, GE, Q): compared
    // shifted left by 4, past NZCV.
    mov32(a, t, h.spsr << 4);
    a.put(enc::w_logic_reg(Logic::Eor, t, t, spsr, enc::Sh::Lsl, 4));
    a.cbnz_to(t, general);
    // LR as hinted: the return address is the linked one. A return to User goes
    // through the target cache with the address LR gives at run time, taken here
    // before the banks change: `T_PCV` = `LR - imm` in the checked SPSR's instruction
    // set (with the instruction-set bit of an exit).
    if h.to == Mode::Usr {
        if h.imm == 0 {
            a.put(enc::w_mov(T_PCV, 14));
        } else {
            a.put(enc::w_addsub_imm(AddSub::Sub, T_PCV, 14, h.imm, false));
        }
        if h.spsr & psr::T != 0 {
            logic_imm(a, Logic::Orr, T_PCV, T_PCV, 1);
        } else {
            logic_imm(a, Logic::And, T_PCV, T_PCV, !3);
        }
    } else {
        mov32(a, lr, h.lr);
        a.put(enc::w_addsub_reg(AddSub::Sub, lr, 14, lr, enc::Sh::Lsl, 0));
        a.cbnz_to(lr, general);
    }
    if h.to != h.from {
        swap_banks(a, h.from, h.to);
        a.put(enc::w_movz(t, h.to as u16, 0));
        field(a, Ls::Strb, t, f::MODE);
    }
    field(a, Ls::Str, spsr, f::CPSR);
    logic_imm(a, Logic::And, t, spsr, 0xf000_0000);
    a.put(enc::msr_nzcv(t));
}

/// An entry's mode, vector offset and return address (`LR`).
fn entry_facts(insn: &Insn, pc: u32, thumb: bool, kind: Kind) -> (Mode, u32, u32) {
    match kind {
        Kind::Svc => (Mode::Svc, 0x08, pc.wrapping_add(insn.len as u32)),
        _ => (Mode::Und, 0x04, pc.wrapping_add(if thumb { 2 } else { 4 })),
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
    let (mode, off, lr) = entry_facts(insn, pc, thumb, kind);
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
/// `T_PCV`. A return whose SPSR names a mode that may not be entered inline goes to
/// `to_user` (with the registers [`return_to_user`] takes) before any state changes.
fn exception_return(a: &mut Asm, imm: u32, slow: Label, to_user: Label) {
    let (cur, spsr, info, t, new) = (T_OP2, T_RES, T_TMP, T_CARRY, T_AMT);
    load_cpu(a, CPU);
    access(a, Ls::Ldrb, cur, CPU, f::MODE, T_FLAGS);
    mode_info(a, info, cur, T_FLAGS);
    a.tbnz_to(info, MODE_NO_RETURN_BIT, slow); // User/System: no SPSR; FIQ
    logic_imm(a, Logic::And, info, info, MODE_BANK as u32);
    add_off(a, T_FLAGS, CPU, f::SPSR);
    a.put(enc::ls_reg_lsl(Ls::Ldr, spsr, T_FLAGS, info, true));
    // No interrupt line raised (the return may unmask it: the dispatcher takes it).
    lines_raised(a, slow);
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
    // Another mode: a PL1 mode but FIQ (User: `to_user`).
    logic_imm(a, Logic::And, new, spsr, psr::M);
    mode_info(a, t, new, T_FLAGS);
    a.tbnz_to(t, MODE_NOT_TARGET_BIT, to_user);
    // The banked SP/LR (the modes differ).
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    a.put(enc_alu::x_add_lsl(info, T_FLAGS, info, 3));
    a.put(enc::w_stp(13, 14, info, 0));
    logic_imm(a, Logic::And, t, t, MODE_BANK as u32);
    a.put(enc_alu::x_add_lsl(t, T_FLAGS, t, 3));
    a.put(enc::w_ldp(13, 14, t, 0));
    access(a, Ls::Strb, new, CPU, f::MODE, T_FLAGS);
    a.bind(same);
    install_spsr_and_target(a, spsr, t);
}

/// The end of every inline exception return: `CPSR` = the SPSR in `spsr` (stored in the
/// `Cpu` in `CPU`), NZCV from it, and the target in `T_PCV` as the new instruction set
/// takes it: Thumb (`SPSR.T`): bit 0 set (the instruction-set bit of an exit); A32: bits
/// 1:0 clear. `t`: scratch.
fn install_spsr_and_target(a: &mut Asm, spsr: u8, t: u8) {
    access(a, Ls::Str, spsr, CPU, f::CPSR, T_FLAGS);
    logic_imm(a, Logic::And, t, spsr, 0xf000_0000);
    a.put(enc::msr_nzcv(t));
    let arm = a.label();
    let done = a.label();
    a.tbz_to(spsr, 5, arm);
    logic_imm(a, Logic::Orr, T_PCV, T_PCV, 1);
    a.b_to(done);
    a.bind(arm);
    logic_imm(a, Logic::And, T_PCV, T_PCV, !3);
    a.bind(done);
}

/// The rest of a general exception return (from [`exception_return`]'s `to_user`) whose
/// SPSR names User mode: the current mode's SP/LR saved, User's loaded, CPSR = SPSR,
/// NZCV, the target; then [`to_other_privilege`] (another translation context). Any other
/// mode goes to `slow` before any state changes. Takes the `Cpu` in `CPU`, the current
/// mode's bank index in `T_TMP`, the SPSR in `T_RES`, its mode in `T_AMT` and the
/// target (`LR - imm`) in `T_PCV`.
fn return_to_user(a: &mut Asm, rt: &Runtime, charged: usize, slow: Label) {
    let (spsr, info, new, t) = (T_RES, T_TMP, T_AMT, T_CARRY);
    a.put(enc::w_addsub_imm(
        AddSub::Sub,
        T_FLAGS,
        new,
        Mode::Usr as u32,
        false,
    ));
    a.cbnz_to(T_FLAGS, slow);
    add_off(a, T_FLAGS, CPU, f::BANK_SP_LR);
    a.put(enc_alu::x_add_lsl(info, T_FLAGS, info, 3));
    a.put(enc::w_stp(13, 14, info, 0));
    a.put(enc::w_ldp(13, 14, T_FLAGS, 8 * Mode::Usr.bank() as i32));
    access(a, Ls::Strb, new, CPU, f::MODE, T_FLAGS);
    install_spsr_and_target(a, spsr, t);
    to_other_privilege(a, rt, charged);
}
