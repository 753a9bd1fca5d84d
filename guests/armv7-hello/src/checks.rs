//! The checks, in order; each prints `armv7-hello: <check> ok` or fails the run.

use core::arch::asm;

use crate::gic;
use crate::rt::{dabt_info, fail, hvc, undef_count, PSCI_SYSTEM_OFF};
use crate::uart::{puthex, puts};

/// Guest RAM (the hypervisor's layout).
const RAM: core::ops::Range<u32> = 0x4000_0000..0x6000_0000;
/// The device-tree magic as a little-endian load of its big-endian bytes.
const FDT_MAGIC_LE: u32 = 0xedfe_0dd0;
/// `CPSR.M` of Supervisor mode, and the I/F mask bits.
const MODE_SVC: u32 = 0x13;
const CPSR_IF: u32 = 0xc0;
/// SMCCC / PSCI function IDs (SMC32) and results.
const PSCI_VERSION: u32 = 0x8400_0000;
const SMCCC_VERSION: u32 = 0x8000_0000;
const PSCI_CPU_ON_64: u32 = 0xc400_0003;
const NOT_SUPPORTED: u32 = u32::MAX;
/// An IPA with nothing behind it (between the GIC and the UART of the virt layout).
const UNBACKED: u32 = 0x0c00_0000;
/// `DFSR` of a synchronous external abort (short-descriptor format, read).
const DFSR_EXTERNAL: u32 = 0x08;
/// The virtual timer's PPI.
const VTIMER_INTID: u32 = 27;
/// No interrupt pending (`IAR`).
const SPURIOUS: u32 = 1023;

fn ok(what: &str) {
    puts("armv7-hello: ");
    puts(what);
    puts(" ok\n");
}

fn check(cond: bool, what: &str, value: u32) {
    if !cond {
        fail(what, value);
    }
}

/// The program: `r0..r2` as the boot protocol passed them.
#[no_mangle]
extern "C" fn main(r0: u32, r1: u32, r2: u32) -> ! {
    puts("armv7-hello: AArch32 guest up\n");
    boot_protocol(r0, r1, r2);
    crate::reset::reset_once(r2);
    crate::measure::measure_id(r2);
    calls();
    cp15();
    injected();
    let v = gic::version();
    let d = vfp_set();
    timer_wfi(v);
    vfp_check(d);
    thumb_wfi(v);
    timer_irq(v);
    puts("armv7-hello: PASS\n");
    hvc([PSCI_SYSTEM_OFF, 0, 0, 0]);
    fail("SYSTEM_OFF returned", 0)
}

fn boot_protocol(r0: u32, r1: u32, r2: u32) {
    check(r0 == 0, "r0 at entry", r0);
    check(r1 == u32::MAX, "r1 (machine type) at entry", r1);
    check(RAM.contains(&r2), "r2 (device tree) outside RAM", r2);
    // SAFETY: r2 points into guest RAM (checked above); MMU off.
    let magic = unsafe { core::ptr::read_volatile(r2 as *const u32) };
    check(magic == FDT_MAGIC_LE, "no device tree at r2", magic);
    let cpsr: u32;
    // SAFETY: reads CPSR.
    unsafe { asm!("mrs {}, cpsr", out(reg) cpsr, options(nomem, nostack)) };
    check(cpsr & 0x1f == MODE_SVC, "not in SVC mode", cpsr);
    check(cpsr & CPSR_IF == CPSR_IF, "IRQ/FIQ not masked", cpsr);
    ok("boot protocol (r0=0, r1=~0, r2=dtb, SVC, IRQ/FIQ masked)");
}

fn calls() {
    let v = hvc([PSCI_VERSION, 0, 0, 0])[0];
    check(v == 0x1_0000, "PSCI_VERSION", v);
    let v = hvc([SMCCC_VERSION, 0, 0, 0])[0];
    check(v == 0x1_0001, "SMCCC_VERSION", v);
    let v = hvc([PSCI_CPU_ON_64, 1, 0, 0])[0];
    check(v == NOT_SUPPORTED, "SMC64 ID from AArch32", v);
    puts("armv7-hello: PSCI_VERSION ");
    puthex(hvc([PSCI_VERSION, 0, 0, 0])[0]);
    puts("\n");
    ok("HVC32 PSCI/SMCCC");
}

fn cp15() {
    let (pfr0, midr, actlr, cond): (u32, u32, u32, u32);
    // SAFETY: reads ID_PFR0 (trapped by HCR_EL2.TID3), MIDR, ACTLR (trapped by TACR); the
    // MRCNE after an equal compare does not execute (whether or not it traps).
    unsafe {
        asm!(
            "mrc p15, 0, {pfr0}, c0, c1, 0",
            "mrc p15, 0, {midr}, c0, c0, 0",
            "mrc p15, 0, {actlr}, c1, c0, 1",
            "mov {cond}, #0x55",
            "cmp {cond}, {cond}",
            "mrcne p15, 0, {cond}, c0, c1, 0",
            pfr0 = out(reg) pfr0,
            midr = out(reg) midr,
            actlr = out(reg) actlr,
            cond = out(reg) cond,
            options(nomem, nostack),
        )
    };
    let mmfr0_lr: u32;
    // SAFETY: reads ID_MMFR0 (trapped) into LR, SVC mode's banked register (X18 at EL2),
    // as Linux's cpu_architecture() does.
    unsafe {
        asm!("mrc p15, 0, lr, c0, c1, 4", "mov {}, lr", out(reg) mmfr0_lr, out("lr") _,
             options(nomem, nostack))
    };
    // ID_MMFR0.VMSA [3:0] >= 3: VMSAv7 (Linux's test for an ARMv7 CPU).
    check(
        mmfr0_lr & 0xf >= 3,
        "ID_MMFR0 read into LR (banked register)",
        mmfr0_lr,
    );
    // ID_PFR0.State0 [3:0] = 1: A32 implemented.
    check(pfr0 & 0xf == 1, "ID_PFR0", pfr0);
    check(cond == 0x55, "conditional MRC executed", cond);
    puts("armv7-hello: MIDR ");
    puthex(midr);
    puts(" ID_PFR0 ");
    puthex(pfr0);
    puts(" ACTLR ");
    puthex(actlr);
    puts("\n");
    ok("CP15 traps (ID_PFR0 via TID3, ACTLR via TACR, conditional MRC)");
}

fn injected() {
    let before = undef_count();
    // SAFETY: an IMPLEMENTATION DEFINED register (TIDCP): the hypervisor makes it UNDEFINED
    // and the handler continues after it.
    unsafe { asm!("mrc p15, 0, r0, c15, c0, 0", out("r0") _, options(nostack)) };
    check(
        undef_count() == before + 1,
        "no UNDEFINED for c15",
        undef_count(),
    );
    // SAFETY: an unbacked IPA: the hypervisor injects a data abort, the handler continues.
    let v = unsafe { core::ptr::read_volatile(UNBACKED as *const u32) };
    let (dfsr, dfar, n, _spsr) = dabt_info();
    check(n == 1, "no data abort for unbacked MMIO", v);
    check(dfsr == DFSR_EXTERNAL, "DFSR", dfsr);
    check(dfar == UNBACKED, "DFAR", dfar);
    ok("injected UNDEFINED and data abort");
    pan_on_entry();
    no_syndrome();
}

/// `SCTLR.SPAN`, `CPSR.PAN` (FEAT_PAN) and `ID_MMFR3.PAN`.
const SCTLR_SPAN: u32 = 1 << 23;
const CPSR_PAN: u32 = 1 << 22;
const ID_MMFR3_PAN_SHIFT: u32 = 16;

/// Takes the data abort the hypervisor injects for an access to an unbacked IPA with
/// `sctlr`; returns `CPSR` at the handler's entry.
fn abort_entry_cpsr(sctlr: u32) -> u32 {
    // SAFETY: SCTLR with only SPAN changed (MMU still off), a read of an unbacked IPA (the
    // handler continues after it), then SCTLR as it was.
    unsafe {
        asm!(
            "mrc p15, 0, {old}, c1, c0, 0",
            "mcr p15, 0, {new}, c1, c0, 0",
            "isb",
            "ldr {t}, [{at}]",
            "mcr p15, 0, {old}, c1, c0, 0",
            "isb",
            old = out(reg) _, new = in(reg) sctlr, t = out(reg) _, at = in(reg) UNBACKED,
            options(nostack),
        )
    };
    crate::rt::dabt_cpsr()
}

/// With FEAT_PAN (`ID_MMFR3.PAN`), an exception the hypervisor injects sets `CPSR.PAN`
/// when `SCTLR.SPAN` is 0 and leaves it clear when `SPAN` is 1, as the CPU does for the
/// exceptions it takes itself (Arm ARM `AArch32.EnterMode`).
fn pan_on_entry() {
    let (mmfr3, sctlr): (u32, u32);
    // SAFETY: ID_MMFR3 (TID3) and SCTLR reads.
    unsafe {
        asm!("mrc p15, 0, {}, c0, c1, 7", "mrc p15, 0, {}, c1, c0, 0",
             out(reg) mmfr3, out(reg) sctlr, options(nomem, nostack))
    };
    if (mmfr3 >> ID_MMFR3_PAN_SHIFT) & 0xf == 0 {
        ok("PSTATE.PAN on injected exception entry: no FEAT_PAN, nothing to check,");
        return;
    }
    // SPAN = 1 first: CPSR.PAN is clear now and stays so. (The handler returns with CPS,
    // which keeps CPSR.PAN: after the SPAN = 0 case it stays set.)
    let set = abort_entry_cpsr(sctlr | SCTLR_SPAN);
    check(set & CPSR_PAN == 0, "CPSR.PAN set with SCTLR.SPAN = 1", set);
    let cleared = abort_entry_cpsr(sctlr & !SCTLR_SPAN);
    check(
        cleared & CPSR_PAN != 0,
        "CPSR.PAN not set with SCTLR.SPAN = 0",
        cleared,
    );
    // SAFETY: SETPAN #0 (FEAT_PAN, present): privileged accesses as before the check.
    unsafe { asm!(".inst 0xf1100000", options(nomem, nostack)) };
    ok("PSTATE.PAN on injected exception entry follows SCTLR.SPAN");
}

/// MMIO without a valid syndrome (`ESR_EL2.ISV` = 0), decoded by the hypervisor: an A32
/// post-indexed LDR of `GICD_CTLR` and a T32 `LDM r0!, {r1}` of `GICD_TYPER`.
fn no_syndrome() {
    let (base_after, typer, end): (u32, u32, u32);
    // SAFETY: reads two distributor registers; switches to T32 and back.
    unsafe {
        asm!(
            "mov r0, #0x08000000",
            "ldr r1, [r0], #4",
            "mov r4, r0",
            "adr r5, 2f + 1",
            "bx r5",
            ".thumb",
            "2:",
            "ldm r0!, {{r1}}",
            "adr r5, 3f",
            "bx r5",
            ".arm",
            ".balign 4",
            "3:",
            out("r0") end,
            out("r1") typer,
            out("r4") base_after,
            out("r5") _,
            options(nostack),
        )
    };
    check(
        base_after == 0x0800_0004,
        "A32 LDR post-index writeback",
        base_after,
    );
    check(end == 0x0800_0008, "T32 LDM writeback", end);
    // GICD_TYPER.ITLinesNumber [4:0]: at least one group of SPIs.
    check(typer & 0x1f != 0, "GICD_TYPER through LDM", typer);
    ok("MMIO without syndrome (A32 LDR post-index, T32 LDM)");
}

/// Enables VFP (CPACR cp10/cp11, FPEXC.EN) and leaves 1.5 + 1.5 in d1; returns its bits.
fn vfp_set() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: enables VFP for this guest and uses d0/d1 (no Rust code uses VFP registers:
    // the target is soft-float).
    unsafe {
        asm!(
            ".fpu vfpv3",
            "mrc p15, 0, {t}, c1, c0, 2",
            "orr {t}, {t}, #(0xf << 20)",
            "mcr p15, 0, {t}, c1, c0, 2",
            "isb",
            "mov {t}, #0x40000000",
            "vmsr fpexc, {t}",
            "mov {t}, #0",
            "movw {h}, #0",
            "movt {h}, #0x3ff8",
            "vmov d0, {t}, {h}",
            "vadd.f64 d1, d0, d0",
            "vmov {t}, {h}, d1",
            t = out(reg) lo,
            h = out(reg) hi,
            options(nomem, nostack),
        )
    };
    let d = (u64::from(hi) << 32) | u64::from(lo);
    // 3.0
    check(d == 0x4008_0000_0000_0000, "VFP 1.5 + 1.5", hi);
    ok("VFP enabled (lazy FP trap, FPEXC32)");
    d
}

/// After exits that put the vCPU: d1 and FPEXC.EN must be as left.
fn vfp_check(expect: u64) {
    let (lo, hi, fpexc): (u32, u32, u32);
    // SAFETY: reads d1 and FPEXC.
    unsafe {
        asm!(
            ".fpu vfpv3",
            "vmov {l}, {h}, d1",
            "vmrs {f}, fpexc",
            l = out(reg) lo,
            h = out(reg) hi,
            f = out(reg) fpexc,
            options(nomem, nostack),
        )
    };
    let d = (u64::from(hi) << 32) | u64::from(lo);
    check(d == expect, "d1 lost across WFI", hi);
    check(fpexc & (1 << 30) != 0, "FPEXC.EN lost across WFI", fpexc);
    ok("VFP state kept across WFI (vcpu_put/vcpu_load)");
}

/// Arms the virtual timer `ticks` from now (`CNTV_TVAL`, `CNTV_CTL.ENABLE`).
fn arm_timer(ticks: u32) {
    // SAFETY: the guest's own virtual timer.
    unsafe {
        asm!(
            "mcr p15, 0, {t}, c14, c3, 0",
            "mcr p15, 0, {one}, c14, c3, 1",
            "isb",
            t = in(reg) ticks,
            one = in(reg) 1u32,
            options(nomem, nostack),
        )
    };
}

fn stop_timer() {
    // SAFETY: the guest's own virtual timer.
    unsafe { asm!("mcr p15, 0, {}, c14, c3, 1", "isb", in(reg) 0u32, options(nomem, nostack)) };
}

fn counter() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: CNTVCT read.
    unsafe {
        asm!("isb", "mrrc p15, 1, {}, {}, c14", out(reg) lo, out(reg) hi, options(nomem, nostack))
    };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Waits in WFI (IRQs masked) for the virtual timer's interrupt and acknowledges it.
fn timer_wfi(v: gic::Version) {
    gic::enable(v, VTIMER_INTID);
    let freq: u32;
    // SAFETY: CNTFRQ read.
    unsafe { asm!("mrc p15, 0, {}, c14, c0, 0", out(reg) freq, options(nomem, nostack)) };
    let ticks = freq / 100; // 10 ms
    let start = counter();
    arm_timer(ticks);
    let mut got = SPURIOUS;
    for _ in 0..1000 {
        // SAFETY: waits for an interrupt (masked: WFI still wakes on it).
        unsafe { asm!("wfi", options(nomem, nostack)) };
        got = gic::ack(v);
        if got != SPURIOUS {
            break;
        }
    }
    let waited = counter() - start;
    stop_timer();
    check(got == VTIMER_INTID, "WFI woke without the timer's PPI", got);
    gic::eoi(v, got);
    check(
        waited >= u64::from(ticks),
        "woke before the timer expired",
        waited as u32,
    );
    puts("armv7-hello: GICv");
    puts(if v == gic::Version::V3 { "3" } else { "2" });
    puts(", waited ");
    puthex(waited as u32);
    puts(" ticks\n");
    ok("WFI on the virtual timer's interrupt");
}

/// The GIC version for the IRQ handler (set before IRQs are unmasked; 0 = v2, 1 = v3).
static mut IRQ_GIC_V3: bool = false;
/// Virtual-timer IRQs the handler took.
static mut TIMER_IRQS: u32 = 0;
/// The instruction the (last) virtual-timer IRQ interrupted.
static mut TIMER_IRQ_PC: u32 = 0;

/// The IRQ exception handler (`rt.rs` `irq_entry`, `pc` = the interrupted instruction):
/// acknowledges the interrupt; the virtual timer's is counted (with `pc`) and the timer
/// stopped; every one is ended.
#[no_mangle]
extern "C" fn irq_handler(pc: u32) {
    // SAFETY: written before IRQs were unmasked; one CPU.
    let v = if unsafe { core::ptr::read_volatile(core::ptr::addr_of!(IRQ_GIC_V3)) } {
        gic::Version::V3
    } else {
        gic::Version::V2
    };
    let got = gic::ack(v);
    if got == VTIMER_INTID {
        stop_timer();
        // SAFETY: only this handler writes them; the interrupted code only reads them.
        unsafe {
            *core::ptr::addr_of_mut!(TIMER_IRQ_PC) = pc;
            *core::ptr::addr_of_mut!(TIMER_IRQS) += 1;
        }
    }
    if got != SPURIOUS {
        gic::eoi(v, got);
    }
}

/// Takes the virtual timer's interrupt as an IRQ exception while spinning in a loop that
/// only reads memory (under the DBT: a linked, translated loop, interrupted at a block
/// boundary), then returns to the loop.
fn timer_irq(v: gic::Version) {
    // SAFETY: one CPU; IRQs are still masked.
    unsafe { *core::ptr::addr_of_mut!(IRQ_GIC_V3) = v == gic::Version::V3 };
    let freq: u32;
    // SAFETY: CNTFRQ read.
    unsafe { asm!("mrc p15, 0, {}, c14, c0, 0", out(reg) freq, options(nomem, nostack)) };
    arm_timer(freq / 200); // 5 ms
    let (lo, hi): (u32, u32);
    // SAFETY: unmasks IRQs while spinning on TIMER_IRQS (the handler's counter), masks
    // them again; the loop gives up after 2^28 iterations.
    unsafe {
        asm!(
            "adr {lo}, 2f",
            "adr {hi}, 3f",
            "mov {n}, #0",
            "cpsie i",
            "2:",
            "add {n}, {n}, #1",
            "ldr {t}, [{p}]",
            "cmp {t}, #0",
            "bne 3f",
            "cmp {n}, #0x10000000",
            "bne 2b",
            "3:",
            "cpsid i",
            lo = out(reg) lo,
            hi = out(reg) hi,
            n = out(reg) _,
            t = out(reg) _,
            p = in(reg) core::ptr::addr_of!(TIMER_IRQS),
            options(nostack),
        )
    };
    // SAFETY: IRQs are masked again.
    let (taken, pc) = unsafe {
        (
            core::ptr::read_volatile(core::ptr::addr_of!(TIMER_IRQS)),
            core::ptr::read_volatile(core::ptr::addr_of!(TIMER_IRQ_PC)),
        )
    };
    check(taken == 1, "virtual timer IRQ exceptions taken", taken);
    check((lo..hi).contains(&pc), "IRQ taken outside the loop at", pc);
    ok("IRQ exception from the virtual timer in a spinning loop");
}

/// In T32: a 32-bit MRC (trapped) and a 16-bit WFI (trapped, `ESR_EL2.IL` = 0) with the
/// timer's interrupt already pending, followed by a 16-bit ADDS that must run exactly once.
fn thumb_wfi(v: gic::Version) {
    arm_timer(0);
    let (pfr0, count): (u32, u32);
    // SAFETY: switches to T32 and back; uses only the named registers.
    unsafe {
        asm!(
            "mov r4, #0",
            "adr r5, 2f + 1",
            "bx r5",
            ".thumb",
            "2:",
            "mrc p15, 0, r3, c0, c1, 0",
            "wfi",
            "adds r4, #1",
            "adr r5, 3f",
            "bx r5",
            ".arm",
            ".balign 4",
            "3:",
            out("r4") count,
            out("r5") _,
            out("r3") pfr0,
            options(nomem, nostack),
        )
    };
    stop_timer();
    let got = gic::ack(v);
    if got != SPURIOUS {
        gic::eoi(v, got);
    }
    check(pfr0 & 0xf == 1, "T32 MRC of ID_PFR0", pfr0);
    check(count == 1, "16-bit T32 WFI stepped wrongly", count);
    ok("T32: MRC and 16-bit WFI (PC += 2)");
}
