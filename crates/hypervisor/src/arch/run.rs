//! Running one vCPU for a time slice and handling its exits:
//! `vcpu_load; loop { exit = run(); handle(exit) }; vcpu_put`. Every guest-caused event is
//! answered architecturally (emulation, an injected UNDEFINED or external abort, an SMCCC
//! error code) and logged; nothing a guest does ends the hypervisor.

use core::sync::atomic::Ordering;
use el2_core::exit::{self, Exit, ExitInfo};
use el2_core::inject;
use el2_core::mmio::{MmioAccess, MmioOutcome};
use el2_core::psci::{AffinityState, PsciHost, PsciReturn, MPIDR_AFFINITY_MASK};
use el2_core::smccc::{self, CallOutcome, SmcccCall};
use el2_core::switch::{ExitKind, WorldSwitch};
use el2_core::vcpu::VcpuContext;
use el2_core::{mmio_decode, s1walk};
use spin::Once;

use super::debug_regs::{self, DebugRegs};
use super::sched::{self, Thread};
use super::stats::{ExitReason, ExitStats};
use super::sysregs;
use super::timer;
use super::vgic_glue::{self, HostLrs};
use super::vm::{Power, VcpuRun, Vm};
use super::{gic, percpu};
use crate::bootargs::ResetPolicy;
use crate::layout;
use stage2::{FaultAction, FaultInput, IpaRegion, S2FaultKind};
use vgic::{SgiReg, Vgic};
use vtimer::{PhysTimer, TimerState};

/// How a VM ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmEnd {
    /// PSCI `SYSTEM_OFF` (or every vCPU called `CPU_OFF`).
    PowerOff,
    /// PSCI `SYSTEM_RESET`.
    Reset,
    /// The VM cannot continue (e.g. an SError); the reason was logged.
    Crashed,
}

/// What the run loop does after an exit.
enum Next {
    /// Re-enter the guest.
    Continue,
    /// Give the CPU back to the scheduler.
    Yield,
}

/// Machine-wide run settings, fixed at boot.
pub struct RunConfig {
    /// The world switch.
    pub switch: &'static dyn WorldSwitch,
    /// What `SYSTEM_RESET` does.
    pub reset: ResetPolicy,
    /// The package entries, for restarting VMs.
    pub specs: alloc::vec::Vec<vmpkg::VmSpec<'static>>,
}

static CONFIG: Once<RunConfig> = Once::new();

/// The machine-wide `SYSTEM_RESET` policy.
pub fn reset_policy() -> ResetPolicy {
    CONFIG.get().map(|c| c.reset).unwrap_or_default()
}

/// Installs the run configuration (boot CPU, once).
pub fn configure(c: RunConfig) {
    CONFIG.call_once(|| c);
}

/// PSCI view of a VM for the dispatcher.
struct VmPsci<'a> {
    vm: &'a Vm,
    me: usize,
}

impl PsciHost for VmPsci<'_> {
    fn cpu_on(&mut self, target: u64, entry: u64, context_id: u64) -> PsciReturn {
        let Some(i) = self
            .vm
            .vcpus
            .iter()
            .position(|v| v.mpidr == target & MPIDR_AFFINITY_MASK)
        else {
            return PsciReturn::InvalidParameters;
        };
        if i == self.me {
            return PsciReturn::AlreadyOn;
        }
        if !self.vm.ram_contains(entry) {
            return PsciReturn::InvalidAddress;
        }
        let v = &self.vm.vcpus[i];
        let mut boot = v.boot.lock();
        match v.power() {
            Power::On => PsciReturn::AlreadyOn,
            Power::OnPending => PsciReturn::OnPending,
            Power::Off => {
                *boot = (entry, context_id);
                v.power.store(Power::OnPending as u8, Ordering::Release);
                drop(boot);
                sched::kick(self.vm, i);
                PsciReturn::Success
            }
        }
    }

    fn affinity_info(&self, target: u64) -> Result<AffinityState, PsciReturn> {
        let v = self
            .vm
            .vcpus
            .iter()
            .find(|v| v.mpidr == target)
            .ok_or(PsciReturn::InvalidParameters)?;
        Ok(match v.power() {
            Power::On => AffinityState::On,
            Power::OnPending => AffinityState::OnPending,
            Power::Off => AffinityState::Off,
        })
    }
}

/// Ends `vm` (first caller wins), logs it, and interrupts the CPUs running its vCPUs.
pub fn end_vm(vm: &Vm, how: VmEnd) {
    if vm.finish(how) {
        crate::hv_log!("{}: stopped ({:?})", vm.name, how);
        sched::kick_all_cpus();
    }
}

/// Runs `t` until it blocks, stops, its VM ends, or (when `shared`) its time slice ends.
pub fn run_vcpu(t: &Thread, shared: bool) {
    let Some(cfg) = CONFIG.get() else { return };
    let sw = cfg.switch;
    let vm = &*t.vm;
    let vcpu = &vm.vcpus[t.vcpu];
    let me = t.vcpu;
    let mut guard = vcpu.state.lock();
    let VcpuRun {
        ctx,
        ptimer,
        vtimer_active,
        debug,
    } = &mut *guard;
    let mut lrs_guard = percpu::current().lrs.lock();
    let mut lrs = lrs_guard.as_mut().filter(|_| vm.vgic.is_some());
    if vcpu.power() == Power::OnPending {
        let (entry, context_id) = *vcpu.boot.lock();
        ctx.reset_to(entry, context_id);
        ptimer.reset();
        vcpu.power.store(Power::On as u8, Ordering::Release);
    }
    vcpu.blocked.store(false, Ordering::Release);
    vcpu.wake.store(false, Ordering::Release);
    vcpu.wake_at.store(0, Ordering::Release);
    vcpu.wfit_at.store(0, Ordering::Release);
    let mut slice_end = shared.then(|| timer::now() + timer::us_to_ticks(sched::TIME_SLICE_US));
    program_timer(slice_end, ptimer);
    let mut stats = ExitStats::default();
    let this_cpu = percpu::current();
    let cpu = this_cpu.index;
    ctx.controls.vttbr_el2 = super::vm::vmid_for_load(vm, cpu);
    // Lazy FP/SIMD across put/load: when this CPU's FP registers still hold this vCPU's
    // state (nothing restored another vCPU's since it was put here), run with FP enabled
    // instead of taking a trap to restore the same values.
    let me_id = vcpu as *const _ as usize;
    ctx.fp_loaded = this_cpu.fp_owner.load(Ordering::Acquire) == me_id;
    if !ctx.fp_loaded {
        this_cpu.fp_owner.store(0, Ordering::Release);
    }
    // SAFETY: at EL2 on the CPU that owns this vCPU; no other vCPU is loaded here.
    unsafe { sw.vcpu_load(ctx) };
    if debug.active {
        debug.load();
    }
    debug_regs::set_trap(!debug.active);
    if let (Some(vg), Some(l)) = (&vm.vgic, lrs.as_deref_mut()) {
        let _ = vg.lock().vcpu_load(me, l);
    }
    if *vtimer_active {
        gic::set_private_active(vtimer::VIRT_TIMER_PPI, true);
        *vtimer_active = false;
    }
    loop {
        if vm.ended.load(Ordering::Acquire) || vcpu.power() != Power::On {
            break;
        }
        if let (Some(vg), Some(l)) = (&vm.vgic, lrs.as_deref_mut()) {
            let mut g = vg.lock();
            let _ = g.set_ppi_level(me, vtimer::PHYS_TIMER_PPI, ptimer.irq_level(timer::now()));
            let _ = g.flush(me, l);
            vgic_glue::deliver_kicks(vm, &mut g, me);
        }
        // SAFETY: loaded above on this CPU.
        let raw = unsafe { sw.run(ctx) };
        if let (Some(vg), Some(l)) = (&vm.vgic, lrs.as_deref_mut()) {
            let _ = vg.lock().sync(me, l);
        }
        let next = match raw.kind {
            ExitKind::Irq | ExitKind::Fiq => {
                stats.count(ExitReason::Irq);
                let ev = sched::drain_host_irqs(true);
                if ev.vtimer {
                    if let Some(vg) = &vm.vgic {
                        let _ = vg.lock().set_ppi_level(me, vtimer::VIRT_TIMER_PPI, true);
                    }
                }
                let next = match slice_end {
                    Some(end) if timer::now() >= end => {
                        if sched::others_runnable(t) {
                            Next::Yield
                        } else {
                            slice_end =
                                Some(timer::now() + timer::us_to_ticks(sched::TIME_SLICE_US));
                            Next::Continue
                        }
                    }
                    _ => Next::Continue,
                };
                program_timer(slice_end, ptimer);
                next
            }
            ExitKind::SError => {
                crate::hv_warn!(
                    "{}: SError from guest (ESR_EL2={:#x}); stopping the VM",
                    vm.name,
                    raw.esr
                );
                end_vm(vm, VmEnd::Crashed);
                Next::Yield
            }
            ExitKind::Sync => {
                let info = ExitInfo {
                    esr: raw.esr,
                    far: raw.far,
                    hpfar: raw.hpfar,
                };
                let next = handle_sync(
                    &info,
                    vm,
                    me,
                    ctx,
                    ptimer,
                    debug,
                    lrs.as_deref_mut(),
                    &mut stats,
                    sw,
                );
                program_timer(slice_end, ptimer);
                next
            }
        };
        if let Next::Yield = next {
            break;
        }
    }
    if debug.active {
        debug.save_and_clear();
    }
    let fp_in_registers = ctx.fp_loaded;
    // SAFETY: the vCPU loaded on this CPU.
    unsafe { sw.vcpu_put(ctx) };
    super::vm::vmid_put(cpu);
    if fp_in_registers {
        // Saved to memory by vcpu_put, and still in the registers.
        this_cpu.fp_owner.store(me_id, Ordering::Release);
    }
    if let (Some(vg), Some(l)) = (&vm.vgic, lrs) {
        let _ = vg.lock().vcpu_put(me, l);
    }
    drop(lrs_guard);
    // A forwarded timer interrupt the guest has not deactivated yet stays with the vCPU.
    if gic::private_active(vtimer::VIRT_TIMER_PPI) {
        gic::set_private_active(vtimer::VIRT_TIMER_PPI, false);
        *vtimer_active = true;
    }
    timer::disarm();
    if vcpu.blocked.load(Ordering::Acquire) {
        let vt = TimerState {
            ctl: ctx.el1.cntv_ctl_el0,
            cval: ctx.el1.cntv_cval_el0,
        };
        let timers = vtimer::wake_deadline(&vt, &vm.counter, ptimer);
        let wfit = Some(vcpu.wfit_at.swap(0, Ordering::AcqRel)).filter(|&at| at != 0);
        let at = match (timers, wfit) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(0),
        };
        vcpu.wake_at.store(at, Ordering::Release);
    }
    vcpu.stats.lock().add(&stats);
    drop(guard);
    if vm.ended.load(Ordering::Acquire) {
        maybe_restart(t);
        // The boot CPU decides when the machine is done; tell it this vCPU has left.
        sched::kick_cpu(0);
    }
}

/// Arms the EL2 timer for the earlier of the slice end and the emulated physical timer.
/// A physical timer that has already fired is not armed again: its level is in the vGIC
/// until the guest reprograms it (re-arming would make the EL2 timer fire on every entry).
fn program_timer(slice_end: Option<u64>, ptimer: &PhysTimer) {
    let now = timer::now();
    let pdeadline = ptimer.state().deadline().filter(|&d| d > now);
    match (slice_end, pdeadline) {
        (Some(a), Some(b)) => timer::arm(a.min(b)),
        (Some(a), None) | (None, Some(a)) => timer::arm(a),
        (None, None) => timer::disarm(),
    }
}

#[allow(clippy::too_many_arguments)]
fn handle_sync(
    info: &ExitInfo,
    vm: &Vm,
    me: usize,
    ctx: &mut VcpuContext,
    ptimer: &mut PhysTimer,
    debug: &mut DebugRegs,
    lrs: Option<&mut HostLrs>,
    stats: &mut ExitStats,
    sw: &dyn WorldSwitch,
) -> Next {
    let name = vm.name.as_str();
    match exit::decode(info) {
        Exit::Hvc { imm } => {
            stats.count(ExitReason::Hvc);
            if imm != 0 {
                crate::hv_warn!(
                    "{name}: HVC #{imm:#x} is not an SMCCC call; returning NOT_SUPPORTED"
                );
                ctx.regs.x[0] = u64::MAX;
                return Next::Continue;
            }
            smccc_call(vm, me, ctx, stats)
        }
        Exit::Smc { .. } => {
            stats.count(ExitReason::Smc);
            // ELR_EL2 points at the trapped SMC.
            inject::skip_instruction(ctx, info.esr);
            smccc_call(vm, me, ctx, stats)
        }
        Exit::SysReg(acc) => {
            stats.count(ExitReason::SysReg);
            if debug_regs::is_debug_access(&acc) && !debug.active {
                // First use of the debug registers (MDCR_EL2.TDA): from now on this vCPU
                // owns them while loaded; re-execute the access untrapped.
                debug.active = true;
                debug.load();
                debug_regs::set_trap(false);
                return Next::Continue;
            }
            if let (Some(which), Some(vg)) = (
                SgiReg::from_encoding(acc.op0, acc.op1, acc.crn, acc.crm, acc.op2),
                &vm.vgic,
            ) {
                if !acc.is_read {
                    let mut g = vg.lock();
                    let _ = g.write_sgi_sysreg(me, which, ctx.regs.read(acc.rt));
                    vgic_glue::deliver_kicks(vm, &mut g, me);
                    inject::skip_instruction(ctx, info.esr);
                    return Next::Continue;
                }
            }
            match sysregs::emulate(&acc, ctx, ptimer) {
                Ok(()) => inject::skip_instruction(ctx, info.esr),
                Err(why) => {
                    crate::hv_warn!(
                        "{name}: {} of {} at pc {:#x}: {why}; injecting UNDEFINED",
                        if acc.is_read { "read" } else { "write" },
                        sysregs::Name(&acc),
                        ctx.regs.pc
                    );
                    inject::inject_undefined(sw, ctx);
                }
            }
            Next::Continue
        }
        Exit::DataAbort(da) => {
            // Fast path, the common MMIO exit: a translation fault outside guest RAM goes
            // straight to the bus (what `classify` would decide, without building its input).
            let in_ram = da.ipa.wrapping_sub(vm.ram_ipa) < vm.ram_size;
            let plain_mmio = !in_ram && da.dfsc & 0x3c == 0x04 && !da.s1ptw;
            match if plain_mmio {
                FaultAction::Mmio
            } else {
                classify_abort(vm, &da, in_ram)
            } {
                FaultAction::Mmio | FaultAction::PopulateRam => {}
                FaultAction::Retry => {
                    stats.count(ExitReason::DirtyLog);
                    return Next::Continue;
                }
                FaultAction::DirtyLogWrite => {
                    stats.count(ExitReason::DirtyLog);
                    match vm.stage2.lock().handle_write_fault(da.ipa) {
                        // Marked dirty and writable again (or another vCPU did it):
                        // the guest retries the store.
                        Ok(_) => return Next::Continue,
                        Err(e) => {
                            let why = format_args!("dirty-log write fault: {e:?}");
                            refuse_data_abort(name, &da, ctx, sw, why);
                            return Next::Continue;
                        }
                    }
                }
                FaultAction::InjectAbort(reason) => {
                    stats.count(ExitReason::DataAbortInjected);
                    refuse_data_abort(name, &da, ctx, sw, format_args!("{reason}"));
                    return Next::Continue;
                }
            }
            let result = match MmioAccess::from_abort(&da) {
                Some(acc) => {
                    let value = ctx.regs.read(acc.rt);
                    do_mmio(vm, me, &acc, value).map(|v| {
                        if let Some(v) = v {
                            ctx.regs.write(acc.rt, v);
                        }
                    })
                }
                None if !da.s1ptw && !da.cm => emulate_undecoded(vm, me, ctx, &da, sw),
                None => Err(MmioFail::Refused(
                    "a stage-1 table walk or cache maintenance on an emulated region",
                )),
            };
            match result {
                Ok(()) => {
                    stats.count(ExitReason::Mmio);
                    inject::skip_instruction(ctx, info.esr);
                }
                Err(why) => {
                    stats.count(ExitReason::DataAbortInjected);
                    refuse_data_abort(name, &da, ctx, sw, format_args!("{why}"));
                }
            }
            Next::Continue
        }
        Exit::InstructionAbort(ia) => {
            stats.count(ExitReason::InstructionAbort);
            crate::hv_warn!(
                "{name}: instruction fetch from IPA {:#x} (pc {:#x}) outside guest RAM; injecting external abort",
                ia.ipa,
                ctx.regs.pc
            );
            let far = if ia.fnv { 0 } else { ia.far };
            inject::inject_instruction_abort(sw, ctx, far);
            Next::Continue
        }
        Exit::FpSimdAccess => {
            stats.count(ExitReason::FpTrap);
            // SAFETY: this vCPU is loaded on this CPU (we are inside its run loop).
            unsafe { sw.fp_trap(ctx) };
            Next::Continue
        }
        wait @ (Exit::Wfi | Exit::Wfe | Exit::WfxTimeout { .. }) => {
            stats.count(ExitReason::Wfx);
            inject::skip_instruction(ctx, info.esr);
            let v = &vm.vcpus[me];
            // WFIT (FEAT_WFxT): Xt holds a CNTVCT_EL0 value that bounds the wait. A timeout
            // already passed, or one the hardware did not report (ISS.RV = 0), ends the
            // wait at once (a WFIT may always complete early).
            let mut timeout_at = 0;
            if let Exit::WfxTimeout { reg, .. } = wait {
                let timeout = match reg {
                    Some(r) if r < 31 => ctx.regs.x[usize::from(r)],
                    Some(_) => 0, // XZR
                    None => return Next::Continue,
                };
                match vm.counter.physical_at(timeout) {
                    Some(at) if at <= timer::now() => return Next::Continue,
                    Some(at) => timeout_at = at,
                    None => {} // beyond the counter's range: an ordinary WFI
                }
            }
            if v.wake.swap(false, Ordering::AcqRel) {
                return Next::Continue;
            }
            if let (Some(vg), Some(l)) = (&vm.vgic, lrs) {
                let mut g = vg.lock();
                let _ = g.save_vmcr(me, l);
                if g.vcpu_has_pending(me) {
                    return Next::Continue;
                }
            }
            v.wfit_at.store(timeout_at, Ordering::Release);
            v.blocked.store(true, Ordering::Release);
            Next::Yield
        }
        other => {
            stats.count(ExitReason::Other);
            crate::hv_warn!(
                "{name}: unhandled exit {:?} (ESR_EL2={:#x}) at pc {:#x}; injecting UNDEFINED",
                other,
                info.esr,
                ctx.regs.pc
            );
            inject::inject_undefined(sw, ctx);
            Next::Continue
        }
    }
}

/// Answers a guest data abort the hypervisor will not emulate: logs `why` and injects a
/// synchronous external abort (`FAR_EL1` = the faulting address unless `FAR_EL2` is not
/// valid).
fn refuse_data_abort(
    name: &str,
    da: &exit::DataAbort,
    ctx: &mut VcpuContext,
    sw: &dyn WorldSwitch,
    why: core::fmt::Arguments<'_>,
) {
    crate::hv_warn!(
        "{name}: {} at IPA {:#x} (pc {:#x}, ISV={}, DFSC={:#x}): {why}; injecting external abort",
        if da.wnr { "write" } else { "read" },
        da.ipa,
        ctx.regs.pc,
        da.isv as u8,
        da.dfsc
    );
    let far = if da.fnv { 0 } else { da.far };
    inject::inject_data_abort(sw, ctx, far, da.wnr);
}

/// What to do with a guest data abort, by [`stage2::classify`]: guest RAM is looked up in
/// the Stage-2 tables (dirty logging, races with table changes); every other IPA goes to the
/// MMIO bus, which answers or refuses (external abort) by itself. `in_ram`: the IPA lies in
/// the VM's RAM.
fn classify_abort(vm: &Vm, da: &exit::DataAbort, in_ram: bool) -> FaultAction {
    let (kind, level) = S2FaultKind::from_fsc(da.dfsc);
    let (region, dirty_logged, mapped_now) = if in_ram {
        let s2 = vm.stage2.lock();
        (
            IpaRegion::Ram { writable: true },
            s2.is_dirty_logged(da.ipa),
            s2.translate(da.ipa).is_some(),
        )
    } else {
        (IpaRegion::Mmio, false, false)
    };
    stage2::classify(&FaultInput {
        kind,
        level,
        // Cache maintenance reports WnR = 1: on a logged page it is treated as a write (the
        // page is marked dirty and made writable), which is conservative and never wrong.
        write: da.wnr,
        instruction_fetch: false,
        s1ptw: da.s1ptw,
        region,
        dirty_logged,
        lazy_populate: false,
        mapped_now,
    })
}

/// Vendor-specific hypervisor service (SMCCC owner 6), function 1: give up the physical CPU
/// to the next runnable vCPU (used to measure VM-to-VM switches; returns 0 in x0).
pub const HV_YIELD: u32 = 0x8600_0001;

/// Vendor-specific hypervisor service (SMCCC owner 6), function 2: x1 = an exit reason's
/// index (the order of [`ExitReason`]); returns in x0 how many exits of that reason the
/// calling vCPU has taken so far, this call included, or NOT_SUPPORTED (`u64::MAX`) for an
/// index out of range. Lets a guest attribute exits to its own operations.
pub const HV_EXIT_COUNT: u32 = 0x8600_0002;

/// Handles an SMCCC call (HVC or trapped SMC). `stats` are the exits of the current
/// [`run_vcpu`] invocation, not yet merged into the vCPU's counters.
fn smccc_call(vm: &Vm, me: usize, ctx: &mut VcpuContext, stats: &ExitStats) -> Next {
    match ctx.regs.x[0] as u32 {
        HV_YIELD => {
            ctx.regs.x[0] = 0;
            return Next::Yield;
        }
        HV_EXIT_COUNT => {
            let index = usize::try_from(ctx.regs.x[1]).unwrap_or(usize::MAX);
            let stored = vm.vcpus[me].stats.lock().get(index);
            ctx.regs.x[0] = match (stored, stats.get(index)) {
                (Some(a), Some(b)) => a + b,
                _ => u64::MAX,
            };
            return Next::Continue;
        }
        fid => {
            if let Some(r) = super::dirty_log::call(vm, fid, ctx.regs.x[1], ctx.regs.x[2]) {
                ctx.regs.x[0] = r as u64;
                return Next::Continue;
            }
        }
    }
    let x = &ctx.regs.x;
    let call = SmcccCall::new(x[0], [x[1], x[2], x[3], x[4], x[5], x[6]]);
    let mut host = VmPsci { vm, me };
    match smccc::dispatch(&call, &mut host) {
        CallOutcome::Return(r) => {
            // PSCI_FEATURES and SMCCC_ARCH_FEATURES answer NOT_SUPPORTED about *another*
            // function; only log calls that are themselves unknown.
            let is_query = matches!(call.function_id, 0x8400_000a | 0x8000_0001);
            if r[0] == u64::MAX && !is_query {
                crate::hv_warn!(
                    "{}: SMCCC function {:#x} not supported; returned NOT_SUPPORTED",
                    vm.name,
                    call.function_id
                );
            }
            ctx.regs.x[..4].copy_from_slice(&r);
            Next::Continue
        }
        CallOutcome::SystemOff => {
            crate::hv_log!("{}: PSCI SYSTEM_OFF", vm.name);
            end_vm(vm, VmEnd::PowerOff);
            Next::Yield
        }
        CallOutcome::SystemReset => {
            crate::hv_log!("{}: PSCI SYSTEM_RESET", vm.name);
            end_vm(vm, VmEnd::Reset);
            Next::Yield
        }
        CallOutcome::CpuOff => {
            let v = &vm.vcpus[me];
            v.power.store(Power::Off as u8, Ordering::Release);
            if vm.vcpus.iter().all(|v| v.power() == Power::Off) {
                crate::hv_log!("{}: every vCPU called PSCI CPU_OFF", vm.name);
                end_vm(vm, VmEnd::PowerOff);
            }
            Next::Yield
        }
        CallOutcome::CpuSuspend { .. } => {
            // Treated as a standby that wakes at once (PSCI permits returning SUCCESS).
            ctx.regs.x[0] = 0;
            Next::Continue
        }
    }
}

/// With `vm_reset=restart`, a VM that called `SYSTEM_RESET` is reloaded and started
/// again once none of its vCPUs runs any more (the last one to stop does it).
/// Serializes [`maybe_restart`] attempts (restarts are rare; one lock for all VMs).
static RESTART: spin::Mutex<()> = spin::Mutex::new(());

fn maybe_restart(t: &Thread) {
    let Some(cfg) = CONFIG.get() else { return };
    let vm = &*t.vm;
    let restart = cfg.reset == ResetPolicy::Restart || vm.restart_on_reset;
    if !restart || *vm.end.lock() != Some(VmEnd::Reset) {
        return;
    }
    // Attempts are serialized: two CPUs leaving the VM at once must not each see the other's
    // `try_lock` below and both give up (nobody would restart the VM). The last vCPU thread
    // to drop its state lock then always succeeds.
    let _one_at_a_time = RESTART.lock();
    if *vm.end.lock() != Some(VmEnd::Reset) {
        return; // restarted by the attempt we waited for
    }
    // Only proceed when every vCPU lock is free (no other CPU is inside the VM).
    let guards: Option<alloc::vec::Vec<_>> = vm.vcpus.iter().map(|v| v.state.try_lock()).collect();
    let Some(mut guards) = guards else { return };
    let Some(spec) = cfg.specs.get(vm.index) else {
        return;
    };
    if vm.load_images(spec).is_err() {
        crate::hv_warn!("{}: cannot reload images; leaving it stopped", vm.name);
        return;
    }
    for (i, (v, st)) in vm.vcpus.iter().zip(guards.iter_mut()).enumerate() {
        st.ctx.reset_to(vm.layout.kernel, vm.layout.dtb);
        st.ptimer.reset();
        st.vtimer_active = false;
        st.debug = DebugRegs::default();
        v.wake_at.store(0, Ordering::Release);
        v.power.store(
            if i == 0 { Power::On } else { Power::Off } as u8,
            Ordering::Release,
        );
        v.blocked.store(false, Ordering::Release);
    }
    drop(guards);
    // A rebooted machine starts with a reset interrupt controller and console.
    if let Some(vg) = &vm.vgic {
        if let Some(fresh) = vgic_glue::new_vgic(vm.vcpus.iter().map(|v| v.mpidr).collect()) {
            *vg.lock() = fresh;
        }
    }
    vm.uart.lock().reset();
    percpu::forget_fp_state();
    *vm.end.lock() = None;
    vm.ended.store(false, Ordering::Release);
    crate::hv_log!("{}: restarted", vm.name);
    sched::kick(vm, 0);
}

/// Why an emulated access failed (the guest gets an external abort).
#[derive(Debug)]
pub enum MmioFail {
    /// No device at that address.
    Unbacked,
    /// A device refused the access.
    Device(&'static str, el2_core::mmio::MmioError),
    /// The virtual GIC refused it (wrong width or alignment).
    Gic(vgic::VgicError),
    /// The access cannot be emulated at all.
    Refused(&'static str),
}

impl core::fmt::Display for MmioFail {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MmioFail::Unbacked => f.write_str("no device there"),
            MmioFail::Device(d, e) => write!(f, "{d} refused it: {e}"),
            MmioFail::Gic(e) => write!(f, "virtual GIC: {e}"),
            MmioFail::Refused(why) => f.write_str(why),
        }
    }
}

/// Performs one emulated access: the virtual GIC's distributor/redistributors, else the
/// VM's MMIO bus. Returns the value for the transfer register of a load (already
/// sign/zero-extended), and keeps device interrupt lines in the vGIC up to date.
fn do_mmio(vm: &Vm, me: usize, acc: &MmioAccess, reg_value: u64) -> Result<Option<u64>, MmioFail> {
    if let Some(vg) = &vm.vgic {
        if let Some(r) = gic_mmio(vm, vg, me, acc, reg_value) {
            return r;
        }
    }
    let outcome = vm.bus.lock().dispatch(acc, reg_value);
    if acc.ipa >= layout::VIRTIO_BASE
        && acc.ipa < layout::VIRTIO_BASE + layout::VIRTIO_SIZE * vm.virtio.len() as u64
    {
        vm.sync_virtio_irqs(Some(me));
        let slot = ((acc.ipa - layout::VIRTIO_BASE) / layout::VIRTIO_SIZE) as usize;
        if acc.is_write && vm.virtio.get(slot).is_some_and(|s| s.kind == "net") {
            sched::poll_network();
        }
    }
    if acc.ipa >= layout::UART_BASE && acc.ipa < layout::UART_BASE + layout::UART_SIZE {
        if let Some(vg) = &vm.vgic {
            let level = vm.feed_uart();
            let mut g = vg.lock();
            let _ = g.set_spi_level(layout::UART_INTID, level);
            vgic_glue::deliver_kicks(vm, &mut g, me);
        }
    }
    match outcome {
        MmioOutcome::Read(v) => Ok(Some(v)),
        MmioOutcome::WriteDone => Ok(None),
        MmioOutcome::Unbacked => Err(MmioFail::Unbacked),
        MmioOutcome::DeviceError { device, error } => Err(MmioFail::Device(device, error)),
    }
}

/// Emulates a guest access to the virtual GIC's distributor or redistributors; `None` when
/// `acc` is not in a GIC region. Reserved registers read as zero and ignore writes (logged).
fn gic_mmio(
    vm: &Vm,
    vg: &spin::Mutex<Vgic>,
    me: usize,
    acc: &MmioAccess,
    value: u64,
) -> Option<Result<Option<u64>, MmioFail>> {
    let size = acc.size.bytes() as u8;
    let in_gicd = acc.ipa >= layout::GICD_BASE && acc.ipa < layout::GICD_BASE + layout::GICD_SIZE;
    let gicr_len = layout::GICR_FRAME * vm.vcpus.len() as u64;
    let in_gicr = acc.ipa >= layout::GICR_BASE && acc.ipa < layout::GICR_BASE + gicr_len;
    let is_v3 = matches!(vgic_glue::guest_gic(), Some(vgic_glue::GuestGic::V3));
    if !(in_gicd || (in_gicr && is_v3)) {
        return None;
    }
    let mut g = vg.lock();
    let result = match (in_gicd, acc.is_write) {
        (true, false) => g.gicd_read(me, acc.ipa - layout::GICD_BASE, size).map(Some),
        (true, true) => g
            .gicd_write(
                me,
                acc.ipa - layout::GICD_BASE,
                size,
                acc.store_value(value),
            )
            .map(|_| None),
        (false, false) => g.gicr_read(me, acc.ipa - layout::GICR_BASE, size).map(Some),
        (false, true) => g
            .gicr_write(
                me,
                acc.ipa - layout::GICR_BASE,
                size,
                acc.store_value(value),
            )
            .map(|_| None),
    };
    vgic_glue::deliver_kicks(vm, &mut g, me);
    drop(g);
    Some(match result {
        Ok(v) => Ok(v.map(|v| acc.load_value(v))),
        Err(e) if e.is_abort() => Err(MmioFail::Gic(e)),
        Err(e) => {
            crate::hv_warn!("{}: GIC access at IPA {:#x}: {e}", vm.name, acc.ipa);
            Ok((!acc.is_write).then_some(0))
        }
    })
}

/// Guest RAM as the stage-1 walker reads it.
struct VmRam<'a>(&'a Vm);

impl s1walk::GuestPhysRead for VmRam<'_> {
    fn read_u64(&self, ipa: u64) -> Option<u64> {
        if !ipa.is_multiple_of(8) || !self.0.ram_contains(ipa) {
            return None;
        }
        // SAFETY: `ipa` is 8-byte aligned and inside this VM's RAM, identity-mapped at
        // `ram_pa`; read as a value (the guest may change it concurrently).
        Some(unsafe {
            core::ptr::read_volatile((self.0.ram_pa + (ipa - self.0.ram_ipa)) as *const u64)
        })
    }
}

/// The guest's registers as the load/store decoder needs them.
struct RegsView<'a> {
    ctx: &'a VcpuContext,
    sp: u64,
}

impl mmio_decode::GuestRegisters for RegsView<'_> {
    fn x(&self, n: u8) -> u64 {
        self.ctx.regs.read(n)
    }
    fn sp(&self) -> u64 {
        self.sp
    }
}

/// A data abort without a valid syndrome (`ESR_EL2.ISV` = 0, e.g. `LDP`/`STP` or a
/// writeback form on device memory): fetches the instruction through the guest's stage 1,
/// decodes it, and performs its accesses one by one.
fn emulate_undecoded(
    vm: &Vm,
    me: usize,
    ctx: &mut VcpuContext,
    da: &el2_core::exit::DataAbort,
    sw: &dyn WorldSwitch,
) -> Result<(), MmioFail> {
    use el2_core::switch::El1Reg;
    if ctx.regs.pstate & 0x10 != 0 {
        return Err(MmioFail::Refused("AArch32 instruction without syndrome"));
    }
    let s1 = s1walk::Stage1Regs {
        sctlr: sw.el1_read(ctx, El1Reg::Sctlr),
        tcr: sw.el1_read(ctx, El1Reg::Tcr),
        ttbr0: sw.el1_read(ctx, El1Reg::Ttbr0),
        ttbr1: sw.el1_read(ctx, El1Reg::Ttbr1),
    };
    let mem = VmRam(vm);
    let pc = ctx.regs.pc;
    let insn = s1walk::fetch_instruction(&s1, pc, &mem)
        .map_err(|_| MmioFail::Refused("cannot fetch the instruction at the guest PC"))?;
    let decoded = mmio_decode::decode(insn)
        .map_err(|_| MmioFail::Refused("instruction is not an emulatable load/store"))?;
    let el = (ctx.regs.pstate >> 2) & 3;
    let sp = if ctx.regs.pstate & 1 != 0 && el == 1 {
        sw.el1_read(ctx, El1Reg::SpEl1)
    } else {
        ctx.regs.sp_el0
    };
    let view = RegsView { ctx, sp };
    let resolved = decoded
        .resolve(&view, da.ipa, (!da.fnv).then_some(da.far))
        .map_err(|_| MmioFail::Refused("the access crosses a page or does not match FAR_EL2"))?;
    for e in resolved.elements() {
        let acc = e.to_mmio();
        let value = ctx.regs.read(acc.rt);
        if let Some(v) = do_mmio(vm, me, &acc, value)? {
            ctx.regs.write(acc.rt, v);
        }
    }
    if let Some((reg, value)) = resolved.writeback {
        if reg < 31 {
            ctx.regs.write(reg, value);
        } else if ctx.regs.pstate & 1 != 0 && el == 1 {
            sw.el1_write(ctx, El1Reg::SpEl1, value);
        } else {
            ctx.regs.sp_el0 = value;
        }
    }
    Ok(())
}
