//! `HVC` and trapped `SMC` (`HCR_EL2.TSC`) from AArch64 and AArch32: SMC Calling Convention
//! calls. The hypervisor's vendor calls (SMCCC owner 6) first, then the Arm architecture
//! calls and PSCI through `el2_core::smccc::dispatch`; anything else returns
//! `NOT_SUPPORTED` in x0.
//!
//! AArch32 callers use the SMC32/HVC32 convention: function ID and arguments in `W0..W6`,
//! results in `W0..W3`. An SMC64 function ID from AArch32 is not a valid call
//! (SMCCC 1.1, 2.5): it gets `NOT_SUPPORTED`.

use el2_core::psci::PSCI_FEATURES;
use el2_core::smccc::{self, CallOutcome, SmcccCall, SMCCC_ARCH_FEATURES, SMCCC_RET_NOT_SUPPORTED};

use super::aarch32::condition_passed;
use super::{ExitCtx, ExitHost, Outcome, VmEnd};
use crate::stats::ExitReason;

/// Vendor-specific hypervisor service (SMCCC owner 6), function 1: give up the physical CPU
/// to the next runnable vCPU (used to measure VM-to-VM switches; returns 0 in x0).
pub const HV_YIELD: u32 = 0x8600_0001;

/// Vendor-specific hypervisor service (SMCCC owner 6), function 2: x1 = an exit reason's
/// index (the order of [`ExitReason`]); returns in x0 how many exits of that reason the
/// calling vCPU has taken so far, this call included, or `NOT_SUPPORTED` for an index out
/// of range. Lets a guest attribute exits to its own operations.
pub const HV_EXIT_COUNT: u32 = 0x8600_0002;

/// `NOT_SUPPORTED` as a register value.
const NOT_SUPPORTED: u64 = SMCCC_RET_NOT_SUPPORTED as u64;

/// SMCCC owner number of the vendor-specific hypervisor service calls.
const OWNER_VENDOR_HYP: u8 = 6;

/// Which calling convention the caller used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Convention {
    /// From AArch64: X registers, SMC32 and SMC64 function IDs.
    Aarch64,
    /// From AArch32: W registers, SMC32 function IDs only.
    Aarch32,
}

/// `HVC #imm` from AArch64 (EC 0x16). `ELR_EL2` already points after the `HVC`.
pub fn hvc64<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Hvc);
    hvc(ctx, Convention::Aarch64)
}

/// `HVC #imm` from AArch32 (EC 0x12): the SMC32 convention on the W registers.
pub fn hvc32<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Hvc);
    hvc(ctx, Convention::Aarch32)
}

/// `SMC` from AArch64 (EC 0x17), trapped by `HCR_EL2.TSC`: `ELR_EL2` points at the `SMC`.
/// Guests call PSCI through HVC, but an SMC caller gets the same answers.
pub fn smc64<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Smc);
    ctx.skip();
    call(ctx, Convention::Aarch64)
}

/// `SMC` from AArch32 (EC 0x13). A conditional `SMC` that failed its condition check
/// (`ISS.CCKNOWNPASS`) does nothing.
pub fn smc32<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    ctx.stats.count(ExitReason::Smc);
    // Checked before the step, which advances the T32 IT state.
    let passed = condition_passed(ctx.info.iss(), ctx.vcpu.regs.pstate);
    ctx.skip();
    if !passed {
        return Outcome::Emulated;
    }
    call(ctx, Convention::Aarch32)
}

/// An `HVC`: SMCCC calls use immediate 0; any other immediate is not a call we know.
#[inline(always)]
fn hvc<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, conv: Convention) -> Outcome {
    let imm = ctx.info.imm16();
    if imm != 0 {
        return not_smccc(ctx, imm);
    }
    call(ctx, conv)
}

/// An `HVC` with a non-zero immediate: `NOT_SUPPORTED` in x0, and a warning.
#[cold]
#[inline(never)]
fn not_smccc<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, imm: u16) -> Outcome {
    ctx.vm.warn(format_args!(
        "HVC #{imm:#x} is not an SMCCC call; returning NOT_SUPPORTED"
    ));
    ctx.vcpu.regs.x[0] = NOT_SUPPORTED;
    Outcome::Refused
}

/// One SMCCC call with the registers as the guest left them.
fn call<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, conv: Convention) -> Outcome {
    let x = &ctx.vcpu.regs.x;
    let call = SmcccCall::new(x[0], [x[1], x[2], x[3], x[4], x[5], x[6]]);
    if conv == Convention::Aarch32 && call.is_smc64() {
        return unsupported(ctx, call.function_id);
    }
    if call.owner() == OWNER_VENDOR_HYP {
        if let Some(outcome) = vendor(ctx, &call) {
            return outcome;
        }
    }
    match smccc::dispatch(&call, ctx.vm) {
        CallOutcome::Return(r) => {
            let regs = &mut ctx.vcpu.regs.x;
            match conv {
                Convention::Aarch64 => regs[..r.len()].copy_from_slice(&r),
                Convention::Aarch32 => {
                    for (reg, value) in regs.iter_mut().zip(r) {
                        *reg = value & u64::from(u32::MAX);
                    }
                }
            }
            // PSCI_FEATURES and SMCCC_ARCH_FEATURES answer NOT_SUPPORTED about *another*
            // function; only calls that are themselves unknown are refusals.
            let is_query = matches!(call.function_id, PSCI_FEATURES | SMCCC_ARCH_FEATURES);
            if r[0] == NOT_SUPPORTED && !is_query {
                return unsupported(ctx, call.function_id);
            }
            Outcome::Emulated
        }
        other => power(ctx, other),
    }
}

/// A PSCI call that changes the power state of the vCPU or its VM.
#[cold]
#[inline(never)]
fn power<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, outcome: CallOutcome) -> Outcome {
    match outcome {
        CallOutcome::Return(_) => Outcome::Emulated,
        CallOutcome::SystemOff => {
            ctx.vm.info(format_args!("PSCI SYSTEM_OFF"));
            ctx.vm.end_vm(VmEnd::PowerOff);
            Outcome::Yield
        }
        CallOutcome::SystemReset => {
            ctx.vm.info(format_args!("PSCI SYSTEM_RESET"));
            ctx.vm.end_vm(VmEnd::Reset);
            Outcome::Yield
        }
        CallOutcome::CpuOff => {
            if ctx.vm.cpu_off() {
                ctx.vm.info(format_args!("every vCPU called PSCI CPU_OFF"));
                ctx.vm.end_vm(VmEnd::PowerOff);
            }
            Outcome::Yield
        }
        CallOutcome::CpuSuspend { .. } => {
            // Treated as a standby that wakes at once (PSCI permits returning SUCCESS).
            ctx.vcpu.regs.x[0] = 0;
            Outcome::Emulated
        }
    }
}

/// The hypervisor's own calls (SMCCC owner 6); `None` for a function served elsewhere.
fn vendor<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, call: &SmcccCall) -> Option<Outcome> {
    let x = &mut ctx.vcpu.regs.x;
    match call.function_id {
        HV_YIELD => {
            x[0] = 0;
            Some(Outcome::Yield)
        }
        HV_EXIT_COUNT => {
            let index = usize::try_from(x[1]).unwrap_or(usize::MAX);
            x[0] = match (ctx.vm.stored_exit_count(index), ctx.stats.get(index)) {
                (Some(a), Some(b)) => a + b,
                _ => NOT_SUPPORTED,
            };
            Some(Outcome::Emulated)
        }
        fid => {
            let r = ctx.vm.vendor_call(fid, x[1], x[2])?;
            ctx.vcpu.regs.x[0] = r as u64;
            Some(Outcome::Emulated)
        }
    }
}

/// An unknown function: `NOT_SUPPORTED` in x0, and a warning.
#[cold]
#[inline(never)]
fn unsupported<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, function_id: u32) -> Outcome {
    ctx.vm.warn(format_args!(
        "SMCCC function {function_id:#x} not supported; returned NOT_SUPPORTED"
    ));
    ctx.vcpu.regs.x[0] = NOT_SUPPORTED;
    Outcome::Refused
}
