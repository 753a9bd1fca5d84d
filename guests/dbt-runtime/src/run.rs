//! The run loop: the guest's ARMv7-A core (`dbt_armv7::Cpu`) booted as the ARM Linux boot
//! protocol says, run through the translator (`Dbt`) in slices of guest instructions. At
//! each slice boundary and every dispatch the VM's virtual interrupt lines (`ISR_EL1.I`/
//! `.F`: what the vGIC and the forwarded timer present to this vCPU) become the core's
//! IRQ/FIQ inputs, so a pending interrupt is taken as an ARMv7 IRQ exception at a block
//! boundary; a virtual IRQ that rises while translated code runs makes it leave at its
//! next budget check (`irq.rs`), so it does not wait for the slice's end. `WFI` becomes the
//! runtime's `WFI` (the hypervisor blocks the vCPU until an interrupt is pending), `HVC`/
//! `SMC` become the runtime's own calls to the hypervisor (`calls.rs`).

use alloc::boxed::Box;
use dbt_armv7::cpu::psr;
use dbt_armv7::translate::{A64Gen, CodeGen, Dbt};
use dbt_armv7::{Cpu, Exit};

use crate::bus::GuestBus;
use crate::calls;
use crate::console;
use crate::coproc::{isr_el1, Registers, VirtualCounter, ISR_F, ISR_I};

/// Code-cache bytes per block of translation metadata the engine keeps
/// (`Dbt::set_max_blocks`).
const BYTES_PER_BLOCK: u64 = 512;

/// Guest instructions per slice with one vCPU. Not what bounds interrupt latency any
/// more (a virtual IRQ preempts translated code, `irq.rs`); a slice end costs a pass
/// through this loop and a block entry without a link. 250 000 -> 2 000 000 (issue 18,
/// `cargo xtask bench --linux --filter "armv7 dbt"`): armhf boot to `Run /init`
/// 3403.6 -> 3380.9, `sha256sum` 1277.2 -> 1265.9 millions of virtual ns.
const SLICE: u64 = 2_000_000;

/// Guest instructions per slice with more than one vCPU: also the longest another vCPU's
/// broadcast TLB maintenance waits for this one to take it (`smp::broadcast_tlb`; polled
/// at every dispatch, i.e. at least once a slice). Linux flushes a purged vmalloc range
/// page by page (tens of thousands of `TLBIMVAAIS` in one go) while the other vCPU may
/// spin with IRQs off (stop_machine): at 250 000 each operation cost the issuer about
/// that many of the other vCPU's instructions.
const SMP_SLICE: u64 = 16_000;

/// What the runtime reads from the guest's device tree.
struct Machine {
    ram: core::ops::Range<u64>,
    uart: Option<u64>,
    gicv3: bool,
    /// CPUs in the guest's device tree.
    cpus: u64,
}

fn machine(dtb: u64) -> Machine {
    // SAFETY: the hypervisor wrote a device tree at `dtb`, in guest RAM (identity-mapped).
    let fdt = match unsafe { fdt::Fdt::from_ptr(dtb as *const u8) } {
        Ok(f) => f,
        Err(e) => console::fatal_args(format_args!("the guest device tree at {dtb:#x}: {e:?}")),
    };
    let ram = fdt
        .memory()
        .regions()
        .next()
        .and_then(|r| Some(r.starting_address as u64..r.starting_address as u64 + r.size? as u64))
        .unwrap_or_else(|| console::fatal("no memory node in the guest device tree"));
    let uart = fdt
        .find_compatible(&["arm,pl011"])
        .and_then(|n| n.reg()?.next())
        .map(|r| r.starting_address as u64);
    let gicv3 = fdt.find_compatible(&["arm,gic-v3"]).is_some();
    let cpus = fdt.cpus().count() as u64;
    Machine {
        ram,
        uart,
        gicv3,
        cpus,
    }
}

/// Boots the guest at `entry` with its device tree at `dtb` (the boot vCPU) and runs it
/// until it powers off.
pub fn run(dtb: u64, entry: u64, _base: u64, _size: u64, code_base: u64) -> ! {
    let m = machine(dtb);
    if let Some(u) = m.uart {
        console::init(u);
    }
    let cpus = m.cpus.clamp(1, crate::smp::MAX_VCPUS as u64);
    crate::mmu::shadow::set_vcpus(cpus as usize);
    crate::mmu::shadow::set_enabled(true);
    if cpus > 1 {
        // No 2 MiB block of guest RAM is split while another vCPU may use it.
        crate::mmu::split(m.ram.start, m.ram.end);
    }
    crate::smp::set_machine(crate::smp::Machine {
        ram: m.ram,
        gicv3: m.gicv3,
        code_base,
        // A share per vCPU, in 64 KiB units.
        code_share: (crate::entry::CODE_CACHE_SIZE / cpus) & !0xffff,
    });
    // The ARM boot protocol: SVC mode, MMU off, IRQ/FIQ masked, r0 = 0, r1 = ~0 (machine
    // type: use the device tree), r2 = the device tree.
    run_guest_cpu([0, u32::MAX, dtb as u32], entry)
}

/// Runs the guest CPU that PSCI `CPU_ON` started at `entry` with `context_id`: SVC mode,
/// MMU off, IRQ/FIQ masked, r0 = `context_id` (PSCI's AArch32 entry state).
pub fn run_cpu_on(context_id: u64, entry: u64) -> ! {
    run_guest_cpu([context_id as u32, 0, 0], entry)
}

/// Runs this vCPU's guest core from reset with r0-r2 = `regs`, at `entry` (bit 0: Thumb),
/// through its own engine and share of the code cache.
fn run_guest_cpu(regs: [u32; 3], entry: u64) -> ! {
    let m = crate::smp::machine()
        .unwrap_or_else(|| console::fatal("a vCPU started before the boot vCPU"));
    let mut code = crate::smp::code_memory(m);
    let (lo, hi) = code.range();
    crate::vectors::set_code_cache(lo, hi, lo + A64Gen::new().runtime().1.epilogue as u64);
    crate::irq::set_code_cache(lo, hi);
    let mut bus = GuestBus { ram: m.ram.clone() };

    let mut cpu = Cpu::new();
    cpu.set_counter(Box::new(VirtualCounter));
    cpu.set_coproc_host(Box::new(Registers { gicv3: m.gicv3 }));
    for (i, r) in regs.into_iter().enumerate() {
        cpu.set_reg(i, r);
    }
    if entry & 1 != 0 {
        cpu.set_cpsr(cpu.cpsr() | psr::T);
    }
    cpu.set_pc(entry as u32 & !1);

    let slice = if crate::mmu::shadow::vcpus() > 1 {
        SMP_SLICE
    } else {
        SLICE
    };
    let mut dbt = Dbt::new(A64Gen::new());
    // A slice may end a few instructions early, at a block boundary: cheaper than
    // interpreting up to the exact count.
    dbt.set_budget_is_slice(true);
    // Metadata for as many blocks as the vCPU's code-cache share holds at about 512 bytes
    // each (32 768 with one vCPU, ~15 MiB of heap): the engine's default (16 384) made
    // Linux userland flush every 1-2 M guest instructions (kernel and per-process
    // translations of each busybox process), retranslating ~10^5 blocks per 20 M.
    dbt.set_max_blocks((m.code_share / BYTES_PER_BLOCK) as usize);
    loop {
        crate::smp::drain(&mut dbt, &mut code);
        let isr = isr_el1();
        cpu.irq_line = isr & ISR_I != 0;
        cpu.fiq_line = isr & ISR_F != 0;
        crate::smp::set_running(true);
        let exit = dbt.run(&mut cpu, &mut bus, &mut code, slice);
        crate::smp::set_running(false);
        match exit {
            // The slice ended: a hint that other PEs may go first. QEMU's round-robin TCG
            // (-icount) then switches to the next vCPU: a guest spinning for another vCPU
            // (Linux's stop_machine, IRQs off) no longer holds the host thread for a whole
            // QEMU time slice while that vCPU waits for its turn.
            Exit::Budget => <crate::smp::Yield as spin::RelaxStrategy>::relax(),
            Exit::Wfi => aarch64_cpu::asm::wfi(),
            e @ (Exit::Hvc(_) | Exit::Smc(_)) => {
                let args = core::array::from_fn(|i| cpu.reg(i));
                if matches!(args[0], calls::PSCI_SYSTEM_OFF | calls::PSCI_SYSTEM_RESET) {
                    let s = dbt.stats();
                    console::line(format_args!(
                        "guest instructions {} (translated {}, interpreted {}), blocks {}, code-cache entries {}, links {}, flushes {}, faults {}, side exits {}, smc {}",
                        cpu.icount, s.executed_translated, s.executed_interpreted, s.blocks,
                        s.entries, s.links, s.flushes, s.faults, s.side_exits, s.smc
                    ));
                    let (preempted, elsewhere) = crate::irq::stats();
                    console::line(format_args!(
                        "interrupts that made translated code leave {preempted}, taken elsewhere {elsewhere}"
                    ));
                    let sh = crate::mmu::shadow::stats();
                    console::line(format_args!(
                        "mmu-on blocks {}, tlb maintenance {}, shadow fills {}, declined {}, shadows created {}, switches {}, dropped {}",
                        s.blocks_mmu_on, s.tlb_maintenance, sh.fills, sh.declined, sh.created,
                        sh.switches, sh.dropped
                    ));
                    let (waits, spins) = crate::smp::tlb_wait_stats();
                    console::line(format_args!(
                        "tlb broadcasts that waited {waits}, polls {spins}"
                    ));
                    let (sgi_sent, sgi_acked) = crate::sgi_count::counts();
                    console::line(format_args!(
                        "SGIs sent {sgi_sent}, acknowledged {sgi_acked}"
                    ));
                }
                if args[0] == calls::PSCI_CPU_OFF {
                    // This vCPU's translations no longer keep pages read-only; a later
                    // CPU_ON starts from a fresh engine and core.
                    crate::smp::leave();
                    drop((dbt, cpu));
                    calls::call(matches!(e, Exit::Smc(_)), args);
                    console::fatal("PSCI CPU_OFF returned");
                }
                let r = calls::call(matches!(e, Exit::Smc(_)), args);
                for (i, v) in r.into_iter().enumerate() {
                    cpu.set_reg(i, v);
                }
            }
            e => console::fatal_args(format_args!(
                "unexpected exit {e:?} at guest pc {:#x}",
                cpu.reg(15)
            )),
        }
    }
}
