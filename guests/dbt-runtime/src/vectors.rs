//! EL1 exception vectors. Data aborts in translated code (a guest access that faults:
//! unmapped or wrapped address, write-protected code page, alignment on device memory, an
//! external abort the hypervisor injects for an access nothing backs) are first shadow
//! misses to fill; a translation or permission fault that the guest's own tables give
//! too is the guest's Data Abort, which `deliver_guest_abort` takes here at a load or
//! store the engine has seen abort before (translated code goes on in the guest's
//! handler); the rest go back to the engine through `redirect_fault`, which resumes at
//! the epilogue with the exact guest state. Aborts of the bus probes (`bus.rs`) return a
//! failure to their caller; an UNDEFINED system-register access made for the guest
//! ([`guest_sysreg`]) becomes the guest's UNDEFINED. Anything else is a runtime bug: reported, and the VM ends.

use aarch64_cpu::registers::*;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use dbt_armv7::translate::a64::{deliver_guest_abort, redirect_fault};

use crate::frame_asm::{restore_gprs_elr_spsr, save_gprs_elr_spsr};
use crate::smp::{me, MAX_VCPUS};

/// Each vCPU's code cache `[lo, hi)` and its epilogue's address, set before translated
/// code runs (indexed by `smp::me`).
static CACHE_LO: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];
static CACHE_HI: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];
static EPILOGUE: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];

/// Registers this vCPU's code cache `[lo, hi)` whose epilogue is at `epilogue`.
pub fn set_code_cache(lo: u64, hi: u64, epilogue: u64) {
    let me = me();
    CACHE_LO[me].store(lo, Ordering::Relaxed);
    CACHE_HI[me].store(hi, Ordering::Relaxed);
    EPILOGUE[me].store(epilogue, Ordering::Relaxed);
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
    vector_entries!(0 1 2 3 4),
    interrupt_entries!(5 6),
    vector_entries!(7 8 9 10 11 12 13 14 15),
    "dbt_rt_trap:",
    save_gprs_elr_spsr!(),
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
);

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
        let cache = CACHE_LO[me].load(Ordering::Relaxed)..CACHE_HI[me].load(Ordering::Relaxed);
        // A translation (DFSC 0b0001xx), access flag (0b0010xx) or permission (0b0011xx)
        // fault of translated code is the guest's Data Abort or a shadow miss: filled
        // from the guest's tables if they permit the access, and retried.
        let epilogue = EPILOGUE[me].load(Ordering::Relaxed);
        if cache.contains(&f.elr) && (0b000100..0b010000).contains(&(esr & 0x3f)) {
            // First, at a load or store that took the guest's Data Abort before: if the
            // guest's own translation refuses the access, the abort is taken here and
            // translated code goes on in the guest's handler (the fill would walk the
            // guest's tables to the same refusal).
            // SAFETY: a fault in this vCPU's code cache interrupted its translated code
            // (the engine is inside the cache, its CPU and bus are idle).
            if unsafe {
                deliver_guest_abort(
                    &mut f.x,
                    &mut f.elr,
                    f.spsr,
                    far,
                    cache.clone(),
                    epilogue,
                    false,
                )
            } {
                return;
            }
            if crate::mmu::shadow::fill(far, esr & ESR_WNR != 0) {
                return;
            }
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
