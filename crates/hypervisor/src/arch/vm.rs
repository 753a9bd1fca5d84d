//! A virtual machine: its RAM (isolated by stage 2), its MMIO bus with emulated devices,
//! its vCPUs and its exit statistics. Built from one VM of the VM package; shared between
//! physical CPUs (`Arc<Vm>`), with per-vCPU state behind its own lock.

use crate::lock::Mutex;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use el2_core::mmio::{MmioBus, SharedMmioDevice};
use el2_core::vcpu::{VcpuContext, VcpuControls};
use stage2::{S2Attrs, Stage2Config, Stage2Table, VmVmid, VmidAllocator};
use tock_registers::interfaces::Readable;
use vgic::Vgic;
use vtimer::{VcpuTimer, VmCounter};

use super::cache;
use super::debug_regs::DebugRegs;
use super::frames::{self, FrameTables};
use super::vgic_glue::GicRegion;
use super::vgic_glue::{self, GuestGic};
use super::virtio_glue::{self, GuestRam, VirtioBusDevice, VirtioSlot};
use super::vm_console::{self, ConsoleUart, UartOnBus};
pub use crate::exits::VmEnd;
use crate::stats::ExitStats;

use crate::bootargs::ResetPolicy;
use crate::dbt_runtime;
use crate::guest_fdt::{self, GicNode, GuestFdtConfig, UartNode, VirtioMmioNode};
use crate::layout;
use crate::loader::{self, GuestLayout, LoadError, WrittenRanges};

/// Why a VM could not be created.
#[derive(Debug)]
pub enum VmError {
    /// Not enough free host memory for its RAM or tables.
    OutOfMemory,
    /// Stage-2 setup failed.
    Stage2(stage2::Error),
    /// Its images do not fit or are malformed.
    Load(LoadError),
    /// The guest device tree could not be generated.
    Fdt,
    /// Bad configuration (e.g. zero or too many vCPUs).
    Config(&'static str),
}

/// PSCI power state of a vCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Power {
    /// Off (not started, or `CPU_OFF`).
    Off = 0,
    /// `CPU_ON` accepted; starts at its entry point when next scheduled.
    OnPending = 1,
    /// Running or runnable.
    On = 2,
}

/// The state of a vCPU that only the physical CPU running it touches.
pub struct VcpuRun {
    /// Register state and EL2 controls.
    pub ctx: VcpuContext,
    /// The generic timers (emulated physical timer, forwarded virtual timer's state).
    pub timer: VcpuTimer,
    /// Breakpoint/watchpoint registers, switched lazily.
    pub debug: DebugRegs,
}

/// One virtual CPU of a VM.
pub struct Vcpu {
    /// Register state, locked by the physical CPU running it.
    pub state: Mutex<VcpuRun>,
    /// Physical-counter time at which a vCPU blocked in WFI must wake for its timers
    /// (0 = no timer armed).
    pub wake_at: AtomicU64,
    /// Physical-counter time at which a `WFIT` the vCPU waits in times out (0 = none);
    /// consumed when the vCPU is put.
    pub wfit_at: AtomicU64,
    /// The vCPU's MPIDR affinity (what `VMPIDR_EL2` reports, without bit 31).
    pub mpidr: u64,
    /// PSCI power state ([`Power`] as u8).
    pub power: AtomicU8,
    /// Entry point and context id of an accepted `CPU_ON`.
    pub boot: Mutex<(u64, u64)>,
    /// Something happened that may end a WFI (a kick).
    pub wake: AtomicBool,
    /// The vCPU waits in WFI.
    pub blocked: AtomicBool,
    /// Index + 1 of the physical CPU that owns (schedules) this vCPU.
    pub owner: AtomicUsize,
    /// Exits by reason.
    pub stats: Mutex<ExitStats>,
}

impl Vcpu {
    /// The PSCI power state.
    pub fn power(&self) -> Power {
        match self.power.load(Ordering::Acquire) {
            1 => Power::OnPending,
            2 => Power::On,
            _ => Power::Off,
        }
    }
}

/// A guest VM.
pub struct Vm {
    /// Name (console prefix, logs).
    pub name: String,
    /// Package index of the VM.
    pub index: usize,
    /// Its kernel is ARMv7-A, run at AArch32 EL1 (`HCR_EL2.RW` = 0).
    pub aarch32: bool,
    /// Its kernel is ARMv7-A (in hardware or under the DBT): it gets an ARMv7 device tree.
    pub armv7: bool,
    /// Under the DBT: host physical address of the runtime's region (`crate::dbt_runtime`,
    /// mapped at its IPA; freed with the VM).
    pub dbt_region: Option<u64>,
    /// Guest RAM IPA base.
    pub ram_ipa: u64,
    /// Host physical address of guest RAM.
    pub ram_pa: u64,
    /// Guest RAM size in bytes.
    pub ram_size: u64,
    /// Stage-2 tables. Changed after creation only by dirty logging (write-protect and
    /// re-enable pages); the lock orders those changes against each other.
    pub stage2: Mutex<Stage2Table<FrameTables>>,
    /// The VM's VMID and the allocator generation it belongs to ([`vmid_for_load`]).
    pub vmid: VmVmid,
    /// Emulated devices (each locks itself; the bus needs no lock).
    pub bus: MmioBus,
    /// vCPUs.
    pub vcpus: Vec<Vcpu>,
    /// Set once when the VM stops.
    pub end: Mutex<Option<VmEnd>>,
    /// Fast check of `end.is_some()`.
    pub ended: AtomicBool,
    /// Where kernel/dtb/initrd went (for restart).
    pub layout: GuestLayout,
    /// Its powering off ends the whole machine.
    pub ends_all: bool,
    /// `SYSTEM_RESET` restarts it (`VM_FLAG_RESTART_ON_RESET`).
    pub restart_on_reset: bool,
    /// The VM's virtual counter (`CNTVOFF_EL2`), shared by its vCPUs.
    pub counter: VmCounter,
    /// The virtual GIC (`None` when the host GIC cannot be virtualized); its distributor
    /// and redistributors are also on the MMIO bus.
    pub vgic: Option<Arc<Mutex<Vgic>>>,
    /// The emulated PL011 (also on the MMIO bus) and the host console input for it.
    pub uart: Arc<Mutex<ConsoleUart>>,
    /// The virtio devices (also on the MMIO bus), for host-side polling.
    pub virtio: Vec<VirtioSlot>,
}

/// Everything needed to build a VM that does not come from the package.
pub struct VmParams<'a> {
    /// The package entry.
    pub spec: &'a vmpkg::VmSpec<'a>,
    /// Index of the VM (VMID = index + 1).
    pub index: usize,
    /// Several VMs share the console: prefix lines with the VM's name.
    pub prefix_console: bool,
    /// Number of VMs on the machine (for sharing the physical disk).
    pub vm_count: usize,
    /// Stage-2 configuration for this machine.
    pub s2cfg: Stage2Config,
    /// `HCR_EL2` for its vCPUs.
    pub hcr: u64,
    /// Host `MIDR_EL1` (what the guest sees through `VPIDR_EL2`).
    pub midr: u64,
    /// An ARMv7-A kernel in hardware at AArch32 EL1 (`HCR_EL2.RW` = 0; the package's
    /// `VM_FLAG_ARCH_ARMV7`, decided by `guest_arch`). An ARMv7-A package entry without it
    /// runs under the DBT (`guest_arch::Execution::Aarch32Dbt`).
    pub aarch32: bool,
}

/// What `SYSTEM_RESET` does on this machine (`vm_reset=` on the command line).
static RESET_POLICY: spin::Once<ResetPolicy> = spin::Once::new();

/// Sets the machine-wide `SYSTEM_RESET` policy (boot CPU, once).
pub fn set_reset_policy(p: ResetPolicy) {
    RESET_POLICY.call_once(|| p);
}

/// The machine-wide `SYSTEM_RESET` policy.
pub fn reset_policy() -> ResetPolicy {
    RESET_POLICY.get().copied().unwrap_or_default()
}

/// The MMIO bus of VM `spec`: its console PL011, its virtio transports and, with a virtual
/// GIC, the distributor and (GICv3) the redistributors. Every emulated device is a region
/// here; the run loop knows no device address.
fn mmio_bus(
    spec: &vmpkg::VmSpec<'_>,
    uart: &Arc<Mutex<ConsoleUart>>,
    virtio: &[VirtioSlot],
    vgic: Option<&Arc<Mutex<Vgic>>>,
) -> Result<MmioBus, VmError> {
    let mut bus = MmioBus::new();
    let mut add = |base, len, name, device: Box<dyn SharedMmioDevice>| {
        bus.add_shared(base, len, name, device)
            .map_err(|_| VmError::Config("MMIO layout overlap"))
    };
    let pl011 = Box::new(UartOnBus(uart.clone()));
    add(layout::UART_BASE, layout::UART_SIZE, "pl011", pl011)?;
    for slot in virtio {
        let dev = VirtioBusDevice {
            vm: String::from(spec.name),
            slot: slot.clone(),
        };
        add(slot.base, layout::VIRTIO_SIZE, slot.kind, Box::new(dev))?;
    }
    if let Some(vg) = vgic {
        let gicd = GicRegion::distributor(vg.clone(), layout::GICD_BASE, spec.name);
        add(layout::GICD_BASE, layout::GICD_SIZE, "gicd", Box::new(gicd))?;
        if let Some(GuestGic::V3) = vgic_glue::guest_gic() {
            let gicr = GicRegion::redistributors(vg.clone(), layout::GICR_BASE, spec.name);
            let len = layout::GICR_FRAME * u64::from(spec.vcpus);
            add(layout::GICR_BASE, len, "gicr", Box::new(gicr))?;
        }
    }
    Ok(bus)
}

/// Largest number of vCPUs per VM.
pub const MAX_VCPUS: u32 = 64;
// The vGIC's kick sets of a VM are read as one 64-bit word (`vgic_glue::vcpus_of`).
const _: () = assert!(MAX_VCPUS <= u64::BITS);

/// The MPIDR affinity of vCPU `i`: Aff0 = i % 16, Aff1 = i / 16 (16 per cluster, like
/// GICv3's SGI target lists).
pub fn vcpu_mpidr(i: usize) -> u64 {
    ((i as u64 / 16) << 8) | (i as u64 % 16)
}

/// The VMID allocator of the machine (generation rollover flushes every CPU's TLBs), set up
/// at boot with the VMID width the Stage-2 configuration uses.
static VMIDS: spin::Once<VmidAllocator<{ super::percpu::MAX_CPUS }>> = spin::Once::new();

/// Sets up the VMID allocator for `vmid_bits`-bit VMIDs (boot CPU, once).
pub fn init_vmids(vmid_bits: u32) {
    VMIDS.call_once(|| VmidAllocator::new(vmid_bits == 16));
}

/// Called when a vCPU of `vm` is loaded on physical CPU `cpu`: the `VTTBR_EL2` value to run
/// it with, carrying a VMID that is current in the allocator's generation (a VM whose VMID
/// went stale in a rollover gets a new one; the rollover has flushed all TLBs).
pub fn vmid_for_load(vm: &Vm, cpu: usize) -> u64 {
    let vmid = VMIDS
        .get()
        .and_then(|a| {
            a.vcpu_load(cpu, &vm.vmid, &stage2::DefaultTlb::default())
                .ok()
        })
        // Without an allocator (or beyond MAX_CPUS): a fixed VMID per package index.
        .unwrap_or((vm.index + 1) as u16);
    vm.stage2.lock().vttbr(vmid)
}

/// Called when a vCPU is put on physical CPU `cpu`: the CPU runs no VM any more.
pub fn vmid_put(cpu: usize) {
    if let Some(a) = VMIDS.get() {
        a.vcpu_put(cpu);
    }
}

impl Vm {
    /// Allocates RAM, builds stage 2, loads kernel/initrd/device tree and creates the vCPUs
    /// (vCPU 0 on, the others off until PSCI `CPU_ON`).
    pub fn create(p: VmParams<'_>) -> Result<Vm, VmError> {
        let spec = p.spec;
        if spec.vcpus == 0 || spec.vcpus > MAX_VCPUS {
            return Err(VmError::Config("vCPU count must be 1..=64"));
        }
        let ram_size = spec.mem_bytes.next_multiple_of(2 << 20);
        let armv7 = spec.flags & vmpkg::VM_FLAG_ARCH_ARMV7 != 0;
        let dbt = armv7 && !p.aarch32;
        if dbt && spec.vcpus > dbt_runtime::MAX_VCPUS {
            return Err(VmError::Config(
                "an ARMv7-A VM under the DBT has 1 to 8 vCPUs (dbt_runtime::MAX_VCPUS)",
            ));
        }
        let kernel = if armv7 {
            loader::inspect_armv7(spec.kernel)
        } else {
            loader::inspect(spec.kernel)
        }
        .map_err(VmError::Load)?;
        let layout_plan = loader::plan(
            layout::RAM_BASE,
            ram_size,
            &kernel,
            spec.initrd.map(|i| i.len() as u64),
        )
        .map_err(VmError::Load)?;
        // The package's RAM-disk image, copied before the RAM so a failure leaks nothing.
        let disk = match spec.disk {
            Some(img) => Some(virtio_glue::PackageDisk::new(img).ok_or(VmError::OutOfMemory)?),
            None => None,
        };
        // Zeroed and cleaned to PoC: the guest starts with its MMU off (`arch::cache`).
        let ram_pa = frames::alloc_zeroed_to_poc(ram_size).ok_or(VmError::OutOfMemory)?;
        let mut stage2 = match Stage2Table::new(p.s2cfg, FrameTables) {
            Ok(s) => s,
            Err(e) => {
                frames::free(ram_pa, ram_size);
                return Err(VmError::Stage2(e));
            }
        };
        if let Err(e) = stage2.map(layout::RAM_BASE, ram_pa, ram_size, S2Attrs::RAM) {
            frames::free(ram_pa, ram_size);
            return Err(VmError::Stage2(e));
        }
        let dbt_region = if dbt {
            match map_dbt_runtime(&mut stage2) {
                Ok(pa) => Some(pa),
                Err(e) => {
                    frames::free(ram_pa, ram_size);
                    return Err(e);
                }
            }
        } else {
            None
        };
        // The VMID is allocated when a vCPU is first loaded (`vmid_for_load`); until then
        // the VTTBR value carries VMID 0, which no guest ever runs with.
        let vttbr = stage2.vttbr(0);

        // GICv2: the guest's CPU interface is the host's virtual CPU interface (GICV),
        // mapped as device memory so the guest acknowledges and EOIs without trapping.
        if let Some(GuestGic::V2 { gicv, .. }) = vgic_glue::guest_gic() {
            stage2
                .map(layout::GICC_BASE, gicv, layout::GICC_SIZE, S2Attrs::DEVICE)
                .map_err(VmError::Stage2)?;
        }
        let uart = vm_console::new_uart(spec.name, p.prefix_console);
        let ram = GuestRam {
            ipa: layout::RAM_BASE,
            pa: ram_pa,
            size: ram_size,
        };
        let console = vm_console::output(spec.name, p.prefix_console);
        let virtio = virtio_glue::create_devices(
            spec.name, p.index, p.vm_count, ram, console, spec.mac, disk,
        );
        let vgic = vgic_glue::new_vgic((0..spec.vcpus as usize).map(vcpu_mpidr).collect())
            .map(|v| Arc::new(Mutex::new(v)));
        let bus = mmio_bus(spec, &uart, &virtio, vgic.as_ref())?;

        let actlr = aarch64_cpu::registers::ACTLR_EL1.get();
        let counter = VmCounter::starting_at(super::timer::now());
        let vcpus = (0..spec.vcpus as usize)
            .map(|i| {
                let mpidr = vcpu_mpidr(i);
                let controls = VcpuControls {
                    hcr_el2: p.hcr,
                    vttbr_el2: vttbr,
                    vmpidr_el2: (1 << 31) | mpidr,
                    vpidr_el2: p.midr,
                    cntvoff_el2: counter.cntvoff,
                    el1_aarch32: p.aarch32,
                };
                let mut ctx = if dbt {
                    // The runtime, at AArch64 EL1; it boots the guest as the ARM boot
                    // protocol says (`guests/dbt-runtime`).
                    let mut ctx = VcpuContext::new_for_boot(
                        dbt_runtime::REGION_IPA,
                        layout_plan.dtb,
                        controls,
                    );
                    let args = dbt_runtime::boot_args(layout_plan.kernel, layout_plan.dtb);
                    ctx.regs.x[..args.len()].copy_from_slice(&args);
                    ctx
                } else {
                    VcpuContext::new_for_boot(layout_plan.kernel, layout_plan.dtb, controls)
                };
                ctx.el1.actlr_el1 = actlr;
                Vcpu {
                    state: Mutex::new(VcpuRun {
                        ctx,
                        timer: VcpuTimer::default(),
                        debug: Default::default(),
                    }),
                    wake_at: AtomicU64::new(0),
                    wfit_at: AtomicU64::new(0),
                    mpidr,
                    power: AtomicU8::new(if i == 0 { Power::On } else { Power::Off } as u8),
                    boot: Mutex::new((0, 0)),
                    wake: AtomicBool::new(false),
                    blocked: AtomicBool::new(false),
                    owner: AtomicUsize::new(0),
                    stats: Mutex::new(ExitStats::default()),
                }
            })
            .collect();

        let vm = Vm {
            name: String::from(spec.name),
            index: p.index,
            aarch32: p.aarch32,
            armv7,
            dbt_region,
            ram_ipa: layout::RAM_BASE,
            ram_pa,
            ram_size,
            stage2: Mutex::new(stage2),
            vmid: VmVmid::new(),
            bus,
            vcpus,
            end: Mutex::new(None),
            ended: AtomicBool::new(false),
            layout: layout_plan,
            ends_all: spec.flags & vmpkg::VM_FLAG_SYSTEM_OFF_ENDS_ALL != 0,
            // Under the DBT a restart re-enters the runtime (`reset_vcpu_for_boot`), which
            // `load_images` copies again.
            restart_on_reset: spec.flags & vmpkg::VM_FLAG_RESTART_ON_RESET != 0,
            counter,
            vgic,
            uart,
            virtio,
        };
        let written = vm.write_images(spec)?;
        clean_written(&written);
        if p.index == 0 {
            crate::hv_log!(
                "guest memory: zeroes and images cleaned to PoC before the guests run (DC CIVAC, {}-byte lines; FEAT_S2FWB {})",
                cache::dcache_line(),
                if cache::has_s2fwb() { "present, not used" } else { "absent" }
            );
        }
        Ok(vm)
    }

    /// Puts vCPU 0's context into its boot state after a restart: the kernel's entry as
    /// its boot protocol says, or for a DBT VM the runtime's entry with its boot
    /// arguments (`dbt_runtime::boot_args`).
    pub fn reset_vcpu_for_boot(&self, ctx: &mut VcpuContext) {
        if self.dbt_region.is_some() {
            ctx.reset_to(dbt_runtime::REGION_IPA, 0);
            let args = dbt_runtime::boot_args(self.layout.kernel, self.layout.dtb);
            ctx.regs.x[..args.len()].copy_from_slice(&args);
        } else {
            ctx.reset_for_boot(self.layout.kernel, self.layout.dtb);
        }
    }

    /// Puts vCPU `index`'s context into the state PSCI `CPU_ON` starts it in: `entry` with
    /// `context_id` in `x0`/`r0`, or for a DBT VM the runtime's entry with arguments that
    /// name the vCPU, the guest's entry and the context id (`dbt_runtime::cpu_on_args`).
    pub fn reset_vcpu_for_cpu_on(
        &self,
        index: usize,
        ctx: &mut VcpuContext,
        entry: u64,
        context_id: u64,
    ) {
        if self.dbt_region.is_some() {
            ctx.reset_to(dbt_runtime::REGION_IPA, 0);
            let args = dbt_runtime::cpu_on_args(index, entry, context_id);
            ctx.regs.x[..args.len()].copy_from_slice(&args);
        } else {
            ctx.reset_to(entry, context_id);
        }
    }

    /// Reloads the VM's images for a restart (`SYSTEM_RESET`): [`Vm::write_images`], then
    /// all of its RAM (and the DBT runtime's region) is cleaned and invalidated to the point
    /// of coherency, not only what was rewritten: lines the guest left dirty in the caches
    /// while its MMU was on would otherwise be written back over what it writes with its
    /// MMU off after the restart, and clean copies would shadow those writes later.
    pub fn load_images(&self, spec: &vmpkg::VmSpec<'_>) -> Result<(), VmError> {
        self.write_images(spec)?;
        // SAFETY: the VM's RAM, identity-mapped; no vCPU of the VM runs (restart).
        unsafe { cache::clean_inval_to_poc(self.ram_pa, self.ram_size) };
        if let Some(pa) = self.dbt_region {
            // SAFETY: the VM's runtime region, identity-mapped.
            unsafe { cache::clean_inval_to_poc(pa, dbt_runtime::REGION_SIZE) };
        }
        cache::invalidate_icache();
        Ok(())
    }

    /// Copies kernel and initrd into guest RAM and writes the guest device tree; for a DBT
    /// VM also the runtime's image into its region (a restart gets a fresh runtime: its
    /// data, heap and code cache start over). Returns the host physical ranges written,
    /// which the caller cleans to PoC before a vCPU runs.
    fn write_images(&self, spec: &vmpkg::VmSpec<'_>) -> Result<WrittenRanges, VmError> {
        let mut written = WrittenRanges::new();
        if let Some(pa) = self.dbt_region {
            written.record(pa, copy_dbt_runtime(pa));
        }
        written.record(
            self.copy_in(self.layout.kernel, spec.kernel)?,
            spec.kernel.len() as u64,
        );
        if let (Some(initrd), Some((start, _))) = (spec.initrd, self.layout.initrd) {
            written.record(self.copy_in(start, initrd)?, initrd.len() as u64);
        }
        let fdt_cfg = GuestFdtConfig {
            ram_base: layout::RAM_BASE,
            ram_size: self.ram_size,
            cpu_mpidrs: self.vcpus.iter().map(|v| v.mpidr).collect(),
            uart: Some(UartNode {
                base: layout::UART_BASE,
                size: layout::UART_SIZE,
                spi: self.vgic.as_ref().map(|_| layout::UART_INTID - 32),
            }),
            gic: match (self.vgic.is_some(), vgic_glue::guest_gic()) {
                (true, Some(GuestGic::V2 { .. })) => Some(GicNode::V2 {
                    dist_base: layout::GICD_BASE,
                    dist_size: layout::GICD_SIZE,
                    cpu_base: layout::GICC_BASE,
                    cpu_size: layout::GICC_SIZE,
                }),
                (true, Some(GuestGic::V3)) => Some(GicNode::V3 {
                    dist_base: layout::GICD_BASE,
                    dist_size: layout::GICD_SIZE,
                    redist_base: layout::GICR_BASE,
                    redist_size: layout::GICR_FRAME * self.vcpus.len() as u64,
                }),
                _ => None,
            },
            bootargs: String::from(spec.cmdline),
            initrd: self.layout.initrd,
            virtio_mmio: if self.vgic.is_some() {
                self.virtio
                    .iter()
                    .map(|v| VirtioMmioNode {
                        base: v.base,
                        size: layout::VIRTIO_SIZE,
                        spi: v.intid - 32,
                        mac: v.mac,
                    })
                    .collect()
            } else {
                Vec::new()
            },
            armv7: self.armv7,
            ..GuestFdtConfig::default()
        };
        let dtb = guest_fdt::build(&fdt_cfg).map_err(|_| VmError::Fdt)?;
        if dtb.len() as u64 > loader::DTB_RESERVE {
            return Err(VmError::Fdt);
        }
        written.record(self.copy_in(self.layout.dtb, &dtb)?, dtb.len() as u64);
        Ok(written)
    }

    /// Is `ipa` inside the VM's RAM?
    pub fn ram_contains(&self, ipa: u64) -> bool {
        ipa >= self.ram_ipa && ipa - self.ram_ipa < self.ram_size
    }

    /// Copies `data` into guest RAM at `ipa` (bounds-checked against the VM's RAM) and
    /// returns the host physical address written. It leaves the data in the caches: before
    /// a guest with its MMU off reads it, the caller cleans it to PoC (`arch::cache`).
    pub fn copy_in(&self, ipa: u64, data: &[u8]) -> Result<u64, VmError> {
        let off = ipa
            .checked_sub(self.ram_ipa)
            .ok_or(VmError::Load(LoadError::DoesNotFit))?;
        let end = off
            .checked_add(data.len() as u64)
            .ok_or(VmError::Load(LoadError::DoesNotFit))?;
        if end > self.ram_size {
            return Err(VmError::Load(LoadError::DoesNotFit));
        }
        // SAFETY: [ram_pa + off, ram_pa + end) lies inside this VM's RAM, which it owns and
        // which is identity-mapped in the hypervisor; `data` does not overlap it (it is in
        // the package or the heap). Only called while no vCPU of this VM runs.
        unsafe {
            core::ptr::copy_nonoverlapping(
                data.as_ptr(),
                (self.ram_pa + off) as *mut u8,
                data.len(),
            )
        };
        Ok(self.ram_pa + off)
    }

    /// Records how the VM ended (first caller wins). Returns true for the first caller.
    pub fn finish(&self, how: VmEnd) -> bool {
        let mut end = self.end.lock();
        if end.is_some() {
            return false;
        }
        *end = Some(how);
        self.ended.store(true, Ordering::Release);
        true
    }

    /// The VM ended with `SYSTEM_RESET` and will be restarted (`vm_reset=restart` or
    /// `VM_FLAG_RESTART_ON_RESET`).
    pub fn will_restart(&self) -> bool {
        let restart = self.restart_on_reset || reset_policy() == ResetPolicy::Restart;
        restart && *self.end.lock() == Some(VmEnd::Reset)
    }

    /// The sum of all vCPUs' exit counters.
    pub fn total_stats(&self) -> ExitStats {
        let mut total = ExitStats::default();
        for v in &self.vcpus {
            total.add(&v.stats.lock());
        }
        total
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        frames::free(self.ram_pa, self.ram_size);
        if let Some(pa) = self.dbt_region {
            frames::free(pa, dbt_runtime::REGION_SIZE);
        }
    }
}

/// Allocates the DBT runtime's region and maps it at its IPA in `stage2` (`load_images`
/// copies the image); returns its host physical address.
fn map_dbt_runtime(stage2: &mut Stage2Table<FrameTables>) -> Result<u64, VmError> {
    let size = dbt_runtime::REGION_SIZE;
    let pa = frames::alloc_zeroed_to_poc(size).ok_or(VmError::OutOfMemory)?;
    if let Err(e) = stage2.map(dbt_runtime::REGION_IPA, pa, size, S2Attrs::RAM) {
        frames::free(pa, size);
        return Err(VmError::Stage2(e));
    }
    Ok(pa)
}

/// Copies the runtime's image to the start of a DBT VM's region at `pa`; returns the bytes
/// written.
fn copy_dbt_runtime(pa: u64) -> u64 {
    let len = dbt_runtime::IMAGE
        .len()
        .min(dbt_runtime::REGION_SIZE as usize);
    // SAFETY: [pa, pa + REGION_SIZE) is the VM's runtime region (`map_dbt_runtime`), identity-
    // mapped in the hypervisor; no vCPU of the VM runs (creation, or a restart with every
    // vCPU stopped); the image (in the hypervisor's own image) is smaller than the region
    // (checked by `dbt_runtime`'s test) and does not overlap it.
    unsafe { core::ptr::copy_nonoverlapping(dbt_runtime::IMAGE.as_ptr(), pa as *mut u8, len) };
    len as u64
}

/// Cleans and invalidates to PoC every cache line holding a byte of `written`, then
/// invalidates the instruction caches: what a VM's first instructions read, with its MMU
/// off, is in memory (the zeroes around it already are: `frames::alloc_zeroed_to_poc`).
fn clean_written(written: &WrittenRanges) {
    let line = cache::dcache_line();
    for (start, end) in written.line_spans(line) {
        // SAFETY: host physical ranges of a VM's RAM or runtime region (identity-mapped)
        // that were just written; no vCPU of the VM runs yet.
        unsafe { cache::clean_inval_to_poc(start, end - start) };
    }
    cache::invalidate_icache();
}
