//! The SMP check, on a machine with a second CPU (issue 17: "an ARMv7 VM has 1 to N
//! vCPUs"): PSCI `CPU_ON` starts CPU 1 at [`smp_secondary_entry`] with a context id; it
//! reports r0 and its `MPIDR`, runs [`smp_value`] (which returns 1), and waits for an IPI.
//! CPU 0 then rewrites `smp_value` to return 2 (with the cache maintenance the
//! architecture asks of cross-modified code), sends SGI 1 to CPU 1, whose handler answers
//! with SGI 2 (the IPI round trip); after the IPI CPU 1 runs `smp_value` again, which must
//! return 2 — under the DBT the translation CPU 1 made of the old code must be gone —
//! then both run the MMU-on checks of [`crate::smp_mmu`], and CPU 1 powers itself off
//! with PSCI `CPU_OFF`, which CPU 0 sees through `AFFINITY_INFO`.
//!
//! Runs only when r2 at entry is a device tree (not in `dbt-armv7`'s interpreter test, whose
//! harness answers no `CPU_ON`) and `CPU_ON` of CPU 1 succeeds; on one CPU it prints
//! nothing, so the single-CPU output stays the one qemu-system-arm prints.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::uart::{puthex, puts};

global_asm!(
    r#"
    .section .text.smp_value, "ax"
    .arm
    .balign 4096
    .global smp_value
smp_value:
    mov r0, #1
    bx lr
    .balign 4096

    .text
    .arm
    .balign 4
    .global smp_secondary_entry
smp_secondary_entry:
    ldr r4, =SECONDARY_STACK
    add r4, r4, #{stack}
    cps #0x12
    sub sp, r4, #{irq_stack}
    cps #0x13
    mov sp, r4
    ldr r1, =vectors
    mcr p15, 0, r1, c12, c0, 0
    isb
    bl smp_secondary_main
1:  b 1b
"#,
    stack = const STACK,
    irq_stack = const STACK / 2,
);

extern "C" {
    fn smp_value() -> u32;
    fn smp_secondary_entry();
}

/// Bytes of stack of CPU 1 (SVC mode on top, IRQ mode below).
const STACK: usize = 8192;

#[repr(C, align(16))]
struct Stack([u8; STACK]);

#[no_mangle]
static mut SECONDARY_STACK: Stack = Stack([0; STACK]);

/// `mov r0, #2`: what CPU 0 makes `smp_value` return.
const MOV_R0_2: u32 = 0xe3a0_0002;
/// The context id CPU 0 passes to `CPU_ON`.
const CONTEXT_ID: u32 = 0x5ec0_d0c1;
/// The SGI CPU 0 sends to CPU 1, and CPU 1's answer.
const SGI_PING: u32 = 1;
const SGI_PONG: u32 = 2;

/// PSCI (SMC32 IDs) and results.
const PSCI_CPU_OFF: u32 = 0x8400_0002;
const PSCI_CPU_ON: u32 = 0x8400_0003;
const PSCI_AFFINITY_INFO: u32 = 0x8400_0004;
const PSCI_SUCCESS: u32 = 0;
const AFFINITY_OFF: u32 = 1;

/// What CPU 1 reports (written by CPU 1, read by CPU 0).
static mut SEC_R0: u32 = 0;
static mut SEC_MPIDR: u32 = 0;
static mut SEC_FIRST: u32 = 0;
static mut SEC_SECOND: u32 = 0;
/// 1: CPU 1 ran `smp_value` once and waits for the IPI; 2: it ran it again after the IPI.
static mut SEC_STAGE: u32 = 0;
/// Set by each CPU's IRQ handler for the SGI it expects.
static mut GOT_PING: u32 = 0;
static mut GOT_PONG: u32 = 0;

/// Iterations of a wait before it gives up.
const PATIENCE: u32 = 20_000_000;

fn hvc(a: [u32; 4]) -> u32 {
    let r: u32;
    // SAFETY: a PSCI call (HVC conduit on QEMU virt without EL2/EL3, and under the
    // hypervisor); it reads r0-r3 and returns in r0; SMCCC lets it change r1-r3 too.
    unsafe {
        asm!(".inst 0xe1400070", inlateout("r0") a[0] => r, inlateout("r1") a[1] => _,
             inlateout("r2") a[2] => _, inlateout("r3") a[3] => _, options(nostack))
    };
    r
}

fn rd(a: u32) -> u32 {
    // SAFETY: a GIC register of QEMU virt's map (identity, MMU off).
    unsafe { read_volatile(a as *const u32) }
}

fn wr(a: u32, v: u32) {
    // SAFETY: as for `rd`.
    unsafe { write_volatile(a as *mut u32, v) }
}

/// Just enough of the GIC at QEMU virt's addresses for SGIs (and the timer's PPI,
/// `irq_latency`), v2 or v3.
pub(crate) mod gic {
    use super::{rd, wr};
    use core::arch::asm;
    use core::sync::atomic::{AtomicBool, Ordering};

    const GICD: u32 = 0x0800_0000;
    const GICD_SGIR: u32 = 0xf00;
    const GICC: u32 = 0x0801_0000;
    const GICR: u32 = 0x080a_0000;
    const GICR_FRAME: u32 = 0x2_0000;
    const GICR_WAKER: u32 = 0x14;
    const SGI_BASE: u32 = 0x1_0000;
    const ISENABLER0: u32 = 0x100;
    const IGROUPR0: u32 = 0x80;

    /// The machine's GIC is a GICv3 (its device tree says `arm,gic-v3`; a GICv2's
    /// distributor has no `GICD_PIDR2` at the GICv3 offset to ask).
    static V3: AtomicBool = AtomicBool::new(false);

    /// Records the GIC's version.
    pub fn set_v3(v3: bool) {
        V3.store(v3, Ordering::Relaxed);
    }

    /// Whether the GIC is a GICv3.
    pub fn v3() -> bool {
        V3.load(Ordering::Relaxed)
    }

    /// Enables the distributor (CPU 0) and this CPU's interface with SGIs `sgis`.
    pub fn enable(cpu: u32, sgis: u32) {
        if v3() {
            if cpu == 0 {
                wr(GICD, (1 << 4) | 0b11);
            }
            let r = GICR + cpu * GICR_FRAME;
            wr(r + GICR_WAKER, rd(r + GICR_WAKER) & !(1 << 1));
            while rd(r + GICR_WAKER) & (1 << 2) != 0 {}
            wr(r + SGI_BASE + IGROUPR0, u32::MAX);
            wr(r + SGI_BASE + ISENABLER0, sgis);
            // SAFETY: the GICv3 CPU interface in AArch32: ICC_SRE.SRE, ICC_PMR,
            // ICC_IGRPEN1.
            unsafe {
                asm!(
                    "mrc p15, 0, {t}, c12, c12, 5",
                    "orr {t}, {t}, #1",
                    "mcr p15, 0, {t}, c12, c12, 5",
                    "isb",
                    "mcr p15, 0, {pmr}, c4, c6, 0",
                    "mcr p15, 0, {one}, c12, c12, 7",
                    "isb",
                    t = out(reg) _, pmr = in(reg) 0xffu32, one = in(reg) 1u32,
                    options(nostack),
                )
            };
        } else {
            if cpu == 0 {
                wr(GICD, 1);
            }
            wr(GICD + ISENABLER0, sgis);
            wr(GICC + 4, 0xff);
            wr(GICC, 1);
        }
    }

    /// Sends SGI `intid` to CPU `cpu` (Aff0 = `cpu`).
    pub fn send_sgi(intid: u32, cpu: u32) {
        if v3() {
            // ICC_SGI1R: INTID [27:24], TargetList [15:0]; Aff1-3 = 0.
            let lo = (intid << 24) | (1 << cpu);
            // SAFETY: ICC_SGI1R write (MCRR p15, 0, <lo>, <hi>, c12).
            unsafe {
                asm!("mcrr p15, 0, {}, {}, c12", "isb", in(reg) lo, in(reg) 0u32, options(nostack))
            };
        } else {
            wr(GICD + GICD_SGIR, (1 << (16 + cpu)) | intid);
        }
    }

    /// Acknowledges the highest-priority pending interrupt: its INTID.
    pub fn ack() -> u32 {
        if v3() {
            let iar: u32;
            // SAFETY: ICC_IAR1 read.
            unsafe { asm!("mrc p15, 0, {}, c12, c12, 0", out(reg) iar, options(nostack)) };
            iar & 0xff_ffff
        } else {
            rd(GICC + 0xc)
        }
    }

    /// Ends the interrupt `iar` acknowledged.
    pub fn eoi(iar: u32) {
        if v3() {
            // SAFETY: ICC_EOIR1 write.
            unsafe { asm!("mcr p15, 0, {}, c12, c12, 1", "isb", in(reg) iar, options(nostack)) };
        } else {
            wr(GICC + 0x10, iar);
        }
    }
}

fn mpidr() -> u32 {
    let v: u32;
    // SAFETY: MPIDR read.
    unsafe { asm!("mrc p15, 0, {}, c0, c0, 5", out(reg) v, options(nostack, nomem)) };
    v
}

/// The IRQ exception (either CPU): CPU 1 answers SGI 1 with SGI 2 to CPU 0; CPU 0 records
/// SGI 2.
pub fn irq() {
    let iar = gic::ack();
    let intid = iar & 0x3ff;
    // SAFETY: each flag is written by one CPU's handler, read by the other's code.
    unsafe {
        match intid {
            SGI_PING => {
                write_volatile(addr_of_mut!(GOT_PING), 1);
                gic::send_sgi(SGI_PONG, 0);
            }
            SGI_PONG => write_volatile(addr_of_mut!(GOT_PONG), 1),
            _ => {}
        }
    }
    if intid < 1020 {
        gic::eoi(iar);
    }
}

fn wait_irq(flag: *const u32) -> bool {
    for _ in 0..PATIENCE / 1000 {
        // SAFETY: a flag the IRQ handler sets.
        if unsafe { read_volatile(flag) } != 0 {
            return true;
        }
        // SAFETY: wait with IRQs masked (WFI still wakes on a pending one), then take it
        // between unmasking and masking again (the handler runs there).
        unsafe { asm!("wfi", "cpsie i", "isb", "cpsid i", options(nostack)) };
    }
    false
}

/// CPU 0: sends SGI 1 to CPU 1 and waits for its answer (SGI 2), with IRQs taken in a
/// WFI loop.
pub fn ping_cpu1() -> bool {
    // SAFETY: the flag CPU 0's handler sets; reset before the SGI that sets it.
    unsafe { write_volatile(addr_of_mut!(GOT_PONG), 0) };
    gic::send_sgi(SGI_PING, 1);
    wait_irq(addr_of!(GOT_PONG))
}

/// CPU 1: forgets an earlier SGI 1.
pub fn forget_ping() {
    // SAFETY: the flag CPU 1's handler sets.
    unsafe { write_volatile(addr_of_mut!(GOT_PING), 0) };
}

/// CPU 1: waits for SGI 1 spinning with IRQs unmasked (no WFI), as Linux waits for a
/// cross-call; true when it came.
pub fn spin_for_ping() -> bool {
    // SAFETY: IRQs unmasked around a plain loop on the flag the handler sets.
    unsafe {
        asm!("cpsie i", options(nostack));
        let got = (0..PATIENCE).any(|_| read_volatile(addr_of!(GOT_PING)) != 0);
        asm!("cpsid i", options(nostack));
        got
    }
}

/// CPU 1: waits for SGI 1 in a WFI loop (IRQs masked around the WFI, as Linux's idle
/// loop); true when it came.
pub fn idle_for_ping() -> bool {
    wait_irq(addr_of!(GOT_PING))
}

fn wait_stage(stage: u32) -> bool {
    // SAFETY: SEC_STAGE is written by CPU 1 only.
    (0..PATIENCE).any(|_| unsafe { read_volatile(addr_of!(SEC_STAGE)) } >= stage)
}

/// CPU 1, started by `CPU_ON` with `context_id` in r0.
#[no_mangle]
extern "C" fn smp_secondary_main(context_id: u32) -> ! {
    gic::enable(1, 1 << SGI_PING);
    // SAFETY: CPU 1's reports; CPU 0 reads them after SEC_STAGE moves.
    unsafe {
        write_volatile(addr_of_mut!(SEC_R0), context_id);
        write_volatile(addr_of_mut!(SEC_MPIDR), mpidr());
        write_volatile(addr_of_mut!(SEC_FIRST), smp_value());
        asm!("dmb ish", options(nostack));
        write_volatile(addr_of_mut!(SEC_STAGE), 1);
        wait_irq(addr_of!(GOT_PING));
        write_volatile(addr_of_mut!(SEC_SECOND), smp_value());
        asm!("dmb ish", options(nostack));
        write_volatile(addr_of_mut!(SEC_STAGE), 2);
    }
    crate::smp_mmu::secondary();
    hvc([PSCI_CPU_OFF, 0, 0, 0]);
    loop {
        // SAFETY: CPU_OFF does not return; if it did, park.
        unsafe { asm!("wfi", options(nostack, nomem)) };
    }
}

/// Makes `smp_value` return 2: the store, then D-cache clean to the point of
/// unification, I-cache and branch predictor invalidation (Inner Shareable), DSB, ISB.
fn rewrite_smp_value() {
    let at = smp_value as *const () as usize as u32;
    // SAFETY: `smp_value`'s first instruction, in RAM (MMU off: writable); nothing
    // executes it during the store but this CPU, after the maintenance.
    unsafe {
        write_volatile(at as *mut u32, MOV_R0_2);
        asm!(
            "dsb ish",
            "mcr p15, 0, {a}, c7, c11, 1", // DCCMVAU
            "dsb ish",
            "mcr p15, 0, {z}, c7, c1, 0",  // ICIALLUIS
            "mcr p15, 0, {z}, c7, c1, 6",  // BPIALLIS
            "dsb ish",
            "isb",
            a = in(reg) at, z = in(reg) 0u32,
            options(nostack),
        );
    }
}

/// Whether the device tree at `dtb` (its header checked) holds the bytes `what`.
fn dtb_mentions(dtb: u32, what: &[u8]) -> bool {
    // SAFETY: `totalsize`, big-endian, of a device tree whose magic was checked; the tree
    // lies in RAM.
    let size = u32::from_be(unsafe { read_volatile((dtb + 4) as *const u32) }).min(1 << 20);
    // SAFETY: the tree's bytes, in RAM.
    let tree = unsafe { core::slice::from_raw_parts(dtb as *const u8, size as usize) };
    tree.windows(what.len()).any(|w| w == what)
}

/// The check (CPU 0), after the single-CPU ones; `dtb` is r2 at entry.
pub fn test_smp(dtb: u32, check: fn(&str, bool)) {
    // SAFETY: r2 at entry: the device tree under QEMU and the hypervisor (in RAM); in the
    // interpreter test a zeroed word of its RAM.
    if dtb & 3 != 0 || unsafe { read_volatile(dtb as *const u32) } != 0xedfe_0dd0 {
        return;
    }
    gic::set_v3(dtb_mentions(dtb, b"arm,gic-v3"));
    // CPU 0 runs `smp_value` first: under the DBT both CPUs then hold a translation of it.
    // SAFETY: a plain function.
    let before = unsafe { smp_value() };
    gic::enable(0, 1 << SGI_PONG);
    let entry = smp_secondary_entry as *const () as usize as u32;
    if hvc([PSCI_CPU_ON, 1, entry, CONTEXT_ID]) != PSCI_SUCCESS {
        return; // one CPU
    }
    let started = wait_stage(1);
    // SAFETY: CPU 1 wrote these before SEC_STAGE = 1.
    let (r0, mp, first) = unsafe {
        (
            read_volatile(addr_of!(SEC_R0)),
            read_volatile(addr_of!(SEC_MPIDR)),
            read_volatile(addr_of!(SEC_FIRST)),
        )
    };
    let ok = started && r0 == CONTEXT_ID && mp & 0xff_ffff == 1 && before == 1 && first == 1;
    if !ok {
        puts("armv7-systest: smp: started, r0, MPIDR, smp_value on cpu 0, on cpu 1:");
        for v in [started as u32, r0, mp, before, first] {
            puts(" ");
            puthex(v);
        }
        puts("\n");
    }
    check(
        "smp: CPU_ON started cpu 1 with its context id and MPIDR",
        ok,
    );
    rewrite_smp_value();
    // SAFETY: as above.
    let mine = unsafe { smp_value() };
    gic::send_sgi(SGI_PING, 1);
    check("smp: IPI round trip", wait_irq(addr_of!(GOT_PONG)));
    let done = wait_stage(2);
    // SAFETY: CPU 1 wrote it before SEC_STAGE = 2.
    let second = unsafe { read_volatile(addr_of!(SEC_SECOND)) };
    check(
        "smp: code rewritten by cpu 0 runs new on both cpus",
        done && mine == 2 && second == 2,
    );
    crate::smp_mmu::primary(check);
    let off = (0..PATIENCE / 1000).any(|_| hvc([PSCI_AFFINITY_INFO, 1, 0, 0]) == AFFINITY_OFF);
    check("smp: cpu 1 CPU_OFF", off);
}
