//! `--fuzz=N`: runs N chunks of 64 bytes of (random) guest code from the entry point, the
//! odd ones in Thumb state, each from pseudo-random registers (half of them pointing into
//! guest memory) for at most 1000 instructions, and counts the outcomes: the budget spent,
//! a system call, WFI, or an architectural exception by kind. A panic, or a host fault
//! outside translated code, ends the runner with a non-zero status instead.

use alloc::format;
use alloc::string::String;
use dbt_armv7::cpu::{psr, Exception};
use dbt_armv7::translate::{A64Gen, Dbt};
use dbt_armv7::{Cpu, Exit};

use crate::code::Code;
use crate::GuestMem;

/// Bytes of code per chunk.
const CHUNK: u32 = 64;
/// Instructions per chunk at most.
const BUDGET: u64 = 1000;
/// User mode.
const USR: u32 = 0x10;

/// Outcome counters, in the order they are printed.
const NAMES: [&str; 8] = [
    "budget",
    "svc",
    "wfi",
    "undefined",
    "data_abort",
    "prefetch_abort",
    "hvc_smc",
    "other",
];

fn outcome(e: &Exit) -> usize {
    match e {
        Exit::Budget => 0,
        Exit::Svc(_) | Exit::Exception(Exception::Svc(_)) => 1,
        Exit::Wfi => 2,
        Exit::Exception(Exception::Undefined) => 3,
        Exit::Exception(Exception::DataAbort { .. }) => 4,
        Exit::Exception(Exception::PrefetchAbort { .. }) => 5,
        Exit::Hvc(_) | Exit::Smc(_) => 6,
        _ => 7,
    }
}

/// Runs the chunks; returns the summary line.
pub fn run(
    chunks: u32,
    entry: u32,
    mem: &mut GuestMem,
    code: &mut Code,
    interp_only: bool,
) -> String {
    let mut dbt = Dbt::new(A64Gen::new());
    let mut counts = [0u64; 8];
    let mut seed: u32 = 0x2545_f491;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let (lo, span) = (mem.lo as u32, (mem.hi - mem.lo) as u32);
    // One CPU for every chunk (the runner's allocator never frees).
    let mut cpu = Cpu::new_user(false);
    cpu.set_exit_on_svc(true);
    cpu.set_exit_on_exception(true);
    for i in 0..chunks {
        let thumb = i % 2 == 1;
        for r in 0..15 {
            let v = rnd();
            cpu.set_reg(r, if v & 1 == 0 { lo + v % span } else { v });
        }
        let t = if thumb { psr::T } else { 0 };
        cpu.set_cpsr(rnd() & 0xf000_0000 | t | USR);
        cpu.set_pc(entry + CHUNK * i);
        let exit = if interp_only {
            cpu.run(mem, BUDGET)
        } else {
            dbt.run(&mut cpu, mem, code, BUDGET)
        };
        counts[outcome(&exit)] += 1;
    }
    let icount = cpu.icount;
    let s = dbt.stats();
    let mut line = format!("fuzz: chunks {chunks} icount {icount}");
    for (n, c) in NAMES.iter().zip(counts) {
        line.push_str(&format!(" {n} {c}"));
    }
    line.push_str(&format!(
        " translated {} interpreted {} blocks {} faults {} smc {}\n",
        s.executed_translated, s.executed_interpreted, s.blocks, s.faults, s.smc
    ));
    line
}
