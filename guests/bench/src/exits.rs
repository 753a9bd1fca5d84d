//! Exit attribution: `guest_rt::exit_count` (the hypervisor's vendor hypercall
//! `HV_EXIT_COUNT`) read before and after an operation's loop, outside the timed region,
//! gives the exits one operation costs. Natively QEMU's PSCI firmware answers NOT_SUPPORTED
//! and nothing is printed.

pub use guest_rt::exit_count::{delta, snapshot, Delta};

/// Prints `bench: <op> exits/op <reason>=<per op> ...` (reasons that do not round to 0.00,
/// two decimals; `0` when there are none), or nothing without the hypercall.
pub fn report(op: &str, d: Option<Delta>, n: u64) {
    if let Some(d) = d {
        guest_rt::println!("bench: {op} exits/op{}", d.per_op(n));
    }
}
