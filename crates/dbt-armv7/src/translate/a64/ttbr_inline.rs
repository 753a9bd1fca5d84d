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
//! With LPAE (`TTBCR.EAE` = 1) and the ASID in `TTBR0` (`TTBCR.A1` = 0, as Linux's
//! `armmp-lpae` kernels have it), `MCRR p15, 0/1, Rt, Rt2, c2` is the same: `TTBR1` a
//! store, `TTBR0` (Linux's `cpu_v7_switch_mm`: the table and the ASID in one write) a
//! store and the switch to the ASID in bits 55:48; the host's walks read both registers
//! from the guest `Cpu` as for short descriptors.
//!
//! [`GuestState::inline_ttbr`]: crate::translate::state::GuestState::inline_ttbr

pub mod switch;

use core::mem::offset_of;

use super::asm::{Asm, Label};
use super::cpu_fields::{self, cp15};
use super::enc::{self, AddSub, Logic, Ls};
use super::{STATE, T_ADDR, T_AMT, T_OP2, T_RES, T_TMP};
use crate::cp15::Cp15;
use crate::cpu::Cpu;
use crate::decode::{Insn, Op};
use crate::mmu::tlb::GENERATION_OFFSET;
use crate::translate::contexts::switch_cache::KEY_SPACE_LSB;
use crate::translate::state::{OFF_CUR_KEY, OFF_INLINE_TTBR};

/// `TTBCR.EAE`: the long-descriptor (LPAE) format.
const TTBCR_EAE_BIT: u8 = 31;

/// Where a write inlined here takes the new ASID from (with the MMU on it selects the
/// new ASID's context through the switch cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AsidFrom {
    /// Not an ASID write (`TTBR0`/`TTBR1` with short descriptors, LPAE `TTBR1` with
    /// `TTBCR.A1` = 0).
    None,
    /// `CONTEXTIDR` bits 7:0 (short descriptors).
    Contextidr,
    /// LPAE `TTBR0` bits 55:48 (`TTBCR.A1` = 0): `Rt2` bits 23:16.
    Ttbr0High,
}

/// A translation-register write that may be inlined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Write {
    /// The `Cp15` field's offset.
    field: usize,
    /// The register of its low word (`R0`-`R12`).
    rt: u8,
    /// The register of its high word (`MCRR`: LPAE only).
    rt2: Option<u8>,
    /// Where its ASID is.
    asid: AsidFrom,
}

/// The write `insn` is if it is `MCR p15, 0, Rt, c2, c0, 0/1` (`TTBR0`/`TTBR1`), `MCR
/// p15, 0, Rt, c13, c0, 1` (`CONTEXTIDR`) or `MCRR p15, 0/1, Rt, Rt2, c2` (64-bit
/// `TTBR0`/`TTBR1`) with `Rt` and `Rt2` among `R0`-`R12` (as the call path's fast form:
/// `SP`/`LR`/`PC` go through the interpreter).
fn ttbr_write(insn: &Insn) -> Option<Write> {
    if insn.unpredictable {
        return None;
    }
    let w = match insn.op {
        Op::Mcr {
            to_cp: true,
            cp: 15,
            opc1: 0,
            crn,
            crm: 0,
            opc2,
            rt,
        } => {
            let (field, asid) = match (crn, opc2) {
                (2, 0) => (offset_of!(Cp15, ttbr0), AsidFrom::None),
                (2, 1) => (offset_of!(Cp15, ttbr1), AsidFrom::None),
                (13, 1) => (offset_of!(Cp15, contextidr), AsidFrom::Contextidr),
                _ => return None,
            };
            Write {
                field,
                rt,
                rt2: None,
                asid,
            }
        }
        Op::Mcrr {
            to_cp: true,
            cp: 15,
            opc1,
            crm: 2,
            rt,
            rt2,
        } if rt2 < 13 => {
            let (field, asid) = match opc1 {
                0 => (offset_of!(Cp15, ttbr0), AsidFrom::Ttbr0High),
                1 => (offset_of!(Cp15, ttbr1), AsidFrom::None),
                _ => return None,
            };
            Write {
                field,
                rt,
                rt2: Some(rt2),
                asid,
            }
        }
        _ => return None,
    };
    (w.rt < 13).then_some(w)
}

/// `TTBCR.A1`: with LPAE, the ASID is `TTBR1`'s.
const TTBCR_A1_BIT: u8 = 22;

/// The bits of a 64-bit `TTBR` write's high word that `Cp15::write64` keeps.
const TTBR_HIGH_KEPT: u32 = 0x00ff_00ff;

/// For a `TTBR0`/`TTBR1`/`CONTEXTIDR` write at PL1 (`privileged`) in a block of every
/// address space (`any_space`; `flat`: fetched with the MMU off): emits the inline write,
/// which ends in a branch to the returned label, and leaves the assembler at the
/// fall-back path (the caller emits the call to the system model there, then binds the
/// label). `None` (nothing emitted) for anything else. `MCR` forms need short
/// descriptors, `MCRR` forms LPAE with the ASID in `TTBR0` (`TTBCR.A1` = 0).
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
    let w = ttbr_write(insn)?;
    let (slow, done) = (a.label(), a.label());
    // The host allows it (see the module doc).
    a.put(enc::ls_uimm(Ls::Ldr, T_ADDR, STATE, OFF_INLINE_TTBR));
    a.cbz_to(false, T_ADDR, slow);
    cpu_fields::load_cpu(a, T_ADDR);
    // The translation table format the form is for.
    let ttbcr = cp15(offset_of!(Cp15, ttbcr));
    cpu_fields::access(a, Ls::Ldr, T_OP2, T_ADDR, ttbcr, T_OP2);
    if w.rt2.is_some() {
        a.tbz_to(T_OP2, TTBCR_EAE_BIT, slow);
        a.tbnz_to(T_OP2, TTBCR_A1_BIT, slow);
    } else {
        a.tbnz_to(T_OP2, TTBCR_EAE_BIT, slow);
    }
    // The interpreter's TLB flush: a new generation (0 after a wrap: the call).
    let generation = offset_of!(Cpu, tlb) + GENERATION_OFFSET;
    cpu_fields::access(a, Ls::Ldr, T_OP2, T_ADDR, generation, T_OP2);
    a.put(enc::w_addsub_imm(AddSub::Add, T_AMT, T_OP2, 1, false));
    a.cbz_to(false, T_AMT, slow);
    if w.asid != AsidFrom::None && !flat {
        // The new ASID's context.
        a.put(enc::ls_uimm(Ls::LdrX, T_RES, STATE, OFF_CUR_KEY));
        if let (AsidFrom::Ttbr0High, Some(rt2)) = (w.asid, w.rt2) {
            a.put(enc::x_ubfx(T_OP2, rt2, 16, 8));
            a.put(enc::x_bfi(T_RES, T_OP2, KEY_SPACE_LSB, 8));
        } else {
            a.put(enc::x_bfi(T_RES, w.rt, KEY_SPACE_LSB, 8));
        }
        switch::to_cached(a, T_RES, slow);
        cpu_fields::load_cpu(a, T_ADDR);
    }
    cpu_fields::access(a, Ls::Str, T_AMT, T_ADDR, generation, T_TMP);
    // The low word of a 64-bit field (little-endian), as `Cp15::write` sets it; the high
    // word as `Cp15::write64` does.
    cpu_fields::access(a, Ls::Str, w.rt, T_ADDR, cp15(w.field), T_TMP);
    if let Some(rt2) = w.rt2 {
        let (immr, imms) = enc::logic_imm32(TTBR_HIGH_KEPT).expect("a repeating pattern");
        a.put(enc::w_logic_imm(Logic::And, T_OP2, rt2, immr, imms));
        cpu_fields::access(a, Ls::Str, T_OP2, T_ADDR, cp15(w.field) + 4, T_TMP);
    }
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
        let asid = |w: u32| ttbr_write(&decode_a32(w)).map(|w| w.asid);
        assert_eq!(asid(0xee0d_3f30), Some(AsidFrom::Contextidr));
        // MCRR p15, 0, r0, r1, c2 (TTBR0: the ASID); MCRR p15, 1, r0, r1, c2 (TTBR1).
        assert_eq!(asid(0xec41_0f02), Some(AsidFrom::Ttbr0High));
        assert_eq!(asid(0xec41_0f12), Some(AsidFrom::None));
        assert_eq!(
            ttbr_write(&decode_a32(0xec41_0f02)).map(|w| (w.rt, w.rt2)),
            Some((0, Some(1)))
        );
        // MCRR with Rt2 = SP, MCRR to c7 (PAR), MRRC of TTBR0.
        assert!(ttbr_write(&decode_a32(0xec4d_0f02)).is_none());
        assert!(ttbr_write(&decode_a32(0xec41_0f07)).is_none());
        assert!(ttbr_write(&decode_a32(0xec51_0f02)).is_none());
        // TTBCR, an MRC of TTBR0, Rt = SP, TPIDRURW, an MRC of CONTEXTIDR.
        assert!(ttbr_write(&decode_a32(0xee02_3f50)).is_none());
        assert!(ttbr_write(&decode_a32(0xee12_3f10)).is_none());
        assert!(ttbr_write(&decode_a32(0xee02_df10)).is_none());
        assert!(ttbr_write(&decode_a32(0xee0d_3f50)).is_none());
        assert!(ttbr_write(&decode_a32(0xee1d_3f30)).is_none());
    }
}
