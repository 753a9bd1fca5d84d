//! The guest's `HVC`/`SMC` (PSCI, SMCCC) as the runtime's own AArch64 `HVC`/`SMC` to the
//! hypervisor, with the SMC32 calling convention enforced: an AArch32 caller cannot make
//! SMC64 calls (function ID bit 30), which answer `NOT_SUPPORTED` as they do for a guest in
//! hardware AArch32.

/// SMCCC `NOT_SUPPORTED`.
const NOT_SUPPORTED: u32 = 0xffff_ffff;
/// Function ID bit 30: the SMC64 calling convention.
const SMC64: u32 = 1 << 30;
/// PSCI `CPU_OFF` (SMC32).
pub const PSCI_CPU_OFF: u32 = 0x8400_0002;
/// PSCI `SYSTEM_OFF` (SMC32).
pub const PSCI_SYSTEM_OFF: u32 = 0x8400_0008;
/// PSCI `SYSTEM_RESET` (SMC32).
pub const PSCI_SYSTEM_RESET: u32 = 0x8400_0009;

/// Makes the call `args` (r0-r7) with `HVC #0` (or `SMC #0`); returns r0-r3.
pub fn call(smc: bool, args: [u32; 8]) -> [u32; 4] {
    if args[0] & SMC64 != 0 {
        return [NOT_SUPPORTED, args[1], args[2], args[3]];
    }
    let mut x = args.map(u64::from);
    // SAFETY: an SMCCC call to the hypervisor (or firmware through it): it reads x0-x7 and
    // writes x0-x3; SMCCC 1.1 preserves x4-x17 but they are marked clobbered regardless.
    unsafe {
        if smc {
            core::arch::asm!("smc #0",
                inout("x0") x[0], inout("x1") x[1], inout("x2") x[2], inout("x3") x[3],
                inout("x4") x[4], inout("x5") x[5], inout("x6") x[6], inout("x7") x[7],
                out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
                out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                options(nostack));
        } else {
            core::arch::asm!("hvc #0",
                inout("x0") x[0], inout("x1") x[1], inout("x2") x[2], inout("x3") x[3],
                inout("x4") x[4], inout("x5") x[5], inout("x6") x[6], inout("x7") x[7],
                out("x8") _, out("x9") _, out("x10") _, out("x11") _, out("x12") _,
                out("x13") _, out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                options(nostack));
        }
    }
    [x[0] as u32, x[1] as u32, x[2] as u32, x[3] as u32]
}

/// PSCI `SYSTEM_RESET`: ends the VM as a failure.
pub fn system_reset() -> ! {
    loop {
        call(false, [PSCI_SYSTEM_RESET, 0, 0, 0, 0, 0, 0, 0]);
    }
}
