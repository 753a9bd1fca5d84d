//! The storm's own EL1 exception vectors (`VBAR_EL1`): every synchronous exception that an
//! operation raises, at EL1 or at EL0, is recorded (syndrome, fault address, return address)
//! and counted by `ESR_EL1.EC`, and execution resumes where the operation expects it:
//! - after the faulting instruction (`ELR_EL1 + 4`) for data aborts, UNDEFINED and traps;
//! - at the caller's return address (`x30`) for instruction aborts and PC alignment faults,
//!   which the storm only provokes with `BLR` to the bad address;
//! - an `SVC` from EL0 ends the EL0 operation: [`run_el0`] returns to its EL1 caller.
//!
//! IRQ, FIQ and SError stay masked (`PSTATE.DAIF`) at EL1 and at EL0, so those vectors mean a
//! bug: they print what was taken and reset.

use core::arch::global_asm;
use core::sync::atomic::{AtomicU64, Ordering};

use aarch64_cpu::registers::{Readable, Writeable, ELR_EL1, ESR_EL1, FAR_EL1, SPSR_EL1};
use guest_rt::exception::ExceptionFrame;

/// Most vCPUs the storm runs on (per-CPU records are indexed by `TPIDR_EL1`).
pub const MAX_CPUS: usize = 4;
/// Exception classes (`ESR_EL1.EC` is 6 bits).
pub const CLASSES: usize = 64;

/// `ESR_EL1.EC`: SVC from AArch64.
pub const EC_SVC64: u64 = 0x15;
/// `ESR_EL1.EC`: Instruction Abort from a lower Exception level.
pub const EC_IABT_LOWER: u64 = 0x20;
/// `ESR_EL1.EC`: Instruction Abort without a change in Exception level.
pub const EC_IABT_SAME: u64 = 0x21;
/// `ESR_EL1.EC`: PC alignment fault.
pub const EC_PC_ALIGN: u64 = 0x22;

/// What the last exception of one vCPU was (`esr` = `u64::MAX`: none since [`clear`]).
struct Record {
    esr: AtomicU64,
    far: AtomicU64,
    elr: AtomicU64,
    from_el0: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Record = Record {
    esr: AtomicU64::new(u64::MAX),
    far: AtomicU64::new(0),
    elr: AtomicU64::new(0),
    from_el0: AtomicU64::new(0),
};
static RECORDS: [Record; MAX_CPUS] = [EMPTY; MAX_CPUS];
/// Exceptions taken, by vCPU and `ESR_EL1.EC`.
static BY_CLASS: [[AtomicU64; CLASSES]; MAX_CPUS] =
    [const { [const { AtomicU64::new(0) }; CLASSES] }; MAX_CPUS];

/// Callee-saved registers and stack pointer of each vCPU's [`run_el0`] caller (x19..x30, sp).
#[unsafe(no_mangle)]
static STORM_EL0_CTX: [[AtomicU64; 14]; MAX_CPUS] =
    [const { [const { AtomicU64::new(0) }; 14] }; MAX_CPUS];

/// One exception recorded for an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// `ESR_EL1`.
    pub esr: u64,
    /// `FAR_EL1`.
    pub far: u64,
    /// `ELR_EL1` when it was taken.
    pub elr: u64,
    /// Taken from EL0.
    pub from_el0: bool,
}

impl Taken {
    /// `ESR_EL1.EC`.
    pub fn ec(&self) -> u64 {
        (self.esr >> 26) & 0x3f
    }

    /// `ESR_EL1.ISS` bits 5:0: the fault status code of an abort.
    pub fn fsc(&self) -> u64 {
        self.esr & 0x3f
    }
}

/// This vCPU's index (`TPIDR_EL1`, set by guest-rt's entry code).
pub fn cpu() -> usize {
    guest_rt::smp::this_cpu().min(MAX_CPUS - 1)
}

/// Forgets this vCPU's last exception.
pub fn clear() {
    RECORDS[cpu()].esr.store(u64::MAX, Ordering::SeqCst);
}

/// This vCPU's exception since [`clear`], if any.
pub fn take() -> Option<Taken> {
    let r = &RECORDS[cpu()];
    let esr = r.esr.swap(u64::MAX, Ordering::SeqCst);
    (esr != u64::MAX).then(|| Taken {
        esr,
        far: r.far.load(Ordering::SeqCst),
        elr: r.elr.load(Ordering::SeqCst),
        from_el0: r.from_el0.load(Ordering::SeqCst) != 0,
    })
}

/// Exceptions of class `ec` taken so far on all vCPUs.
pub fn class_count(ec: usize) -> u64 {
    BY_CLASS.iter().map(|c| c[ec].load(Ordering::Relaxed)).sum()
}

/// Points `VBAR_EL1` at the storm's vectors (each vCPU, once).
pub fn install() {
    // SAFETY: `storm_vectors` is the 2 KiB-aligned table below; taking its address is safe.
    unsafe extern "C" {
        static storm_vectors: u8;
    }
    let base = core::ptr::addr_of!(storm_vectors) as u64;
    aarch64_cpu::registers::VBAR_EL1.set(base);
    // SCTLR_EL1: WXN off (the EL0 alias is writable and executable at EL0), SPAN set (an
    // exception from EL0 leaves PSTATE.PAN alone: EL1 reaches the EL0-accessible windows).
    let sctlr = aarch64_cpu::registers::SCTLR_EL1.get();
    aarch64_cpu::registers::SCTLR_EL1.set((sctlr & !(1 << 19)) | (1 << 23));
    aarch64_cpu::asm::barrier::isb(aarch64_cpu::asm::barrier::SY);
}

/// Runs the code at EL0 address `entry` with `x0 = a0, x1 = a1, x2 = a2` and `SP_EL0 = sp`
/// (interrupts masked) until it executes `SVC`; returns its `x0` and `x2`.
pub fn run_el0(entry: u64, a0: u64, a1: u64, a2: u64, sp: u64) -> (u64, u64) {
    let (r0, r2): (u64, u64);
    // SAFETY: storm_run_el0 saves the callee-saved registers and SP in STORM_EL0_CTX[cpu],
    // ERETs to `entry` at EL0t with DAIF masked; the SVC vector returns to
    // storm_el0_landing, which restores them and returns here like a call. The EL0 code
    // can only reach memory its (EL0) mappings allow. Every caller-saved register is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "bl storm_run_el0",
            inlateout("x0") entry => r0,
            in("x1") a0,
            inlateout("x2") a1 => r2,
            in("x3") a2,
            in("x4") sp,
            clobber_abi("C"),
        );
    }
    (r0, r2)
}

// The vector table: guest-rt's frame save/restore around `storm_exception`.
guest_rt::exception_vectors!("storm_vectors", storm_exception);

global_asm!(
    r#"
    // x0 = EL0 entry, x1..x3 = its x0..x2, x4 = its SP
    .global storm_run_el0
storm_run_el0:
    adrp    x9, STORM_EL0_CTX
    add     x9, x9, :lo12:STORM_EL0_CTX
    mrs     x10, tpidr_el1
    mov     x11, #112
    madd    x9, x10, x11, x9
    stp     x19, x20, [x9, #0]
    stp     x21, x22, [x9, #16]
    stp     x23, x24, [x9, #32]
    stp     x25, x26, [x9, #48]
    stp     x27, x28, [x9, #64]
    stp     x29, x30, [x9, #80]
    mov     x10, sp
    str     x10, [x9, #96]
    msr     elr_el1, x0
    msr     sp_el0, x4
    mov     x10, #0x3c0             // EL0t, D A I F masked
    msr     spsr_el1, x10
    mov     x0, x1
    mov     x1, x2
    mov     x2, x3
    eret

    // Reached by ERET from the SVC handler (EL1h, masked) with x0/x2 the EL0 code's.
    .global storm_el0_landing
storm_el0_landing:
    adrp    x9, STORM_EL0_CTX
    add     x9, x9, :lo12:STORM_EL0_CTX
    mrs     x10, tpidr_el1
    mov     x11, #112
    madd    x9, x10, x11, x9
    ldp     x19, x20, [x9, #0]
    ldp     x21, x22, [x9, #16]
    ldp     x23, x24, [x9, #32]
    ldp     x25, x26, [x9, #48]
    ldp     x27, x28, [x9, #64]
    ldp     x29, x30, [x9, #80]
    ldr     x10, [x9, #96]
    mov     sp, x10
    ret
"#
);

/// Vector numbers (offset / 0x80).
const SYNC_SP0: u64 = 0;
const SYNC_SPX: u64 = 4;
const SYNC_LOWER_A64: u64 = 8;

/// `SPSR_EL1` to land at EL1h with D, A, I and F masked.
const SPSR_EL1H_MASKED: u64 = 0x3c5;

/// Rust side of every vector.
// SAFETY: the only symbol of this name; called only by the `storm_vectors` table with
// x0 = the vector number and x1 = the frame it saved.
#[unsafe(no_mangle)]
extern "C" fn storm_exception(index: u64, frame: &mut ExceptionFrame) {
    let esr = ESR_EL1.get();
    let far = FAR_EL1.get();
    let elr = ELR_EL1.get();
    let ec = (esr >> 26) & 0x3f;
    let sync = matches!(index, SYNC_SP0 | SYNC_SPX | SYNC_LOWER_A64);
    if !sync {
        guest_rt::println!(
            "storm: FAIL unexpected exception at vector {index}: ESR_EL1={esr:#x} ELR_EL1={elr:#x} FAR_EL1={far:#x} SPSR_EL1={:#x}",
            SPSR_EL1.get()
        );
        guest_rt::psci::system_reset();
    }
    let cpu = cpu();
    BY_CLASS[cpu][ec as usize].fetch_add(1, Ordering::Relaxed);
    let from_el0 = index == SYNC_LOWER_A64;
    // An SVC ends the EL0 operation; so does an instruction abort or PC alignment fault at
    // EL0 (the EL0 code has no return address to resume at).
    if from_el0 && matches!(ec, EC_SVC64 | EC_IABT_LOWER | EC_PC_ALIGN) {
        if ec != EC_SVC64 {
            let r = &RECORDS[cpu];
            r.far.store(far, Ordering::SeqCst);
            r.elr.store(elr, Ordering::SeqCst);
            r.from_el0.store(1, Ordering::SeqCst);
            r.esr.store(esr, Ordering::SeqCst);
        }
        // SAFETY: only the address of the landing code is taken.
        unsafe extern "C" {
            fn storm_el0_landing();
        }
        ELR_EL1.set(storm_el0_landing as *const () as u64);
        SPSR_EL1.set(SPSR_EL1H_MASKED);
        return;
    }
    let r = &RECORDS[cpu];
    r.far.store(far, Ordering::SeqCst);
    r.elr.store(elr, Ordering::SeqCst);
    r.from_el0.store(u64::from(from_el0), Ordering::SeqCst);
    r.esr.store(esr, Ordering::SeqCst);
    let resume = match ec {
        EC_IABT_SAME | EC_PC_ALIGN => frame.x[30],
        _ => elr.wrapping_add(4),
    };
    ELR_EL1.set(resume);
}
