//! A trapped guest GICv3 CPU-interface access (`ICC_*_EL1` under `ICH_HCR_EL2.TC`/`TALL0`/
//! `TALL1`, ThunderX erratum 30115), emulated on the fast path: it must run before the vGIC
//! model reads the list registers back, as the hardware access it stands for would have.

use el2_core::exit::SysRegAccess;
use vgic::cpuif_trap::IccReg;

use super::fast::{Fast, FastCtx};
use super::ExitHost;
use crate::stats::ExitReason;

/// Emulates `acc` if it is a CPU-interface register the host traps; [`Fast::Slow`] otherwise
/// (the general path then refuses it as UNDEFINED with a log line).
pub(super) fn icc<H: ExitHost>(acc: &SysRegAccess, ctx: &mut FastCtx<'_, H>) -> Fast {
    let Some(reg) = IccReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) else {
        return Fast::Slow;
    };
    let value = ctx.vcpu.regs.read(acc.rt);
    match ctx.vm.cpuif_access(reg, acc.is_read, value) {
        Some(Ok(read)) => {
            if let Some(v) = read {
                ctx.vcpu.regs.write(acc.rt, v);
            }
            ctx.vcpu.regs.pc = ctx.vcpu.regs.pc.wrapping_add(4);
            ctx.stats.count(ExitReason::SysReg);
            // An EOI or deactivation may have freed a list register or ended a hardware
            // interrupt: flush before re-entering.
            Fast::Changed
        }
        Some(Err(_)) | None => Fast::Slow,
    }
}
