//! 96 x 96 integer matrix multiply (the loop: `part1_loops.rs`, shared with
//! `guests/armv7-dbtbench`).
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

#[path = "../part1_loops.rs"]
mod loops;

#[no_mangle]
extern "C" fn guest_main() {
    let mut rng = rt::Rng(0x0bad_cafe);
    loops::matmul_fill(|| rng.next());
    rt::report("matmul", loops::matmul());
}
