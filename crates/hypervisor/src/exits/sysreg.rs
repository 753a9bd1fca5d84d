//! Trapped AArch64 `MSR`/`MRS`/`SYS` (EC 0x18): what the guest's traps send here
//! (`HCR_EL2.TID3`, `TACR`, `TIDCP`, `TLOR`, `MDCR_EL2.TPM`/`TDA`, `CNTHCTL_EL2.EL1PCEN` = 0,
//! `ICH_HCR_EL2.TC` for GICv3 SGIs).
//!
//! - debug registers (`op0` = 2): the vCPU's first use makes them live (lazy switch);
//! - `ICC_SGI1R_EL1`/`ICC_ASGI1R_EL1`/`ICC_SGI0R_EL1` writes: SGIs through the virtual GIC;
//! - `CNTP_CTL_EL0`/`CNTP_CVAL_EL0`/`CNTP_TVAL_EL0`: the emulated physical timer;
//! - ID registers (`op0=3, op1=0, CRn=0, CRm=1..7`): sanitised hardware values, read-only;
//! - `ACTLR_EL1`: its value at VM creation, writes ignored;
//! - anything else is UNDEFINED.

use core::fmt;
use el2_core::exit::{regs, SysRegAccess};
use vgic::SgiReg;
use vtimer::PhysTimerReg;

use super::{ExitCtx, ExitHost, Outcome};
use crate::idregs::IdReg;
use crate::stats::ExitReason;

/// Formats an encoding as `S<op0>_<op1>_C<n>_C<m>_<op2>` (the assembler's generic name).
pub struct SysRegName<'a>(pub &'a SysRegAccess);

impl fmt::Display for SysRegName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        write!(f, "S{}_{}_C{}_C{}_{}", a.op0, a.op1, a.crn, a.crm, a.op2)
    }
}

/// A trapped system-register access or system instruction.
pub fn sys64<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::SysReg);
    let acc = SysRegAccess::from_iss(ctx.info.iss());
    if ctx.vm.claim_debug_registers(&acc) {
        // Live from now on: the guest re-executes the access untrapped.
        return Outcome::Emulated;
    }
    match emulate(ctx, &acc) {
        Ok(()) => {
            ctx.skip();
            Outcome::Emulated
        }
        Err(why) => {
            let dir = if acc.is_read { "read" } else { "write" };
            ctx.undefined(format_args!("{dir} of {}: {why}", SysRegName(&acc)))
        }
    }
}

/// Emulates `acc`; `Err` says why it is refused.
fn emulate<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, acc: &SysRegAccess) -> Result<(), &'static str> {
    let gprs = &mut ctx.vcpu.regs;
    if let Some(reg) = PhysTimerReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) {
        let now = ctx.vm.now();
        if acc.is_read {
            gprs.write(acc.rt, ctx.timer.read(reg, now));
        } else {
            ctx.timer.write(reg, gprs.read(acc.rt), now);
        }
        return Ok(());
    }
    if let Some(which) = SgiReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) {
        if acc.is_read {
            return Err("SGI generation registers are write-only");
        }
        let value = gprs.read(acc.rt);
        return match ctx.vm.write_sgi(which, value) {
            true => Ok(()),
            false => Err("no virtual GICv3 system-register interface"),
        };
    }
    if let Some(reg) = IdReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) {
        if !acc.is_read {
            return Err("ID registers are read-only");
        }
        let value = ctx.vm.id_register(reg);
        gprs.write(acc.rt, value);
        return Ok(());
    }
    if acc.encoding() == regs::ACTLR_EL1 {
        // IMPLEMENTATION DEFINED; reads see the value at VM creation, writes are ignored.
        if acc.is_read {
            let value = ctx.vcpu.el1.actlr_el1;
            ctx.vcpu.regs.write(acc.rt, value);
        }
        return Ok(());
    }
    Err("unknown or hidden system register")
}
