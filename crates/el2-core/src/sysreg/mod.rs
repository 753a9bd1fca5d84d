//! The system registers `aarch64-cpu` lacks, defined once, in its style.
//!
//! Everywhere else in the crate (and in the hypervisor) a system register is an
//! `aarch64-cpu` register (`HCR_EL2.set(..)`, `ESR_EL2.get()`, `HCR_EL2::VM::Enable`) or one
//! of the registers below, which have the same `tock-registers` interface (`Readable`,
//! `Writeable`, field types for `read`/`write`):
//!
//! - [`fields`] (every target): field layouts `aarch64-cpu` does not describe — the
//!   `HCR_EL2.E2H` = 1 layouts of `CPTR_EL2` and `CNTHCTL_EL2`, the E2H = 0 `CPTR_EL2` trap
//!   bits, the GICv3 CPU interface, `PMCR_EL0.N`, `ID_AA64ISAR2_EL1`'s pointer-auth fields.
//! - `el12` (AArch64): the `*_EL12`/`*_EL02` names through which VHE EL2 reaches the
//!   guest's EL1 registers, typed with the fields of the register they alias.
//! - `registers` (AArch64): registers the crate lacks (`VPIDR_EL2`, `ID_AA64ISAR2_EL1`,
//!   `PMCR_EL0`, the `ICC_*_EL1` CPU interface) or names only with the feature enabled in the
//!   assembler (the pointer-authentication keys).
//! - `indexed` (AArch64): register families indexed by number (`DBGBCR<n>_EL1`...) and the
//!   ID register space by encoding, for emulating trapped ID reads.
//!
//! The raw encodings (`s3_5_c1_c0_0`...) appear only in these tables.

// The table macros come first: the modules below use them.
/// Implements `tock-registers`' `Readable` (`R`) and/or `Writeable` (`W`) for `$name`, the
/// system register with assembler name `$enc`, whose fields are `$fields`.
#[cfg(target_arch = "aarch64")]
macro_rules! sys_reg_access {
    (R, $name:ident, $enc:literal, $fields:ty) => {
        impl tock_registers::interfaces::Readable for $name {
            type T = u64;
            type R = $fields;

            #[inline]
            fn get(&self) -> u64 {
                let v;
                // SAFETY: an MRS of a register that exists at EL2, where this crate runs;
                // it reads CPU state only, no memory.
                unsafe {
                    core::arch::asm!(concat!("mrs {}, ", $enc), out(reg) v,
                        options(nomem, nostack, preserves_flags))
                };
                v
            }
        }
    };
    (W, $name:ident, $enc:literal, $fields:ty) => {
        impl tock_registers::interfaces::Writeable for $name {
            type T = u64;
            type R = $fields;

            #[inline]
            fn set(&self, value: u64) {
                // SAFETY: an MSR of a register that exists at EL2; it changes CPU state
                // only, no Rust-visible memory. What the value means (traps, translation,
                // interrupts) is the caller's business, as for `aarch64-cpu`'s registers.
                unsafe {
                    core::arch::asm!(concat!("msr ", $enc, ", {}"), in(reg) value,
                        options(nomem, nostack, preserves_flags))
                };
            }
        }
    };
}

/// Defines system registers, one per row: `NAME: "assembler name", Fields, R W;` becomes a
/// unit struct `NAME` (used like `aarch64-cpu`'s: `NAME.get()`, `NAME.write(..)`) that is
/// `Readable` with `R` and `Writeable` with `W`, its fields typed by `Fields` (an
/// `aarch64-cpu`/[`fields`] `::Register`, or `()`).
#[cfg(target_arch = "aarch64")]
macro_rules! sys_regs {
    ($( $(#[$doc:meta])* $name:ident: $enc:literal, $fields:ty, $($access:ident)+; )*) => {
        $(
            $(#[$doc])*
            #[allow(non_camel_case_types)]
            #[derive(Debug, Clone, Copy)]
            pub struct $name;
            $( sys_reg_access!($access, $name, $enc, $fields); )+
        )*
    };
}

pub mod fields;

#[cfg(target_arch = "aarch64")]
mod el12;
#[cfg(target_arch = "aarch64")]
mod indexed;
#[cfg(target_arch = "aarch64")]
mod registers;

#[cfg(target_arch = "aarch64")]
pub use el12::*;
#[cfg(target_arch = "aarch64")]
pub use indexed::*;
#[cfg(target_arch = "aarch64")]
pub use registers::*;
