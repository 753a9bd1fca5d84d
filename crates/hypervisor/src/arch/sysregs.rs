//! Emulation of the system registers the guest's traps send here (`HCR_EL2.TID3`,
//! `TACR`, `TIDCP`, `TLOR`, `MDCR_EL2.TPM`): ID registers read sanitised values, `ACTLR_EL1`
//! reads its boot value and ignores writes; anything else is UNDEFINED.

use core::fmt;
use el2_core::exit::SysRegAccess;
use el2_core::vcpu::VcpuContext;
use vtimer::{PhysTimer, PhysTimerReg};

use crate::idregs::{self, IdPolicy, IdReg};

/// Per-machine policy, set once at boot.
static POLICY: spin::Once<IdPolicy> = spin::Once::new();

/// Sets the ID-register policy (once, at boot).
pub fn set_policy(p: IdPolicy) {
    POLICY.call_once(|| p);
}

/// Formats an encoding as `S<op0>_<op1>_C<n>_C<m>_<op2>`.
pub struct Name<'a>(pub &'a SysRegAccess);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        write!(f, "S{}_{}_C{}_C{}_{}", a.op0, a.op1, a.crn, a.crm, a.op2)
    }
}

/// Emulates `acc`; on success the caller steps over the instruction. `Err` says why the
/// access is refused (the caller logs and injects UNDEFINED).
pub fn emulate(
    acc: &SysRegAccess,
    ctx: &mut VcpuContext,
    ptimer: &mut PhysTimer,
) -> Result<(), &'static str> {
    let policy = POLICY.get().copied().unwrap_or(IdPolicy {
        pauth: false,
        ipa_parange: 2,
    });
    if let Some(reg) = PhysTimerReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) {
        // CNTP_*_EL0, trapped by CNTHCTL_EL2.EL1PCEN = 0: the emulated physical timer.
        let now = super::timer::now();
        if acc.is_read {
            ctx.regs.write(acc.rt, ptimer.read(reg, now));
        } else {
            ptimer.write(reg, ctx.regs.read(acc.rt), now);
        }
        return Ok(());
    }
    match (acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) {
        (3, 0, 0, crm @ 1..=7, op2) => {
            if !acc.is_read {
                return Err("ID registers are read-only");
            }
            let hw = super::cpu::read_id_register(crm, op2);
            let v = idregs::sanitize(IdReg { crm, op2 }, hw, &policy);
            ctx.regs.write(acc.rt, v);
            Ok(())
        }
        // ACTLR_EL1: IMPLEMENTATION DEFINED; reads see the value at VM creation.
        (3, 0, 1, 0, 1) => {
            if acc.is_read {
                let v = ctx.el1.actlr_el1;
                ctx.regs.write(acc.rt, v);
            }
            Ok(())
        }
        _ => Err("unknown or hidden system register"),
    }
}
