//! A toy host embedding vtimer.
//!
//! The host (`host.rs`) owns a fake system counter and one vCPU. It creates the VM's
//! `VmCounter`, answers the guest's trapped `CNTP_*` accesses (decoded from their `ESR_EL2`
//! syndrome, `trap.rs`) from a `PhysTimer`, keeps the guest's virtual timer as `vcpu_put`
//! would save it, computes the wake deadline of a vCPU in `WFI`, and shows each timer
//! firing as a PPI level change. Every result is checked.
//!
//! Run with `cargo run -p vtimer --example embed`.

mod host;
mod trap;

use host::{ms, FakeCounter, Lines, ToyHost, TICKS_PER_MS};
use trap::{iss, SysReg, CNTP_CTL_EL0, CNTP_CVAL_EL0, CNTP_TVAL_EL0, IMPDEF_S3_1_C15_C2_0};
use vtimer::{CTL_ENABLE, CTL_IMASK, CTL_ISTATUS};

/// How long the host has been up when it creates the VM.
const HOST_UPTIME_MS: u64 = 2_000;
/// How long the guest boots before it programs its timers.
const GUEST_BOOT_MS: u64 = 1;
/// The guest's physical-timer period (written as `CNTP_TVAL_EL0`).
const PTIMER_MS: u64 = 10;
/// How long the guest works before it polls the physical timer.
const POLL_AFTER_MS: u64 = 2;
/// The guest's virtual-timer period (written as an absolute `CNTV_CVAL_EL0`).
const VTIMER_MS: u64 = 25;
/// How late the guest's interrupt handler reads `CNTP_TVAL_EL0` after the expiry.
const HANDLER_LATENCY_TICKS: u64 = 500;

/// Prints what the guest executes, with a comment.
fn guest(insn: &str, comment: &str) {
    println!("[guest] {insn:<26} // {comment}");
}

/// The guest executes `MSR reg, Xrt` with `Xrt` = `value`; the access traps to the host.
fn guest_msr(host: &mut ToyHost, reg: SysReg, rt: u8, value: u64) {
    guest(
        &format!("msr {}, x{rt}", reg.name),
        &format!("x{rt} = {value:#x}"),
    );
    host.set_reg(rt, value);
    host.sysreg_trap(reg.name, iss(reg, rt, false));
}

/// The guest executes `MRS Xrt, reg`; the access traps to the host. Returns what the guest
/// reads.
fn guest_mrs(host: &mut ToyHost, reg: SysReg, rt: u8) -> u64 {
    guest(&format!("mrs x{rt}, {}", reg.name), "trapped");
    host.sysreg_trap(reg.name, iss(reg, rt, true));
    host.reg(rt)
}

fn main() {
    let created_at = HOST_UPTIME_MS * TICKS_PER_MS;
    let mut host = ToyHost::create_vm(FakeCounter::new(created_at));
    println!(
        "VM created at CNTPCT = {created_at:#x}: CNTVOFF_EL2 = {:#x}",
        host.vm.cntvoff
    );
    assert_eq!(
        host.virtual_now(),
        0,
        "the VM's virtual counter must start at zero"
    );

    host.counter.advance(GUEST_BOOT_MS * TICKS_PER_MS);
    let booted = host.virtual_now();
    let comment = format!("not trapped: {booted:#x} = {} ms", ms(booted));
    guest("mrs x0, cntvct_el0", &comment);
    assert_eq!(
        booted,
        GUEST_BOOT_MS * TICKS_PER_MS,
        "virtual counter = CNTPCT - CNTVOFF"
    );

    println!("\n-- the guest arms its physical timer (trapped: CNTHCTL_EL2.EL1PCEN = 0)");
    let ptimer_due = host.counter.now() + PTIMER_MS * TICKS_PER_MS;
    guest_msr(&mut host, CNTP_TVAL_EL0, 0, PTIMER_MS * TICKS_PER_MS);
    guest_msr(&mut host, CNTP_CTL_EL0, 1, CTL_ENABLE);
    assert_eq!(
        host.ptimer.state().cval,
        ptimer_due,
        "a TVAL write must set CVAL = now + TVAL"
    );
    let ctl = guest_mrs(&mut host, CNTP_CTL_EL0, 2);
    assert_eq!(
        ctl, CTL_ENABLE,
        "CNTP_CTL before the deadline: enabled, ISTATUS clear"
    );
    host.counter.advance(POLL_AFTER_MS * TICKS_PER_MS);
    let tval = guest_mrs(&mut host, CNTP_TVAL_EL0, 3);
    assert_eq!(
        tval,
        (PTIMER_MS - POLL_AFTER_MS) * TICKS_PER_MS,
        "TVAL counts down"
    );

    println!("\n-- the guest arms its virtual timer (direct: saved by vcpu_put)");
    let vtimer_due = host.virtual_now() + VTIMER_MS * TICKS_PER_MS;
    guest(
        "msr cntv_cval_el0, x4",
        &format!("x4 = {vtimer_due:#x}, virtual time"),
    );
    guest("msr cntv_ctl_el0, x1", "x1 = ENABLE");
    host.guest_sets_vtimer(CTL_ENABLE, vtimer_due);

    println!("\n-- WFI: the physical timer is due first");
    guest("wfi", "trapped: HCR_EL2.TWI");
    assert_eq!(
        host.wfi(),
        Some(ptimer_due),
        "first wake-up: the physical timer's CVAL"
    );
    assert_eq!(
        host.lines,
        Lines {
            virt: false,
            phys: true
        },
        "PPI 30 asserted, 27 not"
    );
    let ctl = guest_mrs(&mut host, CNTP_CTL_EL0, 2);
    assert_eq!(
        ctl,
        CTL_ENABLE | CTL_ISTATUS,
        "CNTP_CTL at the deadline: ISTATUS set"
    );
    host.counter.advance(HANDLER_LATENCY_TICKS);
    let tval = guest_mrs(&mut host, CNTP_TVAL_EL0, 3) as u32 as i32;
    guest("", &format!("TVAL = {tval}: expired {} ticks ago", -tval));
    assert_eq!(
        i64::from(tval),
        -(HANDLER_LATENCY_TICKS as i64),
        "TVAL is signed after expiry"
    );
    guest_msr(&mut host, CNTP_CTL_EL0, 1, CTL_ENABLE | CTL_IMASK);
    assert_eq!(
        host.lines,
        Lines::default(),
        "masking the timer drops PPI 30"
    );

    println!("\n-- WFI: now the virtual timer");
    guest("wfi", "trapped: HCR_EL2.TWI");
    let vtimer_due_physical = host.vm.cntvoff + vtimer_due;
    assert_eq!(
        host.wfi(),
        Some(vtimer_due_physical),
        "second wake-up: CNTV_CVAL + CNTVOFF"
    );
    assert_eq!(
        host.lines,
        Lines {
            virt: true,
            phys: false
        },
        "PPI 27 asserted, 30 not"
    );
    guest(
        "msr cntv_ctl_el0, xzr",
        "the handler disables the virtual timer",
    );
    host.guest_sets_vtimer(0, vtimer_due);
    assert_eq!(
        host.lines,
        Lines::default(),
        "disabling the virtual timer drops PPI 27"
    );

    println!("\n-- a virtual compare value past the end of the physical counter never fires");
    guest_msr(&mut host, CNTP_CTL_EL0, 1, 0);
    guest("msr cntv_cval_el0, x4", &format!("x4 = {:#x}", u64::MAX));
    guest("msr cntv_ctl_el0, x1", "x1 = ENABLE");
    host.guest_sets_vtimer(CTL_ENABLE, u64::MAX);
    guest("wfi", "trapped: HCR_EL2.TWI");
    assert_eq!(
        host.wfi(),
        None,
        "no deadline: the host must not wake the vCPU at once"
    );

    println!("\n-- a trapped register that is not a timer register");
    guest_msr(&mut host, IMPDEF_S3_1_C15_C2_0, 5, 1);
    assert_eq!(
        host.undefined, 1,
        "a non-timer register must get an UNDEFINED exception"
    );
    let cval = guest_mrs(&mut host, CNTP_CVAL_EL0, 6);
    assert_eq!(
        cval, ptimer_due,
        "the physical timer kept its compare value"
    );

    println!(
        "\nall checks passed: physical timer fired at {} ms, virtual timer at {} ms (VM time)",
        ms(ptimer_due - host.vm.cntvoff),
        ms(vtimer_due)
    );
}
