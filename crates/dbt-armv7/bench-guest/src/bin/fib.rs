//! Call-heavy: naive recursive Fibonacci (fib(25): 242785 calls and returns) and a
//! recursive tree walk through function pointers (indirect calls).
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

#[inline(never)]
fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(core::hint::black_box(n - 1)).wrapping_add(fib(n - 2))
    }
}

#[inline(never)]
fn even(n: u32) -> u32 {
    n & 1
}

type Op = fn(u32) -> u32;

#[inline(never)]
fn inc(x: u32) -> u32 {
    x.wrapping_add(1)
}
#[inline(never)]
fn dbl(x: u32) -> u32 {
    x.wrapping_mul(2)
}
#[inline(never)]
fn rot(x: u32) -> u32 {
    x.rotate_left(7)
}

#[no_mangle]
extern "C" fn guest_main() {
    let mut h = fib(core::hint::black_box(25));
    let ops: [Op; 3] = [inc, dbl, rot];
    let ops = core::hint::black_box(ops);
    for i in 0..100_000u32 {
        h = ops[(i % 3) as usize](h) ^ even(i);
    }
    rt::report("fib", h);
}
