//! Emulated MMIO: a data abort outside guest RAM becomes one access (valid syndrome,
//! `ESR_EL2.ISV` = 1) or several (`ISV` = 0: the instruction is fetched through the guest's
//! stage 1 and decoded, e.g. `LDP`/`STP` or a writeback form; AArch32 contexts in
//! `mmio_a32.rs`) on the VM's MMIO bus, which finds the device. Nothing here knows a device
//! or an address.

use core::fmt;
use el2_core::exit::DataAbort;
use el2_core::inject;
use el2_core::mmio::{MmioAccess, MmioError, MmioOutcome};
use el2_core::mmio_decode::{self, GuestRegisters};
use el2_core::s1walk::{self, GuestPhysRead};
use el2_core::switch::El1Reg;
use el2_core::vcpu::VcpuContext;

use super::pstate;
use super::{dabt, ExitCtx, ExitHost, Outcome};
use crate::stats::ExitReason;

/// Why an emulated access failed (the guest gets an external abort).
#[derive(Debug)]
pub enum MmioFail {
    /// No device at that address.
    Unbacked,
    /// A device refused the access.
    Device(&'static str, MmioError),
    /// The access cannot be emulated at all.
    Refused(&'static str),
}

impl fmt::Display for MmioFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MmioFail::Unbacked => f.write_str("no device there"),
            MmioFail::Device(d, e) => write!(f, "{d} refused it: {e}"),
            MmioFail::Refused(why) => f.write_str(why),
        }
    }
}

/// Emulates the access of data abort `da` on the bus and steps over the instruction, or
/// injects an external abort.
pub fn emulate<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, da: &DataAbort) -> Outcome {
    // The instruction's length when the syndrome does not give it (AArch32, ISV = 0).
    let mut length = None;
    let result = match MmioAccess::from_abort(da) {
        Some(acc) => {
            // ISS.SRT is the AArch64 view of the register, also for an AArch32 context (the
            // current mode's banked R8..R14 are among X13..X30).
            let rt = acc.rt;
            let value = ctx.vcpu.regs.read(rt);
            access(ctx, &acc, value).map(|loaded| {
                if let Some(v) = loaded {
                    ctx.vcpu.regs.write(rt, v);
                }
            })
        }
        None if !da.s1ptw && !da.cm && pstate::is_aarch32(ctx.vcpu.regs.pstate) => {
            super::mmio_a32::undecoded(ctx, da).map(|len| length = Some(len))
        }
        None if !da.s1ptw && !da.cm => undecoded(ctx, da),
        None => Err(MmioFail::Refused(
            "a stage-1 table walk or cache maintenance on an emulated region",
        )),
    };
    match result {
        Ok(()) => {
            ctx.stats.count(ExitReason::Mmio);
            match length {
                Some(len) => {
                    let il = if len == 4 { inject::ESR_IL } else { 0 };
                    inject::skip_instruction(ctx.vcpu, il);
                }
                None => ctx.skip(),
            }
            Outcome::Emulated
        }
        Err(why) => {
            ctx.stats.count(ExitReason::DataAbortInjected);
            dabt::refuse(ctx, da, format_args!("{why}"))
        }
    }
}

/// One access on the bus: the value a load puts in its register (already extended).
pub(super) fn access<H: ExitHost>(
    ctx: &mut ExitCtx<'_, H>,
    acc: &MmioAccess,
    reg_value: u64,
) -> Result<Option<u64>, MmioFail> {
    match ctx.vm.mmio(acc, reg_value) {
        MmioOutcome::Read(v) => Ok(Some(v)),
        MmioOutcome::WriteDone => Ok(None),
        MmioOutcome::Unbacked => Err(MmioFail::Unbacked),
        MmioOutcome::DeviceError { device, error } => Err(MmioFail::Device(device, error)),
    }
}

/// Guest RAM as the stage-1 walker reads it.
struct Ram<'a, H>(&'a H);

impl<H: ExitHost> GuestPhysRead for Ram<'_, H> {
    fn read_u64(&self, ipa: u64) -> Option<u64> {
        self.0.read_ram_u64(ipa)
    }
}

/// The guest's registers as the load/store decoder needs them.
struct RegsView<'a> {
    ctx: &'a VcpuContext,
    sp: u64,
}

impl GuestRegisters for RegsView<'_> {
    fn x(&self, n: u8) -> u64 {
        self.ctx.regs.read(n)
    }
    fn sp(&self) -> u64 {
        self.sp
    }
}

/// A data abort without a valid syndrome: fetches the instruction through the guest's
/// stage 1, decodes it, and performs its accesses one by one.
fn undecoded<H: ExitHost>(ctx: &mut ExitCtx<'_, H>, da: &DataAbort) -> Result<(), MmioFail> {
    let (sw, pstate) = (ctx.sw, ctx.vcpu.regs.pstate);
    let s1 = s1walk::Stage1Regs {
        sctlr: sw.el1_read(ctx.vcpu, El1Reg::Sctlr),
        tcr: sw.el1_read(ctx.vcpu, El1Reg::Tcr),
        ttbr0: sw.el1_read(ctx.vcpu, El1Reg::Ttbr0),
        ttbr1: sw.el1_read(ctx.vcpu, El1Reg::Ttbr1),
    };
    let insn = s1walk::fetch_instruction(&s1, ctx.vcpu.regs.pc, &Ram(&*ctx.vm))
        .map_err(|_| MmioFail::Refused("cannot fetch the instruction at the guest PC"))?;
    let decoded = mmio_decode::decode(insn)
        .map_err(|_| MmioFail::Refused("instruction is not an emulatable load/store"))?;
    let on_sp_el1 = pstate::uses_sp_el1(pstate);
    let sp = if on_sp_el1 {
        sw.el1_read(ctx.vcpu, El1Reg::SpEl1)
    } else {
        ctx.vcpu.regs.sp_el0
    };
    let view = RegsView { ctx: ctx.vcpu, sp };
    let resolved = decoded
        .resolve(&view, da.ipa, (!da.fnv).then_some(da.far))
        .map_err(|_| MmioFail::Refused("the access crosses a page or does not match FAR_EL2"))?;
    for e in resolved.elements() {
        let acc = e.to_mmio();
        let value = ctx.vcpu.regs.read(acc.rt);
        if let Some(v) = access(ctx, &acc, value)? {
            ctx.vcpu.regs.write(acc.rt, v);
        }
    }
    if let Some((reg, value)) = resolved.writeback {
        if usize::from(reg) < ctx.vcpu.regs.x.len() {
            ctx.vcpu.regs.write(reg, value);
        } else if on_sp_el1 {
            sw.el1_write(ctx.vcpu, El1Reg::SpEl1, value);
        } else {
            ctx.vcpu.regs.sp_el0 = value;
        }
    }
    Ok(())
}
