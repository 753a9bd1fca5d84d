//! EL1 exception vectors. Data aborts in translated code (a guest access that faults:
//! unmapped or wrapped address, write-protected code page, alignment on device memory, an
//! external abort the hypervisor injects for an access nothing backs) are first looked up
//! in assembly (`dbt_rt_sync_el1`): at a load or store the engine has seen take the
//! guest's Data Abort before, `dbt_rt_guest_abort_remembered` (`deliver_remembered`, a
//! leaf: the vector saves only the caller-saved registers for it) takes the guest's abort
//! if a remembered verdict whose descriptors still hold refuses the access, else
//! `dbt_rt_guest_abort` (`deliver_at_site`) does if a walk refuses it, with only the
//! general-purpose registers kept,
//! and translated code goes on in the guest's handler. The rest are shadow misses to fill,
//! or go back to the engine through `redirect_fault`, which resumes at the epilogue with
//! the exact guest state. Aborts of the bus probes (`bus.rs`) return a failure to their
//! caller; an UNDEFINED system-register access made for the guest ([`guest_sysreg`])
//! becomes the guest's UNDEFINED. Anything else is a runtime bug: reported, and the VM
//! ends.

use aarch64_cpu::registers::*;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use dbt_armv7::translate::a64::STATE;
use dbt_armv7::translate::a64::{deliver_at_site, deliver_remembered, redirect_fault};
use dbt_armv7::translate::fault_sites::{FaultSite, FaultSites, FAULT_SITES};
use dbt_armv7::translate::state::GuestState;

use crate::frame_asm::{restore_gprs_elr_spsr, save_gprs_elr_spsr};
use crate::smp::{me, MAX_VCPUS};

/// A vCPU's code cache `[lo, hi)` and its epilogue's address (32 bytes: the synchronous
/// vector reads `lo` and `hi` in assembly, at `CODE_BOUNDS + 32 * smp::me()`).
#[repr(C, align(32))]
struct CodeBounds {
    lo: AtomicU64,
    hi: AtomicU64,
    epilogue: AtomicU64,
}

/// Each vCPU's code cache, set before translated code runs (indexed by `smp::me`).
static CODE_BOUNDS: [CodeBounds; MAX_VCPUS] = [const {
    CodeBounds {
        lo: AtomicU64::new(0),
        hi: AtomicU64::new(0),
        epilogue: AtomicU64::new(0),
    }
}; MAX_VCPUS];

const _: () = assert!(core::mem::size_of::<CodeBounds>() == 32);
const _: () = assert!(MAX_VCPUS.is_power_of_two());

/// Registers this vCPU's code cache `[lo, hi)` whose epilogue is at `epilogue`.
pub fn set_code_cache(lo: u64, hi: u64, epilogue: u64) {
    let b = &CODE_BOUNDS[me()];
    b.lo.store(lo, Ordering::Relaxed);
    b.hi.store(hi, Ordering::Relaxed);
    b.epilogue.store(epilogue, Ordering::Relaxed);
}

/// This vCPU's code cache and its epilogue.
fn code_bounds() -> (core::ops::Range<u64>, u64) {
    let b = &CODE_BOUNDS[me()];
    let cache = b.lo.load(Ordering::Relaxed)..b.hi.load(Ordering::Relaxed);
    (cache, b.epilogue.load(Ordering::Relaxed))
}

/// The interrupted context, as the vector code saves it.
#[repr(C)]
pub struct Frame {
    x: [u64; 31],
    elr: u64,
    spsr: u64,
    _pad: u64,
}

/// `ESR_EL1.EC`: data abort taken without a change in exception level.
const EC_DABT_CUR: u64 = 0x25;
/// `ESR_EL1.ISS.WnR`: the access was a write.
const ESR_WNR: u64 = 1 << 6;
/// `ESR_EL1.EC`: unknown reason, i.e. UNDEFINED (what the hypervisor injects for a system
/// register it refuses, e.g. `ICC_SGI0R_EL1`).
const EC_UNKNOWN: u64 = 0x00;

/// Set while the runtime accesses a system register on a vCPU's guest's behalf
/// ([`guest_sysreg`]; per vCPU, whose interrupts are masked).
static GUEST_SYSREG: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];
/// Set by the vectors when that access was UNDEFINED.
static GUEST_SYSREG_UNDEF: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];

/// Runs `access`, a system-register instruction the guest asked for (`coproc.rs`): `None`
/// when it was UNDEFINED (the instruction is skipped), so the guest takes its UNDEFINED
/// exception instead of the runtime ending on an exception it did not expect.
pub fn guest_sysreg<T>(access: impl FnOnce() -> T) -> Option<T> {
    let me = me();
    GUEST_SYSREG_UNDEF[me].store(false, Ordering::SeqCst);
    GUEST_SYSREG[me].store(true, Ordering::SeqCst);
    let value = access();
    GUEST_SYSREG[me].store(false, Ordering::SeqCst);
    (!GUEST_SYSREG_UNDEF[me].swap(false, Ordering::SeqCst)).then_some(value)
}
/// Vector kinds (offset within a group of four).
const KIND_NAMES: [&str; 4] = ["synchronous", "IRQ", "FIQ", "SError"];

macro_rules! vector_entries {
    ($($kind:literal)*) => {
        concat!($(
            ".balign 0x80\n",
            "sub sp, sp, #272\n",
            "stp x0, x1, [sp]\n",
            "mov x0, #", $kind, "\n",
            "b dbt_rt_trap\n",
        )*)
    };
}

/// IRQ and FIQ from the current EL (`irq.rs`: a frame with the SIMD&FP registers too).
macro_rules! interrupt_entries {
    ($($kind:literal)*) => {
        concat!($(
            ".balign 0x80\n",
            "sub sp, sp, #", stringify!(800), "\n",
            "stp x0, x1, [sp]\n",
            "mov x0, #", $kind, "\n",
            "b dbt_rt_irq\n",
        )*)
    };
}

const _: () = assert!(crate::irq::IRQ_FRAME == 800);

/// Bytes below the [`Frame`] for the caller-saved SIMD&FP registers (`q0`-`q7`,
/// `q16`-`q31`) and `FPSR`/`FPCR` that `dbt_rt_trap` keeps for the interrupted code.
const SIMD_FRAME: usize = 400;

core::arch::global_asm!(
    ".section .text.vectors, \"ax\"",
    ".balign 0x800",
    ".global dbt_rt_vectors",
    "dbt_rt_vectors:",
    vector_entries!(0 1 2 3),
    // Synchronous, current EL with SP_ELx (translated code's faults).
    ".balign 0x80",
    "sub sp, sp, #272",
    "stp x0, x1, [sp]",
    "b dbt_rt_sync_el1",
    interrupt_entries!(5 6),
    vector_entries!(7 8 9 10 11 12 13 14 15),
    // A Data Abort of translated code (translation, access flag or permission DFSC) at
    // a load or store that took the guest's Data Abort before (its host address in the
    // engine's FaultSites, found here in assembly) goes to dbt_rt_guest_abort with only
    // the general-purpose registers kept: such a site is a single load or store of a
    // general-purpose register (`FaultSites::record`), where translated code holds no
    // value in a SIMD&FP temporary (v0-v7, v16-v31; guest D0-D7 are in the callee-saved
    // d8-d15), and Rust code leaves FPSR/FPCR alone (no floating-point arithmetic). If it
    // declines (the guest's translation permits the access: a shadow miss), the frame
    // holds x0-x30 and the general path goes on from there. Anything else goes to the
    // general path at once.
    "dbt_rt_sync_el1:",
    "stp x2, x3, [sp, #16]",
    "mrs x0, esr_el1",
    "ubfx x1, x0, #26, #6",
    "cmp x1, #{EC_DABT_CUR}",
    "b.ne 8f",
    "tst x0, #0x30",
    "b.ne 8f",
    "tst x0, #0xc",
    "b.eq 8f",
    "mrs x1, tpidr_el1",
    "and x1, x1, #{VCPU_MASK}",
    "adrp x3, {bounds}",
    "add x3, x3, :lo12:{bounds}",
    "add x3, x3, x1, lsl #5",
    "ldp x0, x1, [x3]",
    "mrs x2, elr_el1",
    "cmp x2, x0",
    "b.lo 8f",
    "cmp x2, x1",
    "b.hs 8f",
    // Translated code: its STATE register holds the GuestState.
    "ldr x0, [x{STATE}, #{OFF_FAULT_SITES}]",
    "cbz x0, 8f",
    "ubfx x1, x2, #2, #{SITE_BITS}",
    "add x0, x0, x1, lsl #{SITE_LOG2}",
    "ldr x1, [x0]",
    "cmp x1, x2",
    "b.ne 8f",
    // The caller-saved registers (Rust code may change them), and the callee-saved ones
    // the Rust code reads from the frame (IBTC x25, BUDGET x27, STATE x28); the other
    // callee-saved ones are stored only if the general path takes over (7:). The site
    // and the epilogue wait in the ELR/SPSR slots for the second call.
    "stp x4, x5, [sp, #32]",
    "stp x6, x7, [sp, #48]",
    "stp x8, x9, [sp, #64]",
    "stp x10, x11, [sp, #80]",
    "stp x12, x13, [sp, #96]",
    "stp x14, x15, [sp, #112]",
    "stp x16, x17, [sp, #128]",
    "str x18, [sp, #144]",
    "str x25, [sp, #200]",
    "str x27, [sp, #216]",
    "str x28, [sp, #224]",
    "str x30, [sp, #240]",
    "mov x2, x0",
    "ldr x3, [x3, #16]",
    "stp x2, x3, [sp, #248]",
    "mov x0, sp",
    "mrs x1, spsr_el1",
    // A remembered verdict (a leaf: no callee-saved register saved), else the walk.
    "bl dbt_rt_guest_abort_remembered",
    "cbnz x0, 6f",
    "ldp x2, x3, [sp, #248]",
    "mov x0, sp",
    "mrs x1, spsr_el1",
    "bl dbt_rt_guest_abort",
    "cbz x0, 7f",
    "6:",
    "msr elr_el1, x0",
    "ldp x2, x3, [sp, #16]",
    "ldp x4, x5, [sp, #32]",
    "ldp x6, x7, [sp, #48]",
    "ldp x8, x9, [sp, #64]",
    "ldp x10, x11, [sp, #80]",
    "ldp x12, x13, [sp, #96]",
    "ldp x14, x15, [sp, #112]",
    "ldp x16, x17, [sp, #128]",
    "ldr x18, [sp, #144]",
    "ldr x27, [sp, #216]",
    "ldr x30, [sp, #240]",
    "ldp x0, x1, [sp]",
    "add sp, sp, #272",
    "eret",
    // Declined: x0-x18, x25, x27, x28 and x30 are in the frame, the other callee-saved
    // registers hold the interrupted code's values (the Rust calls kept them); ELR_EL1
    // and SPSR_EL1 are still the fault's (interrupts stay masked in the vector).
    "7:",
    "str x19, [sp, #152]",
    "stp x20, x21, [sp, #160]",
    "stp x22, x23, [sp, #176]",
    "str x24, [sp, #192]",
    "str x26, [sp, #208]",
    "str x29, [sp, #232]",
    "mrs x1, elr_el1",
    "str x1, [sp, #248]",
    "mrs x1, spsr_el1",
    "str x1, [sp, #256]",
    "mov x0, #4",
    "b dbt_rt_trap_saved",
    "8:",
    "ldp x2, x3, [sp, #16]",
    "mov x0, #4",
    "dbt_rt_trap:",
    save_gprs_elr_spsr!(),
    "dbt_rt_trap_saved:",
    // The SIMD&FP registers Rust code may change (AAPCS64: v0-v7 and v16-v31 caller-saved)
    // and FPSR/FPCR: translated code holds guest values in them across an access that
    // faults here and is retried after a shadow fill (`vfp.rs`: temporaries v0-v7, v16-v31;
    // the guest's cumulative FP flags in FPSR). v8-v15's low halves (guest D0-D7) are
    // callee-saved.
    "sub sp, sp, #{SIMD_FRAME}",
    "stp q0, q1, [sp, #0]",
    "stp q2, q3, [sp, #32]",
    "stp q4, q5, [sp, #64]",
    "stp q6, q7, [sp, #96]",
    "stp q16, q17, [sp, #128]",
    "stp q18, q19, [sp, #160]",
    "stp q20, q21, [sp, #192]",
    "stp q22, q23, [sp, #224]",
    "stp q24, q25, [sp, #256]",
    "stp q26, q27, [sp, #288]",
    "stp q28, q29, [sp, #320]",
    "stp q30, q31, [sp, #352]",
    "mrs x2, fpsr",
    "mrs x3, fpcr",
    "stp x2, x3, [sp, #384]",
    "mov x1, x0",
    "add x0, sp, #{SIMD_FRAME}",
    "bl dbt_rt_exception",
    "ldp x2, x3, [sp, #384]",
    "msr fpsr, x2",
    "msr fpcr, x3",
    "ldp q0, q1, [sp, #0]",
    "ldp q2, q3, [sp, #32]",
    "ldp q4, q5, [sp, #64]",
    "ldp q6, q7, [sp, #96]",
    "ldp q16, q17, [sp, #128]",
    "ldp q18, q19, [sp, #160]",
    "ldp q20, q21, [sp, #192]",
    "ldp q22, q23, [sp, #224]",
    "ldp q24, q25, [sp, #256]",
    "ldp q26, q27, [sp, #288]",
    "ldp q28, q29, [sp, #320]",
    "ldp q30, q31, [sp, #352]",
    "add sp, sp, #{SIMD_FRAME}",
    restore_gprs_elr_spsr!(),
    "add sp, sp, #272",
    "eret",
    SIMD_FRAME = const SIMD_FRAME,
    EC_DABT_CUR = const EC_DABT_CUR,
    VCPU_MASK = const MAX_VCPUS - 1,
    bounds = sym CODE_BOUNDS,
    STATE = const STATE,
    OFF_FAULT_SITES = const core::mem::offset_of!(GuestState, fault_sites),
    SITE_BITS = const FAULT_SITES.trailing_zeros(),
    SITE_LOG2 = const core::mem::size_of::<FaultSite>().trailing_zeros(),
);

// The vector's site lookup: `FaultSites::entries` first, a power-of-two count of
// power-of-two-sized sites, `host` first in each.
const _: () = assert!(core::mem::offset_of!(FaultSites, entries) == 0);
const _: () = assert!(FAULT_SITES.is_power_of_two());
const _: () = assert!(core::mem::size_of::<FaultSite>().is_power_of_two());
const _: () = assert!(core::mem::offset_of!(FaultSite, host) == 0);

/// The synchronous vector's call for a Data Abort of translated code at recorded fault
/// site `site` (`f`: x0-x30 of the interrupted context; `pstate`: its `SPSR_EL1`;
/// `epilogue`: this vCPU's): the guest's Data Abort taken here if the guest's translation
/// refuses the access (`deliver_at_site`), returning where translated code goes on; 0 if
/// not (the context unchanged).
#[no_mangle]
extern "C" fn dbt_rt_guest_abort(
    f: &mut Frame,
    pstate: u64,
    site: &FaultSite,
    epilogue: u64,
) -> u64 {
    let mut pc = ELR_EL1.get();
    // SAFETY: the vector found the fault in this vCPU's code cache (its translated code,
    // whose engine is inside the cache with its CPU and bus idle) at `site`, the entry of
    // its address in the engine's FaultSites; the bus's RAM is the runtime's fixed window
    // onto guest RAM.
    let delivered = unsafe {
        deliver_at_site(
            &mut f.x,
            &mut pc,
            pstate,
            FAR_EL1.get(),
            site,
            epilogue,
            false,
        )
    };
    if delivered {
        pc
    } else {
        0
    }
}

/// [`dbt_rt_guest_abort`] from a remembered verdict only, without calls
/// (`deliver_remembered`): where translated code goes on, or 0 if the verdicts do not
/// decide it (the context unchanged; the vector then calls [`dbt_rt_guest_abort`]).
#[no_mangle]
extern "C" fn dbt_rt_guest_abort_remembered(
    f: &mut Frame,
    pstate: u64,
    site: &FaultSite,
    epilogue: u64,
) -> u64 {
    let mut pc = ELR_EL1.get();
    // SAFETY: as in `dbt_rt_guest_abort`.
    let delivered =
        unsafe { deliver_remembered(&mut f.x, &mut pc, pstate, FAR_EL1.get(), site, epilogue) };
    if delivered {
        pc
    } else {
        0
    }
}

#[no_mangle]
extern "C" fn dbt_rt_exception(f: &mut Frame, kind: u64) {
    let esr = ESR_EL1.get();
    let far = FAR_EL1.get();
    let me = me();
    if kind == 4 && esr >> 26 == EC_UNKNOWN && GUEST_SYSREG[me].load(Ordering::SeqCst) {
        // The guest's system-register access was UNDEFINED: skip it and tell the caller.
        GUEST_SYSREG_UNDEF[me].store(true, Ordering::SeqCst);
        f.elr += 4;
        return;
    }
    if kind == 4 && esr >> 26 == EC_DABT_CUR {
        if crate::bus::is_probe(f.elr) {
            // A bus probe faulted: it returns (x0 = garbage, x1 = 1) to its caller.
            f.x[1] = 1;
            f.elr = f.x[30];
            return;
        }
        let (cache, epilogue) = code_bounds();
        // A translation (DFSC 0b0001xx), access flag (0b0010xx) or permission (0b0011xx)
        // fault of translated code that is not the guest's Data Abort at a recorded site
        // (`dbt_rt_sync_el1` took those) is a shadow miss: filled from the guest's tables
        // if they permit the access, and retried.
        if cache.contains(&f.elr)
            && (0b000100..0b010000).contains(&(esr & 0x3f))
            && crate::mmu::shadow::fill(far, esr & ESR_WNR != 0)
        {
            return;
        }
        if redirect_fault(&mut f.x, &mut f.elr, far, cache, epilogue) {
            return;
        }
    }
    crate::console::fatal_args(format_args!(
        "unexpected {} exception (vector {kind}): ESR_EL1 {esr:#x} ELR_EL1 {:#x} FAR_EL1 {far:#x} SPSR_EL1 {:#x}",
        KIND_NAMES[(kind & 3) as usize],
        f.elr,
        f.spsr
    ))
}
