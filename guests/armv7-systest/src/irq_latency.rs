//! Interrupt latency during a compute loop (issues 17/18): the virtual timer (`CNTV`, PPI
//! 27) is set to fire while the CPU runs a tight loop that neither calls nor exits (a
//! counter and a load of a flag that only the IRQ handler sets); the handler reads the
//! loop's counter from the interrupted registers. The loop's speed comes from two runs
//! without the timer (`CAL_SHORT` and `CAL_LONG` iterations, timed with `CNTVCT`: their
//! difference cancels the set-up), which gives the iteration the loop had reached at the
//! deadline; the handler must see the loop at most [`MAX_LATE`] guest instructions past
//! it, in each of [`DEADLINES`]. Natively the IRQ is taken at the next instruction;
//! under the DBT the vGIC's virtual IRQ makes translated code leave at its next budget
//! check (`guests/dbt-runtime/src/irq.rs`), while before it waited for the end of the
//! runtime's slice (up to 250 000 guest instructions).
//!
//! Runs only on a machine with a device tree (the GIC and the timer of QEMU `virt`), after
//! [`crate::smp::test_smp`] has found the GIC's version; prints one line.

use core::arch::{asm, global_asm};
use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};

use crate::smp::gic;
use crate::uart::{puthex, puts};

global_asm!(
    r#"
    .text
    .arm
    .balign 64
    .global latency_loop
@ r0 = iteration limit, r1 = address of the flag: counts in r4 until the flag is non-zero
@ or the limit is reached (5 instructions an iteration); returns the count.
latency_loop:
    push {{r4, lr}}
    mov r4, #0
1:  add r4, r4, #1
    cmp r4, r0
    beq 2f
    ldr r2, [r1]
    cmp r2, #0
    beq 1b
2:  mov r0, r4
    pop {{r4, pc}}
"#
);

extern "C" {
    fn latency_loop(limit: u32, flag: *const u32) -> u32;
}

/// Guest instructions per iteration of `latency_loop`.
const INSNS_PER_ITERATION: i64 = 5;
/// The virtual timer's interrupt (PPI 11).
const TIMER_INTID: u32 = 27;
/// Timer deadlines, in counter ticks after the loop's start (62.5 MHz: 64-144 us).
const DEADLINES: [u64; 3] = [4001, 6007, 9013];
/// The furthest the loop may have run past a deadline when the handler sees it (the
/// estimate of where it was at the deadline is off by up to ~1 700 under the DBT with
/// `-icount`: the runtime's slice ends in the timing runs; a few natively).
const MAX_LATE: i64 = 4000;
/// Iterations of the two timing runs.
const CAL_SHORT: u32 = 4000;
const CAL_LONG: u32 = 20_000;
/// The loop's limit while the timer is armed: far beyond any deadline.
const LIMIT: u32 = 20_000_000;

/// Set while a deadline is armed: the IRQ handler then takes the timer's interrupt.
static mut ARMED: u32 = 0;
/// Set by the handler: the timer's interrupt came.
static mut FIRED: u32 = 0;
/// The loop's counter (r4) when the interrupt came.
static mut AT_IRQ: u32 = 0;

fn cntvct() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: CNTVCT read (MRRC p15, 1, <lo>, <hi>, c14).
    unsafe { asm!("isb", "mrrc p15, 1, {}, {}, c14", out(reg) lo, out(reg) hi, options(nostack)) };
    (hi as u64) << 32 | lo as u64
}

/// Sets `CNTV_CVAL` to `at` and `CNTV_CTL` to `ctl` (1: enabled, interrupt unmasked).
fn set_timer(at: u64, ctl: u32) {
    // SAFETY: CNTV_CVAL (MCRR p15, 3, <lo>, <hi>, c14) and CNTV_CTL (MCR p15, 0, <r>, c14,
    // c3, 1) writes: the virtual timer is this check's alone.
    unsafe {
        asm!(
            "mcrr p15, 3, {lo}, {hi}, c14",
            "mcr p15, 0, {ctl}, c14, c3, 1",
            "isb",
            lo = in(reg) at as u32, hi = in(reg) (at >> 32) as u32, ctl = in(reg) ctl,
            options(nostack),
        )
    };
}

/// The IRQ exception while a deadline is armed (`frame`: r0-r12 of the interrupted code,
/// as `exc_handler` has it): records the loop's counter and stops the timer. Returns
/// false (nothing done) when no deadline is armed.
pub fn irq(frame: *const u32) -> bool {
    // SAFETY: single-CPU statics shared with the code this IRQ interrupted.
    if unsafe { read_volatile(addr_of!(ARMED)) } == 0 {
        return false;
    }
    let iar = gic::ack();
    if iar & 0x3ff == TIMER_INTID {
        set_timer(0, 0);
        // SAFETY: as above; `frame` holds the interrupted r0-r12 (r4: the loop's counter).
        unsafe {
            write_volatile(addr_of_mut!(AT_IRQ), read_volatile(frame.add(4)));
            write_volatile(addr_of_mut!(FIRED), 1);
        }
    }
    if iar & 0x3ff < 1020 {
        gic::eoi(iar);
    }
    true
}

/// Never set: the flag of the timing runs.
static NEVER: u32 = 0;

/// Runs the loop up to `limit` iterations (or until `flag` is set) with the timer set to
/// `delta` ticks after the start and enabled with `ctl`, IRQs unmasked: the same code for
/// the timing runs and the armed ones, so both pay the same set-up. Returns the ticks from
/// the start to the loop's end and the iterations it ran.
#[inline(never)]
fn run(delta: u64, ctl: u32, limit: u32, flag: *const u32) -> (u64, u32) {
    let t0 = cntvct();
    set_timer(t0 + delta, ctl);
    // SAFETY: IRQs unmasked around a plain loop over `flag`, which only the IRQ handler
    // sets (when the timer is armed); the handler stops the timer.
    let n = unsafe {
        asm!("cpsie i", options(nostack));
        let n = latency_loop(limit, flag);
        asm!("cpsid i", options(nostack));
        n
    };
    (cntvct() - t0, n)
}

/// One deadline `delta` ticks after the start: how many guest instructions past it the
/// handler saw the loop (`None`: the interrupt never came), given the timing runs' ticks.
fn late_by(delta: u64, short: u64, long: u64) -> Option<i64> {
    // SAFETY: single-CPU statics; the handler runs only inside `run`.
    unsafe {
        write_volatile(addr_of_mut!(FIRED), 0);
        write_volatile(addr_of_mut!(ARMED), 1);
    }
    run(delta, 1, LIMIT, addr_of!(FIRED));
    set_timer(0, 0);
    // SAFETY: as above.
    let (fired, at_irq) = unsafe {
        write_volatile(addr_of_mut!(ARMED), 0);
        (
            read_volatile(addr_of!(FIRED)),
            read_volatile(addr_of!(AT_IRQ)),
        )
    };
    if fired == 0 {
        return None;
    }
    // The loop's speed and set-up from the timing runs: ticks(n) = setup + n / speed.
    let (dn, dt) = ((CAL_LONG - CAL_SHORT) as i64, (long - short) as i64);
    let at_deadline = (dn * (delta as i64 - short as i64) + CAL_SHORT as i64 * dt) / dt;
    Some((at_irq as i64 - at_deadline) * INSNS_PER_ITERATION)
}

/// The check; `dtb` is r2 at entry.
pub fn test_irq_latency(dtb: u32, check: fn(&str, bool)) {
    // SAFETY: r2 at entry: the device tree under QEMU and the hypervisor (in RAM); in the
    // interpreter test a zeroed word of its RAM.
    if dtb & 3 != 0 || unsafe { read_volatile(dtb as *const u32) } != 0xedfe_0dd0 {
        return;
    }
    gic::enable(0, 1 << TIMER_INTID);
    // The first run translates the loop (under the DBT); the next two time it.
    run(DEADLINES[0], 0, CAL_SHORT, &NEVER);
    let short = run(DEADLINES[0], 0, CAL_SHORT, &NEVER).0;
    let long = run(DEADLINES[0], 0, CAL_LONG, &NEVER).0;
    let lates = DEADLINES.map(|d| late_by(d, short, long));
    let ok = long > short
        && lates
            .iter()
            .all(|l| l.is_some_and(|l| (-MAX_LATE..=MAX_LATE).contains(&l)));
    if !ok {
        puts("armv7-systest: irq latency: timing ticks");
        for v in [short, long] {
            puts(" ");
            puthex(v as u32);
        }
        puts(", guest instructions past each deadline (ffffffff: no interrupt)");
        for l in lates {
            puts(" ");
            puthex(l.map_or(u32::MAX, |l| l as u32));
        }
        puts("\n");
    }
    check(
        "timer irq during a compute loop taken within 4000 guest instructions of its deadline",
        ok,
    );
}
