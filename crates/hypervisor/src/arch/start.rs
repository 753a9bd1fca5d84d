//! The boot CPU's path from the first Rust instruction to running VMs.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{
    Readable, Writeable, HCR_EL2, ID_AA64MMFR0_EL1, ID_AA64MMFR1_EL1, MDCR_EL2, MPIDR_EL1,
};
use alloc::vec::Vec;
use el2_core::switch::{controls, nvhe::NonVhe, vhe::Vhe, Backend, WorldSwitch};
use stage2::Stage2Config;

use alloc::sync::Arc;

use super::run::{self, RunConfig};
use super::vm::{Vm, VmParams};
use super::{console, cpu, frames, gic, heap, mmu, percpu, power, sched, smp, timer};
use crate::bootargs::BootArgs;
use crate::guest_arch::{self, Decision, Execution};
use crate::idregs::IdPolicy;
use crate::layout;
use crate::memmap::FreeRanges;
use crate::platform::{HostGic, PlatformInfo, Range};

extern "C" {
    static __image_start: u8;
    static __image_end: u8;
}

fn halt() -> ! {
    loop {
        // SAFETY: parks the CPU; used only when nothing can be reported.
        unsafe { core::arch::asm!("wfe", options(nomem, nostack)) };
    }
}

/// First Rust code on the boot CPU: MMU off, at EL2, `dtb_pa` from x0.
#[no_mangle]
pub extern "C" fn hv_primary_main(dtb_pa: u64) -> ! {
    let entered = timer::now();
    // --- MMU off: read the device tree (or take the EFI entry's ACPI reading), pick the
    // backend, build the identity map. ---
    let handoff = super::uefi::handoff();
    let Some((info, source)) = super::discover::discover(dtb_pa, handoff) else {
        halt() // no description of the machine: no console to report on
    };
    let Some(uart) = info.uart else { halt() };
    // SAFETY: boot CPU, console not yet initialised, MMU off (UART reachable).
    unsafe { console::early_print(uart.base, info.uart_kind, "[hv] booting at EL2\n") };

    let feats = cpu::detect();
    let args = BootArgs::parse(info.bootargs, |_| {});
    let backend = Backend::choose(feats.vhe, args.backend);
    let vhe = backend == Backend::Vhe;
    HCR_EL2.set(controls::host_hcr(vhe));
    // The HCR_EL2.E2H change takes effect before the MMU is configured.
    barrier::isb(barrier::SY);

    // SAFETY: boot CPU, MMU off, built once.
    let mut map = unsafe { mmu::IdentityMap::new() };
    for r in info.memory() {
        if map.map_ram(r.base, r.size).is_err() {
            // SAFETY: as above.
            unsafe {
                console::early_print(uart.base, info.uart_kind, "[hv] FATAL: cannot map RAM\n")
            };
            halt();
        }
    }
    let mut devices = [Some(uart), None, None, None, None];
    if let Some(gic) = info.gic {
        match gic {
            HostGic::V2 {
                dist,
                cpu,
                hyp,
                vcpu,
            } => {
                devices[1] = Some(dist);
                devices[2] = Some(cpu);
                devices[3] = hyp;
                devices[4] = vcpu;
            }
            HostGic::V3 { dist, redist } => {
                devices[1] = Some(dist);
                devices[2] = Some(redist);
            }
        }
    }
    for d in devices.iter().flatten().chain(info.virtio_windows()) {
        let _ = map.map_device(d.base, d.size.max(0x1000));
    }
    let tables = map.tables_used();
    // SAFETY: the map covers RAM (image, stack, DTB, package) and the UART; E2H is set to
    // match `vhe` above.
    unsafe { mmu::enable(vhe) };

    // --- MMU on: heap, console, allocators. ---
    // SAFETY: once, MMU on.
    unsafe { heap::init() };
    // SAFETY: the UART is identity-mapped as device memory and used only by the console.
    unsafe { console::init(uart.base, info.uart_kind) };
    main_with_mmu(&info, source, feats, backend, tables, entered)
}

fn main_with_mmu(
    info: &PlatformInfo<'static>,
    source: super::discover::Source,
    feats: cpu::CpuFeatures,
    backend: Backend,
    tables: usize,
    entered: u64,
) -> ! {
    let args = BootArgs::parse(info.bootargs, |u| {
        crate::hv_warn!("unknown boot argument '{}' ignored", u.0)
    });
    power::configure(args.exit, info.psci);
    crate::hv_log!("AArch64 hypervisor {} at EL2", env!("CARGO_PKG_VERSION"));
    crate::hv_log!(
        "host: {}, MIDR_EL1={:#x}, {} CPU(s), RAM {} MiB in {} range(s)",
        match (info.is_qemu_virt, source) {
            (true, _) => "QEMU virt",
            (false, super::discover::Source::Acpi(_)) => "ACPI machine",
            (false, _) => "device-tree machine",
        },
        feats.midr,
        info.cpu_count,
        info.memory().iter().map(|r| r.size).sum::<u64>() >> 20,
        info.mem_count
    );
    super::firmware_log::report(source, super::uefi::handoff());
    match info.gic {
        Some(HostGic::V2 { dist, cpu, .. }) => {
            crate::hv_log!("host GICv2: GICD {:#x}, GICC {:#x}", dist.base, cpu.base)
        }
        Some(HostGic::V3 { dist, redist }) => {
            crate::hv_log!("host GICv3: GICD {:#x}, GICR {:#x}", dist.base, redist.base)
        }
        None => crate::hv_warn!("no GIC found in the device tree"),
    }
    crate::hv_log!(
        "backend: {} (CPU has VHE: {}, requested: {:?})",
        backend.name(),
        if feats.vhe { "yes" } else { "no" },
        args.backend
    );
    if args.backend == el2_core::switch::BackendRequest::Vhe && !feats.vhe {
        crate::hv_warn!("backend=vhe requested but the CPU has no VHE; using nvhe");
    }
    crate::hv_log!(
        "EL2 stage-1 identity map: {} table page(s); MMU and caches on",
        tables
    );

    // Frame allocator: RAM minus image, DTB and package.
    // SAFETY: only the addresses of linker symbols are taken.
    let (img_start, img_end) = unsafe {
        (
            &__image_start as *const u8 as u64,
            &__image_end as *const u8 as u64,
        )
    };
    let mut reserved: Vec<Range> = Vec::new();
    reserved.push(Range {
        base: img_start,
        size: img_end - img_start,
    });
    reserved.push(info.dtb);
    if let Some(i) = info.initrd {
        reserved.push(i);
    }
    crate::hv_log!(
        "image at PA {:#x}..{:#x} (linked at {:#x}), device tree at {:#x}, package at {:#x}",
        img_start,
        img_end,
        super::boot::LINK_BASE,
        info.dtb.base,
        info.initrd.map_or(0, |r| r.base)
    );
    let free = FreeRanges::compute(info.memory(), &reserved);
    for r in free.as_slice() {
        frames::add_range(r.base, r.end());
    }
    crate::hv_log!(
        "free RAM for VMs: {} MiB",
        free.as_slice().iter().map(|r| r.size).sum::<u64>() >> 20
    );

    let grown = heap::grow_from_frames(64 << 20);
    crate::hv_log!("heap: {} MiB", (heap::HEAP_SIZE as u64 + grown) >> 20);
    super::host_virtio::init(info.virtio_windows(), info.virtio_intids());

    let mmfr0 = ID_AA64MMFR0_EL1.get();
    let mmfr1 = ID_AA64MMFR1_EL1.get();
    let s2cfg = match Stage2Config::from_id_regs(mmfr0, mmfr1, layout::IPA_BITS) {
        Ok(c) => c,
        Err(e) => {
            crate::hv_log!("FATAL: no usable stage-2 configuration: {e:?}");
            power::exit(1)
        }
    };
    cpu::init_el2(s2cfg.vtcr());
    super::vm::init_vmids(s2cfg.vmid_bits());
    let ipa_parange = match s2cfg.ipa_bits() {
        0..=32 => 0,
        33..=36 => 1,
        37..=40 => 2,
        41..=42 => 3,
        43..=44 => 4,
        _ => 5,
    };
    super::sysregs::set_policy(IdPolicy {
        pauth: feats.pauth,
        ipa_parange,
    });
    let hcr = controls::guest_hcr(backend == Backend::Vhe, feats.pauth);
    crate::hv_log!(
        "guest traps: HCR_EL2={:#x} CPTR_EL2={:#x} CNTHCTL_EL2={:#x} MDCR_EL2={:#x} VTCR_EL2={:#x} (IPA {} bits)",
        hcr,
        controls::guest_cptr(backend == Backend::Vhe, false),
        controls::guest_cnthctl(backend == Backend::Vhe),
        MDCR_EL2.get(),
        s2cfg.vtcr(),
        s2cfg.ipa_bits()
    );

    let switch: &'static dyn WorldSwitch = match backend {
        Backend::Vhe => alloc::boxed::Box::leak(alloc::boxed::Box::new(Vhe { pauth: feats.pauth })),
        Backend::NonVhe => {
            alloc::boxed::Box::leak(alloc::boxed::Box::new(NonVhe { pauth: feats.pauth }))
        }
    };

    super::errata_boot::apply(feats.midr, info.psci);

    // Host interrupts and the other CPUs.
    if let Some(g) = &info.gic {
        gic::init(g);
        match super::vgic_glue::init(g) {
            Some(super::vgic_glue::GuestGic::V2 { gich, gicv }) => {
                crate::hv_log!("guest GICv2: list registers in GICH {gich:#x}, GICV {gicv:#x} mapped at the guest's GICC")
            }
            Some(super::vgic_glue::GuestGic::V3) => crate::hv_log!("guest GICv3: ICH_* list registers, GICD/GICR emulated"),
            None => crate::hv_warn!("the host GIC has no virtualization extensions in the device tree; guests get no GIC"),
        }
    } else {
        crate::hv_log!("FATAL: no GIC in the host device tree");
        power::exit(1)
    }
    // Aff3:Aff2:Aff1:Aff0, the identity the device tree and PSCI use.
    let my_mpidr = MPIDR_EL1.get() & 0xff_00ff_ffff;
    let mut mpidrs: Vec<u64> = info.cpu_mpidrs().to_vec();
    if let Some(pos) = mpidrs.iter().position(|&m| m == my_mpidr) {
        mpidrs.swap(0, pos);
    } else {
        mpidrs.insert(0, my_mpidr);
    }
    percpu::init_all(&mpidrs);
    let g = gic::init_cpu(my_mpidr);
    percpu::set_current(0, g);
    timer::disarm();
    percpu::mark_online();
    let hcr_host = controls::host_hcr(backend == Backend::Vhe);
    smp::start_secondaries(info.psci, backend == Backend::Vhe, s2cfg.vtcr(), hcr_host);

    let Some(pkg_range) = info.initrd else {
        crate::hv_log!("FATAL: no VM package: pass one as the initrd (QEMU -initrd, U-Boot booti, GRUB initrd)");
        power::exit(1)
    };
    // SAFETY: the boot loader placed the initrd there; it is reserved above and never
    // written, so it lives (unchanged) for the rest of the run.
    let pkg_bytes: &'static [u8] = unsafe {
        core::slice::from_raw_parts(pkg_range.base as *const u8, pkg_range.size as usize)
    };
    let pkg = match vmpkg::Package::parse(pkg_bytes) {
        Ok(p) => p,
        Err(e) => {
            crate::hv_log!("FATAL: the initrd is not a valid VM package: {e:?}");
            power::exit(1)
        }
    };
    crate::hv_log!("VM package: {} VM(s), {} bytes", pkg.vm_count(), pkg.len());

    let specs: Vec<vmpkg::VmSpec<'static>> = pkg.vms().collect();
    let mut vms = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let decision = Decision {
            result: guest_arch::choose(spec.flags, feats.pfr0, guest_arch::DBT_AVAILABLE),
            pfr0: feats.pfr0,
        };
        let exec = match decision.result {
            Ok(exec) => exec,
            Err(_) => {
                crate::hv_log!("{}: cannot create VM: {decision}; skipped", spec.name);
                continue;
            }
        };
        if exec != Execution::Aarch64 {
            crate::hv_log!("{}: {decision}", spec.name);
        }
        let params = VmParams {
            spec,
            index,
            prefix_console: specs.len() > 1,
            vm_count: specs.len(),
            s2cfg,
            hcr,
            midr: feats.midr,
            aarch32: exec == Execution::Aarch32Hardware,
        };
        match Vm::create(params) {
            Ok(vm) => {
                crate::hv_log!(
                    "{}: {} MiB RAM at PA {:#x}, {} vCPU(s), kernel {} bytes, entry {:#x}, dtb {:#x}",
                    vm.name,
                    vm.ram_size >> 20,
                    vm.ram_pa,
                    vm.vcpus.len(),
                    spec.kernel.len(),
                    vm.layout.kernel,
                    vm.layout.dtb
                );
                vms.push(Arc::new(vm));
            }
            Err(e) => crate::hv_log!("{}: cannot create VM: {e:?}; skipped", spec.name),
        }
    }
    if vms.is_empty() {
        crate::hv_log!("FATAL: no VM could be created");
        power::exit(1)
    }
    run::configure(RunConfig {
        switch,
        reset: args.reset,
        specs,
    });
    sched::init(
        vms,
        sched::SchedOptions {
            balance: args.balance,
            place: args.place,
        },
    );
    if let Some(intid) = info.uart_intid {
        sched::enable_console_input(intid);
    }
    super::host_virtio::enable_uplink_interrupt();
    report_boot_time(entered);
    sched::kick_all_cpus();
    super::cpu_loop::cpu_loop()
}

/// Logs the time from the firmware's hand-over (the EFI entry, or the first Rust
/// instruction after a boot loader's jump) to now, when the vCPUs are released to the
/// scheduler (their first instruction follows within one world switch). Under QEMU
/// `-icount shift=0` one nanosecond is one instruction, so the number is deterministic.
fn report_boot_time(entered: u64) {
    let (from, start) = match super::uefi::handoff() {
        Some(h) => ("the EFI entry", h.entry_counter),
        None => ("the image entry", entered),
    };
    let ticks = timer::now().saturating_sub(start);
    let hz = timer::frequency().max(1);
    crate::hv_log!(
        "boot: {} counter ticks ({} us at {} Hz) from {} to releasing the vCPUs",
        ticks,
        ticks.saturating_mul(1_000_000) / hz,
        hz,
        from
    );
}
