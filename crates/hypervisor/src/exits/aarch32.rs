//! Trapped AArch32 coprocessor accesses: `MCR`/`MRC`/`MCRR`/`MRRC` to CP15 and CP14, CP14
//! `LDC`/`STC`, `VMRS` of an ID register (EC 0x03, 0x04, 0x05, 0x06, 0x08, 0x0C).
//!
//! They come from AArch32 EL1 guests (`HCR_EL2.RW` = 0: an ARMv7-A kernel in hardware) and
//! from AArch32 applications at EL0 of AArch64 guests. An access that failed its condition
//! code check does nothing, as the architecture requires (a conditional instruction may
//! trap before its condition is evaluated: `ESR_EL2.ISS.CV`/`COND`, or `PSTATE.IT` for T32).
//! Otherwise:
//! - CP14 debug registers (`opc1` = 0, trapped by `MDCR_EL2.TDA`): the vCPU's first use
//!   makes its debug registers live (as for `op0` = 2 in AArch64) and the guest re-executes
//!   the access untrapped;
//! - the CP15 registers of `cp15.rs` are emulated;
//! - anything else is UNDEFINED, with a log line naming the encoding.

use el2_core::exit::{Cp32Access, Cp32Kind, SysRegAccess};

use super::cp15::{self, Cp15Reg};
use super::pstate::{is_aarch32, T32};
use super::{ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// `ISS.CV`: the `COND` field is valid.
const ISS_CV: u32 = 1 << 24;
/// `ISS.COND`, bits [23:20].
const ISS_COND_SHIFT: u32 = 20;
/// Mask of a 4-bit condition code.
const COND_MASK: u32 = 0xf;
/// `PSTATE.{N,Z,C,V}` start at bit 28.
const NZCV_SHIFT: u32 = 28;
/// `op0` of the AArch64 debug register space the CP14 `opc1` = 0 registers map onto.
const OP0_DEBUG: u8 = 2;

/// An AArch32 coprocessor access.
pub fn coprocessor<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::SysReg);
    let Some(acc) = Cp32Access::from_esr(ctx.info.ec(), ctx.info.iss()) else {
        return super::refuse::unallocated(ctx);
    };
    if !condition_passed(ctx.info.iss(), ctx.vcpu.regs.pstate) {
        ctx.skip();
        return Outcome::Emulated;
    }
    if acc.coproc == 14 && acc.opc1 == 0 && acc.kind != Cp32Kind::Ldc {
        let debug = SysRegAccess {
            op0: OP0_DEBUG,
            op1: acc.opc1,
            crn: acc.crn,
            crm: acc.crm,
            op2: acc.opc2,
            rt: acc.rt,
            is_read: acc.is_read,
        };
        if ctx.vm.claim_debug_registers(&debug) {
            return Outcome::Emulated;
        }
    }
    match emulate(ctx, &acc) {
        Ok(()) => {
            ctx.skip();
            Outcome::Emulated
        }
        Err(why) => refuse(ctx, &acc, why),
    }
}

/// Emulates `acc`; `Err` says why it is refused.
fn emulate<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, acc: &Cp32Access) -> Result<(), &'static str> {
    let reg = Cp15Reg::from_access(acc).ok_or("no such register is emulated")?;
    // ISS.Rt/Rt2 give the AArch64 view of the AArch32 registers (the current mode's banked
    // R8..R14 are among X13..X30 already).
    let (rt, rt2) = (acc.rt, acc.rt2);
    let wide = acc.kind == Cp32Kind::Mcrr;
    let gprs = &mut ctx.vcpu.regs;
    // The value of a write: Rt, or Rt2:Rt for MCRR.
    let low = gprs.read(rt) & u64::from(u32::MAX);
    let value = if wide {
        low | (gprs.read(rt2) << u32::BITS)
    } else {
        low
    };
    let read: u64 = match reg {
        Cp15Reg::Id(id) if acc.is_read => {
            cp15::id_value(id, ctx.vm.hw_id_register(id), &ctx.vm.id_policy())
        }
        Cp15Reg::Id(_) => return Err("ID registers are read-only"),
        Cp15Reg::Actlr if acc.is_read => ctx.vcpu.el1.actlr_el1,
        Cp15Reg::Actlr2 if acc.is_read => 0,
        Cp15Reg::Actlr | Cp15Reg::Actlr2 => return Ok(()), // IMPLEMENTATION DEFINED: ignored
        Cp15Reg::PhysTimer(t) => {
            let now = ctx.vm.now();
            if !acc.is_read {
                ctx.timer.write(t, value, now);
                return Ok(());
            }
            ctx.timer.read(t, now)
        }
        Cp15Reg::Sgi(_) if acc.is_read => return Err("SGI generation registers are write-only"),
        Cp15Reg::Sgi(which) => {
            return match ctx.vm.write_sgi(which, value) {
                true => Ok(()),
                false => Err("no virtual GICv3 system-register interface"),
            }
        }
    };
    let gprs = &mut ctx.vcpu.regs;
    gprs.write(rt, read & u64::from(u32::MAX));
    if wide {
        gprs.write(rt2, read >> u32::BITS);
    }
    Ok(())
}

/// Logs the access and makes it UNDEFINED.
#[cold]
#[inline(never)]
fn refuse<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, acc: &Cp32Access, why: &str) -> Outcome {
    let op = match (acc.kind, acc.is_read) {
        (Cp32Kind::Mcr, true) => "MRC",
        (Cp32Kind::Mcr, false) => "MCR",
        (Cp32Kind::Mcrr, true) => "MRRC",
        (Cp32Kind::Mcrr, false) => "MCRR",
        (Cp32Kind::Ldc, true) => "LDC",
        (Cp32Kind::Ldc, false) => "STC",
        (Cp32Kind::Vmrs, _) => "VMRS",
    };
    ctx.undefined(format_args!(
        "AArch32 {op} p{}, {}, c{}, c{}, {}: {why}",
        acc.coproc, acc.opc1, acc.crn, acc.crm, acc.opc2
    ))
}

/// Whether a trapped AArch32 instruction passes its condition check: from `ISS.COND` when
/// `ISS.CV` is set, else from the T32 `IT` state in `pstate` (none: unconditional).
/// Always true for an AArch64 caller.
pub fn condition_passed(iss: u32, pstate: u64) -> bool {
    if !is_aarch32(pstate) {
        return true;
    }
    let cond = if iss & ISS_CV != 0 {
        (iss >> ISS_COND_SHIFT) & COND_MASK
    } else {
        let it = el2_core::aarch32::itstate(pstate);
        if pstate & T32 == 0 || it == 0 {
            return true;
        }
        // ITSTATE[7:4]: the condition of the current instruction.
        (it >> 4) as u32
    };
    condition_holds(cond, (pstate >> NZCV_SHIFT) as u32 & COND_MASK)
}

/// Arm ARM "ConditionHolds": condition code `cond` against flags `nzcv` (N = bit 3).
fn condition_holds(cond: u32, nzcv: u32) -> bool {
    let (n, z, c, v) = (nzcv & 8 != 0, nzcv & 4 != 0, nzcv & 2 != 0, nzcv & 1 != 0);
    let base = match cond >> 1 {
        0b000 => z,            // EQ / NE
        0b001 => c,            // CS / CC
        0b010 => n,            // MI / PL
        0b011 => v,            // VS / VC
        0b100 => c && !z,      // HI / LS
        0b101 => n == v,       // GE / LT
        0b110 => n == v && !z, // GT / LE
        _ => return true,      // AL (0b1110) and 0b1111
    };
    if cond & 1 != 0 {
        !base
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PSTATE` of AArch32 user mode with flags `nzcv`.
    fn usr(nzcv: u64) -> u64 {
        super::super::pstate::NRW | (nzcv << NZCV_SHIFT)
    }

    #[test]
    fn conditions() {
        let cv = |cond: u32| ISS_CV | (cond << ISS_COND_SHIFT);
        // EQ with Z set / clear; NE the opposite.
        assert!(condition_passed(cv(0x0), usr(0b0100)));
        assert!(!condition_passed(cv(0x0), usr(0)));
        assert!(condition_passed(cv(0x1), usr(0)));
        // GE: N == V; LT: N != V.
        assert!(condition_passed(cv(0xa), usr(0b1001)));
        assert!(!condition_passed(cv(0xb), usr(0b1001)));
        // HI: C and not Z.
        assert!(condition_passed(cv(0x8), usr(0b0010)));
        assert!(!condition_passed(cv(0x8), usr(0b0110)));
        // AL and the 0b1111 encoding always pass.
        assert!(condition_passed(cv(0xe), usr(0)));
        assert!(condition_passed(cv(0xf), usr(0)));
        // No CV, A32 (no IT state): unconditional.
        assert!(condition_passed(0, usr(0)));
        // AArch64 callers have no condition.
        assert!(condition_passed(cv(0x0), 0));
    }

    #[test]
    fn t32_it_block() {
        // IT state 0x08 (EQ, first instruction of the block): IT[7:2] = 0b000010, IT[1:0] = 0.
        let it_eq = (0b00_0010_u64 << 10) | T32;
        assert!(!condition_passed(0, usr(0) | it_eq));
        assert!(condition_passed(0, usr(0b0100) | it_eq));
    }
}
