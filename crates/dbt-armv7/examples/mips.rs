//! Interpreter speed: runs compute loops (A32 and Thumb-2, MMU off and on) and prints
//! interpreted guest MIPS. `cargo run --release -p dbt-armv7 --example mips`

use dbt_armv7::cpu::psr;
use dbt_armv7::{Cpu, Exit, FlatRam, Mode};
use std::time::Instant;

/// Where the loop is loaded and starts.
const CODE: u64 = 0x8000;
/// Where the MMU's first-level translation table goes (16 KiB aligned).
const TTB: u64 = 0x10_0000;
/// 1 MiB sections identity-mapped with the MMU on: the first 2 MiB.
const SECTIONS: u32 = 2;
/// Short-descriptor section entry bits: type section (`0b10`), `AP[1:0]` = `0b11` (full
/// access), domain 0.
const SECTION_FULL_ACCESS: u32 = 0b10 | 0b11 << 10;
/// `DACR` with domain 0 as Manager (accesses are not permission-checked).
const DACR_D0_MANAGER: u32 = 0b11;
/// `SCTLR.M`: the MMU is enabled.
const SCTLR_M: u32 = 1 << 0;

/// A32: checksum loop over a 4 KiB buffer with loads, stores, ALU, multiply and branches.
const A32_LOOP: &[u32] = &[
    0xe3a00000, // mov r0, #0        (sum)
    0xe3a01a01, // mov r1, #0x1000   (buffer)
    0xe3a02b01, // mov r2, #0x400    (words)
    0xe3a03007, // mov r3, #7
    // loop:
    0xe4914004, // ldr r4, [r1], #4
    0xe0240394, // mla r4, r4, r3, r0
    0xe0200004, // eor r0, r0, r4
    0xe5014004, // str r4, [r1, #-4]
    0xe0800f60, // add r0, r0, r0, ror #30
    0xe2522001, // subs r2, r2, #1
    0x1afffff8, // bne loop
    0xe3a01a01, // mov r1, #0x1000
    0xe3a02b01, // mov r2, #0x400
    0xeafffff5, // b loop
];

/// Thumb-2: the same loop body.
const T32_LOOP: &[u16] = &[
    0x2000, // movs r0, #0
    0xf44f, 0x5180, // mov.w r1, #0x1000
    0xf44f, 0x6280, // mov.w r2, #0x400
    0x2307, // movs r3, #7
    // loop (offset 12)
    0xf851, 0x4b04, // ldr.w r4, [r1], #4
    0xfb04, 0x0403, // mla r4, r4, r3, r0
    0x4060, // eors r0, r4
    0xf841, 0x4c04, // str.w r4, [r1, #-4]
    0xeb00, 0x70b0, // add.w r0, r0, r0, ror #30
    0x3a01, // subs r2, #1
    0xd1f4, // bne loop
    0xf44f, 0x5180, // mov.w r1, #0x1000
    0xf44f, 0x6280, // mov.w r2, #0x400
    0xe7ef, // b loop
];

fn bench(name: &str, thumb: bool, mmu: bool, n: u64) -> f64 {
    let mut ram = FlatRam::new(0, 0x20_0000);
    let mut code = Vec::new();
    if thumb {
        for h in T32_LOOP {
            code.extend_from_slice(&h.to_le_bytes());
        }
    } else {
        for w in A32_LOOP {
            code.extend_from_slice(&w.to_le_bytes());
        }
    }
    ram.load(CODE, &code);
    let mut cpu = Cpu::new();
    if mmu {
        // identity map the first 2 MiB with 1 MiB sections (manager domain)
        for s in 0..SECTIONS {
            let entry = (s << 20) | SECTION_FULL_ACCESS;
            ram.load(TTB + 4 * u64::from(s), &entry.to_le_bytes());
        }
        cpu.cp15.ttbr0 = TTB;
        cpu.cp15.dacr = DACR_D0_MANAGER;
        cpu.cp15.sctlr |= SCTLR_M;
    }
    if thumb {
        cpu.set_cpsr(Mode::Svc as u32 | psr::A | psr::I | psr::F | psr::T);
    }
    cpu.set_pc(CODE as u32);
    let t = Instant::now();
    let e = cpu.run(&mut ram, n);
    let dt = t.elapsed().as_secs_f64();
    assert_eq!(
        e,
        Exit::Budget,
        "{name} stopped early at {:#x}",
        cpu.reg(15)
    );
    let mips = n as f64 / dt / 1e6;
    println!("{name:<24} {n} instructions in {dt:.3} s: {mips:.1} MIPS");
    mips
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000_000);
    let a = bench("A32, MMU off", false, false, n);
    let b = bench("A32, MMU on (sections)", false, true, n);
    let c = bench("Thumb-2, MMU off", true, false, n);
    let d = bench("Thumb-2, MMU on", true, true, n);
    println!("mean: {:.1} MIPS", (a + b + c + d) / 4.0);
}
