//! Secondary CPUs: start them with PSCI `CPU_ON`, each on its own stack, with the runtime's
//! vectors and, if the boot CPU enabled it, the shared identity map ([`crate::mmu`]).
//!
//! Every CPU has a small index in `TPIDR_EL1`: 0 for the boot CPU, 1.. for secondaries in the
//! order their MPIDRs were first started ([`this_cpu`]). A secondary runs `entry(arg)`; when
//! that returns, the runtime calls PSCI `CPU_OFF`. Call [`start_secondary`] from one CPU at a
//! time (normally the boot CPU).

use crate::{cache, mmu, psci};
use aarch64_cpu::registers::{Readable, MPIDR_EL1, TPIDR_EL1};
use core::arch::global_asm;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};

/// Most CPUs a guest can use: the boot CPU plus 7 secondaries.
pub const MAX_CPUS: usize = 8;
/// Stack size of each secondary CPU.
pub const STACK_SIZE: usize = 16 * 1024;

/// `MPIDR_EL1` affinity fields (Aff3 and Aff2..Aff0), the value PSCI and the DTB use.
pub const MPIDR_AFFINITY_MASK: u64 = 0xff_00ff_ffff;

/// What a starting secondary reads, with its MMU off, before it has a stack. The entry
/// assembly below depends on this layout.
#[repr(C, align(64))]
struct BootBlock {
    ttbr0: u64,
    mair: u64,
    tcr: u64,
    sctlr: u64,
    stack_top: u64,
    cpu_index: u64,
    entry: u64,
    arg: u64,
}

/// Per-CPU boot blocks and stacks; slot `i` (1..MAX_CPUS) belongs to CPU index `i`.
struct Slots {
    boot: UnsafeCell<[BootBlock; MAX_CPUS]>,
}

#[repr(C, align(16))]
struct Stacks(UnsafeCell<[[u8; STACK_SIZE]; MAX_CPUS - 1]>);

// SAFETY: a boot block is written only by `start_secondary` (one caller at a time) before
// `CPU_ON` for that CPU and read by that CPU only while it starts; while a CPU runs, its
// block is not rewritten with different values (same MPIDR => same slot and stack).
unsafe impl Sync for Slots {}
// SAFETY: each stack is used by exactly one CPU (the slot's), never accessed through Rust.
unsafe impl Sync for Stacks {}

const EMPTY_BLOCK: BootBlock = BootBlock {
    ttbr0: 0,
    mair: 0,
    tcr: 0,
    sctlr: 0,
    stack_top: 0,
    cpu_index: 0,
    entry: 0,
    arg: 0,
};
static SLOTS: Slots = Slots {
    boot: UnsafeCell::new([EMPTY_BLOCK; MAX_CPUS]),
};
static STACKS: Stacks = Stacks(UnsafeCell::new([[0; STACK_SIZE]; MAX_CPUS - 1]));

/// MPIDR (affinity) owning each slot, `u64::MAX` when free. Slot 0 is the boot CPU. Only
/// plain loads and stores, which work with the MMU off too.
static SLOT_MPIDR: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(u64::MAX) }; MAX_CPUS];

global_asm!(
    r#"
    .section .text.secondary, "ax"
    .global __secondary_entry
__secondary_entry:                  // x0 = &BootBlock (context_id), MMU off
    msr     spsel, #1
    ldr     x1, [x0, #0]            // ttbr0: 0 = leave the MMU off
    cbz     x1, 1f
    ldr     x2, [x0, #8]
    msr     mair_el1, x2
    ldr     x2, [x0, #16]
    msr     tcr_el1, x2
    msr     ttbr0_el1, x1
    isb
    tlbi    vmalle1
    dsb     nsh
    isb
    ldr     x2, [x0, #24]
    msr     sctlr_el1, x2
    isb
    ic      iallu
    dsb     nsh
    isb
1:  ldr     x1, [x0, #32]           // stack_top
    mov     sp, x1
    ldr     x1, [x0, #40]           // cpu_index
    msr     tpidr_el1, x1
    adrp    x1, __vectors
    add     x1, x1, :lo12:__vectors
    msr     vbar_el1, x1
    mrs     x1, cpacr_el1
    orr     x1, x1, #(0b11 << 20)   // CPACR_EL1.FPEN = 0b11
    msr     cpacr_el1, x1
    isb
    bl      guest_rt_secondary_main
2:  wfe
    b       2b
"#
);

unsafe extern "C" {
    /// The secondary entry point above (physical = virtual address).
    fn __secondary_entry();
}

/// Rust side of a secondary's start: runs the entry function, then `CPU_OFF`.
// SAFETY: the only symbol of this name; called only by `__secondary_entry` with x0 = this
// CPU's boot block, on this CPU's stack.
#[unsafe(no_mangle)]
extern "C" fn guest_rt_secondary_main(block: &BootBlock) -> ! {
    // SAFETY: `entry` was stored from a `fn(usize)` by `start_secondary`.
    let entry: fn(usize) =
        unsafe { core::mem::transmute::<usize, fn(usize)>(block.entry as usize) };
    let arg = block.arg as usize;
    entry(arg);
    let ret = psci::cpu_off();
    crate::println!(
        "guest-rt: FAIL CPU_OFF on cpu {} returned {} ({})",
        this_cpu(),
        ret,
        psci::return_name(ret)
    );
    psci::system_reset()
}

/// This CPU's index: 0 on the boot CPU, 1.. on secondaries (from `TPIDR_EL1`).
pub fn this_cpu() -> usize {
    TPIDR_EL1.get() as usize
}

/// This CPU's affinity (`MPIDR_EL1` masked to Aff3..Aff0).
pub fn this_mpidr() -> u64 {
    MPIDR_EL1.get() & MPIDR_AFFINITY_MASK
}

/// The entry point address secondaries start at (for raw `CPU_ON` tests).
pub fn secondary_entry_point() -> u64 {
    __secondary_entry as *const () as u64
}

/// Why [`start_secondary`] did not call PSCI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartError {
    /// All `MAX_CPUS - 1` secondary slots belong to other MPIDRs.
    NoFreeSlot,
}

/// The CPU index `mpidr` has, or gets when it is first started ([`this_cpu`] on that CPU).
pub fn slot_for(mpidr: u64) -> Result<usize, StartError> {
    if this_cpu() == 0 {
        SLOT_MPIDR[0].store(this_mpidr(), Ordering::Relaxed);
    }
    if let Some(i) = (1..MAX_CPUS).find(|&i| SLOT_MPIDR[i].load(Ordering::Relaxed) == mpidr) {
        return Ok(i);
    }
    let free = (1..MAX_CPUS)
        .find(|&i| SLOT_MPIDR[i].load(Ordering::Relaxed) == u64::MAX)
        .ok_or(StartError::NoFreeSlot)?;
    SLOT_MPIDR[free].store(mpidr, Ordering::Relaxed);
    Ok(free)
}

/// MPIDR of the CPU with index `cpu`, once [`start_secondary`] has been called for it (index
/// 0, the boot CPU, is known after the first call).
pub fn mpidr_of(cpu: usize) -> Option<u64> {
    let m = SLOT_MPIDR.get(cpu)?.load(Ordering::Relaxed);
    (m != u64::MAX).then_some(m)
}

/// Starts the CPU with affinity `mpidr` through PSCI `CPU_ON`; it runs `entry(arg)` on its own
/// 16 KiB stack with [`this_cpu`] = its slot index, then `CPU_OFF`. If the calling CPU has
/// its MMU on, the secondary enables the same identity map before touching memory.
///
/// Returns the PSCI result (`SUCCESS`, `ALREADY_ON`, `INVALID_PARAMETERS`, ...).
pub fn start_secondary(mpidr: u64, entry: fn(usize), arg: usize) -> Result<i64, StartError> {
    let slot = slot_for(mpidr)?;
    let (ttbr0, mair, tcr, sctlr) = if mmu::is_enabled() {
        let c = mmu::config();
        (c.ttbr0, c.mair, c.tcr, c.sctlr)
    } else {
        (0, 0, 0, 0)
    };
    // SAFETY: `slot` < MAX_CPUS; the slot's stack index `slot - 1` < MAX_CPUS - 1.
    let stack_top = unsafe { (*STACKS.0.get()).as_ptr().add(slot) as u64 };
    // SAFETY: only one caller at a time writes boot blocks (module contract), and the target
    // CPU reads its block only after CPU_ON below.
    let block = unsafe { &mut (*SLOTS.boot.get())[slot] };
    *block = BootBlock {
        ttbr0,
        mair,
        tcr,
        sctlr,
        stack_top,
        cpu_index: slot as u64,
        entry: entry as usize as u64,
        arg: arg as u64,
    };
    cache::clean_invalidate_range(
        block as *const BootBlock as usize,
        core::mem::size_of::<BootBlock>(),
    );
    Ok(psci::cpu_on(
        mpidr,
        secondary_entry_point(),
        block as *const BootBlock as u64,
    ))
}
