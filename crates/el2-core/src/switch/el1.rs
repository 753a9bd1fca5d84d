//! The guest's EL1 context as EL2 reaches it: one table of the EL1 register file, each row
//! with the register's name at EL2 without VHE and with VHE (`HCR_EL2.E2H` = 1 redirects the
//! EL1 names of some registers to EL2's own, so those are reached through their `*_EL12` /
//! `*_EL02` aliases; the others keep their names), and the pointer-authentication keys.
//! `VHE` is a compile-time choice: each backend's code reads only its own column.

use aarch64_cpu::registers::{
    ACTLR_EL1, AFSR0_EL1, AFSR1_EL1, AMAIR_EL1, CNTKCTL_EL1, CNTV_CTL_EL0, CNTV_CVAL_EL0,
    CONTEXTIDR_EL1, CPACR_EL1, CSSELR_EL1, ELR_EL1, ESR_EL1, FAR_EL1, MAIR_EL1, MDSCR_EL1, PAR_EL1,
    SCTLR_EL1, SPSR_EL1, SP_EL1, TCR_EL1, TPIDRRO_EL0, TPIDR_EL0, TPIDR_EL1, TTBR0_EL1, TTBR1_EL1,
    VBAR_EL1,
};
use tock_registers::interfaces::{Readable, Writeable};

use super::El1Reg;
use crate::sysreg::{
    AFSR0_EL12, AFSR1_EL12, AMAIR_EL12, APDAKEYHI_EL1, APDAKEYLO_EL1, APDBKEYHI_EL1, APDBKEYLO_EL1,
    APGAKEYHI_EL1, APGAKEYLO_EL1, APIAKEYHI_EL1, APIAKEYLO_EL1, APIBKEYHI_EL1, APIBKEYLO_EL1,
    CNTKCTL_EL12, CNTV_CTL_EL02, CNTV_CVAL_EL02, CONTEXTIDR_EL12, CPACR_EL12, ELR_EL12, ESR_EL12,
    FAR_EL12, MAIR_EL12, SCTLR_EL12, SPSR_EL12, TCR_EL12, TTBR0_EL12, TTBR1_EL12, VBAR_EL12,
};
use crate::vcpu::{El1SysRegs, PauthKeys};

/// The guest EL1 register file: `field (El1Reg variant, if the exit handlers reach it):
/// register without VHE, register with VHE;`, in save/restore order.
macro_rules! el1_file {
    ($m:ident) => {
        $m! {
            sctlr_el1 (Sctlr): SCTLR_EL1, SCTLR_EL12;
            actlr_el1: ACTLR_EL1, ACTLR_EL1;
            cpacr_el1: CPACR_EL1, CPACR_EL12;
            ttbr0_el1 (Ttbr0): TTBR0_EL1, TTBR0_EL12;
            ttbr1_el1 (Ttbr1): TTBR1_EL1, TTBR1_EL12;
            tcr_el1 (Tcr): TCR_EL1, TCR_EL12;
            esr_el1 (Esr): ESR_EL1, ESR_EL12;
            afsr0_el1: AFSR0_EL1, AFSR0_EL12;
            afsr1_el1: AFSR1_EL1, AFSR1_EL12;
            far_el1 (Far): FAR_EL1, FAR_EL12;
            mair_el1 (Mair): MAIR_EL1, MAIR_EL12;
            amair_el1: AMAIR_EL1, AMAIR_EL12;
            vbar_el1 (Vbar): VBAR_EL1, VBAR_EL12;
            contextidr_el1: CONTEXTIDR_EL1, CONTEXTIDR_EL12;
            tpidr_el0: TPIDR_EL0, TPIDR_EL0;
            tpidrro_el0: TPIDRRO_EL0, TPIDRRO_EL0;
            tpidr_el1: TPIDR_EL1, TPIDR_EL1;
            cntkctl_el1: CNTKCTL_EL1, CNTKCTL_EL12;
            par_el1: PAR_EL1, PAR_EL1;
            mdscr_el1: MDSCR_EL1, MDSCR_EL1;
            csselr_el1: CSSELR_EL1, CSSELR_EL1;
            sp_el1 (SpEl1): SP_EL1, SP_EL1;
            elr_el1 (Elr): ELR_EL1, ELR_EL12;
            spsr_el1 (Spsr): SPSR_EL1, SPSR_EL12;
            cntv_ctl_el0 (CntvCtl): CNTV_CTL_EL0, CNTV_CTL_EL02;
            cntv_cval_el0 (CntvCval): CNTV_CVAL_EL0, CNTV_CVAL_EL02;
        }
    };
}

/// The pointer-authentication keys: `field: low half, high half;`.
macro_rules! pauth_keys {
    ($m:ident) => {
        $m! {
            apia: APIAKEYLO_EL1, APIAKEYHI_EL1;
            apib: APIBKEYLO_EL1, APIBKEYHI_EL1;
            apda: APDAKEYLO_EL1, APDAKEYHI_EL1;
            apdb: APDBKEYLO_EL1, APDBKEYHI_EL1;
            apga: APGAKEYLO_EL1, APGAKEYHI_EL1;
        }
    };
}

/// Saves the guest's EL1 register file from the hardware.
pub(super) fn save<const VHE: bool>(r: &mut El1SysRegs) {
    macro_rules! save {
        ($($f:ident $(($v:ident))?: $nvhe:ident, $vhe:ident;)*) => {
            $( r.$f = if VHE { $vhe.get() } else { $nvhe.get() }; )*
        };
    }
    el1_file!(save);
}

/// Loads the guest's EL1 register file into the hardware.
pub(super) fn restore<const VHE: bool>(r: &El1SysRegs) {
    macro_rules! restore {
        ($($f:ident $(($v:ident))?: $nvhe:ident, $vhe:ident;)*) => {
            $( if VHE { $vhe.set(r.$f) } else { $nvhe.set(r.$f) } )*
        };
    }
    el1_file!(restore);
}

/// Reads the live copy of a guest EL1 register (between `vcpu_load` and `vcpu_put`).
pub(super) fn read<const VHE: bool>(reg: El1Reg) -> u64 {
    macro_rules! read {
        ($($f:ident $(($v:ident))?: $nvhe:ident, $vhe:ident;)*) => {
            match reg {
                $($( El1Reg::$v => if VHE { $vhe.get() } else { $nvhe.get() }, )?)*
                // The AArch32 registers (same name with and without VHE).
                _ => super::aarch32::read(reg).unwrap_or(0),
            }
        };
    }
    el1_file!(read)
}

/// Writes the live copy of a guest EL1 register (between `vcpu_load` and `vcpu_put`).
pub(super) fn write<const VHE: bool>(reg: El1Reg, value: u64) {
    macro_rules! write {
        ($($f:ident $(($v:ident))?: $nvhe:ident, $vhe:ident;)*) => {
            match reg {
                $($( El1Reg::$v => if VHE { $vhe.set(value) } else { $nvhe.set(value) }, )?)*
                // The AArch32 registers (same name with and without VHE).
                _ => {
                    super::aarch32::write(reg, value);
                }
            }
        };
    }
    el1_file!(write)
}

/// Disables the guest's virtual timer (`CNTV_CTL_EL0`), saved by [`save`] before.
pub(super) fn stop_vtimer<const VHE: bool>() {
    if VHE {
        CNTV_CTL_EL02.set(0)
    } else {
        CNTV_CTL_EL0.set(0)
    }
}

/// Saves the pointer-authentication keys.
pub(super) fn save_pauth(k: &mut PauthKeys) {
    macro_rules! save {
        ($($f:ident: $lo:ident, $hi:ident;)*) => { $( k.$f = [$lo.get(), $hi.get()]; )* };
    }
    pauth_keys!(save);
}

/// Loads the pointer-authentication keys.
pub(super) fn restore_pauth(k: &PauthKeys) {
    macro_rules! restore {
        ($($f:ident: $lo:ident, $hi:ident;)*) => { $( $lo.set(k.$f[0]); $hi.set(k.$f[1]); )* };
    }
    pauth_keys!(restore);
}
