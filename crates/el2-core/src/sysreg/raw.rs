//! `read_sysreg!`/`write_sysreg!`: access by assembler name, without a type. Nothing in this
//! crate uses them; they remain exported for embedder code not yet written against the
//! typed registers (`aarch64-cpu`'s and this module's), which should be preferred.

/// Reads a system register given its assembler name (e.g. `"cntpct_el0"`).
#[macro_export]
#[doc(hidden)]
macro_rules! read_sysreg {
    ($name:literal) => {{
        let v: u64;
        // SAFETY: reading a system register has no memory effects; the caller chose a
        // register that is accessible at the current exception level.
        unsafe { core::arch::asm!(concat!("mrs {}, ", $name), out(reg) v, options(nomem, nostack, preserves_flags)) };
        v
    }};
}

/// Writes a system register given its assembler name.
#[macro_export]
#[doc(hidden)]
macro_rules! write_sysreg {
    ($name:literal, $v:expr) => {{
        let v: u64 = $v;
        // SAFETY: the caller owns the register it writes; no Rust-visible memory is
        // affected.
        unsafe { core::arch::asm!(concat!("msr ", $name, ", {}"), in(reg) v, options(nomem, nostack, preserves_flags)) };
    }};
}
