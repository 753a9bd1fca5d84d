//! Per-physical-CPU data, reached through `TPIDR_EL2`: the bottom layer of the run-time
//! modules (see the crate README's layer list).

use aarch64_cpu::registers::TPIDR_EL2;
use alloc::boxed::Box;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use tock_registers::interfaces::{Readable, Writeable};

/// Largest number of physical CPUs the hypervisor drives.
pub const MAX_CPUS: usize = 128;

/// What per-CPU GIC setup found out about a CPU (`gic::init_cpu`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuGic {
    /// GICv2 CPU-interface number (SGI target); 0 on GICv3.
    pub cpu_if: u8,
    /// GICv3 redistributor frame of this CPU; 0 on GICv2.
    pub redist_frame: u64,
}

/// Data owned by one physical CPU.
pub struct PerCpu {
    /// Linear index (0 = boot CPU), the order of the host device tree.
    pub index: usize,
    /// `MPIDR_EL1` affinity of this CPU.
    pub mpidr: u64,
    /// What GIC setup found for this CPU (GICv2 interface number, GICv3 frame); set once
    /// by the CPU itself in [`set_current`], read through [`PerCpu::gic`].
    gic: spin::Once<CpuGic>,
    /// The CPU has finished bring-up and runs its scheduler loop.
    pub online: AtomicBool,
    /// Deadline of this CPU's current time slice (counter ticks), 0 if none.
    pub slice_end: AtomicU64,
    /// The vCPU (its `Vcpu` address) whose FP/SIMD state this CPU's registers still hold
    /// since it was put (its memory copy is identical), 0 if none. EL2 code never touches
    /// FP/SIMD (softfloat target), so only another vCPU's FP restore changes them.
    pub fp_owner: AtomicUsize,
    /// Another CPU moved a vCPU onto this CPU's run queue since this CPU last picked one
    /// (load balancing): a vCPU running here without a time slice must start one.
    pub resched: AtomicBool,
    /// This CPU's list-register backend (only this CPU uses it).
    pub lrs: spin::Mutex<Option<super::lrs::HostLrs>>,
    /// The vCPU of each VM that last ran here (only this CPU uses it, except a VM restart,
    /// which forgets the VM on every CPU: [`forget_vm`]).
    pub last_ran: spin::Mutex<crate::last_ran::LastRan>,
}

/// Every CPU's `PerCpu`, indexed by linear index (set before the CPU starts).
static CPUS: spin::Once<alloc::vec::Vec<&'static PerCpu>> = spin::Once::new();

/// Creates per-CPU data for all CPUs (boot CPU, once). `gic_cpu_if` is filled in by each
/// CPU's GIC setup through [`set_gic_cpu_if`].
pub fn init_all(mpidrs: &[u64]) {
    CPUS.call_once(|| {
        mpidrs
            .iter()
            .enumerate()
            .map(|(index, &mpidr)| {
                &*Box::leak(Box::new(PerCpu {
                    index,
                    mpidr,
                    gic: spin::Once::new(),
                    online: AtomicBool::new(false),
                    slice_end: AtomicU64::new(0),
                    fp_owner: AtomicUsize::new(0),
                    resched: AtomicBool::new(false),
                    lrs: spin::Mutex::new(None),
                    last_ran: spin::Mutex::new(crate::last_ran::LastRan::new()),
                }))
            })
            .collect()
    });
}

/// All CPUs.
pub fn all() -> &'static [&'static PerCpu] {
    CPUS.get().map(|v| v.as_slice()).unwrap_or(&[])
}

/// Makes `TPIDR_EL2` point at CPU `index`'s data; records what its GIC setup found.
pub fn set_current(index: usize, gic: CpuGic) {
    if let Some(cpu) = all().get(index) {
        cpu.gic.call_once(|| gic);
        TPIDR_EL2.set(*cpu as *const PerCpu as u64);
        *cpu.lrs.lock() = super::lrs::init_cpu();
    }
}

/// Forgets every CPU's resident FP/SIMD state (a VM restart resets its vCPUs' FP state in
/// memory, so registers left from before must not be reused).
pub fn forget_fp_state() {
    for c in all() {
        c.fp_owner.store(0, Ordering::Release);
    }
}

/// Forgets which vCPU of VM `vm` (its index) last ran on each CPU: it restarts, and its
/// first load on each CPU afterwards invalidates that CPU's entries of its VMID.
pub fn forget_vm(vm: usize) {
    for c in all() {
        c.last_ran.lock().forget(vm);
    }
}

impl PerCpu {
    /// What GIC setup found for this CPU (default values before the CPU set it up; other
    /// CPUs only look at online CPUs, which have).
    pub fn gic(&self) -> CpuGic {
        self.gic.get().copied().unwrap_or_default()
    }
}

/// This CPU's data.
pub fn current() -> &'static PerCpu {
    let p = TPIDR_EL2.get() as *const PerCpu;
    // SAFETY: TPIDR_EL2 is set by `set_current` to a leaked, never-freed PerCpu before
    // any code calls `current`.
    unsafe { &*p }
}

/// Marks this CPU online.
pub fn mark_online() {
    current().online.store(true, Ordering::Release);
}
