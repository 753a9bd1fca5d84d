//! VFP and Advanced SIMD: a double-precision dot product (VLDR, VFMA.F64) over two
//! 4096-element vectors, 64 times, and a NEON checksum (VLD1.8 of 32 bytes, VADD.I32,
//! VEOR) over 64 KiB, 64 times (the loops: `part1_loops.rs`, shared with
//! `guests/armv7-dbtbench`).
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

#[path = "../part1_loops.rs"]
mod loops;

#[no_mangle]
extern "C" fn guest_main() {
    let mut rng = rt::Rng(0x0f1e_2d3c);
    loops::vfp_fill(|| rng.next());
    rt::report("vfp", loops::vfp());
}
