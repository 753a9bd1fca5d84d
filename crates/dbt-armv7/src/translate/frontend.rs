//! The translator's front end: finds the guest instructions of a block (fetch, decode,
//! classify) and asks the back end which of them it translates. Independent of the host.

use alloc::vec::Vec;

use super::backend::CodeGen;
use super::state::MAX_BLOCK_INSNS;
use crate::bus::Bus;
use crate::decode::{self, Insn, Op};

/// What a block is keyed by in the metadata cache: the same guest bytes mean different
/// code in another instruction set, privilege or address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// Guest virtual address of the first instruction.
    pub pc: u32,
    /// Thumb (T32) rather than A32.
    pub thumb: bool,
    /// PL1 rather than PL0.
    pub privileged: bool,
    /// Address space: the ASID with the MMU on, 0 with it off.
    pub asid: u16,
    /// VFP/Advanced SIMD instructions are translated (the unit is enabled for this
    /// privilege: `a64::vfp_host::fp_translatable`); without it they stay in the
    /// interpreter, which raises UNDEFINED. A key bit, so that a guest toggling
    /// `FPEXC.EN` (Linux's lazy VFP switching) keeps both kinds of translations.
    pub fp: bool,
}

/// One guest instruction of a block.
#[derive(Clone, Copy, Debug)]
pub struct GuestInsn {
    /// Its address.
    pub pc: u32,
    /// Decoded; inside an IT block, `cond` is the IT block's condition for it and the
    /// flag-setting of 16-bit data processing is cleared, as the architecture defines.
    pub insn: Insn,
    /// The ITSTATE before it (0 outside IT blocks): what a fault or side exit at it
    /// restores.
    pub it: u8,
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The last instruction is a control-flow instruction the back end translates.
    Branch,
    /// The instruction at this address needs the interpreter.
    Fallback(u32),
    /// The block reached its size limit or a page boundary and continues at this address.
    Next(u32),
}

/// A block of guest code to translate.
#[derive(Clone, Debug)]
pub struct GuestBlock {
    /// Its key.
    pub key: Key,
    /// The instructions, in order.
    pub insns: Vec<GuestInsn>,
    /// How it ends.
    pub end: End,
    /// Guest PCs of its instructions whose accesses wrapped past 4 GiB in an earlier
    /// translation (the engine fills this): they compute addresses in 32 bits.
    pub wraps: Vec<u32>,
    /// `SCTLR.A` is set (the engine fills this): accesses check their alignment.
    pub strict_align: bool,
    /// What inline exception entries may assume (the engine fills this).
    pub exc: super::exc_assume::ExcAssume,
    /// The CPU state inline exception entries and returns specialise on (the engine
    /// fills this; checked at run time).
    pub hint: super::exc_assume::ExcHint,
}

impl GuestBlock {
    /// One past the last guest byte the block was built from.
    pub fn guest_end(&self) -> u32 {
        match self.insns.last() {
            Some(i) => i.pc.wrapping_add(i.insn.len as u32),
            None => self.key.pc,
        }
    }
}

/// Reads the instructions of the block at `key.pc` from guest memory (`bus`, physical =
/// virtual: the engine translates only with the MMU off or where the host maps guest
/// virtual addresses). A block stops at the first control-flow instruction, before the
/// first instruction the back end does not translate, at [`MAX_BLOCK_INSNS`], and at a
/// 4 KiB page boundary (so that invalidating a page finds every block built from it).
/// Instruction fetch faults end the block too: the interpreter raises them.
pub fn discover(key: Key, bus: &mut dyn Bus, gen: &dyn CodeGen) -> GuestBlock {
    let mut insns = Vec::with_capacity(MAX_BLOCK_INSNS);
    let mut pc = key.pc;
    let end = loop {
        if insns.len() == MAX_BLOCK_INSNS || (pc & 0xfff == 0 && pc != key.pc) {
            break End::Next(pc);
        }
        let Some(insn) = fetch_decode(bus, pc, key.thumb) else {
            break End::Fallback(pc);
        };
        if let Op::It { firstcond, mask } = insn.op {
            // An IT block is translated whole or not at all, so that no block starts or
            // ends inside one (translated code keeps no ITSTATE).
            match it_block(
                bus,
                pc,
                firstcond,
                mask,
                insn,
                gen,
                MAX_BLOCK_INSNS - insns.len(),
            ) {
                Some(body) => {
                    let last = body.last().expect("an IT block has instructions");
                    let next = last.pc.wrapping_add(last.insn.len as u32);
                    let branch = last.insn.info().control_flow && last.insn.cond >= 14;
                    insns.extend(body);
                    if branch {
                        break End::Branch;
                    }
                    pc = next;
                    continue;
                }
                None => break End::Fallback(pc),
            }
        }
        if !gen.supports(&insn) {
            break End::Fallback(pc);
        }
        insns.push(GuestInsn { pc, insn, it: 0 });
        let next = pc.wrapping_add(insn.len as u32);
        if insn.info().control_flow {
            // A conditional branch goes on with the next instruction when not taken: the
            // block continues (a superblock), except after a loop's back-edge.
            let conditional = insn.cond < 14 || matches!(insn.op, Op::Cbz { .. });
            if !conditional {
                break End::Branch;
            }
            if branch_target(pc, &insn, key.thumb) == Some(key.pc) {
                // A loop: unrolled (copies of the body, each leaving the block when the
                // back-edge is not taken) to spread the back-edge's budget check.
                let copies = (MAX_BLOCK_INSNS / insns.len()).min(UNROLL);
                let body = insns.clone();
                for _ in 1..copies {
                    insns.extend_from_slice(&body);
                }
                break End::Next(next);
            }
        }
        pc = next;
    };
    GuestBlock {
        key,
        insns,
        end,
        wraps: Vec::new(),
        strict_align: false,
        exc: Default::default(),
        hint: Default::default(),
    }
}

/// The IT instruction at `pc` and the instructions of its block, with their conditions,
/// if all of them are translated, fit in `room`, stay in the page, and only the last one
/// is a branch.
fn it_block(
    bus: &mut dyn Bus,
    pc: u32,
    firstcond: u8,
    mask: u8,
    it_insn: Insn,
    gen: &dyn CodeGen,
    room: usize,
) -> Option<Vec<GuestInsn>> {
    let n = 4 - mask.trailing_zeros() as usize;
    if n + 1 > room || firstcond >= 14 && mask != 8 {
        return None;
    }
    let mut out = Vec::with_capacity(n + 1);
    out.push(GuestInsn {
        pc,
        insn: it_insn,
        it: 0,
    });
    let mut it = firstcond << 4 | mask;
    let mut at = pc.wrapping_add(2);
    for k in 0..n {
        if at & 0xfff == 0 {
            return None;
        }
        let mut insn = fetch_decode(bus, at, true)?;
        if insn.cond != 14 || matches!(insn.op, Op::It { .. }) {
            return None; // UNPREDICTABLE inside an IT block: the interpreter decides
        }
        insn.cond = it >> 4;
        if insn.len == 2 && decode::t16::t16_sets_flags_outside_it(insn.raw as u16) {
            if let Op::Dp { ref mut s, .. } | Op::Mul { ref mut s, .. } = insn.op {
                *s = false;
            }
        }
        if !gen.supports(&insn) || insn.info().control_flow && k + 1 != n {
            return None;
        }
        out.push(GuestInsn { pc: at, insn, it });
        at = at.wrapping_add(insn.len as u32);
        it = if it & 7 == 0 {
            0
        } else {
            (it & 0xe0) | ((it << 1) & 0x1f)
        };
    }
    Some(out)
}

/// Most copies of a loop body an unrolled block holds.
const UNROLL: usize = 4;

/// The target of a direct branch (`B`, `CBZ`/`CBNZ`) at `pc`.
fn branch_target(pc: u32, insn: &Insn, thumb: bool) -> Option<u32> {
    let pc_read = pc.wrapping_add(if thumb { 4 } else { 8 });
    match insn.op {
        Op::B { off } => Some(pc_read.wrapping_add(off as u32)),
        Op::Cbz { off, .. } => Some(pc_read.wrapping_add(off)),
        _ => None,
    }
}

fn fetch_decode(bus: &mut dyn Bus, pc: u32, thumb: bool) -> Option<Insn> {
    if thumb {
        let hw1 = bus.read(pc as u64, 2).ok()? as u16;
        if decode::t32_is_32bit(hw1) {
            if (pc + 2) & 0xfff == 0 {
                return None; // crosses a page: the interpreter fetches it
            }
            let hw2 = bus.read(pc as u64 + 2, 2).ok()? as u16;
            Some(decode::t32::decode(hw1, hw2))
        } else {
            Some(decode::t16::decode(hw1))
        }
    } else {
        Some(decode::decode_a32(bus.read(pc as u64, 4).ok()? as u32))
    }
}
