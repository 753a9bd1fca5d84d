//! The host fault path: a `SIGSEGV`/`SIGBUS` handler that sends a fault in translated code
//! back to the engine (through the runtime's epilogue, see
//! `dbt_armv7::translate::a64::redirect_fault`), as the hypervisor's abort handler will.

use core::sync::atomic::{AtomicU64, Ordering};
use dbt_armv7::translate::a64::{deliver_guest_abort, redirect_fault};

/// `rt_sigaction`.
const SYS_RT_SIGACTION: u64 = 134;
/// `rt_sigreturn`.
const SYS_RT_SIGRETURN: u64 = 139;
const SIGBUS: u64 = 7;
const SIGSEGV: u64 = 11;
const SA_SIGINFO: u64 = 0x4;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESTORER: u64 = 0x0400_0000;
/// Offset of `uc_mcontext` (`struct sigcontext`) in the AArch64 Linux `ucontext_t`:
/// flags, link, `stack_t` (24), sigmask (8), 120 reserved bytes, aligned to 16.
const UC_MCONTEXT: usize = 176;

/// Code cache start, end and the epilogue's host address, set before translated code runs.
static CACHE_LO: AtomicU64 = AtomicU64::new(0);
static CACHE_HI: AtomicU64 = AtomicU64::new(0);
static EPILOGUE: AtomicU64 = AtomicU64::new(0);

/// The kernel's `struct sigaction` on AArch64.
#[repr(C)]
struct SigAction {
    handler: u64,
    flags: u64,
    restorer: u64,
    mask: u64,
}

/// `struct sigcontext` on AArch64 (without the reserved tail).
#[repr(C)]
struct SigContext {
    fault_address: u64,
    regs: [u64; 31],
    sp: u64,
    pc: u64,
    pstate: u64,
}

core::arch::global_asm!(
    ".global runner_sigreturn",
    "runner_sigreturn:",
    "mov x8, #{nr}",
    "svc #0",
    nr = const SYS_RT_SIGRETURN,
);

extern "C" {
    fn runner_sigreturn();
}

/// Offset of `si_addr` in `siginfo_t` (signo, errno, code, padding).
const SI_ADDR: usize = 16;

extern "C" fn on_fault(sig: i32, info: *mut u8, uc: *mut u8) {
    // SAFETY: the kernel passes a valid siginfo_t and ucontext_t for an SA_SIGINFO handler.
    let (ctx, addr) = unsafe {
        (
            &mut *(uc.add(UC_MCONTEXT) as *mut SigContext),
            *(info.add(SI_ADDR) as *const u64),
        )
    };
    let cache = CACHE_LO.load(Ordering::Relaxed)..CACHE_HI.load(Ordering::Relaxed);
    // A guest load or store that nothing backs (the runner has no devices, and maps the
    // guest's memory where it is), at a site that took the guest's Data Abort before:
    // the abort is taken here and translated code goes on in the guest's handler.
    // SAFETY: only a context in the code cache is changed: translated code, whose engine
    // is inside the cache (its CPU and bus idle while this handler runs).
    if unsafe {
        deliver_guest_abort(
            &mut ctx.regs,
            &mut ctx.pc,
            ctx.pstate,
            addr,
            cache.clone(),
            EPILOGUE.load(Ordering::Relaxed),
            true,
        )
    } {
        return;
    }
    if !redirect_fault(
        &mut ctx.regs,
        &mut ctx.pc,
        addr,
        cache,
        EPILOGUE.load(Ordering::Relaxed),
    ) {
        let msg = alloc::format!(
            "dbt-a64-runner: fault outside translated code at {:#x} (data address {addr:#x}, x30 {:#x})\n",
            ctx.pc,
            ctx.regs[30]
        );
        crate::sys::write(2, msg.as_bytes());
        crate::sys::exit(128 + sig as u64);
    }
}

/// Installs the handler for faults in the code cache `[lo, hi)` whose epilogue is at host
/// address `epilogue`.
pub fn install(lo: u64, hi: u64, epilogue: u64) {
    CACHE_LO.store(lo, Ordering::Relaxed);
    CACHE_HI.store(hi, Ordering::Relaxed);
    EPILOGUE.store(epilogue, Ordering::Relaxed);
    let act = SigAction {
        handler: on_fault as *const () as usize as u64,
        flags: SA_SIGINFO | SA_NODEFER | SA_RESTORER,
        restorer: runner_sigreturn as *const () as usize as u64,
        mask: 0,
    };
    for sig in [SIGSEGV, SIGBUS] {
        // SAFETY: a valid sigaction for a handler that only touches its own context.
        unsafe {
            crate::sys::syscall6(
                SYS_RT_SIGACTION,
                [sig, &act as *const SigAction as u64, 0, 8, 0, 0],
            )
        };
    }
}
