//! Running one vCPU for a time slice: `vcpu_load; loop { exit = run(); handle(exit) };
//! vcpu_put`. The handlers are in `crate::exits` (one per exception class); this file only
//! loads and puts the vCPU, keeps the virtual GIC and the EL2 timer in step around each
//! entry, and restarts a VM that reset.

use core::sync::atomic::Ordering;
use el2_core::switch::{El1Reg, WorldSwitch};
use el2_core::vcpu::VcpuContext;
use spin::Once;
use vtimer::{TimerState, VcpuTimer};

use super::debug_regs::{self, DebugRegs};
use super::sched::{self, Thread};
use super::vcpu_host::VcpuHost;
use super::vm::{Power, VcpuRun, Vm, VmEnd};
use super::{percpu, timer, vgic_glue};
use crate::bootargs::ResetPolicy;
use crate::exits::{self, ExitCtx, Fast, FastCtx};
use crate::stats::ExitStats;

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

/// Installs the run configuration (boot CPU, once).
pub fn configure(c: RunConfig) {
    super::vm::set_reset_policy(c.reset);
    // The guests' ID-register table, built before any guest traps.
    let _ = super::vcpu_host::id_register(crate::idregs::ID_AA64PFR0);
    CONFIG.call_once(|| c);
}

/// Runs `t` until it blocks, stops, its VM ends, or (when `shared`) its time slice ends.
pub fn run_vcpu(t: &Thread, shared: bool) {
    let Some(cfg) = CONFIG.get() else { return };
    let sw = cfg.switch;
    let vm = &*t.vm;
    let mut state = vm.vcpus[t.vcpu].state.lock();
    let VcpuRun {
        ctx,
        timer: timers,
        debug,
    } = &mut *state;
    let mut lrs = percpu::current().lrs.lock();
    let mut host = VcpuHost {
        vm,
        thread: t,
        me: t.vcpu,
        lrs: lrs.as_mut().filter(|_| vm.vgic.is_some()),
        debug,
        slice_end: shared.then(|| timer::now() + timer::us_to_ticks(sched::TIME_SLICE_US)),
        id_table: super::vcpu_host::id_table(),
    };
    load(&mut host, ctx, timers, sw);
    let mut stats = ExitStats::default();
    while !vm.ended.load(Ordering::Acquire) && host.vcpu().power() == Power::On {
        let lrs_idle = before_entry(&mut host, timers);
        // The hot exits (`exits::fast`) re-enter here at once; anything else leaves this
        // loop with its exit for the general path below.
        let mut fast = FastCtx {
            vcpu: ctx,
            timer: timers,
            stats: &mut stats,
            sw,
            vm: &mut host,
        };
        let mut raw;
        let slow = loop {
            // SAFETY: loaded above on this CPU. The same as `sw.run` (entering the guest is
            // backend-independent), without the indirect call.
            raw = unsafe { el2_core::switch::run_loaded(fast.vcpu) };
            match exits::try_fast(&raw, &mut fast, lrs_idle) {
                Fast::Done => continue,
                Fast::Changed => break false,
                Fast::Slow => break true,
            }
        };
        if !slow {
            continue;
        }
        if let (Some(vg), Some(l)) = (&vm.vgic, host.lrs.as_deref_mut()) {
            let _ = vg.lock().sync(host.me, l);
        }
        let mut exit = ExitCtx::new(raw, ctx, timers, &mut stats, sw, &mut host);
        let outcome = exits::handle(&mut exit);
        program_timer(host.slice_end, timers);
        if outcome.yields() {
            if host.vcpu().blocked.load(Ordering::Acquire)
                && wait_loaded(&mut host, ctx, timers, sw)
            {
                continue;
            }
            break;
        }
    }
    put(&mut host, ctx, timers, sw);
    host.vcpu().stats.lock().add(&stats);
    drop(lrs);
    drop(state);
    if vm.ended.load(Ordering::Acquire) {
        maybe_restart(t);
        // The boot CPU decides when the machine is done; tell it this vCPU has left.
        sched::kick_cpu(0);
    }
}

/// `vcpu_load`: starts a vCPU that PSCI `CPU_ON` accepted, installs its VMID, FP ownership,
/// world-switch state, debug registers, vGIC interface and forwarded timer state.
fn load(
    host: &mut VcpuHost<'_>,
    ctx: &mut VcpuContext,
    timers: &mut VcpuTimer,
    sw: &dyn WorldSwitch,
) {
    let vcpu = host.vcpu();
    if vcpu.power() == Power::OnPending {
        let (entry, context_id) = *vcpu.boot.lock();
        host.vm
            .reset_vcpu_for_cpu_on(host.me, ctx, entry, context_id);
        timers.reset();
        vcpu.power.store(Power::On as u8, Ordering::Release);
    }
    vcpu.blocked.store(false, Ordering::Release);
    vcpu.wake.store(false, Ordering::Release);
    vcpu.wake_at.store(0, Ordering::Release);
    vcpu.wfit_at.store(0, Ordering::Release);
    program_timer(host.slice_end, timers);
    let this_cpu = percpu::current();
    ctx.controls.vttbr_el2 = super::vm::vmid_for_load(host.vm, this_cpu.index);
    // Lazy FP/SIMD across put/load: when this CPU's FP registers still hold this vCPU's
    // state (nothing restored another vCPU's since it was put here), run with FP enabled
    // instead of taking a trap to restore the same values.
    ctx.fp_loaded = this_cpu.fp_owner.load(Ordering::Acquire) == vcpu_id(host);
    if !ctx.fp_loaded {
        this_cpu.fp_owner.store(0, Ordering::Release);
    }
    // SAFETY: at EL2 on the CPU that owns this vCPU; no other vCPU is loaded here.
    unsafe { sw.vcpu_load(ctx) };
    sched::after_vcpu_load(host.vm.index, host.me);
    if host.debug.active {
        host.debug.load();
    }
    debug_regs::set_trap(!host.debug.active);
    if let (Some(vg), Some(l)) = (&host.vm.vgic, host.lrs.as_deref_mut()) {
        let _ = vg.lock().vcpu_load(host.me, l);
    }
    timers.vcpu_load(host);
}

/// Before each entry: the emulated physical timer's line (when it changed), pending
/// interrupts into the list registers, kicks for other vCPUs. Returns whether the vCPU
/// enters with no list register in use (what `exits::try_fast` needs for MMIO).
fn before_entry(host: &mut VcpuHost<'_>, timers: &mut VcpuTimer) -> bool {
    timers.flush(host);
    let me = host.me;
    if let (Some(vg), Some(l)) = (&host.vm.vgic, host.lrs.as_deref_mut()) {
        let mut g = vg.lock();
        let _ = g.flush(me, l);
        sched::deliver_kicks(host.vm, &mut g, me);
        return g.used_lrs(me) == 0;
    }
    true
}

/// A vCPU that blocked in `WFI` waits for its wake-up still loaded, in a physical `WFI`,
/// while no other vCPU wants this CPU: the interrupt that ends the wait (its virtual
/// timer's PPI, a kick from another CPU, the EL2 timer for its emulated physical timer or
/// `WFIT` timeout, a device) wakes the CPU, and the vCPU re-enters without `vcpu_put`,
/// scheduler and `vcpu_load`. Returns true when the vCPU is runnable again; false when it
/// must be put after all (its VM ended, it was powered off, another vCPU on this CPU became
/// runnable, a timer is due whose interrupt did not arrive through the vGIC): it is still
/// marked blocked, and the scheduler takes over as before.
fn wait_loaded(
    host: &mut VcpuHost<'_>,
    ctx: &VcpuContext,
    timers: &mut VcpuTimer,
    sw: &dyn WorldSwitch,
) -> bool {
    let vcpu = host.vcpu();
    // The WFI handler has just found nothing pending; later changes come with a kick.
    let mut checked = true;
    loop {
        if host.vm.ended.load(Ordering::Acquire) || vcpu.power() != Power::On {
            return false;
        }
        // Unsliced, the CPU is shared once load balancing moved a vCPU here.
        if (host.slice_end.is_some() || sched::resched_pending())
            && sched::others_runnable(host.thread)
        {
            return false;
        }
        // What the scheduler would wake it for (`sched::runnable` of a put vCPU): a kick, or
        // the earliest of its timers and its WFIT bound having passed.
        let vt = TimerState {
            ctl: sw.el1_read(ctx, El1Reg::CntvCtl),
            cval: sw.el1_read(ctx, El1Reg::CntvCval),
        };
        let wfit = Some(vcpu.wfit_at.load(Ordering::Acquire)).filter(|&at| at != 0);
        let wake_at = match (timers.wake_deadline(&vt, &host.vm.counter), wfit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if vcpu.wake.swap(false, Ordering::AcqRel) {
            break;
        }
        timers.flush(host);
        if !core::mem::take(&mut checked) && exits::Interrupts::pending_for_wfi(host) {
            break;
        }
        if wake_at.is_some_and(|at| timer::now() >= at) {
            // A timer is due but its interrupt has not reached the vGIC (the virtual
            // timer's PPI not taken yet, e.g. still active in the physical GIC): the general
            // path (put, scheduler, load) delivers it as it always has.
            return false;
        }
        // The EL2 timer for the wake-up time and for the earliest timer of another vCPU
        // here (the slice end would only matter with another vCPU runnable, and none is:
        // one becomes runnable by its timer or by a kick's SGI); the virtual timer's own
        // PPI may wake the CPU first.
        let others = host
            .slice_end
            .and_then(|_| sched::others_wake_at(host.thread));
        match (others, wake_at) {
            (Some(a), Some(b)) => timer::arm(a.min(b)),
            (Some(a), None) | (None, Some(a)) => timer::arm(a),
            (None, None) => timer::disarm(),
        }
        sched::wait_for_interrupt();
        if sched::drain_host_irqs(true).vtimer {
            timers.on_irq(vtimer::VIRT_TIMER_PPI, host);
        }
    }
    vcpu.blocked.store(false, Ordering::Release);
    vcpu.wfit_at.store(0, Ordering::Release);
    program_timer(host.slice_end, timers);
    true
}

/// `vcpu_put`: saves what is live in hardware, hands FP ownership to the CPU, keeps the
/// forwarded timer's active state with the vCPU, and for a vCPU that blocks records when
/// its timers must wake it.
fn put(
    host: &mut VcpuHost<'_>,
    ctx: &mut VcpuContext,
    timers: &mut VcpuTimer,
    sw: &dyn WorldSwitch,
) {
    if host.debug.active {
        host.debug.save_and_clear();
    }
    let fp_in_registers = ctx.fp_loaded;
    // SAFETY: the vCPU loaded on this CPU.
    unsafe { sw.vcpu_put(ctx) };
    let this_cpu = percpu::current();
    super::vm::vmid_put(this_cpu.index);
    if fp_in_registers {
        // Saved to memory by vcpu_put, and still in the registers.
        this_cpu.fp_owner.store(vcpu_id(host), Ordering::Release);
    }
    if let (Some(vg), Some(l)) = (&host.vm.vgic, host.lrs.as_deref_mut()) {
        let _ = vg.lock().vcpu_put(host.me, l);
    }
    timers.vcpu_put(host);
    timer::disarm();
    let vcpu = host.vcpu();
    if vcpu.blocked.load(Ordering::Acquire) {
        let vt = TimerState {
            ctl: ctx.el1.cntv_ctl_el0,
            cval: ctx.el1.cntv_cval_el0,
        };
        let deadline = timers.wake_deadline(&vt, &host.vm.counter);
        let wfit = Some(vcpu.wfit_at.swap(0, Ordering::AcqRel)).filter(|&at| at != 0);
        let at = match (deadline, wfit) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(0),
        };
        vcpu.wake_at.store(at, Ordering::Release);
    }
}

/// The identity of a vCPU for FP ownership: the address of its `Vcpu`.
fn vcpu_id(host: &VcpuHost<'_>) -> usize {
    host.vcpu() as *const _ as usize
}

/// Arms the EL2 timer for the earlier of the slice end and the emulated physical timer.
/// A physical timer that has already fired is not armed again: its level is in the vGIC
/// until the guest reprograms it (re-arming would make the EL2 timer fire on every entry).
fn program_timer(slice_end: Option<u64>, vcpu_timer: &VcpuTimer) {
    let pdeadline = vcpu_timer.emulated_deadline(timer::now());
    match (slice_end, pdeadline) {
        (Some(a), Some(b)) => timer::arm(a.min(b)),
        (Some(a), None) | (None, Some(a)) => timer::arm(a),
        (None, None) => timer::disarm(),
    }
}

/// Serializes [`maybe_restart`] attempts (restarts are rare; one lock for all VMs).
static RESTART: spin::Mutex<()> = spin::Mutex::new(());

/// With `vm_reset=restart`, a VM that called `SYSTEM_RESET` is reloaded and started
/// again once none of its vCPUs runs any more (the last one to stop does it).
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
        vm.reset_vcpu_for_boot(&mut st.ctx);
        // A new vGIC comes with it (`reset_devices`): every line starts low.
        st.timer = VcpuTimer::default();
        st.debug = DebugRegs::default();
        v.wake_at.store(0, Ordering::Release);
        v.power.store(
            if i == 0 { Power::On } else { Power::Off } as u8,
            Ordering::Release,
        );
        v.blocked.store(false, Ordering::Release);
    }
    drop(guards);
    reset_devices(vm);
    super::percpu::forget_fp_state();
    super::percpu::forget_vm(vm.index);
    *vm.end.lock() = None;
    vm.ended.store(false, Ordering::Release);
    crate::hv_log!("{}: restarted", vm.name);
    sched::kick(vm, 0);
}

/// A rebooted machine starts with a reset interrupt controller and console.
fn reset_devices(vm: &Vm) {
    if let Some(vg) = &vm.vgic {
        if let Some(fresh) = vgic_glue::new_vgic(vm.vcpus.iter().map(|v| v.mpidr).collect()) {
            *vg.lock() = fresh;
        }
    }
    vm.uart.lock().pl011.reset();
}
