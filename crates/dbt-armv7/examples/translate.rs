//! Translates one guest block of a raw ARMv7 image with the A64 back end, on any build
//! host, and writes the host code to a file, for reading what a block becomes:
//!
//! ```text
//! cargo run -p dbt-armv7 --example translate -- IMAGE.bin 0x40010000 0x40010414 [t32] > /dev/null
//! llvm-objcopy -I binary -O elf64-littleaarch64 block.bin block.o
//! llvm-objdump -D --triple=aarch64 block.o
//! ```
//!
//! `IMAGE.bin` is loaded at the base address (MMU off, privileged, FP enabled); the block
//! starts at the PC. It prints the guest instructions with the offset of each one's host
//! code and writes the code (placed after the runtime's prologue and epilogue, whose
//! offsets it prints: exit stubs branch there) to `block.bin`.

use dbt_armv7::translate::{frontend, A64Gen, CodeGen, Key};
use dbt_armv7::FlatRam;

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("a hexadecimal number")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [image, base, pc, rest @ ..] = &args[..] else {
        eprintln!("usage: translate IMAGE.bin BASE PC [t32]");
        std::process::exit(2);
    };
    let bytes = std::fs::read(image).expect("reading the image");
    let base = hex(base);
    let mut ram = FlatRam::new(base, bytes.len().next_multiple_of(0x1000) + 0x1000);
    ram.load(base, &bytes);
    let gen = A64Gen::new();
    let (runtime, rt) = gen.runtime();
    let key = Key {
        pc: hex(pc) as u32,
        thumb: rest.first().is_some_and(|s| s == "t32"),
        privileged: true,
        asid: 0,
        fp: true,
    };
    let block = frontend::discover(key, &mut ram, &gen);
    let host = gen.translate(&block, runtime.len(), &rt);
    println!(
        "prologue at {:#x}, epilogue at {:#x}, block at {:#x}: {} guest instructions, {} host instructions ({:?})",
        rt.prologue,
        rt.epilogue,
        runtime.len(),
        block.insns.len(),
        host.code.len() / 4,
        block.end
    );
    for (g, start) in block.insns.iter().zip(&host.insn_starts) {
        println!("  {:08x}: {:08x} at +{start:#x}", g.pc, g.insn.raw);
    }
    std::fs::write("block.bin", &host.code).expect("writing block.bin");
}
