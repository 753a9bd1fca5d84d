//! Instructions that translated code hands to the system model without leaving the code
//! cache: sensitive instructions (seed 004's Table 1: `MRC`/`MCR`/`MRRC`/`MCRR`,
//! `MRS`/`MSR` of the CPSR/SPSR and banked registers, `CPS`, `SETEND`, `WFI`/`WFE`, ...)
//! and the other integer instructions the back end does not translate, as long as they
//! neither access memory nor branch. Translated code stores the guest registers and
//! NZCV in the [`GuestState`], calls [`step_from_code`] (an ordinary function call), and
//! either reloads the registers and goes on with the block, or leaves with
//! [`EXIT_CALL`] when the instruction changed what the block was translated for (the
//! mode, the instruction set, interrupt masks, `SCTLR`, `CPACR`, `VBAR`, the translation
//! registers, TLB maintenance that names translated code), took an exception, or
//! ended the run (`WFI`, `HVC`...). The instruction itself runs in the interpreter
//! (`Cpu::step`), so its effect is the interpreter's, exactly.

use crate::bus::Bus;
use crate::cpu::{Cpu, Exit, Mode};
use crate::decode::{Insn, Op};

use super::state::GuestState;

/// Translated code left after [`step_from_code`] ran its instruction and asked to leave:
/// the [`Cpu`] holds the guest state after that instruction (the [`GuestState`]'s
/// registers are stale).
pub const EXIT_CALL: u32 = 5;

/// NZCV in the CPSR (and in [`GuestState::nzcv`]).
const NZCV: u32 = 0xf000_0000;

/// CPSR bits the translated code keeps or that the model holds for it (NZCV, Q, GE):
/// an instruction may change these and the block goes on.
const DATA_BITS: u32 = 0xf80f_0000;

/// What [`step_from_code`] works on, set up by the dispatcher for one entry into the code
/// cache (its address is in [`GuestState::link_site`] while translated code runs).
pub struct CallCtx<'a> {
    /// The CPU (its registers are the guest's only between calls).
    pub cpu: *mut Cpu,
    /// The guest's bus.
    pub bus: *mut (dyn Bus + 'a),
    /// What the instruction returned, when translated code left because of it.
    pub exit: Option<Exit>,
    /// Instructions the interpreter counted for the call that made translated code
    /// leave (0 or 1).
    pub counted: u64,
    /// The engine's address-space switch inside a block (`None`: every translation
    /// register write leaves).
    pub space: Option<*mut (dyn SpaceSwitch + 'a)>,
}

/// What [`step_from_code`] asks of the engine when the guest wrote `TTBR0`, `TTBR1` or
/// `CONTEXTIDR` at PL1 in a block that runs under every address space
/// ([`IT_LEN_ANY_SPACE`]), changed privilege, or performed TLB maintenance.
pub trait SpaceSwitch {
    /// `cpu` holds the new translation registers: makes translated code go on in them
    /// (the host's mirror of the guest's stage 1 and `state`'s return stack and target
    /// cache switched to the new context's) and returns true, or changes nothing and
    /// returns false (translated code leaves, the dispatcher switches).
    fn switch(&mut self, cpu: &Cpu, state: &mut GuestState) -> bool;

    /// Translated code changed `cpu`'s privilege (an exception entry from User mode or
    /// an exception return to it): makes translated code go on in the new privilege (the
    /// host's mirror of the guest's stage 1 and `state`'s return stack and target cache
    /// switched to that privilege's) and returns true, or changes nothing and returns
    /// false (translated code leaves, the dispatcher switches). `fp`: whether VFP is
    /// translated in the new privilege.
    fn privilege(&mut self, cpu: &Cpu, fp: bool, state: &mut GuestState) -> bool;

    /// `cpu` just performed the guest's TLB maintenance (recorded in
    /// `Cp15::tlb_maintenance`, the interpreter's TLB flushed): applies it and returns
    /// true when the block may go on (it named no translated code: the engine's
    /// `InBlockTlb`), or returns false, with the operation still recorded unless it was
    /// applied, and translated code leaves for the dispatcher.
    fn tlb_maintenance(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> bool;
}

/// Bit of [`step_from_code`]'s `it_len`: the instruction is T32/T16 (the block's
/// instruction set). The guest core's `CPSR.T` is not kept while translated code runs: a
/// return or indirect branch that hits the return stack or the target cache may enter a
/// block of the other instruction set without the dispatcher.
pub const IT_LEN_THUMB: u32 = 1 << 16;

/// Bit of [`step_from_code`]'s `it_len`: the block runs under every address space (its
/// code was fetched with the MMU off, or from a global page), so an address-space switch
/// ([`switches_in_block`]) need not end it: its next instructions are the same in the new
/// space. The engine links such a block's exits only to blocks of every space.
pub const IT_LEN_ANY_SPACE: u32 = 1 << 17;

/// Whether the instruction with encoding `raw` (`Insn::raw`) is a write that
/// [`step_from_code`] may perform as an address-space switch without leaving the block
/// when [`IT_LEN_ANY_SPACE`] is set: `MCR` to `TTBR0`/`TTBR1`/`CONTEXTIDR`, `MCRR` to
/// `TTBR0`/`TTBR1` (the forms of [`translation_write`], `DACR` aside: a block runs while
/// its code's domain keeps the access it was fetched with, which the dispatcher checks).
pub fn switches_in_block(raw: u32) -> bool {
    (is_translation_write(raw) && raw & 0xffff_0fff != DACR_WRITE) || is_translation_write64(raw)
}

/// Whether `raw` is one of [`TRANSLATION_WRITES`] (compares, not a search: it is on the
/// address-space switch's path).
fn is_translation_write(raw: u32) -> bool {
    let [a, b, c, d] = TRANSLATION_WRITES;
    let m = raw & 0xffff_0fff;
    m == a || m == b || m == c || m == d
}

/// Whether `raw` is one of [`TRANSLATION_WRITES64`].
fn is_translation_write64(raw: u32) -> bool {
    let [a, b] = TRANSLATION_WRITES64;
    let m = raw & 0xfff0_0fff;
    m == a || m == b
}

/// Whether translated code runs `i` through [`step_from_code`]: a defined, predictable
/// instruction that neither branches nor accesses memory (those leave the block: a store
/// may hit translated code, a branch needs the dispatcher). VFP/Advanced SIMD
/// instructions are the FP back end's.
pub fn callable(i: &Insn) -> bool {
    if i.unpredictable || i.is_undefined() || matches!(i.op, Op::Vfp { .. } | Op::It { .. }) {
        return false;
    }
    let f = i.info();
    !f.control_flow && !f.memory && f.writes & 0x8000 == 0
}

/// Runs the guest instruction at `pc` (encoding `raw`, as the decoder's `Insn::raw`;
/// `len` bytes long, Thumb ITSTATE `it`; `it_len` is `it | len << 8`, plus
/// [`IT_LEN_THUMB`] in a Thumb block) in the interpreter, in the block's instruction set,
/// with the guest state that translated code stored in `*state`. Returns 0 when the block may go
/// on (the registers and NZCV after the instruction are in `*state`, its instruction is
/// not counted: the block's exits count it), or 1 when translated code must leave with
/// [`EXIT_CALL`] (the [`Cpu`] holds the state after the instruction).
///
/// # Safety
///
/// Called only by translated code, while the dispatcher is inside the code cache with
/// `state.link_site` pointing at a live [`CallCtx`].
pub unsafe extern "C" fn step_from_code(
    state: *mut GuestState,
    pc: u32,
    it_len: u32,
    raw: u32,
) -> u64 {
    // SAFETY: translated code passes the dispatcher's GuestState, whose link_site holds
    // the CallCtx of this entry (see the function's contract); the CPU and bus it points
    // to are not otherwise used while translated code runs.
    let (st, ctx) = unsafe {
        let ctx = (*state).link_site as *mut CallCtx<'_>;
        (&mut *state, &mut *ctx)
    };
    // SAFETY: as above.
    let cpu = unsafe { &mut *ctx.cpu };
    let thumb = it_len & IT_LEN_THUMB != 0;
    let len = (it_len >> 8) & 0xff;
    // Before the register file is copied: an address-space switch that the block
    // survives needs only Rt (and Rt2).
    if let Some(switch) = translation_write(cpu, &st.r, raw, len, thumb, it_len as u8) {
        if switch && it_len & IT_LEN_ANY_SPACE != 0 {
            if let Some(space) = ctx.space {
                // SAFETY: the dispatcher's switch for this entry, alive while it runs
                // translated code (see the function's contract).
                if unsafe { (*space).switch(cpu, st) } {
                    // The block goes on (its exits count the instruction).
                    return 0;
                }
            }
        }
        // Leaves as the interpreter's run of it would.
        return leave_after_write(st, ctx, pc, len, thumb);
    }
    match tlb_maintenance_write(cpu, &st.r, raw, len, thumb, it_len as u8) {
        Some(true) => {
            if let Some(space) = ctx.space {
                // SAFETY: as for the address-space switch above.
                if unsafe { (*space).tlb_maintenance(cpu, st) } {
                    // Applied, nothing translated dropped: the block goes on (its exits
                    // count the instruction).
                    return 0;
                }
            }
            // The dispatcher applies it (shadow, translations, other vCPUs' TLBs).
            leave_after_write(st, ctx, pc, len, thumb)
        }
        // The host claimed the write: the block goes on.
        Some(false) => 0,
        None => interpret_in_block(st, ctx, pc, it_len, raw),
    }
}

/// The end of [`step_from_code`] for a translation-register write it performed but that
/// the block does not survive: the CPU state after the instruction, as the interpreter's
/// run of it would leave it, and 1 (leave). Out of line: the switch's path stays short.
#[inline(never)]
#[cold]
fn leave_after_write(
    st: &GuestState,
    ctx: &mut CallCtx<'_>,
    pc: u32,
    len: u32,
    thumb: bool,
) -> u64 {
    // SAFETY: the CPU of this entry (see `step_from_code`'s contract).
    let cpu = unsafe { &mut *ctx.cpu };
    copy_regs(&mut cpu.r, &st.r);
    cpu.cpsr = (cpu.cpsr & !NZCV) | (st.nzcv & NZCV);
    set_thumb(cpu, thumb);
    cpu.it = 0;
    cpu.r[15] = pc.wrapping_add(len);
    cpu.icount += 1;
    ctx.counted = 1;
    ctx.exit = None;
    1
}

/// The rest of [`step_from_code`]: the instruction in the interpreter (out of line, so
/// that the address-space switch's path does not pay for its frame).
#[inline(never)]
fn interpret_in_block(
    st: &mut GuestState,
    ctx: &mut CallCtx<'_>,
    pc: u32,
    it_len: u32,
    raw: u32,
) -> u64 {
    // SAFETY: the CPU and bus of this entry (see `step_from_code`'s contract).
    let (cpu, bus) = unsafe { (&mut *ctx.cpu, &mut *ctx.bus) };
    let thumb = it_len & IT_LEN_THUMB != 0;
    let len = (it_len >> 8) & 0xff;
    copy_regs(&mut cpu.r, &st.r);
    cpu.cpsr = (cpu.cpsr & !NZCV) | (st.nzcv & NZCV);
    cpu.r[15] = pc;
    // The block's instruction set, not the one the dispatcher last saw (see
    // IT_LEN_THUMB): decoded as A32, Thumb's `pld [r0]` is UNDEFINED.
    set_thumb(cpu, thumb);
    cpu.it = it_len as u8;
    let before = (cpu.cpsr, cpu.cp15.sctlr, cpu.cp15.cpacr, cpu.icount);
    let mmu_before = translation_regs(cpu);
    // Inline exception entries are translated for the vector base (`exc_assume`).
    let vbar_before = cpu.cp15.vbar;
    // Decoded again from its encoding (cheaper than a fetch through the bus and the
    // decode cache); the IT condition and flag-setting come from `cpu.it`.
    let insn = if !cpu.thumb() {
        crate::decode::decode_a32(raw)
    } else if len == 2 {
        crate::decode::decode_thumb(raw as u16, 0)
    } else {
        crate::decode::decode_thumb((raw >> 16) as u16, raw as u16)
    };
    let exit = cpu.step_decoded(bus, insn);
    let goes_on = exit.is_none()
        && cpu.r[15] == pc.wrapping_add(len)
        && cpu.cpsr & !DATA_BITS == before.0 & !DATA_BITS
        && cpu.cp15.sctlr == before.1
        && cpu.cp15.cpacr == before.2
        && cpu.icount == before.3 + 1
        && cpu.code_invalidation.is_none()
        && cpu.cp15.tlb_maintenance.is_none()
        && translation_regs(cpu) == mmu_before
        && cpu.cp15.vbar == vbar_before;
    if goes_on {
        cpu.icount = before.3;
        cpu.it = 0;
        copy_regs(&mut st.r, &cpu.r);
        st.nzcv = cpu.cpsr & NZCV;
        0
    } else {
        ctx.counted = cpu.icount - before.3;
        ctx.exit = exit;
        1
    }
}

/// `MCR p15, 0, Rt, CRn, CRm, opc2` (A32 with condition AL, or T32 outside an IT block:
/// the same 32 bits) with `Rt` in bits 15:12 masked out, for the translation registers
/// whose write has no effect but the field and the interpreter's TLB flush: `TTBR0`,
/// `TTBR1`, `DACR`, `CONTEXTIDR`.
const TRANSLATION_WRITES: [u32; 4] = [0xee02_0f10, 0xee02_0f30, DACR_WRITE, 0xee0d_0f30];

/// The `DACR` form of [`TRANSLATION_WRITES`].
const DACR_WRITE: u32 = 0xee03_0f10;

/// `MCRR p15, opc1, Rt, Rt2, c2` with `Rt` and `Rt2` (bits 19:12) masked out: the 64-bit
/// (LPAE) `TTBR0` (opc1 0) and `TTBR1` (opc1 1).
const TRANSLATION_WRITES64: [u32; 2] = [0xec40_0f02, 0xec40_0f12];

/// `CPSR.T` as the block's instruction set says.
fn set_thumb(cpu: &mut Cpu, thumb: bool) {
    if thumb {
        cpu.cpsr |= crate::cpu::psr::T;
    } else {
        cpu.cpsr &= !crate::cpu::psr::T;
    }
}

/// Whether a 4-byte coprocessor write (`len`; `thumb` and `it` as the block runs it) may
/// be done here rather than by the interpreter: at PL1 (at PL0 it is UNDEFINED), outside
/// an IT block, with per-class counting off.
fn plain_pl1_write(cpu: &Cpu, len: u32, thumb: bool, it: u8) -> bool {
    cpu.mode != Mode::Usr && cpu.class_hits.is_none() && len == 4 && !(thumb && it != 0)
}

/// An address-space switch (`MCR` to `TTBR0`, `TTBR1`, `DACR` or `CONTEXTIDR`, or `MCRR`
/// to `TTBR0`/`TTBR1`, at PL1, with the guest registers `r`; `thumb` and `it` as the
/// block runs it) without the decoder and the interpreter (some 500 host instructions
/// each): performs the write as `Cpu::step` would (the
/// [`CoprocHost`](crate::cpu::CoprocHost) first, then the `Cp15` field and the
/// interpreter's TLB flush that `Cp15Effect::FlushTlb` asks for); the caller advances the
/// PC and counts the instruction, or goes on in the block. Returns `Some(true)` for a
/// write of [`switches_in_block`], `Some(false)` for `DACR` (translated code leaves with
/// [`EXIT_CALL`]: the dispatcher switches the host's shadow and the block tables), or
/// `None` for anything else, which the interpreter runs: PL0 (UNDEFINED), a condition
/// other than AL or an IT block, `Rt`/`Rt2` = `SP`/`PC`, a host that makes the encoding
/// UNDEFINED, or per-class counting on.
fn translation_write(
    cpu: &mut Cpu,
    r: &[u32; 16],
    raw: u32,
    len: u32,
    thumb: bool,
    it: u8,
) -> Option<bool> {
    let wide = is_translation_write64(raw);
    let rt = ((raw >> 12) & 15) as usize;
    let rt2 = ((raw >> 16) & 15) as usize;
    if !(wide || is_translation_write(raw))
        || rt >= 13
        || (wide && rt2 >= 13)
        || !plain_pl1_write(cpu, len, thumb, it)
    {
        return None;
    }
    if wide {
        let opc1 = ((raw >> 4) & 15) as u8;
        let value = (r[rt2] as u64) << 32 | r[rt] as u64;
        let claimed = cpu
            .coproc_host
            .as_mut()
            .is_some_and(|h| h.write64(15, opc1, 2, value));
        if !claimed {
            cpu.cp15.write64(opc1, 2, value)?;
            // Cp15Effect::FlushTlb, as `Cpu::apply` does it.
            cpu.tlb.flush();
        }
    } else {
        let (crn, opc2) = (((raw >> 16) & 15) as u8, ((raw >> 5) & 7) as u8);
        mcr_as_step(cpu, crn, 0, opc2, r[rt])?;
    }
    Some(wide || raw & 0xffff_0fff != DACR_WRITE)
}

/// `MCR p15, 0, value, crn, crm, opc2` as `Cpu::step` performs it: the
/// [`CoprocHost`](crate::cpu::CoprocHost) first (`None` if it makes the encoding
/// UNDEFINED), else `Cp15::write` (`None` if that refuses it) and the interpreter's TLB
/// flush that `Cp15Effect::FlushTlb` asks for. Returns whether the host claimed the write.
fn mcr_as_step(cpu: &mut Cpu, crn: u8, crm: u8, opc2: u8, value: u32) -> Option<bool> {
    if let Some(h) = cpu.coproc_host.as_mut() {
        if h.undefined(15, 0, crn, crm, opc2) {
            return None;
        }
        if h.write(15, 0, crn, crm, opc2, value) {
            return Some(true);
        }
    }
    cpu.cp15.write(0, crn, crm, opc2, value)?;
    // Cp15Effect::FlushTlb, as `Cpu::apply` does it.
    cpu.tlb.flush();
    Some(false)
}

/// `MCR p15, 0, Rt, c8, CRm, opc2` with `Rt`, `CRm` and `opc2` masked out by
/// [`TLB_MAINTENANCE_MASK`]: TLB maintenance (`TLBIALL`, `TLBIMVA`, `TLBIASID`,
/// `TLBIMVAA`, their Inner Shareable forms, the `ITLB*`/`DTLB*` forms).
const TLB_MAINTENANCE: u32 = 0xee08_0f10;

/// The bits of an encoding that [`TLB_MAINTENANCE`] fixes: the condition (AL), opc1 (0),
/// the direction (to the coprocessor), `CRn` (c8), the coprocessor (15) and bit 4.
const TLB_MAINTENANCE_MASK: u32 = 0xffff_0f10;

/// A TLB maintenance operation ([`TLB_MAINTENANCE`]) at PL1, with the guest registers `r`
/// (`thumb` and `it` as the block runs it), without the decoder and the interpreter
/// (some 400 host instructions each; Linux issues about a million on its way to
/// userland): performs it as `Cpu::step` would, the [`CoprocHost`](crate::cpu::CoprocHost)
/// first, then `Cp15::write` (which records the operation for the dispatcher in
/// `Cp15::tlb_maintenance`) and the interpreter's TLB flush that `Cp15Effect::FlushTlb`
/// asks for. Returns `Some(true)` when the operation is recorded: the engine applies it
/// inside the block if it names no translated code ([`SpaceSwitch::tlb_maintenance`]),
/// else translated code leaves with [`EXIT_CALL`] (the dispatcher then applies it to the
/// host's shadow, the translations and, for the Inner Shareable forms, the other vCPUs,
/// as after the interpreter's run of it), `Some(false)` when the host claimed the write (the block goes on, as the
/// interpreter's run would let it), or `None` for anything else, which the interpreter
/// runs: PL0 (UNDEFINED), a condition other than AL or an IT block, `Rt` = `SP`/`LR`/
/// `PC`, a host that makes the encoding UNDEFINED, or per-class counting on.
fn tlb_maintenance_write(
    cpu: &mut Cpu,
    r: &[u32; 16],
    raw: u32,
    len: u32,
    thumb: bool,
    it: u8,
) -> Option<bool> {
    let rt = ((raw >> 12) & 15) as usize;
    if raw & TLB_MAINTENANCE_MASK != TLB_MAINTENANCE
        || rt >= 13
        || !plain_pl1_write(cpu, len, thumb, it)
    {
        return None;
    }
    let (crm, opc2) = ((raw & 15) as u8, ((raw >> 5) & 7) as u8);
    let claimed = mcr_as_step(cpu, 8, crm, opc2, r[rt])?;
    Some(!claimed)
}

/// The registers that shape the guest's stage 1 besides `SCTLR`: a change leaves the
/// block, so that the dispatcher can tell a host that mirrors them (and check domains).
fn translation_regs(cpu: &Cpu) -> (u64, u64, u32, u32, u32) {
    let c = &cpu.cp15;
    (c.ttbr0, c.ttbr1, c.ttbcr, c.dacr, c.contextidr)
}

/// `dst[..15] = src[..15]` ([`super::copy`]: the compiler would otherwise call a
/// word-at-a-time `memcpy` for it, which costs more than the copy).
fn copy_regs(dst: &mut [u32; 16], src: &[u32; 16]) {
    super::copy::copy_u32s(&mut dst[..15], &src[..15]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::FlatRam;
    use crate::mmu::TlbMaintenance;
    use alloc::format;

    /// A CPU at PL1 (Supervisor) or PL0 in the given instruction set with `r`, and a
    /// translation for page 0x5000_0000 in its TLB.
    fn cpu(user: bool, thumb: bool, r: &[u32; 16]) -> Cpu {
        let mut c = if user {
            Cpu::new_user(thumb)
        } else {
            Cpu::new()
        };
        set_thumb(&mut c, thumb);
        copy_regs(&mut c.r, r);
        c.r[15] = 0x1000;
        c.tlb.insert(0x5000_0000, 0x5_0000, 3);
        c
    }

    /// Every `MCR p15, 0, Rt, c8, CRm, opc2` (A32 and T32, PL1 and PL0, several `Rt` and
    /// values) through [`tlb_maintenance_write`] leaves the operation for the dispatcher
    /// and the interpreter's TLB as `Cpu::step` does, or is left to the interpreter.
    #[test]
    fn tlb_maintenance_without_the_interpreter_is_the_interpreters() {
        let mut ram = FlatRam::new(0, 0x2000);
        let mut fast_paths = 0;
        for (crm, opc2, rt, v, user, thumb) in (0..16u32).flat_map(|crm| {
            (0..8u32).flat_map(move |opc2| {
                [
                    (0usize, 0x5000_0042u32),
                    (7, 0xc012_3456),
                    (12, 0xff),
                    (13, 1),
                ]
                .into_iter()
                .flat_map(move |(rt, v)| {
                    [(false, false), (false, true), (true, false)]
                        .map(|(user, thumb)| (crm, opc2, rt, v, user, thumb))
                })
            })
        }) {
            let raw = TLB_MAINTENANCE | (rt as u32) << 12 | opc2 << 5 | crm;
            let mut r = [0u32; 16];
            r[rt] = v;
            let mut fast = cpu(user, thumb, &r);
            let got = tlb_maintenance_write(&mut fast, &r, raw, 4, thumb, 0);
            let mut interp = cpu(user, thumb, &r);
            let insn = if thumb {
                crate::decode::decode_thumb((raw >> 16) as u16, raw as u16)
            } else {
                crate::decode::decode_a32(raw)
            };
            let exit = interp.step_decoded(&mut ram, insn);
            let what = format!("{raw:#010x} user {user} thumb {thumb}");
            match got {
                Some(true) => {
                    fast_paths += 1;
                    assert_eq!(exit, None, "{what}");
                    assert!(interp.cp15.tlb_maintenance.is_some(), "{what}");
                    assert_eq!(
                        fast.cp15.tlb_maintenance, interp.cp15.tlb_maintenance,
                        "{what}"
                    );
                    assert_eq!(fast.tlb.lookup(0x5000_0000), None, "{what}: TLB flushed");
                    assert_eq!(interp.tlb.lookup(0x5000_0000), None, "{what}");
                }
                Some(false) => panic!("{what}: no host claims c8"),
                None => assert!(user || rt >= 13, "{what}: left to the interpreter"),
            }
        }
        assert_eq!(fast_paths, 16 * 8 * 3 * 2);
        // TLBIMVA of r0 = 0x5000_0042: page 0x5000_0000, ASID 0x42.
        let mut r = [0u32; 16];
        r[0] = 0x5000_0042;
        let mut c = cpu(false, false, &r);
        assert_eq!(
            tlb_maintenance_write(&mut c, &r, 0xee08_0f37, 4, false, 0),
            Some(true)
        );
        assert_eq!(
            c.cp15.tlb_maintenance,
            Some(TlbMaintenance::Page {
                va: 0x5000_0000,
                asid: 0x42
            })
        );
        // Not c8, or a condition other than AL: not this path.
        let mut c = cpu(false, false, &r);
        assert_eq!(
            tlb_maintenance_write(&mut c, &r, 0xee07_0f15, 4, false, 0),
            None
        );
        assert_eq!(
            tlb_maintenance_write(&mut c, &r, 0x0e08_0f37, 4, false, 0),
            None
        );
        assert_eq!(c.cp15.tlb_maintenance, None);
    }
}
