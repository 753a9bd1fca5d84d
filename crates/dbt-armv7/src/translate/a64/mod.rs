//! The A64 back end: guest ARMv7 (A32 for now) to AArch64 host code.
//!
//! Register mapping: guest `rN` (N = 0..=14) lives in host `xN`, zero-extended (every guest
//! register is written through a `W` form, so the top 32 bits stay zero and a guest
//! address in `xN` is a host address in the guest's low 4 GiB). The guest PC is never in a
//! register: instructions that read it get `PC + 8` as a constant. Guest NZCV is the host
//! NZCV. Fixed host registers: [`BUDGET`] (`x27`), [`STATE`] (`x28`, the
//! [`GuestState`](super::state::GuestState)); scratch: `x15`-`x17`, `x19`-`x23`.

pub mod asm;
mod cp15_inline;
pub mod cpu_fields;
pub mod enc;
pub mod enc_alu;
pub mod enc_excl;
pub mod enc_fp;
mod exception;
mod fast_abort;
mod fetch_abort_call;
mod gen;
mod indirect;
mod lower;
mod lower_bits;
mod lower_mul;
mod lower_pair;
mod neon;
mod neon_mem;
pub mod preempt;
mod psr_inline;
mod shift_reg;
mod ttbr_inline;
pub mod vfp;
pub mod vfp_host;

pub use fast_abort::{deliver_at_site, deliver_guest_abort, deliver_remembered};
pub use gen::A64Gen;

use super::state::EXIT_FAULT;

/// Host register holding the remaining instruction budget (minus the block limit).
pub const BUDGET: u8 = 27;
/// Host register holding the address of the [`GuestState`](super::state::GuestState).
pub const STATE: u8 = 28;
/// Host register holding the shadow return stack's address.
pub const RAS: u8 = 24;
/// Host register holding the indirect branch target cache's address.
pub const IBTC: u8 = 25;
/// Host register holding the byte offset of the return stack's top entry.
pub const RAS_TOP: u8 = 26;
/// Scratch: saved flags; the link site in exit stubs.
pub const T_FLAGS: u8 = 15;
/// Scratch: computed addresses, new flags; the guest PC in exit stubs.
pub const T_ADDR: u8 = 16;
/// Scratch: the second operand; the exit reason in exit stubs.
pub const T_OP2: u8 = 17;
/// Scratch: the shifter carry-out.
pub const T_CARRY: u8 = 19;
/// Scratch: results that no guest register receives (`TST`, `CMP`, ...).
pub const T_RES: u8 = 20;
/// Scratch: a register shift amount.
pub const T_AMT: u8 = 21;
/// Scratch: temporaries of multi-instruction lowerings.
pub const T_TMP: u8 = 22;
/// Scratch: the new PC of a guest instruction that writes it (loads, `LDM`, ALU).
pub const T_PCV: u8 = 23;
/// The zero register in the forms where 31 is `WZR`.
pub const ZR: u8 = 31;
/// The stack pointer in the forms where 31 is `SP`.
pub const SP: u8 = 31;

/// The host's fault handler calls this when a synchronous data abort (a signal on a Linux
/// host, a Stage-2 or EL2 abort in the hypervisor) interrupts the host context `x`
/// (`x0`-`x30`) at `pc`, accessing data address `addr`. If `pc` is inside the code cache
/// `cache`, it redirects the context to the runtime's epilogue at `epilogue` (a host
/// address) with the data address in [`T_ADDR`], the faulting instruction's address in
/// [`T_FLAGS`] and [`EXIT_FAULT`](super::state::EXIT_FAULT) in [`T_OP2`], and
/// returns true; resuming the context then leaves translated code with the guest state
/// of the faulting guest instruction's start, which [`Dbt`](super::Dbt) finds through
/// its side tables and runs again in the interpreter. Returns false (context untouched)
/// for a fault outside the code cache.
///
/// Only guest memory accesses fault in translated code, and every lowering performs its
/// first access before it writes any guest register, so the registers are exact.
pub fn redirect_fault(
    x: &mut [u64; 31],
    pc: &mut u64,
    addr: u64,
    cache: core::ops::Range<u64>,
    epilogue: u64,
) -> bool {
    if !cache.contains(pc) {
        return false;
    }
    x[T_ADDR as usize] = addr;
    x[T_FLAGS as usize] = *pc;
    x[T_OP2 as usize] = EXIT_FAULT as u64;
    *pc = epilogue;
    true
}
