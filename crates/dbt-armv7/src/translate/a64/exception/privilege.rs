//! The privilege change of an exception entry from User mode (a system call) or of an
//! exception return to User mode, made without the dispatcher: once the inline code has
//! changed the guest `Cpu`'s state, the code switches to the new privilege's translation
//! context itself when the switch cache holds it (`contexts::switch_cache`: the host's
//! shadow of the new privilege, its return stack and target cache; the guest's PL0 and
//! PL1 permissions are two shadows, both run at host EL1: see the dbt-runtime README),
//! else a call to [`switch_privilege`] asks the engine ([`SpaceSwitch::privilege`]) for
//! the same (and the cache learns it); the code then continues at the vector or return
//! address through the new context's target cache. A block is only ever entered through
//! the tables of its own context, so User code never runs a PL1 block or the reverse. When
//! the engine declines (no such shadow yet, the FP unit's state changes, ...) or the
//! target cache misses, the code leaves to the dispatcher as before.
//!
//! [`SpaceSwitch::privilege`]: crate::translate::sys_call::SpaceSwitch::privilege

use core::mem::offset_of;

use super::super::asm::{Asm, Label};
use super::super::cpu_fields::{self, cp15};
use super::super::enc::{self, Logic, Ls};
use super::super::gen::{reload_after_call, save_before_call};
use super::super::ttbr_inline::switch;
use super::super::{STATE, T_ADDR, T_RES};
use crate::cp15::Cp15;
use crate::translate::contexts::switch_cache::KEY_PRIVILEGED;
use crate::translate::state::{GuestState, OFF_CUR_KEY};
use crate::translate::sys_call::CallCtx;

// `EOR Xd, Xn, #KEY_PRIVILEGED` below is the logical immediate of one bit (`imms` 0,
// 64-bit element) rotated right by 63, to bit 1.
const _: () = assert!(KEY_PRIVILEGED == 1 << 1);

/// Emits the switch to the new privilege's context (the `Cpu` already holds the new
/// mode) through the switch cache, when it holds the context of the other privilege
/// with the current address space, `DACR` and FP state (the FP state is the same at both
/// privileges unless `CPACR.cp10` is `0b01`, PL1 only); falls through when switched, else
/// goes to `miss` with nothing changed (then [`call`]). Uses `T_ADDR`, `T_OP2`, `T_TMP`
/// and `T_RES`; the guest's R0-R14 and NZCV are as before.
pub fn cached(a: &mut Asm, miss: Label) {
    let same_fp = a.label();
    a.put(enc::ls_uimm(Ls::LdrX, T_RES, STATE, OFF_CUR_KEY));
    a.put(enc::x_logic_imm(Logic::Eor, T_RES, T_RES, true, 63, 0));
    // CPACR.cp10 (bits 21:20) = 0b01: to `miss`.
    cpu_fields::field(a, Ls::Ldr, T_ADDR, cp15(offset_of!(Cp15, cpacr)));
    a.tbnz_to(T_ADDR, 21, same_fp);
    a.tbnz_to(T_ADDR, 20, miss);
    a.bind(same_fp);
    switch::to_cached(a, T_RES, miss);
}

/// Emits the call of [`switch_privilege`] (after [`cached`] missed) with the guest's
/// registers and flags saved around it, then the return stack and target cache
/// registers of the (new) current context; goes to `declined` when the engine did not
/// switch (translated code must then leave to the dispatcher). Uses `T_ADDR` and
/// `T_RES`; the guest's R0-R14 and NZCV are as before.
pub fn call(a: &mut Asm, declined: Label) {
    save_before_call(a, true);
    a.put(enc::x_mov(0, STATE));
    let f = switch_privilege as *const () as u64;
    a.put(enc::x_movz(T_ADDR, f as u16, 0));
    for hw in 1..4u8 {
        a.put(enc::x_movk(T_ADDR, (f >> (16 * hw)) as u16, hw));
    }
    a.put(enc::blr(T_ADDR));
    // `T_RES` is callee-saved in the host's procedure call standard.
    a.put(enc::x_mov(T_RES, 0));
    reload_after_call(a, true);
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
