//! The interface between the front end and a code generator. The A64 generator
//! ([`super::a64`]) is one; an A32-on-A32 one can be another.

use alloc::vec::Vec;

use super::frontend::GuestBlock;
use crate::decode::Insn;

/// A direct exit of a translated block that can be linked to the block it goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitSite {
    /// Code cache offset of the branch instruction that is patched when linking.
    pub site: usize,
    /// Code cache offset of the exit stub the branch goes to while unlinked.
    pub stub: usize,
    /// Guest address the exit continues at.
    pub target: u32,
}

/// A translated block as the back end placed it.
#[derive(Clone, Debug)]
pub struct HostBlock {
    /// The host code, to be copied to its code cache offset.
    pub code: Vec<u8>,
    /// Its linkable exits.
    pub exits: Vec<ExitSite>,
    /// For each guest instruction, the offset in `code` where its host code starts: the
    /// side table that maps a faulting host instruction back to its guest instruction.
    pub insn_starts: Vec<u32>,
}

/// The code cache offsets of the fixed code every translation uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// `enter(state, code)`: loads the guest state into host registers and jumps to a block.
    pub prologue: usize,
    /// Stores the guest state and returns from `enter`.
    pub epilogue: usize,
    /// The runtime's offsets `[budget_from, budget_to)` where the budget register holds
    /// the budget of the running code, as it does everywhere in blocks: where a host
    /// interrupt handler may make translated code leave (`a64::preempt`).
    pub budget_from: usize,
    /// See [`Runtime::budget_from`].
    pub budget_to: usize,
    /// Where an indirect branch that missed the target cache goes, with the guest target
    /// (instruction-set bit included) in the back end's target register: it raises a
    /// remembered Prefetch Abort there, or leaves to the dispatcher.
    pub indirect_miss: usize,
}

/// A code generator for some host.
pub trait CodeGen {
    /// Whether this back end translates `insn`; every other instruction ends the block
    /// and runs in the interpreter.
    fn supports(&self, insn: &Insn) -> bool;
    /// The fixed entry/exit code, placed at code cache offset 0. Returns the code and the
    /// offsets in it.
    fn runtime(&self) -> (Vec<u8>, Runtime);
    /// Translates `block` for code cache offset `at`.
    fn translate(&self, block: &GuestBlock, at: usize, rt: &Runtime) -> HostBlock;
    /// The instruction that makes the branch at `site` go to `target` (both cache
    /// offsets): used both to link (target = a block) and to unlink (target = the stub).
    fn branch(&self, site: usize, target: usize) -> [u8; 4];
}
