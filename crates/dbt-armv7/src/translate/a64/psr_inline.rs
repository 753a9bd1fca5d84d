//! `MRS Rd, CPSR` (`APSR`) as a few host instructions instead of a call into the system
//! model: the value the interpreter returns (`Cpu::cpsr` without the IT, J and T bits)
//! is the core's CPSR word (which holds no IT bits: ITSTATE lives apart) with the guest's
//! NZCV, which are the host flags while translated code runs, and T cleared (J is clear
//! whenever translated code runs). Q, GE,
//! the masks and the mode are the core's (translated code never changes them without
//! leaving or writing them back: calls, inline exception entries and returns). `MRS` of
//! the SPSR stays a call (UNDEFINED in User and System mode).

use super::asm::Asm;
use super::cpu_fields::{self as f, field};
use super::enc::{self, Logic, Ls};
use super::{T_FLAGS, T_OP2};
use crate::cpu::psr;
use crate::decode::{Insn, Op};

/// Lowers `insn` if it is `MRS Rd, CPSR` (4 host instructions, the `Cpu` through
/// [`CPU_REG`](f::CPU_REG)); returns false (nothing
/// emitted) otherwise.
pub fn lower(a: &mut Asm, insn: &Insn) -> bool {
    let Op::Mrs { rd, spsr: false } = insn.op else {
        return false;
    };
    if rd == 15 || insn.unpredictable {
        return false;
    }
    field(a, Ls::Ldr, T_OP2, f::CPSR);
    a.put(enc::mrs_nzcv(T_FLAGS));
    a.put(enc::x_bfxil(T_FLAGS, T_OP2, 0, 28));
    // J is clear in translated code (`Dbt::translatable`).
    let (immr, imms) = enc::logic_imm32(!psr::T).expect("a bitmask immediate");
    a.put(enc::w_logic_imm(Logic::And, rd, T_FLAGS, immr, imms));
    true
}
