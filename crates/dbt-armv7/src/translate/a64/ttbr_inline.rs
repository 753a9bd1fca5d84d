//! `MCR p15, 0, Rt, c2, c0, 0/1` (`TTBR0`/`TTBR1`) at PL1 in a block of every address
//! space (`sys_call::IT_LEN_ANY_SPACE`) as a few host instructions when the guest uses
//! short descriptors (`TTBCR.EAE` = 0): the write changes the table base only, not the
//! ASID (`CONTEXTIDR` holds it), so the translation context (return stack, target cache)
//! and the host's shadow of the ASID stay the current ones, as the call path
//! (`sys_call::step_from_code`, `contexts::InBlockSwitch`) would find. Linux's
//! `cpu_v7_switch_mm` writes `TTBR0` after `CONTEXTIDR` on every process switch.
//!
//! What the write does, exactly as `Cp15::write` and `Cpu::apply` do it: the low word of
//! `Cp15::ttbr0`/`ttbr1` takes `Rt`, and the interpreter's TLB is flushed (a new
//! `Tlb::generation`). Everything else takes the call (the code below falls through to
//! it): `TTBCR.EAE` set (with LPAE the ASID may be in `TTBR0`), a TLB generation about to
//! wrap (the call's flush clears the entries), or a host that has not said its walks read
//! the table bases from the guest `Cpu` ([`GuestState::inline_ttbr`] 0: a host that
//! mirrors the guest's stage 1 must walk with the new base at its next fill; the DBT
//! runtime's shadow reads it there, and the dispatcher tells it the new registers at the
//! next entry, `Dbt`'s `host_mmu`).
//!
//! `MCR p15, 0, Rt, c13, c0, 1` (`CONTEXTIDR`) under the same conditions is the same
//! store, plus, with the MMU on, a switch to the new ASID's context through the switch
//! cache ([`switch::to_cached`]: the host's shadow of the ASID and the context's return
//! stack and target cache, which the engine and the host learn at their next use); the
//! call when the cache does not hold it. With the MMU off the ASID changes no context.
//!
//! [`GuestState::inline_ttbr`]: crate::translate::state::GuestState::inline_ttbr

pub mod switch;

use core::mem::offset_of;

use super::asm::{Asm, Label};
use super::cpu_fields::{self, cp15};
use super::enc::{self, AddSub, Ls};
use super::{STATE, T_ADDR, T_AMT, T_OP2, T_RES, T_TMP};
use crate::cp15::Cp15;
use crate::cpu::Cpu;
use crate::decode::{Insn, Op};
use crate::mmu::tlb::GENERATION_OFFSET;
use crate::translate::contexts::switch_cache::KEY_SPACE_LSB;
use crate::translate::state::{OFF_CUR_KEY, OFF_INLINE_TTBR};

/// `TTBCR.EAE`: the long-descriptor (LPAE) format.
const TTBCR_EAE_BIT: u8 = 31;

/// The `Cp15` field offset `insn` writes if it is `MCR p15, 0, Rt, c2, c0, 0/1` or
/// `MCR p15, 0, Rt, c13, c0, 1` with `Rt` one of `R0`-`R12` (as the call path's fast
/// form: `SP`/`LR`/`PC` go through the interpreter), and whether it is `CONTEXTIDR`.
fn ttbr_write(insn: &Insn) -> Option<(usize, u8, bool)> {
    let Op::Mcr {
        to_cp: true,
        cp: 15,
        opc1: 0,
        crn,
        crm: 0,
        opc2,
        rt,
    } = insn.op
    else {
        return None;
    };
    if rt >= 13 || insn.unpredictable {
        return None;
    }
    match (crn, opc2) {
        (2, 0) => Some((offset_of!(Cp15, ttbr0), rt, false)),
        (2, 1) => Some((offset_of!(Cp15, ttbr1), rt, false)),
        (13, 1) => Some((offset_of!(Cp15, contextidr), rt, true)),
        _ => None,
    }
}

/// For a `TTBR0`/`TTBR1`/`CONTEXTIDR` write at PL1 (`privileged`) in a block of every
/// address space (`any_space`; `flat`: fetched with the MMU off): emits the inline write,
/// which ends in a branch to the returned label, and leaves the assembler at the
/// fall-back path (the caller emits the call to the system model there, then binds the
/// label). `None` (nothing emitted) for anything else.
pub fn lower(
    a: &mut Asm,
    insn: &Insn,
    privileged: bool,
    any_space: bool,
    flat: bool,
) -> Option<Label> {
    if !privileged || !any_space {
        return None;
    }
    let (field, rt, contextidr) = ttbr_write(insn)?;
    let (slow, done) = (a.label(), a.label());
    // The host allows it (see the module doc).
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_INLINE_TTBR));
    a.cbz_to(false, T_ADDR, slow);
    cpu_fields::load_cpu(a, T_ADDR);
    // Short descriptors only.
    let ttbcr = cp15(offset_of!(Cp15, ttbcr));
    cpu_fields::access(a, Ls::Ldr, T_OP2, T_ADDR, ttbcr, T_OP2);
    a.tbnz_to(T_OP2, TTBCR_EAE_BIT, slow);
    // The interpreter's TLB flush: a new generation (0 after a wrap: the call).
    let generation = offset_of!(Cpu, tlb) + GENERATION_OFFSET;
    cpu_fields::access(a, Ls::Ldr, T_OP2, T_ADDR, generation, T_OP2);
    a.put(enc::w_addsub_imm(AddSub::Add, T_AMT, T_OP2, 1, false));
    a.cbz_to(false, T_AMT, slow);
    if contextidr && !flat {
        // The new ASID's context (`CONTEXTIDR` bits 7:0 with short descriptors).
        a.put(enc::ls_uimm(Ls::LdrX, T_RES, STATE, OFF_CUR_KEY));
        a.put(enc::x_bfi(T_RES, rt, KEY_SPACE_LSB, 8));
        switch::to_cached(a, T_RES, slow);
        cpu_fields::load_cpu(a, T_ADDR);
    }
    cpu_fields::access(a, Ls::Str, T_AMT, T_ADDR, generation, T_TMP);
    // The low word of a 64-bit field (little-endian), as `Cp15::write` sets it.
    cpu_fields::access(a, Ls::Str, rt, T_ADDR, cp15(field), T_TMP);
    a.b_to(done);
    a.bind(slow);
    Some(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_a32;

    #[test]
    fn only_ttbr_writes_from_low_registers() {
        // MCR p15, 0, r3, c2, c0, 0 / 1 (TTBR0 / TTBR1).
        assert!(ttbr_write(&decode_a32(0xee02_3f10)).is_some());
        assert!(ttbr_write(&decode_a32(0xee02_3f30)).is_some());
        // MCR p15, 0, r3, c13, c0, 1 (CONTEXTIDR).
        assert_eq!(ttbr_write(&decode_a32(0xee0d_3f30)).map(|w| w.2), Some(true));
        // TTBCR, an MRC of TTBR0, Rt = SP, TPIDRURW, an MRC of CONTEXTIDR.
        assert!(ttbr_write(&decode_a32(0xee02_3f50)).is_none());
        assert!(ttbr_write(&decode_a32(0xee12_3f10)).is_none());
        assert!(ttbr_write(&decode_a32(0xee02_df10)).is_none());
        assert!(ttbr_write(&decode_a32(0xee0d_3f50)).is_none());
        assert!(ttbr_write(&decode_a32(0xee1d_3f30)).is_none());
    }
}
