//! Raw system-register access by encoding name, for registers `aarch64-cpu` does not
//! model (the `*_EL12`/`*_EL02` aliases of VHE, pointer-authentication keys) and for
//! table-driven save/restore.

/// Reads a system register given its assembler name (e.g. `"s3_5_c1_c0_0"` for
/// `SCTLR_EL12`).
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
        // SAFETY: the caller is the world switch, which owns the EL1/EL2 context registers
        // it writes here; no Rust-visible memory is affected.
        unsafe { core::arch::asm!(concat!("msr ", $name, ", {}"), in(reg) v, options(nomem, nostack, preserves_flags)) };
    }};
}

/// The guest EL1 system-register file: (field of `El1SysRegs`, name at EL2 without E2H,
/// name at EL2 with E2H=1). Registers that VHE redirects are reached through their
/// `*_EL12`/`*_EL02` encodings; the others keep their EL1/EL0 names.
macro_rules! for_each_el1_reg {
    ($m:ident) => {
        $m! {
            sctlr_el1: "sctlr_el1", "s3_5_c1_c0_0";
            actlr_el1: "actlr_el1", "actlr_el1";
            cpacr_el1: "cpacr_el1", "s3_5_c1_c0_2";
            ttbr0_el1: "ttbr0_el1", "s3_5_c2_c0_0";
            ttbr1_el1: "ttbr1_el1", "s3_5_c2_c0_1";
            tcr_el1: "tcr_el1", "s3_5_c2_c0_2";
            esr_el1: "esr_el1", "s3_5_c5_c2_0";
            afsr0_el1: "afsr0_el1", "s3_5_c5_c1_0";
            afsr1_el1: "afsr1_el1", "s3_5_c5_c1_1";
            far_el1: "far_el1", "s3_5_c6_c0_0";
            mair_el1: "mair_el1", "s3_5_c10_c2_0";
            amair_el1: "amair_el1", "s3_5_c10_c3_0";
            vbar_el1: "vbar_el1", "s3_5_c12_c0_0";
            contextidr_el1: "contextidr_el1", "s3_5_c13_c0_1";
            tpidr_el0: "tpidr_el0", "tpidr_el0";
            tpidrro_el0: "tpidrro_el0", "tpidrro_el0";
            tpidr_el1: "tpidr_el1", "tpidr_el1";
            cntkctl_el1: "cntkctl_el1", "s3_5_c14_c1_0";
            par_el1: "par_el1", "par_el1";
            mdscr_el1: "mdscr_el1", "mdscr_el1";
            csselr_el1: "csselr_el1", "csselr_el1";
            sp_el1: "sp_el1", "sp_el1";
            elr_el1: "elr_el1", "s3_5_c4_c0_1";
            spsr_el1: "spsr_el1", "s3_5_c4_c0_0";
            cntv_ctl_el0: "cntv_ctl_el0", "s3_5_c14_c3_1";
            cntv_cval_el0: "cntv_cval_el0", "s3_5_c14_c3_2";
        }
    };
}

/// Pointer-authentication key registers: (field, index, Lo name, Hi name).
macro_rules! for_each_pauth_key {
    ($m:ident) => {
        $m! {
            apia: "s3_0_c2_c1_0", "s3_0_c2_c1_1";
            apib: "s3_0_c2_c1_2", "s3_0_c2_c1_3";
            apda: "s3_0_c2_c2_0", "s3_0_c2_c2_1";
            apdb: "s3_0_c2_c2_2", "s3_0_c2_c2_3";
            apga: "s3_0_c2_c3_0", "s3_0_c2_c3_1";
        }
    };
}

use crate::vcpu::{El1SysRegs, PauthKeys};

/// Saves the EL1 register file using the non-VHE (plain EL1) names.
pub(crate) fn save_el1_nvhe(r: &mut El1SysRegs) {
    macro_rules! save {
        ($($f:ident: $n:literal, $v:literal;)*) => { $( r.$f = read_sysreg!($n); )* };
    }
    for_each_el1_reg!(save);
}

/// Restores the EL1 register file using the non-VHE names.
pub(crate) fn restore_el1_nvhe(r: &El1SysRegs) {
    macro_rules! restore {
        ($($f:ident: $n:literal, $v:literal;)*) => { $( write_sysreg!($n, r.$f); )* };
    }
    for_each_el1_reg!(restore);
}

/// Saves the EL1 register file through the VHE `*_EL12` aliases.
pub(crate) fn save_el1_vhe(r: &mut El1SysRegs) {
    macro_rules! save {
        ($($f:ident: $n:literal, $v:literal;)*) => { $( r.$f = read_sysreg!($v); )* };
    }
    for_each_el1_reg!(save);
}

/// Restores the EL1 register file through the VHE `*_EL12` aliases.
pub(crate) fn restore_el1_vhe(r: &El1SysRegs) {
    macro_rules! restore {
        ($($f:ident: $n:literal, $v:literal;)*) => { $( write_sysreg!($v, r.$f); )* };
    }
    for_each_el1_reg!(restore);
}

/// Saves the pointer-authentication keys.
pub(crate) fn save_pauth(k: &mut PauthKeys) {
    macro_rules! save {
        ($($f:ident: $lo:literal, $hi:literal;)*) => { $( k.$f = [read_sysreg!($lo), read_sysreg!($hi)]; )* };
    }
    for_each_pauth_key!(save);
}

/// Restores the pointer-authentication keys.
pub(crate) fn restore_pauth(k: &PauthKeys) {
    macro_rules! restore {
        ($($f:ident: $lo:literal, $hi:literal;)*) => { $( write_sysreg!($lo, k.$f[0]); write_sysreg!($hi, k.$f[1]); )* };
    }
    for_each_pauth_key!(restore);
}
