//! Ending the machine: PSCI `SYSTEM_OFF`/`SYSTEM_RESET` to the firmware, or, under QEMU
//! with `exit=semihosting`, a semihosting `SYS_EXIT` that carries a status code.

use crate::bootargs::ExitMethod;
use crate::platform::PsciConduit;
use core::sync::atomic::{AtomicU8, Ordering};

static METHOD: AtomicU8 = AtomicU8::new(0);
static CONDUIT: AtomicU8 = AtomicU8::new(0);

/// Records how to end the machine (from the boot arguments and the host device tree).
pub fn configure(method: ExitMethod, conduit: Option<PsciConduit>) {
    METHOD.store(
        matches!(method, ExitMethod::Semihosting) as u8,
        Ordering::Relaxed,
    );
    let c = match conduit {
        None => 0,
        Some(PsciConduit::Smc) => 1,
        Some(PsciConduit::Hvc) => 2,
    };
    CONDUIT.store(c, Ordering::Relaxed);
}

const PSCI_SYSTEM_OFF: u64 = 0x8400_0008;
const PSCI_SYSTEM_RESET: u64 = 0x8400_0009;
/// Semihosting `SYS_EXIT` (AArch64 form: x1 points at {reason, subcode}).
const SYS_EXIT: u64 = 0x18;
/// `ADP_Stopped_ApplicationExit`.
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x20026;

fn psci(function: u64) {
    let mut x0 = function;
    match CONDUIT.load(Ordering::Relaxed) {
        // SAFETY: a PSCI call to the firmware; SYSTEM_OFF/RESET do not return on success.
        1 => unsafe { core::arch::asm!("smc #0", inout("x0") x0, options(nostack)) },
        // SAFETY: as above, over HVC (only when the device tree says so).
        2 => unsafe { core::arch::asm!("hvc #0", inout("x0") x0, options(nostack)) },
        _ => {}
    }
    let _ = x0;
}

/// Ends the machine with `status` (0 = success). Never returns.
pub fn exit(status: u32) -> ! {
    crate::arch::console::force_unlock();
    if METHOD.load(Ordering::Relaxed) == 1 {
        let block = [ADP_STOPPED_APPLICATION_EXIT, status as u64];
        // SAFETY: semihosting call; QEMU reads the two-word block at x1 and exits. Only
        // issued when the user asked for semihosting (exit=semihosting).
        unsafe {
            core::arch::asm!("hlt #0xf000", in("x0") SYS_EXIT, in("x1") block.as_ptr(), options(nostack))
        };
    }
    psci(if status == 0 {
        PSCI_SYSTEM_OFF
    } else {
        PSCI_SYSTEM_RESET
    });
    loop {
        // SAFETY: parks the CPU; nothing else to do.
        unsafe { core::arch::asm!("wfe", options(nomem, nostack)) };
    }
}
