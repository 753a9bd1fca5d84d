//! Where translated code finds the guest [`Cpu`]'s fields: [`GuestState::cpu`] holds its
//! host address while translated code runs, and the offsets below are the compiler's
//! (`offset_of!`), so inline CP15 accesses and inline exception entries and returns read
//! and write exactly the fields the interpreter uses.
//!
//! [`GuestState::cpu`]: crate::translate::state::GuestState::cpu

use core::mem::offset_of;

use super::asm::Asm;
use super::enc::{self, AddSub, Ls};
use super::STATE;
use crate::cp15::Cp15;
use crate::cpu::Cpu;
use crate::translate::state::OFF_CPU;

/// `Cpu::cpsr` (u32; NZCV there is stale while translated code runs: the host NZCV is
/// the guest's).
pub const CPSR: usize = offset_of!(Cpu, cpsr);
/// `Cpu::mode` (u8: the `CPSR.M` value of [`Mode`](crate::cpu::Mode)).
pub const MODE: usize = offset_of!(Cpu, mode);
/// `Cpu::it` (u8 ITSTATE).
pub const IT: usize = offset_of!(Cpu, it);
/// `Cpu::bank_sp_lr` (`[[u32; 2]; 6]`, indexed by [`Mode::bank`](crate::cpu::Mode::bank)).
pub const BANK_SP_LR: usize = offset_of!(Cpu, bank_sp_lr);
/// `Cpu::spsr` (`[u32; 6]`, same index).
pub const SPSR: usize = offset_of!(Cpu, spsr);
/// `Cpu::exit_on_svc` (bool).
pub const EXIT_ON_SVC: usize = offset_of!(Cpu, exit_on_svc);
/// `Cpu::exit_on_exception` (bool).
pub const EXIT_ON_EXCEPTION: usize = offset_of!(Cpu, exit_on_exception);
/// `Cpu::irq_line` (bool).
pub const IRQ_LINE: usize = offset_of!(Cpu, irq_line);
/// `Cpu::fiq_line` (bool).
pub const FIQ_LINE: usize = offset_of!(Cpu, fiq_line);
/// `Cpu::monitor` (`Option<u32>`: the local exclusive monitor).
pub const MONITOR: usize = offset_of!(Cpu, monitor);

/// Offset of the CP15 register at `off` in [`Cp15`] (e.g. `offset_of!(Cp15, tpidrurw)`).
pub const fn cp15(off: usize) -> usize {
    offset_of!(Cpu, cp15) + off
}
/// `SCTLR`.
pub const SCTLR: usize = cp15(offset_of!(Cp15, sctlr));
/// `VBAR` (stored with bits 4:0 clear).
pub const VBAR: usize = cp15(offset_of!(Cp15, vbar));

/// Tag word of `Option<u32>::None` as the compiler lays it out: the tag is the first
/// word and the value the second (checked on `Some` here, at compile time); `None` is the
/// first variant, tag 0 (checked by a unit test).
pub const MONITOR_NONE_TAG: u32 = 0;
const _: () = {
    assert!(core::mem::size_of::<Option<u32>>() == 8);
    // SAFETY: `Some(x)` has no padding (tag word + value word), so every byte is
    // initialized; this only inspects the layout.
    let some: u64 = unsafe { core::mem::transmute(Some(0x1234_5678u32)) };
    assert!(some >> 32 == 0x1234_5678 && some as u32 != MONITOR_NONE_TAG);
};

/// `sf`: the 64-bit form of an add/subtract.
const X_FORM: u32 = 1 << 31;

/// Host register that holds the guest `Cpu`'s address plus [`CPU_BIAS`] throughout
/// translated code (the runtime's prologue loads it: [`load_cpu_reg`]; the code called
/// from translated code preserves it, as AAPCS64 says for `x29`).
pub const CPU_REG: u8 = 29;
/// What [`CPU_REG`] is ahead of the `Cpu`'s address: with it, the banked `SP`/`LR` pairs
/// are in reach of one `LDP`/`STP` (signed 7-bit offset, ±256 bytes) and every field
/// that [`field`] reaches is one load or store.
pub const CPU_BIAS: usize = 256;

/// `LDR X29, [state, #OFF_CPU]` and `ADD X29, X29, #CPU_BIAS`: [`CPU_REG`] set up (the
/// prologue; `GuestState::cpu` holds the address at every entry).
pub fn load_cpu_reg(a: &mut Asm) {
    a.put(enc::ls_uimm(Ls::LdrX, CPU_REG, STATE, OFF_CPU));
    a.put(enc::x_addsub_imm(
        AddSub::Add,
        CPU_REG,
        CPU_REG,
        CPU_BIAS as u32,
    ));
}

/// The offset from [`CPU_REG`] of the `Cpu` field at `off`.
pub const fn biased(off: usize) -> i32 {
    off as i32 - CPU_BIAS as i32
}

/// A load or store (`op`) of `rt` at byte `off` of the `Cpu`, through [`CPU_REG`]: one
/// instruction (a scaled unsigned offset, or an unscaled one in -256..255).
pub fn field(a: &mut Asm, op: Ls, rt: u8, off: usize) {
    let d = biased(off);
    let s = op.scale();
    if d >= 0 && (d as u32).is_multiple_of(1 << s) && (d as u32) >> s < 4096 {
        a.put(enc::ls_uimm(op, rt, CPU_REG, d as u32));
    } else {
        assert!(
            (-256..256).contains(&d),
            "Cpu field offset {off} out of reach"
        );
        a.put(enc::ls_unscaled(op, rt, CPU_REG, d));
    }
}

/// `LDR Xcpu, [state, #OFF_CPU]`: the guest `Cpu`'s address into `cpu`.
pub fn load_cpu(a: &mut Asm, cpu: u8) {
    a.put(enc::ls_uimm(Ls::LdrX, cpu, STATE, OFF_CPU));
}

/// A load or store (`op`) of `rt` at byte `off` of the `Cpu` whose address is in `cpu`;
/// a field beyond the scaled immediate's reach goes through `tmp` (`ADD tmp, cpu, #hi,
/// LSL #12` first).
pub fn access(a: &mut Asm, op: Ls, rt: u8, cpu: u8, off: usize, tmp: u8) {
    let off = off as u32;
    let s = op.scale();
    if off >> s < 4096 {
        a.put(enc::ls_uimm(op, rt, cpu, off));
    } else {
        let hi = off >> 12;
        assert!(hi < 4096, "Cpu field offset {off} out of reach");
        a.put(X_FORM | enc::w_addsub_imm(AddSub::Add, tmp, cpu, hi, true));
        a.put(enc::ls_uimm(op, rt, tmp, off & 0xfff));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_tag_is_zero() {
        let none: Option<u32> = core::hint::black_box(None);
        // SAFETY: reads the tag word of a live `Option<u32>` (always initialized).
        let tag = unsafe { core::ptr::read(&none as *const Option<u32> as *const u32) };
        assert_eq!(tag, MONITOR_NONE_TAG);
    }
}
