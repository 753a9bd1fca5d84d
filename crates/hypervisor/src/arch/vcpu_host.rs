//! A running vCPU as the exit handlers (`crate::exits`) see it: the implementation of
//! `ExitHost` over its VM, the scheduler, the virtual GIC's list registers and the hardware
//! of this physical CPU. Built by the run loop for one `run_vcpu` invocation.

use core::fmt;
use core::sync::atomic::Ordering;
use el2_core::exit::SysRegAccess;
use el2_core::mmio::{MmioAccess, MmioCaller, MmioOutcome};
use el2_core::psci::{AffinityState, PsciHost, PsciReturn, MPIDR_AFFINITY_MASK};
use vgic::SgiReg;
use vtimer::{TimerHost, VmCounter};

use super::debug_regs::{self, DebugRegs};
use super::lrs::HostLrs;
use super::sched::{self, Thread, VmEvents};
use super::vm::{Power, Vcpu, Vm};
use super::{cpu, dirty_log, gic, sysregs, timer};
use crate::exits::{
    Devices, GuestLog, HostIrqs, Interrupts, Platform, S2Page, Scheduling, VcpuPower, VendorCalls,
    VmEnd, VmMemory,
};
use crate::idregs::{IdPolicy, IdReg};

/// Number of ID registers in the `HCR_EL2.TID3` space: CRm 1..=7, op2 0..=7.
pub const ID_TABLE_LEN: usize = 7 * 8;

/// What guests read from each ID register, computed once from the hardware and the
/// machine's policy (the hardware values never change; the policy is set at boot, before
/// any guest runs).
static ID_TABLE: spin::Once<[u64; ID_TABLE_LEN]> = spin::Once::new();

/// The value a guest reads from ID register `reg` (CRm 1..=7): the hardware value
/// sanitised by the machine's policy, from a table built by the first call (at boot:
/// `run::configure`).
pub fn id_register(reg: IdReg) -> u64 {
    id_lookup(id_table(), reg)
}

/// The table behind [`id_register`] (built on the first call).
pub fn id_table() -> &'static [u64; ID_TABLE_LEN] {
    ID_TABLE.call_once(|| {
        let policy = sysregs::policy();
        core::array::from_fn(|i| {
            let reg = IdReg {
                crm: (i / 8 + 1) as u8,
                op2: (i % 8) as u8,
            };
            crate::idregs::sanitize(reg, cpu::read_id_register(reg.crm, reg.op2), &policy)
        })
    })
}

/// `reg` (CRm 1..=7) in `table`.
fn id_lookup(table: &[u64; ID_TABLE_LEN], reg: IdReg) -> u64 {
    let index = usize::from(reg.crm.wrapping_sub(1)) * 8 + usize::from(reg.op2 & 7);
    table.get(index).copied().unwrap_or(0)
}

/// One vCPU while its run loop runs on this CPU.
pub struct VcpuHost<'a> {
    /// Its VM.
    pub vm: &'a Vm,
    /// The scheduler's thread of the vCPU.
    pub thread: &'a Thread,
    /// Index of the vCPU in the VM.
    pub me: usize,
    /// This CPU's list registers, when the VM has a virtual GIC.
    pub lrs: Option<&'a mut HostLrs>,
    /// The vCPU's breakpoint/watchpoint registers.
    pub debug: &'a mut DebugRegs,
    /// End of the current time slice (physical counter), when the CPU is shared.
    pub slice_end: Option<u64>,
    /// What guests read from the ID registers ([`id_table`]).
    pub id_table: &'static [u64; ID_TABLE_LEN],
}

impl<'a> VcpuHost<'a> {
    /// The vCPU.
    pub fn vcpu(&self) -> &'a Vcpu {
        &self.vm.vcpus[self.me]
    }
}

impl GuestLog for VcpuHost<'_> {
    fn warn(&mut self, args: fmt::Arguments<'_>) {
        crate::hv_warn!("{}: {args}", self.vm.name);
    }
    fn info(&mut self, args: fmt::Arguments<'_>) {
        crate::hv_log!("{}: {args}", self.vm.name);
    }
}

impl VmMemory for VcpuHost<'_> {
    fn ram(&self) -> (u64, u64) {
        (self.vm.ram_ipa, self.vm.ram_size)
    }

    fn read_ram_u64(&self, ipa: u64) -> Option<u64> {
        if !ipa.is_multiple_of(8) || !self.vm.ram_contains(ipa) {
            return None;
        }
        // SAFETY: `ipa` is 8-byte aligned and inside this VM's RAM, identity-mapped at
        // `ram_pa`; read as a value (the guest may change it concurrently).
        Some(unsafe {
            core::ptr::read_volatile((self.vm.ram_pa + (ipa - self.vm.ram_ipa)) as *const u64)
        })
    }

    fn s2_page(&self, ipa: u64) -> S2Page {
        let s2 = self.vm.stage2.lock();
        S2Page {
            dirty_logged: s2.is_dirty_logged(ipa),
            mapped: s2.translate(ipa).is_some(),
        }
    }

    fn dirty_log_write(&mut self, ipa: u64) -> Result<(), stage2::Error> {
        self.vm.stage2.lock().handle_write_fault(ipa).map(|_| ())
    }
}

impl Devices for VcpuHost<'_> {
    fn mmio(&mut self, acc: &MmioAccess, reg_value: u64) -> MmioOutcome {
        self.mmio_reporting(acc, reg_value).0
    }

    // Inlined into the fast path (`exits::fast`): the access stays in registers and the
    // bus lookup is a few instructions of the exit itself.
    #[inline(always)]
    fn mmio_reporting(&mut self, acc: &MmioAccess, reg_value: u64) -> (MmioOutcome, bool) {
        let mut events = VmEvents::new(self.vm, self.me);
        let mut caller = MmioCaller {
            vcpu: self.me,
            events: &mut events,
        };
        let outcome = self.vm.bus.dispatch(acc, reg_value, &mut caller);
        let changed = events.finish();
        (outcome, changed)
    }

    #[inline(always)]
    fn mmio_needs_lr_sync(&self, acc: &MmioAccess) -> bool {
        self.vm.vgic.is_some() && super::vgic_glue::needs_lr_sync(acc, self.vm.vcpus.len())
    }
}

impl Interrupts for VcpuHost<'_> {
    fn cpuif_access(
        &mut self,
        reg: vgic::cpuif_trap::IccReg,
        is_read: bool,
        value: u64,
    ) -> Option<Result<Option<u64>, vgic::cpuif_trap::Refused>> {
        // Only a GICv3 list-register backend has the ICH_* registers the emulation uses.
        matches!(self.lrs, Some(HostLrs::V3(_))).then_some(())?;
        super::cpuif_trap::access(reg, is_read, value)
    }

    fn write_sgi(&mut self, reg: SgiReg, value: u64) -> bool {
        let Some(vg) = &self.vm.vgic else {
            return false;
        };
        let mut g = vg.lock();
        let _ = g.write_sgi_sysreg(self.me, reg, value);
        sched::deliver_kicks(self.vm, &mut g, self.me);
        true
    }

    fn write_sgi_reporting(&mut self, reg: SgiReg, value: u64) -> Option<bool> {
        let vg = self.vm.vgic.as_ref()?;
        let mut g = vg.lock();
        g.write_sgi_sysreg(self.me, reg, value).ok()?;
        let mut to_me = false;
        for v in super::vgic_glue::vcpus_of(g.take_kicks()) {
            if v == self.me {
                to_me = true;
            } else {
                sched::kick(self.vm, v);
            }
        }
        Some(to_me)
    }

    fn pending_for_wfi(&mut self) -> bool {
        let (Some(vg), Some(l)) = (&self.vm.vgic, self.lrs.as_deref_mut()) else {
            return false;
        };
        let mut g = vg.lock();
        let _ = g.save_vmcr(self.me, l);
        g.vcpu_has_pending(self.me)
    }
}

impl PsciHost for VcpuHost<'_> {
    fn cpu_on(&mut self, target: u64, entry: u64, context_id: u64) -> PsciReturn {
        let vm = self.vm;
        let Some(i) = vm
            .vcpus
            .iter()
            .position(|v| v.mpidr == target & MPIDR_AFFINITY_MASK)
        else {
            return PsciReturn::InvalidParameters;
        };
        if i == self.me {
            return PsciReturn::AlreadyOn;
        }
        if !vm.ram_contains(entry) {
            return PsciReturn::InvalidAddress;
        }
        let v = &vm.vcpus[i];
        let mut boot = v.boot.lock();
        match v.power() {
            Power::On => PsciReturn::AlreadyOn,
            Power::OnPending => PsciReturn::OnPending,
            Power::Off => {
                *boot = (entry, context_id);
                v.power.store(Power::OnPending as u8, Ordering::Release);
                drop(boot);
                sched::kick(vm, i);
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

impl VcpuPower for VcpuHost<'_> {
    fn cpu_off(&mut self) -> bool {
        self.vcpu().power.store(Power::Off as u8, Ordering::Release);
        self.vm.vcpus.iter().all(|v| v.power() == Power::Off)
    }

    fn end_vm(&mut self, how: VmEnd) {
        sched::end_vm(self.vm, how);
    }

    fn take_wake(&mut self) -> bool {
        self.vcpu().wake.swap(false, Ordering::AcqRel)
    }

    fn block(&mut self, timeout: Option<u64>) {
        let v = self.vcpu();
        v.wfit_at.store(timeout.unwrap_or(0), Ordering::Release);
        v.blocked.store(true, Ordering::Release);
    }

    fn counter(&self) -> VmCounter {
        self.vm.counter
    }
}

impl TimerHost for VcpuHost<'_> {
    fn now(&self) -> u64 {
        timer::now()
    }

    fn set_irq_level(&mut self, intid: u32, level: bool) {
        if let Some(vg) = &self.vm.vgic {
            let _ = vg.lock().set_ppi_level(self.me, intid, level);
        }
    }

    fn phys_active(&self, intid: u32) -> bool {
        gic::private_active(intid)
    }

    fn set_phys_active(&mut self, intid: u32, active: bool) {
        gic::set_private_active(intid, active);
    }
}

impl VendorCalls for VcpuHost<'_> {
    fn stored_exit_count(&self, index: usize) -> Option<u64> {
        self.vcpu().stats.lock().get(index)
    }

    fn vendor_call(&mut self, function_id: u32, x1: u64, x2: u64) -> Option<i64> {
        dirty_log::call(self.vm, function_id, x1, x2)
            .or_else(|| sched::vendor_call(self.thread, function_id))
    }
}

impl Platform for VcpuHost<'_> {
    fn hw_id_register(&self, reg: IdReg) -> u64 {
        cpu::read_id_register(reg.crm, reg.op2)
    }

    fn id_policy(&self) -> IdPolicy {
        sysregs::policy()
    }

    fn id_register(&self, reg: IdReg) -> u64 {
        id_lookup(self.id_table, reg)
    }

    fn claim_debug_registers(&mut self, access: &SysRegAccess) -> bool {
        if !debug_regs::is_debug_access(access) || self.debug.active {
            return false;
        }
        // First use of the debug registers (MDCR_EL2.TDA): from now on this vCPU owns them
        // while loaded.
        self.debug.active = true;
        self.debug.load();
        debug_regs::set_trap(false);
        true
    }
}

impl Scheduling for VcpuHost<'_> {
    fn host_irqs(&mut self) -> HostIrqs {
        HostIrqs {
            vtimer: sched::drain_host_irqs(true).vtimer,
        }
    }

    fn slice_over(&mut self) -> bool {
        let Some(end) = self.slice_end else {
            // Load balancing moved another vCPU to this CPU: share it from now on.
            if sched::take_resched() {
                self.slice_end = Some(timer::now() + timer::us_to_ticks(sched::TIME_SLICE_US));
            }
            return false;
        };
        let now = timer::now();
        if now < end {
            return false;
        }
        if sched::others_runnable(self.thread) {
            return true;
        }
        self.slice_end = Some(now + timer::us_to_ticks(sched::TIME_SLICE_US));
        false
    }
}
