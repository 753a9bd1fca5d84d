//! The privilege change of an exception entry from User mode (a system call) or of an
//! exception return to User mode, made without the dispatcher: once the inline code has
//! changed the guest `Cpu`'s state, a call to [`switch_privilege`] asks the engine
//! ([`SpaceSwitch::privilege`]) to load the host's shadow of the new privilege (the
//! guest's PL0 and PL1 permissions are two shadows, both run at host EL1: see the
//! dbt-runtime README) and the new translation context's return stack and target cache;
//! the code then reloads those tables' registers and continues at the vector or return
//! address through the new context's target cache. A block is only ever entered through
//! the tables of its own context, so User code never runs a PL1 block or the reverse. When
//! the engine declines (no such shadow yet, the FP unit's state changes, ...) or the
//! target cache misses, the code leaves to the dispatcher as before.

use super::super::asm::{Asm, Label};
use super::super::enc::{self, Ls};
use super::super::enc_alu;
use super::super::{IBTC, RAS, RAS_TOP, STATE, T_ADDR, T_RES};
use crate::translate::state::{
    off_r, GuestState, OFF_IBTC_BASE, OFF_NZCV, OFF_RAS_BASE, OFF_RAS_TOP,
};
use crate::translate::sys_call::CallCtx;

/// Emits the call of [`switch_privilege`] with the guest's registers and flags saved
/// around it (the `Cpu` already holds the new mode), then the return stack and target
/// cache registers of the (new) current context; goes to `declined` when the engine did
/// not switch (translated code must then leave to the dispatcher). Uses `T_ADDR` and
/// `T_RES`; the guest's R0-R14 and NZCV are as before.
pub fn call(a: &mut Asm, declined: Label) {
    for n in (0..14u8).step_by(2) {
        a.put(enc::w_stp(n, n + 1, STATE, off_r(n) as i32));
    }
    a.put(enc::ls_uimm(Ls::Str, 14, STATE, off_r(14)));
    // The return stack's top as an offset into its ring (kept across the switch).
    a.put(enc_alu::x_sub_reg(T_ADDR, RAS_TOP, RAS));
    a.put(enc::ls_uimm(Ls::StrX, T_ADDR, STATE, OFF_RAS_TOP));
    a.put(enc::mrs_nzcv(T_ADDR));
    a.put(enc::ls_uimm(Ls::Str, T_ADDR, STATE, OFF_NZCV));
    a.put(enc::x_mov(0, STATE));
    let f = switch_privilege as *const () as u64;
    a.put(enc::x_movz(T_ADDR, f as u16, 0));
    for hw in 1..4u8 {
        a.put(enc::x_movk(T_ADDR, (f >> (16 * hw)) as u16, hw));
    }
    a.put(enc::blr(T_ADDR));
    // `T_RES` is callee-saved in the host's procedure call standard.
    a.put(enc::x_mov(T_RES, 0));
    a.put(enc::ls_uimm(Ls::LdrX, RAS, STATE, OFF_RAS_BASE));
    a.put(enc::ls_uimm(Ls::LdrX, IBTC, STATE, OFF_IBTC_BASE));
    a.put(enc::ls_uimm(Ls::LdrX, RAS_TOP, STATE, OFF_RAS_TOP));
    a.put(enc_alu::x_add_reg(RAS_TOP, RAS, RAS_TOP));
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_NZCV));
    a.put(enc::msr_nzcv(T_ADDR));
    for n in (0..14u8).step_by(2) {
        a.put(enc::w_ldp(n, n + 1, STATE, off_r(n) as i32));
    }
    a.put(enc::ls_uimm(Ls::Ldr, 14, STATE, off_r(14)));
    a.cbz_to(false, T_RES, declined);
}

/// Called by translated code right after it changed the guest's privilege (the `Cpu`
/// holds the new mode): returns 1 when the engine switched the host's shadow and
/// `*state`'s return stack and target cache to the new privilege's (translated code goes
/// on), 0 when it did not (translated code leaves to the dispatcher).
///
/// # Safety
///
/// Called only by translated code, while the dispatcher is inside the code cache with
/// `state.link_site` pointing at a live [`CallCtx`] (as for
/// [`step_from_code`](crate::translate::sys_call::step_from_code)).
pub unsafe extern "C" fn switch_privilege(state: *mut GuestState) -> u64 {
    // SAFETY: translated code passes the dispatcher's GuestState, whose link_site holds
    // the CallCtx of this entry (see the function's contract); the CPU it points to is not
    // otherwise used while translated code runs.
    let (st, ctx) = unsafe {
        let ctx = (*state).link_site as *mut CallCtx<'_>;
        (&mut *state, &mut *ctx)
    };
    // SAFETY: as above.
    let cpu = unsafe { &*ctx.cpu };
    let Some(space) = ctx.space else {
        return 0;
    };
    let fp = super::super::vfp_host::fp_translatable(cpu);
    // SAFETY: the dispatcher's switch for this entry, alive while it runs translated
    // code (see the function's contract).
    unsafe { (*space).privilege(cpu, fp, st) as u64 }
}
