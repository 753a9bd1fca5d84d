//! [`A64Gen`]: the runtime (prologue/epilogue), block layout, exits and linking.

use alloc::vec::Vec;

use super::asm::{Asm, Label};
use super::enc::{self, Ls};
use super::indirect;
use super::lower::{self, Lowered};
use super::{BUDGET, IBTC, RAS, RAS_TOP, SP, STATE, T_ADDR, T_FLAGS, T_OP2, T_PCV};
use crate::decode::{Insn, Op};
use crate::translate::backend::{CodeGen, ExitSite, HostBlock, Runtime};
use crate::translate::frontend::{End, GuestBlock};
use crate::translate::state::{
    off_r, EXIT_BRANCH, EXIT_BX, EXIT_FALLBACK, EXIT_SIDE, OFF_BUDGET, OFF_EXIT, OFF_IBTC_BASE,
    OFF_LINK_SITE, OFF_NZCV, OFF_RAS_BASE, OFF_RAS_TOP,
};

/// Callee-saved host registers the prologue saves (pairs), then x29/x30.
const SAVED_PAIRS: [(u8, u8); 5] = [(19, 20), (21, 22), (23, 24), (25, 26), (27, 28)];
/// Size of the prologue's stack frame.
const FRAME: i32 = 96;

/// The A64 code generator.
#[derive(Clone, Copy, Debug, Default)]
pub struct A64Gen;

impl A64Gen {
    /// A generator.
    pub fn new() -> A64Gen {
        A64Gen
    }
}

/// Loads a 32-bit constant into `Wd` with the fewest `MOVZ`/`MOVN`/`MOVK`.
pub(super) fn mov32(a: &mut Asm, rd: u8, v: u32) {
    let (lo, hi) = (v as u16, (v >> 16) as u16);
    if hi == 0 {
        a.put(enc::w_movz(rd, lo, 0));
    } else if lo == 0 {
        a.put(enc::w_movz(rd, hi, 1));
    } else if hi == 0xffff {
        a.put(enc::w_movn(rd, !lo, 0));
    } else if lo == 0xffff {
        a.put(enc::w_movn(rd, !hi, 1));
    } else {
        a.put(enc::w_movz(rd, lo, 0));
        a.put(enc::w_movk(rd, hi, 1));
    }
}

/// What an exit stub after the block body does.
#[derive(Clone, Copy)]
enum StubKind {
    /// A linkable direct exit whose branch is at this cache offset.
    Link(usize),
    /// A side exit of the instruction whose host code starts at this cache offset.
    Side(usize),
}

/// An exit stub to emit after the block body: its label, guest PC and kind.
type Stub = (Label, u32, StubKind);

/// A linkable exit to guest `target`: leave when the budget cannot cover another block,
/// else take the branch at `site` (to the stub until linked).
fn link(a: &mut Asm, stubs: &mut Vec<Stub>, exits: &mut Vec<ExitSite>, target: u32) {
    let s = a.label();
    a.tbnz_to(BUDGET, 63, s);
    let site = a.here();
    a.b_to(s);
    stubs.push((s, target, StubKind::Link(site)));
    exits.push(ExitSite {
        site,
        stub: 0,
        target,
    });
}

/// Counts down the budget by the `n` guest instructions executed since block entry.
fn charge(a: &mut Asm, n: usize) {
    if n > 0 {
        a.put(enc::x_addsub_imm(
            enc::AddSub::Sub,
            BUDGET,
            BUDGET,
            n as u32,
        ));
    }
}

/// What an indirect exit is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Indirect {
    /// A return: the shadow return stack first, then the target cache.
    Return,
    /// Another indirect branch: the target cache.
    Jump,
    /// Straight to the dispatcher (a change of instruction set).
    Dispatch,
}

/// Whether a PC-writing instruction is a return (`BX LR`, `MOV pc, lr`, a load of the PC
/// from the stack: `POP {..,pc}`, `LDM sp!, {..,pc}`, `LDR pc, [sp], #4`).
fn is_return(op: &Op) -> bool {
    match *op {
        Op::Bx { rm } => rm == 14,
        Op::Multi { rn, .. } => rn == 13,
        Op::Mem { addr, .. } => addr.rn == 13,
        Op::Dp {
            op: crate::decode::DpOp::Mov,
            op2:
                crate::decode::Operand2::ShiftImm {
                    rm: 14, amount: 0, ..
                },
            ..
        } => true,
        _ => false,
    }
}

/// Leaves to the guest address in `src` with interworking (`BX` semantics): the exit of
/// `BX`/`BLX` register and of every instruction that writes the PC. Returns and other
/// indirect branches stay in the code cache when the shadow return stack or the target
/// cache has the target; otherwise the dispatcher takes over.
fn exit_bx(a: &mut Asm, rt: &Runtime, src: u8, kind: Indirect, thumb: bool) {
    if src != T_ADDR {
        a.put(enc::w_mov(T_ADDR, src));
    }
    // Translated code does not switch instruction sets: a target in the other one (bit
    // 0) goes to the dispatcher, so an entry of the other set never matches.
    let dispatch = a.label();
    if kind != Indirect::Dispatch {
        if thumb {
            a.tbz_to(T_ADDR, 0, dispatch);
        } else {
            a.tbnz_to(T_ADDR, 0, dispatch);
        }
    }
    if kind == Indirect::Return {
        let miss = a.label();
        indirect::pop_return(a, miss);
        a.bind(miss);
    }
    if kind != Indirect::Dispatch {
        let miss = a.label();
        indirect::lookup(a, miss);
        a.bind(miss);
    }
    a.bind(dispatch);
    a.put(enc::x_movn(T_FLAGS, 0, 0)); // NO_LINK
    a.put(enc::w_movz(T_OP2, EXIT_BX as u16, 0));
    a.b_abs(rt.epilogue);
}

/// An exit stub: guest PC, link site and reason into the scratch registers, then the
/// epilogue.
fn stub(a: &mut Asm, rt: &Runtime, pc: u32, site: Option<usize>, reason: u32) {
    mov32(a, T_ADDR, pc);
    match site {
        Some(s) => {
            let off = s as i64 - a.here() as i64;
            a.put(enc::adr(T_FLAGS, off));
        }
        None => a.put(enc::x_movn(T_FLAGS, 0, 0)), // NO_LINK
    }
    a.put(enc::w_movz(T_OP2, reason as u16, 0));
    a.b_abs(rt.epilogue);
}

impl CodeGen for A64Gen {
    fn supports(&self, insn: &Insn) -> bool {
        lower::supported(insn)
    }

    fn runtime(&self) -> (Vec<u8>, Runtime) {
        let mut a = Asm::new(0);
        // enter(x0 = state, x1 = code): save the callee-saved registers, load the guest.
        let prologue = a.here();
        a.put(enc::x_stp_pre(29, 30, SP, -FRAME));
        for (k, &(r1, r2)) in SAVED_PAIRS.iter().enumerate() {
            a.put(enc::x_stp(r1, r2, SP, 16 * (k as i32 + 1)));
        }
        a.put(enc::x_mov(STATE, 0));
        a.put(enc::x_mov(T_ADDR, 1));
        a.put(enc::ls_uimm(Ls::Ldr, T_OP2, STATE, OFF_NZCV));
        a.put(enc::msr_nzcv(T_OP2));
        a.put(enc::ls_uimm(Ls::LdrX, BUDGET, STATE, OFF_BUDGET));
        a.put(enc::ls_uimm(Ls::LdrX, RAS, STATE, OFF_RAS_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, IBTC, STATE, OFF_IBTC_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, RAS_TOP, STATE, OFF_RAS_TOP));
        for n in (0..14u8).step_by(2) {
            a.put(enc::w_ldp(n, n + 1, STATE, off_r(n) as i32));
        }
        a.put(enc::ls_uimm(Ls::Ldr, 14, STATE, off_r(14)));
        a.put(enc::br(T_ADDR));
        // Epilogue: w16 = next PC, x15 = link site, w17 = reason.
        let epilogue = a.here();
        a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, off_r(15)));
        a.put(enc::ls_uimm(Ls::Str, T_OP2, STATE, OFF_EXIT));
        a.put(enc::ls_uimm(Ls::StrX, T_FLAGS, STATE, OFF_LINK_SITE));
        for n in (0..14u8).step_by(2) {
            a.put(enc::w_stp(n, n + 1, STATE, off_r(n) as i32));
        }
        a.put(enc::ls_uimm(Ls::Str, 14, STATE, off_r(14)));
        a.put(enc::mrs_nzcv(T_ADDR));
        a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, OFF_NZCV));
        a.put(enc::ls_uimm(Ls::StrX, BUDGET, STATE, OFF_BUDGET));
        a.put(enc::ls_uimm(Ls::StrX, RAS_TOP, STATE, OFF_RAS_TOP));
        for (k, &(r1, r2)) in SAVED_PAIRS.iter().enumerate() {
            a.put(enc::x_ldp(r1, r2, SP, 16 * (k as i32 + 1)));
        }
        a.put(enc::x_ldp_post(29, 30, SP, FRAME));
        a.put(enc::RET);
        (a.finish(), Runtime { prologue, epilogue })
    }

    fn translate(&self, block: &GuestBlock, at: usize, rt: &Runtime) -> HostBlock {
        let mut a = Asm::new(at);
        let mut exits = Vec::new();
        let n = block.insns.len();
        let thumb = block.key.thumb;
        // Stubs are emitted after the body; remember what each needs.
        let mut stubs: Vec<Stub> = Vec::new();
        let mut insn_starts = Vec::with_capacity(n);
        for (k, gi) in block.insns.iter().enumerate() {
            let start = a.here();
            insn_starts.push((start - at) as u32);
            let pc_read = gi.pc.wrapping_add(if thumb { 4 } else { 8 });
            let next = gi.pc.wrapping_add(gi.insn.len as u32);
            // The return address a call writes to LR (Thumb: with bit 0 set).
            let lr = next | thumb as u32;
            let cond = gi.insn.cond;
            match gi.insn.op {
                Op::It { .. } => {} // its conditions are on the instructions it covers
                Op::B { off } | Op::Bl { off } => {
                    let target = pc_read.wrapping_add(off as u32);
                    let is_bl = matches!(gi.insn.op, Op::Bl { .. });
                    charge(&mut a, k + 1);
                    if cond < 14 {
                        let taken = a.label();
                        a.b_cond_to(cond, taken);
                        link(&mut a, &mut stubs, &mut exits, next);
                        a.bind(taken);
                    }
                    if is_bl {
                        mov32(&mut a, 14, lr);
                        let cont = a.label();
                        indirect::push_return(&mut a, 14, cont);
                        link(&mut a, &mut stubs, &mut exits, target);
                        // Where a matching return continues: a linkable exit to the
                        // instruction after the call.
                        a.bind(cont);
                        link(&mut a, &mut stubs, &mut exits, next);
                    } else {
                        link(&mut a, &mut stubs, &mut exits, target);
                    }
                }
                Op::Cbz { nonzero, rn, off } => {
                    charge(&mut a, k + 1);
                    let taken = a.label();
                    a.cbz_to(nonzero, rn, taken);
                    link(&mut a, &mut stubs, &mut exits, next);
                    a.bind(taken);
                    link(&mut a, &mut stubs, &mut exits, pc_read.wrapping_add(off));
                }
                Op::Bx { rm } | Op::Blx { rm } => {
                    charge(&mut a, k + 1);
                    let skip = a.label();
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    a.put(enc::w_mov(T_ADDR, rm));
                    if matches!(gi.insn.op, Op::Blx { .. }) {
                        mov32(&mut a, 14, lr);
                        let cont = a.label();
                        indirect::push_return(&mut a, 14, cont);
                        exit_bx(&mut a, rt, T_ADDR, Indirect::Jump, thumb);
                        a.bind(cont);
                        link(&mut a, &mut stubs, &mut exits, next);
                    } else {
                        let kind = if is_return(&gi.insn.op) {
                            Indirect::Return
                        } else {
                            Indirect::Jump
                        };
                        exit_bx(&mut a, rt, T_ADDR, kind, thumb);
                    }
                    a.bind(skip);
                    if cond < 14 {
                        link(&mut a, &mut stubs, &mut exits, next);
                    }
                }
                Op::BlxImm { off } => {
                    // Changes the instruction set: through the dispatcher. Conditional
                    // only in an IT block.
                    charge(&mut a, k + 1);
                    let skip = a.label();
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    let target = (pc_read & !3).wrapping_add(off as u32) | !thumb as u32;
                    mov32(&mut a, 14, lr);
                    mov32(&mut a, T_ADDR, target);
                    exit_bx(&mut a, rt, T_ADDR, Indirect::Dispatch, thumb);
                    a.bind(skip);
                    if cond < 14 {
                        link(&mut a, &mut stubs, &mut exits, next);
                    }
                }
                _ if gi.insn.info().control_flow => {
                    // An instruction that writes the PC: the access happens before the
                    // instruction is charged, so a fault in it is exact.
                    let skip = a.label();
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    let mut side = None;
                    let r = lower::writes_pc(&mut a, &gi.insn, pc_read, &mut side);
                    debug_assert_eq!(r, Lowered::Done, "{:?}", gi.insn);
                    if thumb && matches!(gi.insn.op, Op::Dp { .. }) {
                        // Thumb ALUWritePC is BranchWritePC: it stays in Thumb.
                        let (immr, imms) = enc::logic_imm32(1).expect("1 is a bitmask");
                        a.put(enc::w_logic_imm(enc::Logic::Orr, T_PCV, T_PCV, immr, imms));
                    }
                    charge(&mut a, k + 1);
                    let kind = if is_return(&gi.insn.op) {
                        Indirect::Return
                    } else {
                        Indirect::Jump
                    };
                    exit_bx(&mut a, rt, T_PCV, kind, thumb);
                    if let Some(l) = side {
                        stubs.push((l, gi.pc, StubKind::Side(start)));
                    }
                    a.bind(skip);
                    if cond < 14 {
                        charge(&mut a, k + 1);
                        link(&mut a, &mut stubs, &mut exits, next);
                    }
                }
                _ => {
                    let skip = a.label();
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    let mut side = None;
                    let r = lower::lower(&mut a, &gi.insn, pc_read, &mut side);
                    debug_assert_eq!(r, Lowered::Done, "{:?}", gi.insn);
                    if let Some(l) = side {
                        stubs.push((l, gi.pc, StubKind::Side(start)));
                    }
                    a.bind(skip);
                }
            }
        }
        match block.end {
            End::Branch => {}
            End::Next(pc) => {
                charge(&mut a, n);
                link(&mut a, &mut stubs, &mut exits, pc);
            }
            End::Fallback(pc) => {
                charge(&mut a, n);
                stub(&mut a, rt, pc, None, EXIT_FALLBACK);
            }
        }
        let mut e = 0;
        for (l, pc, kind) in stubs {
            a.bind(l);
            match kind {
                StubKind::Link(site) => {
                    exits[e].stub = a.here();
                    e += 1;
                    stub(&mut a, rt, pc, Some(site), EXIT_BRANCH);
                }
                StubKind::Side(start) => {
                    // As if the instruction's first access had faulted: the engine finds
                    // it in the side table and runs it in the interpreter.
                    mov32(&mut a, T_ADDR, pc);
                    let off = start as i64 - a.here() as i64;
                    a.put(enc::adr(T_FLAGS, off));
                    a.put(enc::w_movz(T_OP2, EXIT_SIDE as u16, 0));
                    a.b_abs(rt.epilogue);
                }
            }
        }
        HostBlock {
            code: a.finish(),
            exits,
            insn_starts,
        }
    }

    fn branch(&self, site: usize, target: usize) -> [u8; 4] {
        enc::b(target as i64 - site as i64).to_le_bytes()
    }
}
