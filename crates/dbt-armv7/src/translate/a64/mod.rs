//! The A64 back end: guest ARMv7 (A32 for now) to AArch64 host code.
//!
//! Register mapping: guest `rN` (N = 0..=14) lives in host `xN`, zero-extended (every guest
//! register is written through a `W` form, so the top 32 bits stay zero and a guest
//! address in `xN` is a host address in the guest's low 4 GiB). The guest PC is never in a
//! register: instructions that read it get `PC + 8` as a constant. Guest NZCV is the host
//! NZCV. Fixed host registers: [`BUDGET`] (`x27`), [`STATE`] (`x28`, the
//! [`GuestState`](super::state::GuestState)); scratch: `x15`, `x16`, `x17`, `x19`, `x20`.

pub mod asm;
pub mod enc;
mod gen;
mod lower;

pub use gen::A64Gen;

/// Host register holding the remaining instruction budget (minus the block limit).
pub const BUDGET: u8 = 27;
/// Host register holding the address of the [`GuestState`](super::state::GuestState).
pub const STATE: u8 = 28;
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
/// The zero register in the forms where 31 is `WZR`.
pub const ZR: u8 = 31;
/// The stack pointer in the forms where 31 is `SP`.
pub const SP: u8 = 31;
