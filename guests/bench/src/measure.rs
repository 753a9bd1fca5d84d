//! Timing loops: `CNTVCT_EL0` read between ISBs around `n` iterations of an operation, minus
//! the same loop with an empty body, converted to instructions.
//!
//! Under QEMU `-icount shift=0` virtual time advances 1 ns per executed instruction, so a
//! counter delta of `t` ticks at `CNTFRQ_EL0` = `f` Hz is `t * 1e9 / f` instructions (16 per
//! tick at QEMU's 62.5 MHz). Without `-icount` the same numbers are nanoseconds of host time.

use crate::exits;
use core::arch::asm;

pub use guest_rt::timer::stamp;

/// Counter ticks `n` calls of `op` take, loop overhead included.
#[inline(always)]
pub fn ticks(n: u64, mut op: impl FnMut()) -> u64 {
    let start = stamp();
    for _ in 0..n {
        op();
    }
    stamp() - start
}

/// Counter ticks of `n` iterations of the empty loop (the baseline subtracted from every op).
#[inline(never)]
pub fn baseline(n: u64) -> u64 {
    // SAFETY: an empty asm block; it only keeps the loop from being optimised away.
    ticks(n, || unsafe { asm!("", options(nostack)) })
}

/// Tenths of an instruction per operation for `delta` ticks over `n` operations at `freq` Hz.
pub fn tenths_per_op(delta: u64, n: u64, freq: u64) -> u64 {
    let num = u128::from(delta) * 10_000_000_000;
    let den = u128::from(freq.max(1)) * u128::from(n.max(1));
    ((num + den / 2) / den) as u64
}

/// Prints `bench: <op> <instructions per op>` with one decimal.
pub fn report(op: &str, tenths: u64) {
    guest_rt::println!("bench: {} {}.{}", op, tenths / 10, tenths % 10);
}

/// Times `n` calls of `op`, subtracts the baseline loop and prints the result for `name`
/// (without exit attribution: for `vm-switch-pair`, whose timed region includes the other
/// VM's work, so extra hypercalls there would change the number).
#[inline(always)]
pub fn run_timed_only(name: &str, n: u64, freq: u64, op: impl FnMut()) {
    let t = ticks(n, op);
    let base = baseline(n);
    report(name, tenths_per_op(t.saturating_sub(base), n, freq));
}

/// Times `n` calls of `op`, subtracts the baseline loop and prints the result for `name`,
/// then the exits per call (read outside the timed region; see [`exits`]).
#[inline(always)]
pub fn run(name: &str, n: u64, freq: u64, op: impl FnMut()) {
    let before = exits::snapshot();
    let t = ticks(n, op);
    let after = exits::snapshot();
    let base = baseline(n);
    report(name, tenths_per_op(t.saturating_sub(base), n, freq));
    exits::report(name, exits::delta(before, after), n);
}
