//! The probes. Each sets where an exception resumes (`RESUME`) before the instruction
//! under test, so an UNDEFINED instruction or an external abort simply ends that probe.

use core::arch::asm;
use core::ptr::addr_of_mut;

use crate::rt::{call, counts, fail, set_resume, PSCI_SYSTEM_OFF};
use crate::uart::{puthex, puts};

/// `MRC p15, 0, r0, c0, c0, 0`; `opc1` at bit 21, `CRn` at 16, `opc2` at 5, `CRm` at 0.
const MRC_P15_R0: u32 = 0xee10_0f10;
/// `MRRC p15, 0, r0, r1, c0`; `opc1` at bit 4, `CRm` at 0.
const MRRC_P15_R0_R1: u32 = 0xec51_0f00;
/// `BX LR`.
const BX_LR: u32 = 0xe12f_ff1e;
/// PSCI (SMCCC owner 4, standard secure service): power calls are left out of the random
/// IDs so the guest stays on.
const OWNER_STANDARD: u32 = 4;
/// Guest RAM: loads there are plain memory; stores only go above it.
const RAM: core::ops::Range<u32> = 0x4000_0000..0x4800_0000;
/// Step of the IPA sweep: 16 MiB.
const IPA_STEP: u32 = 1 << 24;
/// `PSCI_VERSION`.
const PSCI_VERSION: u32 = 0x8400_0000;
/// Random calls of each kind (HVC, SMC).
const CALLS: u32 = 400;

/// Two instructions written at run time and executed: the CP15 access and `BX LR`.
static mut CODE: [u32; 2] = [0; 2];

/// The program; `dtb` (`r2` at entry) is the device tree with the command line.
#[no_mangle]
extern "C" fn main(_r0: u32, _r1: u32, dtb: u32) -> ! {
    puts("armv7-hostile: AArch32 guest up\n");
    let (u0, _) = counts();
    let n = cp15_space();
    let (u1, _) = counts();
    report("CP15 MRC/MRRC encodings read", n, u1 - u0, "UNDEFINED");
    let (refused, n) = random_calls();
    report("random HVC/SMC calls", n, refused, "NOT_SUPPORTED");
    let (_, a0) = counts();
    let n = ipa_sweep();
    let (_, a1) = counts();
    report(
        "loads/stores across the IPA space (A32, T32)",
        n,
        a1 - a0,
        "external aborts",
    );
    crate::mmu_storm::run(crate::seed::from_device_tree(dtb).unwrap_or(1));
    crate::cp14_sweep::run();
    let storm = crate::storm_report::run(dtb);
    let v = call(false, [PSCI_VERSION, 0, 0, 0]);
    if v != 0x1_0000 {
        fail("PSCI_VERSION after the probes", v);
    }
    crate::storm_report::verdict(storm);
    puts("armv7-hostile: PASS\n");
    call(false, [PSCI_SYSTEM_OFF, 0, 0, 0]);
    fail("SYSTEM_OFF returned", 0)
}

fn report(what: &str, n: u32, answered: u32, how: &str) {
    puts("armv7-hostile: ");
    puts(what);
    puts(": ");
    puthex(n);
    puts(" done, ");
    puthex(answered);
    puts(" ");
    puts(how);
    puts("\n");
}

/// Runs the two instructions in `CODE` (written just before) with `r0`, `r1` = `a`, `b`
/// (the source registers of a generated `MCR`/`MCRR`).
pub fn run_code(first: u32, a: u32, b: u32) {
    let code = addr_of_mut!(CODE);
    // SAFETY: CODE is ours; the MMU and caches are off, and the DSB/ISB/ICIALLU make the
    // new instructions visible before they run.
    unsafe {
        (*code)[0] = first;
        (*code)[1] = BX_LR;
        asm!(
            "dsb sy",
            "mcr p15, 0, {z}, c7, c5, 0",
            "dsb sy",
            "isb",
            "adr r12, 2f",
            "ldr r3, =RESUME",
            "str r12, [r3]",
            "blx {c}",
            "2:",
            z = in(reg) 0u32,
            c = in(reg) code as u32,
            inout("r0") a => _, inout("r1") b => _, out("r3") _, out("r12") _, out("lr") _,
            options(nostack),
        );
    }
}

/// Every `MRC` and `MRRC` encoding of CP15 (reads only: writes would change the guest).
fn cp15_space() -> u32 {
    let mut n = 0;
    for opc1 in 0..8u32 {
        for crn in 0..16u32 {
            for crm in 0..16u32 {
                for opc2 in 0..8u32 {
                    run_code(
                        MRC_P15_R0 | (opc1 << 21) | (crn << 16) | (opc2 << 5) | crm,
                        0,
                        0,
                    );
                    n += 1;
                }
            }
        }
    }
    for opc1 in 0..16u32 {
        for crm in 0..16u32 {
            run_code(MRRC_P15_R0_R1 | (opc1 << 4) | crm, 0, 0);
            n += 1;
        }
    }
    n
}

/// HVC and SMC with pseudo-random function IDs and arguments (a linear congruential
/// generator, so every run is the same). Returns (`NOT_SUPPORTED` answers, calls).
fn random_calls() -> (u32, u32) {
    let mut x: u32 = 0x1234_5678;
    let mut next = || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        x
    };
    let (mut refused, mut n) = (0, 0);
    for smc in [false, true] {
        for _ in 0..CALLS {
            let id = next();
            if (id >> 24) & 0x3f == OWNER_STANDARD {
                continue;
            }
            let r = call(smc, [id, next(), next(), next()]);
            n += 1;
            if r == u32::MAX {
                refused += 1;
            }
        }
    }
    (refused, n)
}

/// Loads from every 16 MiB of the 32-bit IPA space, A32 `LDR` and T32 `LDR`/`LDM` (no
/// syndrome); stores (A32 `STR`, T32 `STM`) above the guest's RAM. Returns the probes.
fn ipa_sweep() -> u32 {
    let mut n = 0;
    for i in 0..(1u64 << 32) / u64::from(IPA_STEP) {
        let at = (i as u32).wrapping_mul(IPA_STEP);
        // SAFETY: each access either completes or takes an external abort, after which
        // the vectors resume at the label; r12 is theirs.
        unsafe {
            asm!(
                "adr r12, 2f",
                "str r12, [{res}]",
                "ldr r0, [{a}]",
                "2:",
                "adr r3, 5f + 1",
                "adr r12, 3f + 1",
                "str r12, [{res}]",
                "adr r12, 4f + 1",
                "bx r12",
                ".thumb",
                "4:",
                "mov r2, {a}",
                "ldr r0, [r2]",
                "3:",
                "str r3, [{res}]",
                "mov r2, {a}",
                "ldm r2!, {{r0}}",
                "5:",
                ".balign 4",
                "bx pc",
                "nop",
                ".arm",
                a = in(reg) at,
                res = in(reg) addr_of_mut!(crate::rt::RESUME),
                out("r0") _, out("r2") _, out("r3") _, out("r12") _,
                options(nostack),
            );
        }
        n += 3;
        if at < RAM.end {
            continue;
        }
        // SAFETY: as above; above the guest's RAM nothing of the guest is overwritten.
        unsafe {
            asm!(
                "adr r12, 2f",
                "str r12, [{res}]",
                "str r0, [{a}]",
                "2:",
                "adr r12, 3f + 1",
                "str r12, [{res}]",
                "adr r12, 4f + 1",
                "bx r12",
                ".thumb",
                "4:",
                "mov r2, {a}",
                "stm r2!, {{r0}}",
                "3:",
                ".balign 4",
                "bx pc",
                "nop",
                ".arm",
                a = in(reg) at,
                res = in(reg) addr_of_mut!(crate::rt::RESUME),
                out("r0") _, out("r2") _, out("r12") _,
                options(nostack),
            );
        }
        n += 2;
    }
    set_resume(0);
    n
}
