//! Bringing up the other physical CPUs through the firmware's PSCI `CPU_ON`. Each
//! secondary gets its own EL2 stack, vectors, MMU state (the shared identity map) and
//! per-CPU data, then enters the scheduler.

use alloc::boxed::Box;
use alloc::vec;

use super::{cpu, gic, mmu, percpu};
use crate::platform::PsciConduit;
use aarch64_cpu::registers::{Writeable, CNTHP_CTL_EL2};

/// EL2 stack size of a secondary CPU.
const STACK_SIZE: usize = 64 * 1024;

/// What a secondary needs before its MMU is on; read with the MMU off, so it is cleaned
/// to the point of coherency before `CPU_ON`.
#[repr(C)]
struct SecondaryBoot {
    stack_top: u64,
    index: u64,
    vhe: u64,
    vtcr: u64,
    hcr_host: u64,
}

core::arch::global_asm!(
    r#"
.section .text.boot, "ax"
.global hv_secondary_entry
hv_secondary_entry:
    msr     daifset, #0xf
    ldr     x1, [x0]
    mov     sp, x1
    adrp    x1, __el2_vectors
    add     x1, x1, :lo12:__el2_vectors
    msr     vbar_el2, x1
    ldr     x1, [x0, #32]
    msr     hcr_el2, x1
    isb
    bl      hv_secondary_main
1:  wfe
    b       1b
"#
);

extern "C" {
    fn hv_secondary_entry();
}

fn psci_cpu_on(conduit: PsciConduit, mpidr: u64, entry: u64, ctx: u64) -> i64 {
    let mut x0: u64 = 0xc400_0003;
    // SAFETY: a PSCI CPU_ON call to the firmware; it only starts the target CPU.
    unsafe {
        match conduit {
            PsciConduit::Smc => {
                core::arch::asm!("smc #0", inout("x0") x0, in("x1") mpidr, in("x2") entry, in("x3") ctx, options(nostack))
            }
            PsciConduit::Hvc => {
                core::arch::asm!("hvc #0", inout("x0") x0, in("x1") mpidr, in("x2") entry, in("x3") ctx, options(nostack))
            }
        }
    }
    x0 as i64
}

/// Starts every CPU of `percpu::all()` except the boot CPU (index 0).
pub fn start_secondaries(conduit: Option<PsciConduit>, vhe: bool, vtcr: u64, hcr_host: u64) {
    let Some(conduit) = conduit else {
        crate::hv_warn!("no PSCI in the host device tree: running on the boot CPU only");
        return;
    };
    for cpu in percpu::all().iter().skip(1) {
        let stack = vec![0u8; STACK_SIZE].leak();
        let boot = Box::leak(Box::new(SecondaryBoot {
            stack_top: stack.as_ptr() as u64 + STACK_SIZE as u64,
            index: cpu.index as u64,
            vhe: vhe as u64,
            vtcr,
            hcr_host,
        }));
        let p = boot as *const SecondaryBoot as u64;
        // The secondary reads its boot record with its MMU and caches off: the record must
        // be in memory (`CTR_EL0.DminLine` lines: a fixed 64-byte stride skipped lines on
        // CPUs with 32-byte lines).
        // SAFETY: the record is in the hypervisor's identity-mapped heap.
        unsafe {
            super::cache::clean_inval_to_poc(p, core::mem::size_of::<SecondaryBoot>() as u64)
        };
        let r = psci_cpu_on(
            conduit,
            cpu.mpidr,
            hv_secondary_entry as *const () as u64,
            p,
        );
        if r != 0 {
            crate::hv_warn!("PSCI CPU_ON for MPIDR {:#x} failed: {r}", cpu.mpidr);
        }
    }
    // Wait (bounded) for them to come online.
    let deadline = super::timer::now() + super::timer::us_to_ticks(2_000_000);
    while super::timer::now() < deadline {
        if percpu::all()
            .iter()
            .all(|c| c.online.load(core::sync::atomic::Ordering::Acquire))
        {
            break;
        }
        core::hint::spin_loop();
    }
    let online = percpu::all()
        .iter()
        .filter(|c| c.online.load(core::sync::atomic::Ordering::Acquire))
        .count();
    crate::hv_log!("{online} of {} CPU(s) online", percpu::all().len());
}

/// First Rust code on a secondary CPU (MMU off; `boot` from [`start_secondaries`]).
#[no_mangle]
extern "C" fn hv_secondary_main(boot: &SecondaryBoot) -> ! {
    let (index, vhe, vtcr) = (boot.index as usize, boot.vhe != 0, boot.vtcr);
    // SAFETY: MMU off on this CPU, HCR_EL2.E2H set by the entry code to match `vhe`, the
    // identity map was completed by the boot CPU before any secondary started.
    unsafe { mmu::enable_on_this_cpu(vhe) };
    cpu::init_el2(vtcr);
    let mpidr = percpu::all().get(index).map(|c| c.mpidr).unwrap_or(0);
    let g = gic::init_cpu(mpidr);
    percpu::set_current(index, g);
    // The EL2 physical timer starts disabled and masked until the scheduler arms it.
    CNTHP_CTL_EL2.write(CNTHP_CTL_EL2::IMASK::SET);
    percpu::mark_online();
    super::cpu_loop::cpu_loop()
}
