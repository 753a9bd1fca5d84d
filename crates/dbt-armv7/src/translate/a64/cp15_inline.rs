//! CP15 accesses that are plain storage, as one load or store in translated code against
//! the guest [`Cpu`](crate::Cpu)'s `Cp15` (through [`GuestState::cpu`]) instead of a call
//! into the system model: the thread ID registers (`TPIDRURW`, `TPIDRURO`, `TPIDRPRW`),
//! reads of the translation registers (`TTBR0/1` low words, `TTBCR`, `DACR`,
//! `CONTEXTIDR`), `SCTLR`, `CPACR`, `MIDR`, `PRRR`/`NMRR`, and reads and writes of the
//! fault status and address registers (`DFSR`, `IFSR`, `DFAR`, `IFAR`). The privilege
//! check is made at translation time (blocks are keyed by privilege): at PL0 only
//! `TPIDRURW` (read/write) and `TPIDRURO` (read) are inline; every other access (and
//! every write with a side effect: `SCTLR`, `TTBR*`, `CONTEXTIDR`, TLB and cache
//! maintenance, timers) stays a call, which raises UNDEFINED where the architecture does.
//!
//! A [`CoprocHost`](crate::cpu::CoprocHost) must not claim these encodings (the DBT
//! runtime's claims `MPIDR`, the timers, `ICC_*` and `c15`; none is here).
//!
//! [`GuestState::cpu`]: crate::translate::state::GuestState::cpu

use core::mem::offset_of;

use super::asm::Asm;
use super::cpu_fields::{self, cp15};
use super::enc::Ls;
use super::{T_ADDR, T_OP2};
use crate::cp15::Cp15;
use crate::decode::{Insn, Op};

/// How translated code may access one CP15 register.
struct Reg {
    /// Its byte offset in the `Cpu` (a `u32`, or the low word of a `u64`).
    off: usize,
    /// Readable at PL0.
    user_read: bool,
    /// Writable (as plain storage) at PL0 / at PL1.
    user_write: bool,
    write: bool,
}

/// The register `MRC`/`MCR p15, opc1, Rt, crn, crm, opc2` names, if it is plain storage.
fn reg(crn: u8, opc1: u8, crm: u8, opc2: u8) -> Option<Reg> {
    let r = |off, user_read, user_write, write| Reg {
        off: cp15(off),
        user_read,
        user_write,
        write,
    };
    Some(match (crn, opc1, crm, opc2) {
        (0, 0, 0, 0 | 4 | 7) => r(offset_of!(Cp15, midr), false, false, false),
        (1, 0, 0, 0) => r(offset_of!(Cp15, sctlr), false, false, false),
        (1, 0, 0, 2) => r(offset_of!(Cp15, cpacr), false, false, false),
        (2, 0, 0, 0) => r(offset_of!(Cp15, ttbr0), false, false, false),
        (2, 0, 0, 1) => r(offset_of!(Cp15, ttbr1), false, false, false),
        (2, 0, 0, 2) => r(offset_of!(Cp15, ttbcr), false, false, false),
        (3, 0, 0, 0) => r(offset_of!(Cp15, dacr), false, false, false),
        (5, 0, 0, 0) => r(offset_of!(Cp15, dfsr), false, false, true),
        (5, 0, 0, 1) => r(offset_of!(Cp15, ifsr), false, false, true),
        (6, 0, 0, 0) => r(offset_of!(Cp15, dfar), false, false, true),
        (6, 0, 0, 2) => r(offset_of!(Cp15, ifar), false, false, true),
        (10, 0, 2, 0) => r(offset_of!(Cp15, prrr), false, false, false),
        (10, 0, 2, 1) => r(offset_of!(Cp15, nmrr), false, false, false),
        (13, 0, 0, 1) => r(offset_of!(Cp15, contextidr), false, false, false),
        (13, 0, 0, 2) => r(offset_of!(Cp15, tpidrurw), true, true, true),
        (13, 0, 0, 3) => r(offset_of!(Cp15, tpidruro), true, false, true),
        (13, 0, 0, 4) => r(offset_of!(Cp15, tpidrprw), false, false, true),
        _ => return None,
    })
}

/// The access `insn` makes, if it is an inline one at this privilege: (Cpu offset,
/// write, Rt).
fn inline_access(insn: &Insn, privileged: bool) -> Option<(usize, bool, u8)> {
    let Op::Mcr {
        to_cp,
        cp: 15,
        opc1,
        crn,
        crm,
        opc2,
        rt,
    } = insn.op
    else {
        return None;
    };
    if rt == 15 || insn.unpredictable {
        return None;
    }
    let r = reg(crn, opc1, crm, opc2)?;
    let allowed = match (to_cp, privileged) {
        (false, true) => true,
        (false, false) => r.user_read,
        (true, true) => r.write,
        (true, false) => r.user_write,
    };
    allowed.then_some((r.off, to_cp, rt))
}

/// Lowers `insn` as a load (`MRC`) or store (`MCR`) of its CP15 register if it is an
/// inline one (2 host instructions); returns false (nothing emitted) otherwise.
pub fn lower(a: &mut Asm, insn: &Insn, privileged: bool) -> bool {
    let Some((off, write, rt)) = inline_access(insn, privileged) else {
        return false;
    };
    cpu_fields::load_cpu(a, T_ADDR);
    let op = if write { Ls::Str } else { Ls::Ldr };
    cpu_fields::access(a, op, rt, T_ADDR, off, T_OP2);
    true
}
