//! The target cache's miss path (part of the runtime, shared by every indirect branch):
//! before an indirect branch that missed leaves to the dispatcher, a branch to a page
//! whose fetch has a remembered Prefetch Abort verdict
//! ([`FetchAborts`](crate::translate::fetch_aborts::FetchAborts)) takes the abort from
//! translated code, and the code goes on at the vector's block through the target cache
//! (issue 17's `pabt` row: the dispatcher pass for the branch and the one for the vector,
//! about 700 host instructions per abort, are skipped).
//!
//! In [`T_ADDR`] the guest target with the instruction-set bit. Budget spent (or a host
//! interrupt's preemption), no table, or the target's page not in its entry: straight out
//! (an ordinary miss pays 9 instructions). Else the guest registers go to the state and
//! [`fetch_abort_remembered`] decides (a leaf: no frame, no calls), or where it would
//! sample the interrupt lines, [`fetch_abort_from_code`]; a declined abort leaves as before, a taken one
//! counts one instruction, clears the host's exclusive monitor (the guest's exception
//! entry clears its own) and looks the vector up in the target cache.
//!
//! Emitted inside the runtime's budget range (`Runtime::budget_from..budget_to`): the
//! budget register holds the running code's budget here, so a host interrupt's preemption
//! (`a64::preempt`) makes the code leave at the checks below, as in a block.

use super::asm::{Asm, Label};
use super::enc::{self, AddSub, Ls};
use super::enc_excl::CLREX;
use super::gen::{reload_after_call, save_before_call};
use super::indirect;
use super::{BUDGET, STATE, T_ADDR, T_FLAGS, T_OP2};
use crate::translate::fetch_aborts::{FetchAborts, Raised, ENTRY_INDEX_BITS, ENTRY_SIZE_LOG2};
use crate::translate::state::{off_r, GuestState, EXIT_BX, OFF_FETCH_ABORTS};
use crate::translate::sys_call::CallCtx;

/// Emits the miss path; `epilogue` is the runtime's epilogue (w16 = next PC, x15 = link
/// site, w17 = reason).
pub fn emit_indirect_miss(a: &mut Asm, epilogue: Label) {
    let leave = a.label();
    a.tbnz_to(BUDGET, 63, leave);
    // The entry of the target's page: page + 1 in its first word (a free entry: 0).
    a.put(enc::ls_uimm(Ls::LdrX, T_OP2, STATE, OFF_FETCH_ABORTS));
    a.cbz_to(false, T_OP2, leave);
    a.put(enc::x_ubfx(T_FLAGS, T_ADDR, 12, ENTRY_INDEX_BITS));
    a.put(enc::x_add_lsl(T_OP2, T_OP2, T_FLAGS, ENTRY_SIZE_LOG2));
    a.put(enc::ls_uimm(Ls::Ldr, T_OP2, T_OP2, 0));
    a.put(enc::x_ubfx(T_FLAGS, T_ADDR, 12, 20));
    a.put(enc::x_addsub_imm(AddSub::Add, T_FLAGS, T_FLAGS, 1));
    // EOR + CBNZ: the guest's NZCV is live in the host's flags.
    a.put(enc::x_eor_reg(T_FLAGS, T_FLAGS, T_OP2));
    a.cbnz_to(T_FLAGS, leave);
    // The call: the target in the state's r15, where the decision comes back.
    a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, off_r(15)));
    save_before_call(a, false);
    // First the leaf (no frame, no calls); where it would sample the interrupt lines
    // ([`Raised::Sample`]) the general function decides, on a second path.
    let decided = a.label();
    call(a, fetch_abort_remembered as *const () as u64);
    a.tbz_to(0, SAMPLE_BIT, decided);
    call(a, fetch_abort_from_code as *const () as u64);
    a.bind(decided);
    a.put(enc::w_mov(T_OP2, 0));
    // The abort's entry leaves the privilege, address space, DACR and FP access as they
    // were (User mode is declined): the same return stack and target cache.
    reload_after_call(a, false);
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, off_r(15)));
    a.cbz_to(false, T_OP2, leave);
    a.put(CLREX);
    a.put(enc::x_addsub_imm(AddSub::Sub, BUDGET, BUDGET, 1));
    indirect::lookup(a, T_ADDR, leave);
    a.bind(leave);
    a.put(enc::x_movn(T_FLAGS, 0, 0)); // NO_LINK
    a.put(enc::w_movz(T_OP2, EXIT_BX as u16, 0));
    a.b_to(epilogue);
}

/// The bit of the leaf's return value that only [`Raised::Sample`] sets.
const SAMPLE_BIT: u8 = (Raised::Sample as u32).trailing_zeros() as u8;
const _: () = {
    assert!(Raised::Sample as u32 == 1 << SAMPLE_BIT);
    assert!(Raised::Taken as u32 & 1 << SAMPLE_BIT == 0);
    assert!(Raised::Declined as u32 & 1 << SAMPLE_BIT == 0);
};

/// `BLR` to the host function at `f` with the state in `x0` (uses [`T_OP2`]).
fn call(a: &mut Asm, f: u64) {
    a.put(enc::x_mov(0, STATE));
    a.put(enc::x_movz(T_OP2, f as u16, 0));
    for hw in 1..4u8 {
        a.put(enc::x_movk(T_OP2, (f >> (16 * hw)) as u16, hw));
    }
    a.put(enc::blr(T_OP2));
}

/// The miss path's first call, a leaf: [`FetchAborts::raise_remembered`] for the running
/// engine's table and CPU (the miss path's filter found the table non-null); returns
/// its [`Raised`] value.
///
/// # Safety
///
/// As for [`fetch_abort_from_code`].
unsafe extern "C" fn fetch_abort_remembered(state: *mut GuestState) -> u32 {
    // SAFETY: the caller's contract.
    let st = unsafe { &mut *state };
    // SAFETY: the engine's table (non-null: the miss path compared its entry) and the
    // entry's CallCtx, alive while its translated code runs (the caller's contract); the
    // CPU is not otherwise in use.
    let (fa, cpu) = unsafe {
        let ctx = &mut *(st.link_site as *mut CallCtx<'_>);
        (&mut *(st.fetch_aborts as *mut FetchAborts), &mut *ctx.cpu)
    };
    fa.raise_remembered(cpu, st) as u32
}

/// Called by the miss path with the guest target in `state.r[15]` and the guest's r0-r14
/// and NZCV in `state`: [`FetchAborts::raise_from_code`] for the running engine's table
/// and CPU; returns 1 when the abort was taken (`state.r[15]` then holds the vector),
/// else 0.
///
/// # Safety
///
/// `state` is the [`GuestState`] of an engine whose translated code is running: its
/// `link_site` holds the entry's [`CallCtx`] and its `fetch_aborts` the engine's table,
/// neither otherwise in use during the call.
unsafe extern "C" fn fetch_abort_from_code(state: *mut GuestState) -> u32 {
    // SAFETY: the caller's contract.
    let st = unsafe { &mut *state };
    if st.fetch_aborts == 0 {
        return 0;
    }
    // SAFETY: the engine's table and the entry's CallCtx, alive while its translated code
    // runs (the caller's contract); the CPU is not otherwise in use.
    let (fa, cpu) = unsafe {
        let ctx = &mut *(st.link_site as *mut CallCtx<'_>);
        (&mut *(st.fetch_aborts as *mut FetchAborts), &mut *ctx.cpu)
    };
    fa.raise_from_code(cpu, st) as u32
}
