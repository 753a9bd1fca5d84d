//! The hot exits, handled before any run-loop work (seed 001: Xen answers its common traps
//! next to the vector). An exit here changes nothing but the vCPU's own registers (and, for
//! MMIO, the device it reaches), so the run loop re-enters the guest at once: no list
//! register sync or flush, no timer re-arm, no kick delivery, no power checks.
//!
//! | exit | handled here when |
//! |---|---|
//! | `HVC #0` from AArch64 | an SMCCC architecture query (`SMCCC_VERSION`, `SMCCC_ARCH_FEATURES`, `SMCCC_ARCH_WORKAROUND_n`) or `PSCI_VERSION`/`PSCI_FEATURES` that is not refused |
//! | `MRS` (EC 0x18) | a read of an ID register (`HCR_EL2.TID3`) |
//! | `MRC p15` (EC 0x03) | an unconditional read of an AArch32 ID register (`HCR_EL2.TID3`) |
//! | `MSR` (EC 0x18) | a GICv3 SGI generation register (`ICH_HCR_EL2.TC`): other vCPUs are kicked; an SGI to this vCPU itself means [`Fast::Changed`] |
//! | data abort (EC 0x24) | a translation fault outside RAM with a valid syndrome (one MMIO access); with a list register of the vCPU in use, only an access that does not reach vGIC state those may hold ([`Devices::mmio_needs_lr_sync`](super::Devices::mmio_needs_lr_sync): any other device, a GICv2 `GICD_SGIR` write) |
//!
//! Everything else, and any of these that ends in a refusal (a warning, an injected
//! exception), goes to the general path ([`Fast::Slow`]) before anything was done. Why
//! skipping the run loop's work is safe: every change another CPU makes for this vCPU (an
//! interrupt, a kick, the end of its VM) comes with a physical interrupt, which is an IRQ exit
//! and takes the general path; the EL2 timer (time slice, emulated physical timer) too. What
//! the exit itself may change is reported: an MMIO access whose device raised or lowered an
//! interrupt line, kicked a vCPU or asked for backend work returns [`Fast::Changed`], and
//! the run loop does its pre-entry work (vGIC flush, kicks) before re-entering (the flush
//! folds loaded list registers into the model first). With a list register in use the
//! model's state of those interrupts is only current after a sync, so a GIC register access
//! could see stale state: such an access takes the general path.

use el2_core::exit::{ec, DataAbort, ExitInfo, SysRegAccess};
use el2_core::inject;
use el2_core::mmio::{AccessSize, MmioAccess, MmioOutcome};
use el2_core::psci::{PSCI_FEATURES, PSCI_VERSION};
use el2_core::smccc::{self, CallOutcome, SmcccCall};
use el2_core::switch::{ExitKind, RawExit, WorldSwitch};
use el2_core::vcpu::VcpuContext;
use vgic::SgiReg;
use vtimer::VcpuTimer;

use super::mmio::MmioFail;
use super::{ExitCtx, ExitHost};
use crate::idregs::IdReg;
use crate::stats::{ExitReason, ExitStats};

/// What the fast path did with an exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fast {
    /// Handled; nothing outside the vCPU's registers changed: re-enter the guest at once.
    Done,
    /// Handled; a device changed an interrupt line, kicked a vCPU or asked for backend work
    /// (or the access was refused with an injected abort): the run loop's pre-entry work
    /// (vGIC flush, kicks) runs before re-entry.
    Changed,
    /// Not a hot exit (or one that needs the general path): nothing was done.
    Slow,
}

/// The vCPU and VM an exit works on, as [`ExitCtx`] without the syndrome; built once per
/// run-loop invocation, not per exit.
pub struct FastCtx<'a, H> {
    /// The vCPU's registers and EL2 controls.
    pub vcpu: &'a mut VcpuContext,
    /// Its timers (only for a refusal, through the general path's helpers).
    pub timer: &'a mut VcpuTimer,
    /// Exits per reason of the current run-loop invocation.
    pub stats: &'a mut ExitStats,
    /// The world switch.
    pub sw: &'a dyn WorldSwitch,
    /// The VM and the services around the vCPU.
    pub vm: &'a mut H,
}

impl<H: ExitHost> FastCtx<'_, H> {
    /// Steps the guest PC over the trapped instruction.
    #[inline(always)]
    fn skip(&mut self, esr: u64) {
        inject::skip_instruction(self.vcpu, esr);
    }
}

/// Handles exit `raw` if it is one of the hot exits. `lrs_idle`: no list register of this
/// vCPU is in use (the vGIC model is current without a sync).
#[inline(always)]
pub fn try_fast<H: ExitHost>(raw: &RawExit, ctx: &mut FastCtx<'_, H>, lrs_idle: bool) -> Fast {
    if raw.kind != ExitKind::Sync {
        return Fast::Slow;
    }
    let info = ExitInfo {
        esr: raw.esr,
        far: raw.far,
        hpfar: raw.hpfar,
    };
    // Tested in this order (most frequent in the bench loop first; a `match` compiles to a
    // decision tree in any order).
    let ec = info.ec();
    if ec == ec::HVC64 {
        hvc(&info, ctx)
    } else if ec == ec::SYS64 {
        sysreg(&info, ctx)
    } else if ec == ec::DABT_LOW {
        mmio(raw, &info, ctx, lrs_idle)
    } else if ec == ec::CP15_32 {
        cp15_id(&info, ctx)
    } else {
        Fast::Slow
    }
}

/// `HVC #0` with one of the pure query functions.
#[inline(always)]
fn hvc<H: ExitHost>(info: &ExitInfo, ctx: &mut FastCtx<'_, H>) -> Fast {
    if info.imm16() != 0 {
        return Fast::Slow;
    }
    let x = &mut ctx.vcpu.regs.x;
    let function_id = x[0] as u32;
    if function_id == smccc::SMCCC_VERSION {
        // The most frequent call, without building the call at all.
        x[0] = smccc::SMCCC_VERSION_1_1;
        x[1..4].fill(0);
    } else if matches!(
        function_id,
        smccc::SMCCC_ARCH_FEATURES
            | smccc::SMCCC_ARCH_WORKAROUND_1
            | smccc::SMCCC_ARCH_WORKAROUND_2
            | smccc::SMCCC_ARCH_WORKAROUND_3
            | PSCI_VERSION
            | PSCI_FEATURES
    ) {
        let call = SmcccCall::new(x[0], [x[1], x[2], x[3], x[4], x[5], x[6]]);
        let CallOutcome::Return(r) = smccc::dispatch(&call, ctx.vm) else {
            return Fast::Slow;
        };
        // A workaround call answering NOT_SUPPORTED is a refusal the general path logs
        // (dispatch is pure: it answers the same there).
        let is_query = matches!(function_id, smccc::SMCCC_ARCH_FEATURES | PSCI_FEATURES);
        if r[0] == smccc::SMCCC_RET_NOT_SUPPORTED as u64 && !is_query {
            return Fast::Slow;
        }
        ctx.vcpu.regs.x[..4].copy_from_slice(&r);
    } else {
        return Fast::Slow;
    }
    ctx.stats.count(ExitReason::Hvc);
    Fast::Done
}

/// Steps the PC over a trapped AArch64 `MRS`/`MSR` (EC 0x18 is only taken from AArch64
/// state, always with a 32-bit instruction: what `skip_instruction` would do, without
/// looking at `ESR_EL2.IL` and `PSTATE.nRW`).
#[inline(always)]
fn step_a64<H>(ctx: &mut FastCtx<'_, H>) {
    ctx.vcpu.regs.pc = ctx.vcpu.regs.pc.wrapping_add(4);
}

/// `ISS` bits of a trapped `MRS`/`MSR` that fix `op0`, `op1`, `CRn` and the direction.
const SYS_ID_MASK: u32 = (0b11 << 20) | (0b111 << 14) | (0xf << 10) | 1;
/// Their value for a read in the ID register space: `op0` = 3, `op1` = 0, `CRn` = 0, `MRS`.
const SYS_ID_READ: u32 = (0b11 << 20) | 1;

/// `MRS` of an ID register (`op0=3, op1=0, CRn=0, CRm=1..=7`), decoded straight from the
/// `ISS` (what `SysRegAccess` and `IdReg::from_encoding` would say, field by field).
#[inline(always)]
fn sysreg<H: ExitHost>(info: &ExitInfo, ctx: &mut FastCtx<'_, H>) -> Fast {
    let iss = info.iss();
    let crm = ((iss >> 1) & 0xf) as u8;
    if iss & SYS_ID_MASK != SYS_ID_READ || !(1..=7).contains(&crm) {
        return sgi(info, ctx);
    }
    let reg = IdReg {
        crm,
        op2: ((iss >> 17) & 0b111) as u8,
    };
    let rt = ((iss >> 5) & 0x1f) as u8;
    let value = ctx.vm.id_register(reg);
    ctx.vcpu.regs.write(rt, value);
    step_a64(ctx);
    ctx.stats.count(ExitReason::SysReg);
    Fast::Done
}

/// `ISS` bits of a trapped AArch32 `MRC`/`MCR p15` (EC 0x03) that fix `CV`/`COND`, `opc1`,
/// `CRn` and the direction.
const CP15_ID_MASK: u32 = (1 << 24) | (0xf << 20) | (0b111 << 14) | (0xf << 10) | 1;
/// Their value for an unconditional (`CV` = 1, `COND` = AL) `MRC p15, 0, Rt, c0, ...`: the
/// AArch32 ID registers `HCR_EL2.TID3` traps (a conditional one takes the general path,
/// which checks the condition).
const CP15_ID_READ: u32 = (1 << 24) | (0xe << 20) | 1;

/// `MRC p15, 0, Rt, c0, CRm, opc2` with `CRm` = 1..=7 from an AArch32 guest: the same
/// per-machine table as the AArch64 `MRS` ([`sysreg`]), the low 32 bits (what
/// `cp15::id_value` gives on the general path). `ISS.Rt` is already the AArch64 view of
/// the transfer register (the banked ones included).
#[inline(always)]
fn cp15_id<H: ExitHost>(info: &ExitInfo, ctx: &mut FastCtx<'_, H>) -> Fast {
    let iss = info.iss();
    let crm = ((iss >> 1) & 0xf) as u8;
    if iss & CP15_ID_MASK != CP15_ID_READ || !(1..=7).contains(&crm) {
        return Fast::Slow;
    }
    let reg = IdReg {
        crm,
        op2: ((iss >> 17) & 0b111) as u8,
    };
    let rt = ((iss >> 5) & 0x1f) as u8;
    let value = ctx.vm.id_register(reg) & u64::from(u32::MAX);
    ctx.vcpu.regs.write(rt, value);
    ctx.skip(info.esr);
    ctx.stats.count(ExitReason::SysReg);
    Fast::Done
}

/// `MSR ICC_SGI1R_EL1`/`ICC_ASGI1R_EL1`/`ICC_SGI0R_EL1` (`ICH_HCR_EL2.TC`): the SGI goes
/// to the vGIC and the other vCPUs it names are kicked (a physical interrupt to their
/// CPUs); one for this vCPU itself needs the pre-entry flush ([`Fast::Changed`]).
#[inline(never)]
fn sgi<H: ExitHost>(info: &ExitInfo, ctx: &mut FastCtx<'_, H>) -> Fast {
    let acc = SysRegAccess::from_iss(info.iss());
    let Some(reg) = SgiReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2) else {
        return super::cpuif::icc(&acc, ctx);
    };
    if acc.is_read {
        return Fast::Slow;
    }
    let value = ctx.vcpu.regs.read(acc.rt);
    let Some(to_me) = ctx.vm.write_sgi_reporting(reg, value) else {
        return Fast::Slow; // no virtual GICv3: UNDEFINED from the general path
    };
    step_a64(ctx);
    ctx.stats.count(ExitReason::SysReg);
    if to_me {
        Fast::Changed
    } else {
        Fast::Done
    }
}

/// `ISS` of a data abort: `ISV`, the syndrome is valid.
const DABT_ISV: u32 = 1 << 24;
/// `ISS.CM`: cache maintenance.
const DABT_CM: u32 = 1 << 8;
/// `ISS.S1PTW`: a fault on a stage-1 table walk.
const DABT_S1PTW: u32 = 1 << 7;

/// One MMIO access with a valid syndrome, outside guest RAM: the access decoded straight
/// from the `ISS` (the fields `MmioAccess::from_abort` takes from a full `DataAbort`), for
/// a translation fault (`DFSC` 0b0001LL, or level -1) only.
#[inline(always)]
fn mmio<H: ExitHost>(
    raw: &RawExit,
    info: &ExitInfo,
    ctx: &mut FastCtx<'_, H>,
    lrs_idle: bool,
) -> Fast {
    let iss = info.iss();
    if iss & (DABT_ISV | DABT_CM | DABT_S1PTW) != DABT_ISV {
        return Fast::Slow;
    }
    let dfsc = iss & 0x3f;
    if dfsc & 0x3c != 0x04 && dfsc != 0x2b {
        return Fast::Slow;
    }
    // Arm 834220: HPFAR_EL2 may be wrong; a guest stage 1 that does not map FAR means the
    // guest takes its own fault when re-entered.
    let mut hpfar = info.hpfar;
    if !el2_core::switch::errata::fix_abort_hpfar(info.esr, info.far, &mut hpfar) {
        return Fast::Done;
    }
    // IPA = HPFAR_EL2.FIPA << 12 | FAR_EL2[11:0].
    let ipa = ((hpfar & 0x0000_ffff_ffff_fff0) << 8) | (info.far & 0xfff);
    if ctx.vm.ram_contains(ipa) {
        return Fast::Slow;
    }
    let bit = |n: u32| iss & (1 << n) != 0;
    let acc = MmioAccess {
        ipa,
        size: AccessSize::from_sas(((iss >> 22) & 0b11) as u8),
        is_write: bit(6),
        rt: ((iss >> 16) & 0x1f) as u8,
        sign_extend: bit(21),
        sf: bit(15),
        acquire_release: bit(14),
    };
    if !lrs_idle && ctx.vm.mmio_needs_lr_sync(&acc) {
        return Fast::Slow;
    }
    let rt = acc.rt;
    let value = ctx.vcpu.regs.read(rt);
    let (outcome, changed) = ctx.vm.mmio_reporting(&acc, value);
    match outcome {
        MmioOutcome::Read(v) => ctx.vcpu.regs.write(rt, v),
        MmioOutcome::WriteDone => {}
        MmioOutcome::Unbacked => return refuse(raw, info, ctx, MmioFail::Unbacked),
        MmioOutcome::DeviceError { device, error } => {
            return refuse(raw, info, ctx, MmioFail::Device(device, error))
        }
    }
    ctx.skip(info.esr);
    ctx.stats.count(ExitReason::Mmio);
    if changed {
        Fast::Changed
    } else {
        Fast::Done
    }
}

/// An access the bus refused: the general path's answer (a warning, an external abort).
#[cold]
#[inline(never)]
fn refuse<H: ExitHost>(
    raw: &RawExit,
    info: &ExitInfo,
    ctx: &mut FastCtx<'_, H>,
    why: MmioFail,
) -> Fast {
    let da = DataAbort::from_info(info);
    let mut exit = ExitCtx::new(*raw, ctx.vcpu, ctx.timer, ctx.stats, ctx.sw, ctx.vm);
    exit.stats.count(ExitReason::DataAbortInjected);
    super::dabt::refuse(&mut exit, &da, format_args!("{why}"));
    Fast::Changed
}
