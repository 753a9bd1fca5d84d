//! The EL2 scheduler: every vCPU is a thread on the run queue of one physical CPU. With at
//! most one vCPU per physical CPU the assignment is a 1:1 pinning (lowest latency, like a
//! partitioning hypervisor); when vCPUs outnumber CPUs, each CPU round-robins the vCPUs of
//! its queue with a fixed time slice enforced by the EL2 physical timer, and load balancing
//! (`balance.rs`) moves vCPUs between the queues: at the end of a time slice a CPU pushes
//! waiting vCPUs to less loaded CPUs, and a CPU with nothing to run steals one. A vCPU in WFI
//! is not runnable until something kicks it (PSCI `CPU_ON`, an interrupt for it, a timer).
//! Cross-CPU kicks are physical SGIs to the CPU whose queue holds the vCPU (`Vcpu::owner`).
//!
//! The hot paths (exits, kicks, `WFI` waits) touch only the running CPU's own queue or
//! per-vCPU atomics; other CPUs' queues are read and locked only at slice ends and in idle.
//!
//! Above the VMs and below the run loop: the loop each physical CPU runs (`cpu_loop.rs`)
//! picks a vCPU here and runs it with `run.rs`.

mod balance;
mod last_ran;

pub use last_ran::after_vcpu_load;

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use spin::{Mutex, Once};

use el2_core::mmio::MmioEvents;
use vgic::Vgic;

use super::vgic_glue::vcpus_of;
use super::vm::{Power, Vcpu, Vm, VmEnd};
use super::{gic, percpu, power, timer};
use crate::bootargs::Placement;

pub use balance::{balance_after_slice, resched_pending, take_resched};

/// Length of a time slice when a CPU multiplexes several vCPUs.
pub const TIME_SLICE_US: u64 = 10_000;

/// A vCPU as a schedulable thread.
#[derive(Clone)]
pub struct Thread {
    /// Its VM.
    pub vm: Arc<Vm>,
    /// Index of the vCPU in the VM.
    pub vcpu: usize,
    /// How long it has held a physical CPU (shared by the clones of the thread).
    clock: Arc<RunClock>,
}

/// Physical-counter time a vCPU has held a physical CPU (from its pick to the return of its
/// run loop, `WFI` waits while still loaded included): what the scheduler gave it.
#[derive(Default)]
struct RunClock {
    /// Ticks of the runs that ended.
    total: AtomicU64,
    /// Counter value at which the current run started (0: not running).
    since: AtomicU64,
}

/// Vendor-specific hypervisor service (SMCCC owner 6, SMC64 fast call), function 6: returns
/// in x0 how many physical-counter ticks the calling vCPU has held a physical CPU so far
/// (its run time; elapsed time minus this is what it waited for a CPU). Lets a guest see
/// the share of the machine the scheduler gives each of its vCPUs.
pub const HV_RUN_TIME: u32 = 0xc600_0006;

/// The hypervisor's vendor calls served by the scheduler ([`HV_RUN_TIME`]) for `thread`,
/// the calling vCPU: the result for x0, or `None` for another function.
pub fn vendor_call(thread: &Thread, function_id: u32) -> Option<i64> {
    (function_id == HV_RUN_TIME).then(|| thread.run_ticks() as i64)
}

impl Thread {
    /// Its vCPU.
    pub fn vcpu(&self) -> &Vcpu {
        &self.vm.vcpus[self.vcpu]
    }

    /// The identity of the vCPU: the address of its `Vcpu` (also its FP/SIMD owner tag,
    /// `PerCpu::fp_owner`).
    pub fn id(&self) -> usize {
        self.vcpu() as *const Vcpu as usize
    }

    /// Counter ticks it has held a physical CPU, the current run included.
    pub fn run_ticks(&self) -> u64 {
        let since = self.clock.since.load(Ordering::Acquire);
        let current = if since == 0 {
            0
        } else {
            timer::now().saturating_sub(since)
        };
        self.clock.total.load(Ordering::Acquire) + current
    }
}

/// What a CPU's run-queue lock protects.
struct Queue {
    /// The vCPUs this CPU schedules.
    threads: Vec<Thread>,
    /// The one this CPU picked and runs now ([`Thread::id`]); never moved to another CPU.
    running: Option<usize>,
}

struct CpuQueue {
    queue: Mutex<Queue>,
    cursor: AtomicUsize,
}

/// How the scheduler was asked to place and move vCPUs (the `balance=` and `place=` words
/// of the hypervisor's command line).
#[derive(Debug, Clone, Copy, Default)]
pub struct SchedOptions {
    /// Move vCPUs between CPUs.
    pub balance: bool,
    /// Where each vCPU starts.
    pub place: Placement,
}

struct Scheduler {
    queues: Vec<CpuQueue>,
    vms: Vec<Arc<Vm>>,
    balance: bool,
}

static SCHED: Once<Scheduler> = Once::new();

/// Distributes all vCPUs of `vms` over the online CPUs (as `opts.place` asks, else round
/// robin) and records the VMs. Boot CPU, once.
pub fn init(vms: Vec<Arc<Vm>>, opts: SchedOptions) {
    let online: Vec<usize> = percpu::all()
        .iter()
        .filter(|c| c.online.load(Ordering::Acquire))
        .map(|c| c.index)
        .collect();
    let ncpus = percpu::all().len().max(1);
    let queues: Vec<CpuQueue> = (0..ncpus)
        .map(|_| CpuQueue {
            queue: Mutex::new(Queue {
                threads: Vec::new(),
                running: None,
            }),
            cursor: AtomicUsize::new(0),
        })
        .collect();
    let (mut threads, mut spread) = (0, 0);
    for vm in &vms {
        for (i, v) in vm.vcpus.iter().enumerate() {
            let cpu = match opts.place.cpu_for(threads).filter(|c| online.contains(c)) {
                Some(c) => c,
                None => {
                    spread += 1;
                    online[(spread - 1) % online.len()]
                }
            };
            threads += 1;
            v.owner.store(cpu + 1, Ordering::SeqCst);
            queues[cpu].queue.lock().threads.push(Thread {
                vm: vm.clone(),
                vcpu: i,
                clock: Arc::default(),
            });
        }
    }
    let per_cpu: Vec<usize> = online
        .iter()
        .map(|&c| queues[c].queue.lock().threads.len())
        .collect();
    crate::hv_log!(
        "scheduler: {threads} vCPU(s) on {} CPU(s): {}; vCPUs per CPU {:?}{}; load balancing {}",
        online.len(),
        if threads <= online.len() {
            "pinned 1:1"
        } else {
            "time-sliced round robin"
        },
        per_cpu,
        if opts.place.is_empty() {
            ""
        } else {
            " (place=)"
        },
        if opts.balance { "on" } else { "off" }
    );
    SCHED.call_once(|| Scheduler {
        queues,
        vms,
        balance: opts.balance,
    });
}

/// Kicks a vCPU: it re-evaluates WFI, and the CPU that owns it is interrupted (if it is
/// another CPU) so it notices at once.
pub fn kick(vm: &Vm, vcpu: usize) {
    let Some(v) = vm.vcpus.get(vcpu) else { return };
    v.wake.store(true, Ordering::SeqCst);
    // SeqCst against the owner change of a migration (`balance::migrate`): a kick that still
    // reads the old owner set `wake` before the move, and the new CPU sees it when it picks.
    kick_cpu(v.owner.load(Ordering::SeqCst).wrapping_sub(1));
}

/// Interrupts physical CPU `index` (no-op for the current CPU).
pub fn kick_cpu(index: usize) {
    let me = percpu::current().index;
    if index == me {
        return;
    }
    if let Some(cpu) = percpu::all().get(index) {
        if cpu.online.load(Ordering::Acquire) {
            gic::kick(cpu.mpidr, cpu.gic().cpu_if);
        }
    }
}

/// Interrupts every other online CPU.
pub fn kick_all_cpus() {
    for c in percpu::all() {
        kick_cpu(c.index);
    }
}

/// Hands the vGIC's kick set to the scheduler (`me` needs no kick: it re-enters anyway;
/// `usize::MAX` when no vCPU of the VM is the caller).
pub fn deliver_kicks(vm: &Vm, vgic: &mut Vgic, me: usize) {
    for v in vcpus_of(vgic.take_kicks()) {
        if v != me {
            kick(vm, v);
        }
    }
}

/// Sets the level of interrupt line `intid` (an SPI of a device of `vm`) in the VM's vGIC
/// and kicks the vCPUs that must see it; `me` as for [`deliver_kicks`].
pub fn set_irq_level(vm: &Vm, intid: u32, level: bool, me: usize) {
    let Some(vg) = &vm.vgic else { return };
    let mut g = vg.lock();
    let _ = g.set_spi_level(intid, level);
    deliver_kicks(vm, &mut g, me);
}

/// Where the devices of a VM report what an access or a host-side poll changed: interrupt
/// lines go to the VM's vGIC, kicks to the vCPUs' CPUs, backend work to a switch poll once
/// the access is done ([`VmEvents::finish`]).
pub struct VmEvents<'a> {
    vm: &'a Vm,
    me: usize,
    poll: bool,
    /// A line changed, this vCPU was kicked, or backend work was asked for.
    changed: bool,
}

impl<'a> VmEvents<'a> {
    /// Events of an access by vCPU `me` of `vm` (`usize::MAX`: from the host, no vCPU).
    pub fn new(vm: &'a Vm, me: usize) -> Self {
        Self {
            vm,
            me,
            poll: false,
            changed: false,
        }
    }

    /// After the access (and every device lock) is done: polls the virtual switch if a
    /// device asked for it. Returns whether the access reported anything (a line, a kick,
    /// backend work): the accessing vCPU's run loop must then flush its vGIC state before
    /// re-entering the guest.
    pub fn finish(self) -> bool {
        if self.poll {
            poll_network();
        }
        self.changed
    }
}

impl MmioEvents for VmEvents<'_> {
    fn set_irq_level(&mut self, intid: u32, level: bool) {
        self.changed = true;
        set_irq_level(self.vm, intid, level, self.me);
    }

    fn kick(&mut self, vcpu: usize) {
        // Another vCPU is interrupted at once; only a kick of this one needs its run loop's
        // pre-entry work (a GICv2 SGI to another vCPU re-enters without a flush).
        if vcpu == self.me {
            self.changed = true;
        } else {
            kick(self.vm, vcpu);
        }
    }

    fn poll_backends(&mut self) {
        self.changed = true;
        self.poll = true;
    }
}

/// Ends `vm` (first caller wins), logs it, and interrupts the CPUs running its vCPUs.
pub fn end_vm(vm: &Vm, how: VmEnd) {
    if vm.finish(how) {
        crate::hv_log!("{}: stopped ({:?})", vm.name, how);
        kick_all_cpus();
    }
}

/// Delivers frames waiting on the virtual switch: takes what the uplink received, polls
/// every VM's network device and raises their interrupts (called after a guest transmits,
/// when a reply from the uplink is likely, and on the uplink's interrupt).
pub fn poll_network() {
    let Some(s) = SCHED.get() else { return };
    super::virtio_glue::poll_uplink();
    for vm in &s.vms {
        if vm.ended.load(Ordering::Acquire) {
            continue;
        }
        let mut events = VmEvents::new(vm, usize::MAX);
        for slot in vm.virtio.iter().filter(|v| v.on_switch) {
            slot.poll(&vm.name, &mut events);
        }
    }
}

static CONSOLE_INTID: Once<u32> = Once::new();

/// Routes the host console UART's receive interrupt to the calling CPU (boot CPU, once):
/// typed characters go to the first running VM's PL011.
pub fn enable_console_input(intid: u32) {
    CONSOLE_INTID.call_once(|| intid);
    gic::enable_spi_here(intid);
    super::console::enable_rx_interrupt();
}

fn console_intid() -> Option<u32> {
    CONSOLE_INTID.get().copied()
}

/// Moves every byte waiting in the host UART to the console of the first VM that still
/// runs, and raises that PL011's interrupt.
fn console_input() {
    let Some(s) = SCHED.get() else {
        while super::console::read_byte().is_some() {}
        return;
    };
    let target = s.vms.iter().find(|vm| !vm.ended.load(Ordering::Acquire));
    let Some(vm) = target else {
        while super::console::read_byte().is_some() {}
        return;
    };
    let mut uart = vm.uart.lock();
    while let Some(b) = super::console::read_byte() {
        uart.queue_input(b);
    }
    uart.feed();
    uart.pl011.report_irq(&mut VmEvents::new(vm, usize::MAX));
}

fn runnable(t: &Thread) -> bool {
    let v = &t.vm.vcpus[t.vcpu];
    if t.vm.ended.load(Ordering::Acquire) {
        return false;
    }
    match v.power() {
        Power::Off => false,
        Power::OnPending => true,
        Power::On => {
            if !v.blocked.load(Ordering::Acquire) || v.wake.load(Ordering::Acquire) {
                return true;
            }
            let at = v.wake_at.load(Ordering::Acquire);
            at != 0 && timer::now() >= at
        }
    }
}

/// Arms the EL2 timer for the earliest timer of a vCPU blocked on this CPU, so the idle
/// CPU wakes for it.
fn arm_for_blocked(q: &CpuQueue) {
    let earliest = q
        .queue
        .lock()
        .threads
        .iter()
        .filter(|t| !t.vm.ended.load(Ordering::Acquire))
        .map(|t| t.vm.vcpus[t.vcpu].wake_at.load(Ordering::Acquire))
        .filter(|&at| at != 0)
        .min();
    match earliest {
        Some(at) => timer::arm(at),
        None => timer::disarm(),
    }
}

/// What happened among the host interrupts drained on this CPU.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostEvents {
    /// The EL2 timer fired (slice end or software timer).
    pub timer: bool,
    /// Another CPU kicked this one.
    pub kicked: bool,
    /// The loaded vCPU's virtual timer fired: the physical PPI stays active and must be
    /// injected as the hardware-mapped virtual PPI 27.
    pub vtimer: bool,
}

/// Acknowledges and handles every pending host interrupt on this CPU. With
/// `vcpu_loaded`, the virtual-timer PPI is left active for the guest to deactivate
/// through its hardware-mapped list register.
pub fn drain_host_irqs(vcpu_loaded: bool) -> HostEvents {
    let mut ev = HostEvents::default();
    // The maintenance interrupt is level-sensitive and stays asserted until the vGIC sync
    // that follows has consumed its cause: acknowledge it once, then stop draining.
    // The bound protects against any other level source that is still asserted.
    for _ in 0..16 {
        let Some(a) = gic::ack() else { break };
        gic::eoi(a);
        match a.intid() {
            gic::SGI_KICK => ev.kicked = true,
            gic::PPI_HYP_TIMER => {
                timer::disarm();
                ev.timer = true;
            }
            gic::PPI_VIRT_TIMER if vcpu_loaded => {
                ev.vtimer = true;
                continue; // stays active until the guest deactivates it
            }
            gic::PPI_MAINTENANCE => {
                gic::deactivate(a);
                break;
            }
            gic::PPI_VIRT_TIMER => {}
            other if Some(other) == console_intid() => console_input(),
            // The host network card received frames (its interrupt is level-sensitive
            // and dropped by the acknowledgement inside the uplink's receive).
            other if Some(other) == super::host_virtio::uplink_intid() => poll_network(),
            other => crate::hv_warn!("unexpected host interrupt {other}"),
        }
        gic::deactivate(a);
    }
    ev
}

/// The next vCPU this CPU runs, and whether it shares the CPU with other vCPUs (then it
/// runs for a time slice); `None` when none is runnable (or before [`init`]).
pub fn pick_next() -> Option<(Thread, bool)> {
    let sched = SCHED.get()?;
    pick(&sched.queues[percpu::current().index])
}

/// `thread`, which [`pick_next`] returned, has left this CPU (`run::run_vcpu` returned): its
/// run time is counted, and it may be moved again.
pub fn ran(thread: &Thread) {
    let since = thread.clock.since.swap(0, Ordering::AcqRel);
    if since != 0 {
        let ticks = timer::now().saturating_sub(since);
        thread.clock.total.fetch_add(ticks, Ordering::AcqRel);
    }
    let Some(sched) = SCHED.get() else { return };
    sched.queues[percpu::current().index].queue.lock().running = None;
}

/// Nothing to run on this CPU: the boot CPU ends the machine once every VM has stopped;
/// otherwise waits (with the EL2 timer armed for the earliest blocked vCPU's timers) for an
/// interrupt.
pub fn idle() {
    let me = percpu::current();
    if let Some(sched) = SCHED.get() {
        if me.index == 0 && machine_done(sched) {
            finish_machine(sched);
        }
        if sched.balance && balance::steal(sched, me.index) {
            return; // the caller picks the stolen vCPU
        }
        arm_for_blocked(&sched.queues[me.index]);
    }
    wait_for_interrupt();
}

fn pick(q: &CpuQueue) -> Option<(Thread, bool)> {
    // Whatever another CPU moved here is seen now.
    percpu::current().resched.store(false, Ordering::Relaxed);
    let mut queue = q.queue.lock();
    let threads = &queue.threads;
    let n = threads.len();
    let start = q.cursor.load(Ordering::Relaxed);
    for k in 0..n {
        let i = (start + k) % n;
        if runnable(&threads[i]) {
            q.cursor.store(i + 1, Ordering::Relaxed);
            let shared = threads
                .iter()
                .filter(|t| !t.vm.ended.load(Ordering::Acquire))
                .count()
                > 1;
            let t = threads[i].clone();
            queue.running = Some(t.id());
            t.clock.since.store(timer::now().max(1), Ordering::Release);
            return Some((t, shared));
        }
    }
    None
}

/// Another runnable thread waits on this CPU's queue (used to decide whether a slice ends).
pub fn others_runnable(current: &Thread) -> bool {
    let Some(sched) = SCHED.get() else {
        return false;
    };
    let q = &sched.queues[percpu::current().index];
    let queue = q.queue.lock();
    queue
        .threads
        .iter()
        .any(|t| !(Arc::ptr_eq(&t.vm, &current.vm) && t.vcpu == current.vcpu) && runnable(t))
}

/// The earliest time at which a blocked vCPU of this CPU's queue other than `current`
/// becomes runnable by its timers (`None`: none has a timer; kicks come as interrupts).
/// A vCPU waiting loaded in `WFI` arms the EL2 timer for it instead of a slice end that has
/// passed: nothing else can make another vCPU here runnable, and re-arming a passed
/// deadline makes every `WFI` return at once (a busy loop of EL2 timer interrupts).
pub fn others_wake_at(current: &Thread) -> Option<u64> {
    let sched = SCHED.get()?;
    let q = &sched.queues[percpu::current().index];
    let queue = q.queue.lock();
    queue
        .threads
        .iter()
        .filter(|t| !(Arc::ptr_eq(&t.vm, &current.vm) && t.vcpu == current.vcpu))
        .filter(|t| !t.vm.ended.load(Ordering::Acquire))
        .map(|t| t.vm.vcpus[t.vcpu].wake_at.load(Ordering::Acquire))
        .filter(|&at| at != 0)
        .min()
}

fn machine_done(s: &Scheduler) -> bool {
    // A VM that reset and restarts is not done.
    let stopped = |vm: &Arc<Vm>| vm.ended.load(Ordering::Acquire) && !vm.will_restart();
    let done = s.vms.iter().all(stopped) || s.vms.iter().any(|vm| vm.ends_all && stopped(vm));
    // Wait until no CPU is still inside a vCPU (its exit counters are merged on the way out).
    done && s
        .vms
        .iter()
        .all(|vm| vm.vcpus.iter().all(|v| !v.state.is_locked()))
}

fn finish_machine(s: &Scheduler) -> ! {
    super::log::report_suppressed();
    if s.balance {
        crate::hv_log!("scheduler: {} vCPU move(s) between CPUs", balance::moves());
    }
    crate::hv_log!(
        "scheduler: {} local TLB/I-cache invalidation(s) on a switch between vCPUs of a VM",
        last_ran::flushes()
    );
    super::errata_boot::report();
    let mut status = 0;
    for vm in &s.vms {
        let end = *vm.end.lock();
        crate::hv_log!("{}: {:?}; exits: {}", vm.name, end, vm.total_stats());
        for (i, v) in vm.vcpus.iter().enumerate() {
            if vm.vcpus.len() > 1 {
                crate::hv_log!("{}:   vcpu{} exits: {}", vm.name, i, v.stats.lock());
            }
        }
        let code = match end {
            Some(VmEnd::PowerOff) | None => 0,
            Some(VmEnd::Reset) => 1,
            Some(VmEnd::Crashed) => 2,
        };
        if status == 0 {
            status = code;
        }
    }
    crate::hv_log!(
        "all VMs stopped; {}",
        if status == 0 {
            "powering off"
        } else {
            "exiting with failure"
        }
    );
    power::exit(status)
}

/// Waits (physical `WFI`, interrupts masked at EL2) until an interrupt is pending at this
/// CPU; the caller drains it ([`drain_host_irqs`]).
pub fn wait_for_interrupt() {
    // SAFETY: WFI with interrupts masked at PSTATE still wakes on a pending interrupt,
    // which the loop then drains; no memory effects.
    unsafe { core::arch::asm!("dsb sy", "wfi", options(nomem, nostack)) };
}
