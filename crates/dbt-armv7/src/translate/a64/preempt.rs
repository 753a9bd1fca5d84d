//! Preemption of translated code by a host interrupt: the host's interrupt handler makes
//! the interrupted code leave at its next budget check (every linkable exit, loop
//! back-edge and indirect branch checks [`BUDGET`]'s sign, so no loop runs without one)
//! by subtracting [`PREEMPT`] from the budget register of the interrupted context. The
//! engine adds it back to the budget the code returns with ([`Dbt`](crate::translate::Dbt)),
//! so the instructions run are counted exactly, and then looks at the interrupt lines at
//! its dispatch as it does at every block boundary.
//!
//! The register holds the budget only inside blocks and in the part of the runtime between
//! the prologue's load of it and the epilogue's store ([`BudgetSites`]); elsewhere (the
//! prologue before the load, the epilogue after the store, host code that translated code
//! calls) it may hold the host's own value, which must not change.

use core::ops::Range;

use super::gen::A64Gen;
use super::{BUDGET, STATE};
use crate::translate::backend::CodeGen;
use crate::translate::state::{GuestState, OFF_DAIF, PREEMPT};

/// The host addresses of one code cache at which [`BUDGET`] holds the running code's
/// budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetSites {
    /// The runtime's part (after the prologue's load, up to the epilogue's store).
    runtime: Range<u64>,
    /// The blocks: everything after the runtime.
    blocks: Range<u64>,
}

impl BudgetSites {
    /// The sites of the code cache `[base, end)` of an engine that generates with
    /// [`A64Gen`] (its runtime at offset 0, blocks after it).
    pub fn new(base: u64, end: u64) -> BudgetSites {
        let (code, rt) = A64Gen::new().runtime();
        BudgetSites {
            runtime: base + rt.budget_from as u64..base + rt.budget_to as u64,
            blocks: base + code.len() as u64..end,
        }
    }

    /// Whether an interrupt taken at `pc` (the address of the next instruction to run)
    /// finds the budget in [`BUDGET`].
    pub fn contains(&self, pc: u64) -> bool {
        self.blocks.contains(&pc) || self.runtime.contains(&pc)
    }
}

/// Makes the translated code interrupted with registers `x` (`x0`-`x30`) leave at its next
/// budget check: [`PREEMPT`] subtracted from its budget register, once however many
/// interrupts come before it leaves, and its [`GuestState::daif`] cleared so that the
/// epilogue does not touch the host's masks (the handler returns with them set). Returns
/// whether the budget was changed now (false: an earlier interrupt did it).
///
/// # Safety
///
/// The context was interrupted at an address that [`BudgetSites::contains`] for the code
/// cache of a running engine: its `x28` is the engine's [`GuestState`].
pub unsafe fn preempt(x: &mut [u64; 31]) -> bool {
    let state = x[STATE as usize] as *mut GuestState;
    // SAFETY: the caller's contract: x28 is the running engine's GuestState, which nothing
    // else writes while its translated code is interrupted on this PE.
    unsafe { core::ptr::write_volatile((state as *mut u8).add(OFF_DAIF as usize) as *mut u32, 0) };
    let budget = x[BUDGET as usize] as i64;
    if budget < -(PREEMPT / 2) {
        return false;
    }
    x[BUDGET as usize] = budget.wrapping_sub(PREEMPT) as u64;
    true
}
