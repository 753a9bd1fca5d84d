//! [`A64Gen`]: the runtime (prologue/epilogue), block layout, exits and linking.

use alloc::vec::Vec;

use super::asm::{Asm, Label};
use super::enc::{self, Ls};
use super::enc_alu;
use super::indirect;
use super::lower::{self, Lowered};
use super::{
    BUDGET, IBTC, RAS, RAS_TOP, SP, STATE, T_ADDR, T_AMT, T_FLAGS, T_OP2, T_PCV, T_RES, T_TMP,
};
use crate::decode::{Insn, Op, VfpKind};
use crate::translate::backend::{CodeGen, ExitSite, HostBlock, Runtime};
use crate::translate::frontend::{End, GuestBlock};
use crate::translate::state::{
    off_r, EXIT_BRANCH, EXIT_FALLBACK, EXIT_SIDE, OFF_ADDR_HI, OFF_BUDGET, OFF_DAIF, OFF_EXIT,
    OFF_IBTC_BASE, OFF_LINK_SITE, OFF_NZCV, OFF_RAS_BASE, OFF_RAS_TOP,
};
use crate::translate::sys_call::{self, step_from_code, EXIT_CALL};

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

/// Loads a 32-bit constant into `Wd` in one instruction: `MOVZ`/`MOVN` when a half is
/// all zeros or all ones, else `LDR` of a literal placed after the block.
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
        a.ldr_lit32(rd, v);
    }
}

/// What an exit stub after the block body does.
#[derive(Clone, Copy)]
enum StubKind {
    /// A linkable direct exit whose branch is at this cache offset.
    Link(usize),
    /// A direct exit that is not linked (the budget ran out on a loop's back-edge).
    Plain,
    /// A side exit of the instruction whose host code starts at this cache offset.
    Side(usize),
    /// A linkable exit out of the body after this many guest instructions (a loop's
    /// exit from an unrolled copy), placed after the body.
    Exit(usize),
    /// The exit after a call into the system model that asked to leave, with this many
    /// guest instructions before the called one.
    CallExit(usize),
    /// The budget ran out at a conditional back-edge: `B.cond taken`, else `B not_taken`
    /// (both exit stubs).
    Slow {
        cond: u8,
        taken: Label,
        not_taken: Label,
    },
}

/// An exit stub to emit after the block body: its label, guest PC and kind.
type Stub = (Label, u32, StubKind);

/// A linkable exit to guest `target`: leave when the budget cannot cover another block,
/// else take the branch at `site` (to the stub until linked). Returns the stub's label.
fn link(a: &mut Asm, stubs: &mut Vec<Stub>, exits: &mut Vec<ExitSite>, target: u32) -> Label {
    let s = a.label();
    a.tbnz_to(BUDGET, 63, s);
    link_site(a, stubs, exits, target, s)
}

/// A linkable exit whose budget check was made before (or is made by whoever jumps
/// here: a return through the shadow return stack checks it).
fn link_unchecked(
    a: &mut Asm,
    stubs: &mut Vec<Stub>,
    exits: &mut Vec<ExitSite>,
    target: u32,
) -> Label {
    let s = a.label();
    link_site(a, stubs, exits, target, s)
}

fn link_site(
    a: &mut Asm,
    stubs: &mut Vec<Stub>,
    exits: &mut Vec<ExitSite>,
    target: u32,
    s: Label,
) -> Label {
    let site = a.here();
    a.b_to(s);
    stubs.push((s, target, StubKind::Link(site)));
    exits.push(ExitSite {
        site,
        stub: 0,
        target,
    });
    s
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
    /// Another indirect branch (and a change of instruction set): the target cache.
    Jump,
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
/// cache has the target; otherwise the dispatcher takes over. Both hold targets with the
/// instruction-set bit, so a hit may change the instruction set: every exit of translated
/// code tells the dispatcher which one it is in.
fn exit_bx(a: &mut Asm, rt: &Runtime, src: u8, kind: Indirect) {
    let src = if [T_RES, T_AMT, T_TMP].contains(&src) {
        a.put(enc::w_mov(T_ADDR, src));
        T_ADDR
    } else {
        src
    };
    if kind == Indirect::Return {
        let miss = a.label();
        indirect::pop_return(a, src, miss);
        a.bind(miss);
    }
    let miss = a.label();
    indirect::lookup(a, src, miss);
    a.bind(miss);
    if src != T_ADDR {
        a.put(enc::w_mov(T_ADDR, src));
    }
    // A remembered Prefetch Abort there is taken, else the dispatcher takes over.
    a.b_abs(rt.indirect_miss);
}

/// Updates [`Asm::aligned`] after `insn` (which started with `before` known): a
/// register it writes is known word-aligned afterwards only when the result provably is
/// (a multiple of 4 added to an aligned register, a move of one, an `LDM`/`STM`
/// writeback); a conditional instruction adds no knowledge, since it may not run.
fn track_alignment(a: &mut Asm, insn: &Insn, before: u16) {
    use crate::decode::{DpOp, Operand2, Shift};
    let writes = insn.info().writes & 0x7fff;
    let known = |r: u8| r < 15 && before & (1 << r) != 0;
    let mut keep = 0u16;
    match insn.op {
        Op::Dp {
            op: DpOp::Add | DpOp::Sub,
            rd,
            rn,
            op2: Operand2::Imm { value, .. },
            ..
        } if known(rn) && value % 4 == 0 => keep |= 1 << rd,
        Op::Dp {
            op: DpOp::Mov,
            rd,
            op2:
                Operand2::ShiftImm {
                    rm,
                    shift: Shift::Lsl,
                    amount: 0,
                },
            ..
        } if known(rm) => keep |= 1 << rd,
        Op::Multi {
            rn,
            list,
            wback: true,
            ..
        } if known(rn) && list & (1 << rn) == 0 => keep |= 1 << rn,
        _ => {}
    }
    let checked = a.aligned & !before;
    a.aligned = if insn.cond < 14 {
        before & !writes
    } else {
        (before & !writes) | (keep & writes & 0x7fff) | (checked & !writes)
    };
    // The base an LDM/STM with writeback checked stays aligned (it moves by 4n).
    if let Op::Multi {
        rn,
        list,
        wback: true,
        ..
    } = insn.op
    {
        if insn.cond >= 14 && checked & (1 << rn) != 0 && list & (1 << rn) == 0 {
            a.aligned |= 1 << rn;
        }
    }
}

/// Calls [`step_from_code`] for the instruction at `pc` (`it_len`: its ITSTATE, length
/// and instruction set; `raw`: its encoding) with the guest registers and NZCV stored in the state, then reloads them; goes
/// to `out` when the call asks to leave. Around an address-space switch that the block
/// survives (`IT_LEN_ANY_SPACE` and [`sys_call::switches_in_block`]) the return stack and
/// target cache registers go through the state too (the call may install another
/// context's).
fn call_system(a: &mut Asm, pc: u32, it_len: u32, raw: u32, out: Label) {
    let switches = it_len & sys_call::IT_LEN_ANY_SPACE != 0 && sys_call::switches_in_block(raw);
    save_before_call(a, switches);
    a.put(enc::x_mov(0, STATE));
    mov32(a, 1, pc);
    mov32(a, 2, it_len);
    mov32(a, 3, raw);
    let f = step_from_code as *const () as u64;
    a.put(enc::x_movz(T_ADDR, f as u16, 0));
    for hw in 1..4u8 {
        a.put(enc::x_movk(T_ADDR, (f >> (16 * hw)) as u16, hw));
    }
    a.put(enc::blr(T_ADDR));
    a.cbnz_to(0, out);
    reload_after_call(a, switches);
}

/// Before a call from translated code that may read or change the guest registers and
/// NZCV in the state: R0-R14, with `save_top` the return stack top as an offset into its
/// ring (as the epilogue keeps it: the call may install another ring), then NZCV. Uses
/// `T_ADDR`.
pub(super) fn save_before_call(a: &mut Asm, save_top: bool) {
    for n in (0..14u8).step_by(2) {
        a.put(enc::w_stp(n, n + 1, STATE, off_r(n) as i32));
    }
    a.put(enc::ls_uimm(Ls::Str, 14, STATE, off_r(14)));
    if save_top {
        a.put(enc_alu::x_sub_reg(T_ADDR, RAS_TOP, RAS));
        a.put(enc::ls_uimm(Ls::StrX, T_ADDR, STATE, OFF_RAS_TOP));
    }
    a.put(enc::mrs_nzcv(T_ADDR));
    a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, OFF_NZCV));
}

/// After a call from translated code that may have changed the guest registers and NZCV
/// in the state (`step_from_code`, `switch_privilege`): with `reload_tables` (the call
/// may have installed another context's return stack and target cache) first the
/// return stack, target cache and return stack top registers (the top was stored as an
/// offset into the ring), then NZCV and R0-R14. Uses `T_ADDR`.
pub(super) fn reload_after_call(a: &mut Asm, reload_tables: bool) {
    // An interrupt taken inside the call found the host's code, not translated code: it
    // left IRQ masked with the line raised. Unmasked again, it is taken here, where it
    // makes the block leave (`a64::preempt`).
    host_daif(a, T_ADDR, enc::msr_daif(T_ADDR));
    if reload_tables {
        a.put(enc::ls_uimm(Ls::LdrX, RAS, STATE, OFF_RAS_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, IBTC, STATE, OFF_IBTC_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, RAS_TOP, STATE, OFF_RAS_TOP));
        a.put(enc_alu::x_add_reg(RAS_TOP, RAS, RAS_TOP));
    }
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_NZCV));
    a.put(enc::msr_nzcv(T_ADDR));
    for n in (0..14u8).step_by(2) {
        a.put(enc::w_ldp(n, n + 1, STATE, off_r(n) as i32));
    }
    a.put(enc::ls_uimm(Ls::Ldr, 14, STATE, off_r(14)));
}

/// `msr` (an `MSR DAIF` or `DAIFSet` instruction) when the host gave interrupt masks
/// for translated code ([`GuestState::daif`](crate::translate::GuestState) non-zero,
/// loaded into scratch register `t`), else nothing: 3 instructions.
fn host_daif(a: &mut Asm, t: u8, msr: u32) {
    let skip = a.label();
    a.put(enc::ls_uimm(Ls::Ldr, t, STATE, OFF_DAIF));
    a.cbz_to(false, t, skip);
    a.put(msr);
    a.bind(skip);
}

/// Whether the not-taken path of `op` (with condition `cond`) goes on to the next
/// instruction.
fn falls_through(op: &Op, cond: u8) -> bool {
    cond < 14 || matches!(op, Op::Cbz { .. })
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
        lower::supported(insn) || sys_call::callable(insn) || super::exception::handles(insn)
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
        super::cpu_fields::load_cpu_reg(&mut a);
        super::vfp::enter_code(&mut a);
        a.put(enc::x_mov(T_ADDR, 1));
        a.put(enc::ls_uimm(Ls::Ldr, T_OP2, STATE, OFF_NZCV));
        a.put(enc::msr_nzcv(T_OP2));
        a.put(enc::ls_uimm(Ls::LdrX, BUDGET, STATE, OFF_BUDGET));
        let budget_from = a.here();
        // The host's interrupt masks for translated code, if it gave any: an interrupt
        // from here on finds the budget in its register (`a64::preempt`).
        host_daif(&mut a, T_OP2, enc::msr_daif(T_OP2));
        a.put(enc::ls_uimm(Ls::LdrX, RAS, STATE, OFF_RAS_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, IBTC, STATE, OFF_IBTC_BASE));
        a.put(enc::ls_uimm(Ls::LdrX, RAS_TOP, STATE, OFF_RAS_TOP));
        // Translated code keeps the return stack's top as a pointer.
        a.put(enc_alu::x_add_reg(RAS_TOP, RAS, RAS_TOP));
        for n in (0..14u8).step_by(2) {
            a.put(enc::w_ldp(n, n + 1, STATE, off_r(n) as i32));
        }
        a.put(enc::ls_uimm(Ls::Ldr, 14, STATE, off_r(14)));
        a.put(enc::br(T_ADDR));
        // The target cache's miss path (inside the budget range, as a block is).
        let indirect_miss = a.here();
        let to_epilogue = a.label();
        super::fetch_abort_call::emit_indirect_miss(&mut a, to_epilogue);
        // Epilogue: w16 = next PC, x15 = link site, w17 = reason.
        a.bind(to_epilogue);
        let epilogue = a.here();
        // IRQ and FIQ masked again (if the prologue unmasked them) before the budget is
        // stored.
        host_daif(&mut a, T_TMP, enc::MSR_DAIFSET_IF);
        super::vfp::leave_code(&mut a);
        a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, off_r(15)));
        a.put(enc::ls_uimm(Ls::Str, T_OP2, STATE, OFF_EXIT));
        a.put(enc::ls_uimm(Ls::StrX, T_FLAGS, STATE, OFF_LINK_SITE));
        a.put(enc::x_ubfx(T_OP2, T_ADDR, 32, 32));
        a.put(enc::ls_uimm(Ls::Str, T_OP2, STATE, OFF_ADDR_HI));
        for n in (0..14u8).step_by(2) {
            a.put(enc::w_stp(n, n + 1, STATE, off_r(n) as i32));
        }
        a.put(enc::ls_uimm(Ls::Str, 14, STATE, off_r(14)));
        a.put(enc::mrs_nzcv(T_ADDR));
        a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, OFF_NZCV));
        a.put(enc::ls_uimm(Ls::StrX, BUDGET, STATE, OFF_BUDGET));
        let budget_to = a.here();
        a.put(enc_alu::x_sub_reg(RAS_TOP, RAS_TOP, RAS));
        a.put(enc::ls_uimm(Ls::StrX, RAS_TOP, STATE, OFF_RAS_TOP));
        for (k, &(r1, r2)) in SAVED_PAIRS.iter().enumerate() {
            a.put(enc::x_ldp(r1, r2, SP, 16 * (k as i32 + 1)));
        }
        a.put(enc::x_ldp_post(29, 30, SP, FRAME));
        a.put(enc::RET);
        (
            a.finish(),
            Runtime {
                prologue,
                epilogue,
                budget_from,
                budget_to,
                indirect_miss,
            },
        )
    }

    fn translate(&self, block: &GuestBlock, at: usize, rt: &Runtime) -> HostBlock {
        let mut a = Asm::new(at);
        let mut exits = Vec::new();
        let n = block.insns.len();
        let thumb = block.key.thumb;
        // Stubs are emitted after the body; remember what each needs.
        let mut stubs: Vec<Stub> = Vec::new();
        let mut insn_starts = Vec::with_capacity(n);
        a.strict_align = block.strict_align;
        let head = a.label();
        a.bind(head);
        // Whether the block's end was made by its last instruction (a loop's back-edge).
        let mut end_done = false;
        for (k, gi) in block.insns.iter().enumerate() {
            let start = a.here();
            insn_starts.push((start - at) as u32);
            let pc_read = gi.pc.wrapping_add(if thumb { 4 } else { 8 });
            let next = gi.pc.wrapping_add(gi.insn.len as u32);
            // The return address a call writes to LR (Thumb: with bit 0 set).
            let lr = next | thumb as u32;
            let cond = gi.insn.cond;
            // Advanced SIMD data processing may keep the host FPCR at the standard value
            // for the next such instruction; anything else gets the guest's controls back.
            a.unconditional = cond >= 14;
            let neon = matches!(
                gi.insn.op,
                Op::Vfp {
                    kind: VfpKind::NeonDataProc,
                    ..
                }
            );
            if !neon || cond < 14 {
                super::vfp::guest_fpcr(&mut a);
            }
            // A conditional branch does not end the block: when it is not taken, the
            // block goes on with the next instruction (and charges it at a later exit).
            let skip = a.label();
            let aligned_before = a.aligned;
            match gi.insn.op {
                Op::It { .. } => {} // its conditions are on the instructions it covers
                Op::B { off } | Op::Bl { off } => {
                    let target = pc_read.wrapping_add(off as u32);
                    let is_bl = matches!(gi.insn.op, Op::Bl { .. });
                    let self_loop = !is_bl && target == block.key.pc;
                    if self_loop && cond < 14 && k + 1 == n && block.end == End::Next(next) {
                        // A loop's back-edge that ends the block: one budget check for
                        // both ways, and the loop branches straight to its head.
                        charge(&mut a, k + 1);
                        let slow = a.label();
                        a.tbnz_to(BUDGET, 63, slow);
                        a.b_cond_to(cond, head);
                        let not_taken = link_unchecked(&mut a, &mut stubs, &mut exits, next);
                        let taken = a.label();
                        stubs.push((taken, target, StubKind::Plain));
                        stubs.push((
                            slow,
                            0,
                            StubKind::Slow {
                                cond,
                                taken,
                                not_taken,
                            },
                        ));
                        end_done = true;
                        continue;
                    }
                    if !is_bl && cond < 14 && block.insns.get(k + 1).is_some_and(|g| g.pc == target)
                    {
                        // The block goes on at the target (an unrolled loop): the
                        // fall-through is the exit, out of the body.
                        let out = a.label();
                        a.b_cond_to(cond ^ 1, out);
                        stubs.push((out, next, StubKind::Exit(k + 1)));
                        a.bind(skip);
                        continue;
                    }
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    charge(&mut a, k + 1);
                    if is_bl {
                        mov32(&mut a, 14, lr);
                        let cont = a.label();
                        indirect::push_return(&mut a, 14, cont);
                        link(&mut a, &mut stubs, &mut exits, target);
                        // Where a matching return continues (the return checked the
                        // budget): a linkable exit to the instruction after the call.
                        a.bind(cont);
                        link_unchecked(&mut a, &mut stubs, &mut exits, next);
                    } else if self_loop {
                        let out = a.label();
                        stubs.push((out, target, StubKind::Plain));
                        a.tbnz_to(BUDGET, 63, out);
                        a.b_to(head);
                    } else {
                        link(&mut a, &mut stubs, &mut exits, target);
                    }
                }
                Op::Cbz { nonzero, rn, off } => {
                    a.cbz_to(!nonzero, rn, skip);
                    charge(&mut a, k + 1);
                    link(&mut a, &mut stubs, &mut exits, pc_read.wrapping_add(off));
                }
                Op::Bx { rm } | Op::Blx { rm } => {
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    charge(&mut a, k + 1);
                    if matches!(gi.insn.op, Op::Blx { .. }) {
                        // The target before LR is written (BLX LR).
                        let src = if rm == 14 {
                            a.put(enc::w_mov(T_ADDR, rm));
                            T_ADDR
                        } else {
                            rm
                        };
                        mov32(&mut a, 14, lr);
                        let cont = a.label();
                        indirect::push_return(&mut a, 14, cont);
                        exit_bx(&mut a, rt, src, Indirect::Jump);
                        a.bind(cont);
                        link_unchecked(&mut a, &mut stubs, &mut exits, next);
                    } else {
                        let kind = if is_return(&gi.insn.op) {
                            Indirect::Return
                        } else {
                            Indirect::Jump
                        };
                        exit_bx(&mut a, rt, rm, kind);
                    }
                }
                Op::BlxImm { off } => {
                    // A call that changes the instruction set (Thumb C code calling an
                    // A32 routine: glibc's string functions, its ifunc PLT stubs): as
                    // `BLX` register, a return-stack push and a target-cache lookup (a
                    // hit enters the other set's block; the dispatcher fills the entry
                    // on a miss), so neither the call nor its return leaves the code
                    // cache. Conditional only in an IT block.
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    charge(&mut a, k + 1);
                    let target = (pc_read & !3).wrapping_add(off as u32) | !thumb as u32;
                    mov32(&mut a, 14, lr);
                    mov32(&mut a, T_ADDR, target);
                    let cont = a.label();
                    indirect::push_return(&mut a, 14, cont);
                    exit_bx(&mut a, rt, T_ADDR, Indirect::Jump);
                    a.bind(cont);
                    link_unchecked(&mut a, &mut stubs, &mut exits, next);
                }
                _ if super::exception::handles(&gi.insn) => {
                    // Exception entry or return, inline (or a side exit).
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    let mut link_to = |a: &mut Asm, target: u32| {
                        charge(a, k + 1);
                        link(a, &mut stubs, &mut exits, target);
                    };
                    let side = super::exception::lower(
                        &mut a,
                        rt,
                        block,
                        &gi.insn,
                        gi.pc,
                        gi.it,
                        k + 1,
                        &mut link_to,
                    );
                    stubs.push((side, gi.pc, StubKind::Side(start)));
                }
                _ if gi.insn.info().control_flow => {
                    // An instruction that writes the PC: the access happens before the
                    // instruction is charged, so a fault in it is exact.
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
                    exit_bx(&mut a, rt, T_PCV, kind);
                    if let Some(l) = side {
                        stubs.push((l, gi.pc, StubKind::Side(start)));
                    }
                }
                _ => {
                    if cond < 14 {
                        a.b_cond_to(cond ^ 1, skip);
                    }
                    let mark = a.mark();
                    let mut side = None;
                    let r = if block.wraps.contains(&gi.pc) {
                        lower::lower_wrapping(&mut a, &gi.insn, pc_read, &mut side)
                    } else {
                        lower::lower(&mut a, &gi.insn, pc_read, &mut side)
                    };
                    if r == Lowered::Done {
                        if let Some(l) = side {
                            stubs.push((l, gi.pc, StubKind::Side(start)));
                        }
                    } else {
                        // Not lowered (what it emitted is dropped), but neither a branch
                        // nor a memory access (the front end asked `supports`): a call
                        // into the system model (`sys_call`), in the block.
                        debug_assert!(sys_call::callable(&gi.insn), "{:?}", gi.insn);
                        a.reset(mark);
                        if !super::cp15_inline::lower(&mut a, &gi.insn, block.key.privileged)
                            && !super::psr_inline::lower(&mut a, &gi.insn)
                        {
                            let out = a.label();
                            let it_len = gi.it as u32
                                | (gi.insn.len as u32) << 8
                                | if thumb { sys_call::IT_LEN_THUMB } else { 0 }
                                | if crate::translate::engine::any_space(block.key) {
                                    sys_call::IT_LEN_ANY_SPACE
                                } else {
                                    0
                                };
                            // TTBR0/TTBR1 writes inline where they may be, the call
                            // as their fall-back.
                            let inline = super::ttbr_inline::lower(
                                &mut a,
                                &gi.insn,
                                block.key.privileged,
                                it_len & sys_call::IT_LEN_ANY_SPACE != 0,
                                block.key.asid == crate::translate::engine::SPACE_FLAT,
                            );
                            call_system(&mut a, gi.pc, it_len, gi.insn.raw, out);
                            if let Some(done) = inline {
                                a.bind(done);
                            }
                            stubs.push((out, gi.pc, StubKind::CallExit(k)));
                        }
                    }
                }
            }
            a.bind(skip);
            track_alignment(&mut a, &gi.insn, aligned_before);
        }
        super::vfp::guest_fpcr(&mut a);
        match block.end {
            _ if end_done => {}
            End::Branch => {
                // The front end ends a block only at a branch that is always taken; a
                // conditional one at the end still gets its fall-through exit.
                if let Some(last) = block.insns.last() {
                    if falls_through(&last.insn.op, last.insn.cond) {
                        charge(&mut a, n);
                        link(&mut a, &mut stubs, &mut exits, block.guest_end());
                    }
                }
            }
            End::Next(pc) => {
                charge(&mut a, n);
                link(&mut a, &mut stubs, &mut exits, pc);
            }
            End::Fallback(pc) => {
                charge(&mut a, n);
                stub(&mut a, rt, pc | thumb as u32, None, EXIT_FALLBACK);
            }
        }
        let mut e = 0;
        let mut i = 0;
        // Exits out of the body add stubs of their own, after the others.
        while let Some(&(l, pc, kind)) = stubs.get(i) {
            i += 1;
            a.bind(l);
            if let StubKind::Exit(count) = kind {
                charge(&mut a, count);
                link(&mut a, &mut stubs, &mut exits, pc);
                continue;
            }
            if let StubKind::CallExit(count) = kind {
                charge(&mut a, count);
                a.put(enc::x_movn(T_FLAGS, 0, 0)); // NO_LINK
                a.put(enc::w_movz(T_OP2, EXIT_CALL as u16, 0));
                a.b_abs(rt.epilogue);
                continue;
            }
            let pc = pc | thumb as u32;
            match kind {
                StubKind::Exit(_) | StubKind::CallExit(_) => unreachable!(),
                StubKind::Link(site) => {
                    exits[e].stub = a.here();
                    e += 1;
                    stub(&mut a, rt, pc, Some(site), EXIT_BRANCH);
                }
                StubKind::Plain => stub(&mut a, rt, pc, None, EXIT_BRANCH),
                StubKind::Slow {
                    cond,
                    taken,
                    not_taken,
                } => {
                    a.b_cond_to(cond, taken);
                    a.b_to(not_taken);
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
