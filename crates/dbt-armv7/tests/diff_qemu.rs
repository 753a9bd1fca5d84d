//! Differential tests against Debian's `qemu-arm` user-mode emulator (package `qemu-user`).
//!
//! Each case sets r0-r14 and NZCVQ/GE from a table, runs a short A32 or Thumb-2 sequence,
//! then stores r0-r12, r14 and the CPSR flags and an 8 KiB scratch window to stdout with the
//! Linux `write` syscall. The same static ELF runs under `qemu-arm` and under our
//! interpreter (emulating `write`/`exit`), and the outputs are compared register for
//! register, flag for flag and byte for byte.
//!
//! Sequences are random (seeded, `DBT_DIFF_SEED`, count `DBT_DIFF_CASES`, default 2000)
//! plus the directed corpus in `tests/corpus/*.txt`. Random instructions come from the
//! whole encoding space, are patched to use the scratch base register, and are kept only
//! when our decoder classifies them as defined, predictable, user-level, non-branching,
//! and when they run without an exception.

mod common;

use common::harness::{
    build, random_regs, regs_pair, run_batch, scratch, Case, BASE, DST, END, REC, SCR, SRC,
};
use common::{qemu_arm, record_coverage, run_user, Rng};
use dbt_armv7::decode::{self, MemOff, Op};
use dbt_armv7::{Cpu, Exit, FlatRam, Insn};

/// Where the pre-filter runs candidate sequences.
const PROBE: u32 = 0x40000;

/// Whether a decoded instruction is usable in a user-level differential case.
fn acceptable(i: &Insn, thumb: bool, in_it: bool) -> bool {
    let f = i.info();
    if f.unpredictable || f.undefined || f.control_flow || f.sensitive {
        return false;
    }
    if matches!(
        i.op,
        Op::Setend { .. } | Op::It { .. } | Op::Vfp { .. } | Op::Bkpt { .. }
    ) {
        return false;
    }
    if in_it && i.len == 2 && i.raw & 0xffc0 == 0 {
        return false; // MOVS Rd, Rm inside IT: UNPREDICTABLE
    }
    let (base, idx) = regs_pair(thumb);
    let mut writes = f.writes;
    let ok_off = |off: MemOff, wback: bool| match off {
        MemOff::Imm(i) => i <= if wback { 64 } else { 1000 },
        MemOff::Reg { rm, amount, .. } => rm == idx && amount <= 4 && !wback,
    };
    match i.op {
        Op::Mem { addr, load, .. } | Op::MemDual { addr, load, .. } => {
            if addr.rn == base {
                if !ok_off(addr.off, addr.wback) {
                    return false;
                }
                if addr.wback {
                    writes &= !(1 << base);
                }
            } else if addr.rn == 15 {
                if !load {
                    return false;
                }
            } else if addr.rn == 13 {
                if addr.wback || !matches!(addr.off, MemOff::Imm(i) if i <= 1020) || !addr.add {
                    return false;
                }
            } else {
                return false;
            }
        }
        Op::Ldrex { rn, .. } | Op::Strex { rn, .. } | Op::Swp { rn, .. } => {
            if rn != base {
                return false;
            }
        }
        Op::Multi { rn, wback, .. } => {
            if rn != base {
                return false;
            }
            if wback {
                writes &= !(1 << base);
            }
        }
        Op::Tb { .. } => return false,
        _ => {
            if f.memory {
                return false;
            }
        }
    }
    writes & (1 << 13 | 1 << 15 | 1 << base | 1 << idx) == 0
}

/// Points the base/index register fields of a memory instruction at the scratch registers.
fn patch_mem(raw: u32, i: &Insn, thumb: bool) -> u32 {
    let (base, idx) = regs_pair(thumb);
    let (base, idx) = (base as u32, idx as u32);
    if !i.info().memory {
        return raw;
    }
    if !thumb {
        return (raw & !0x000f_000f) | base << 16 | idx;
    }
    if i.len == 4 {
        return (raw & !0x000f_000f) | base << 16 | idx;
    }
    match raw >> 12 {
        0b0101 => (raw & !0x1f8) | idx << 6 | base << 3,
        0b0110..=0b1000 => (raw & !0x38) | base << 3,
        0b1100 => (raw & !0x700) | base << 8,
        _ => raw,
    }
}

fn random_insn(rng: &mut Rng, thumb: bool, in_it: bool) -> Vec<u32> {
    for _ in 0..10_000 {
        let (raw, insn) = if thumb {
            if rng.below(2) == 0 {
                let hw = rng.below(0xe800);
                (hw, decode::t16::decode(hw as u16))
            } else {
                let hw1 = 0xe800 + rng.below(0x1800);
                let w = hw1 << 16 | rng.below(0x10000);
                (w, decode::t32::decode(hw1 as u16, w as u16))
            }
        } else {
            let cond = if rng.below(4) == 0 { rng.below(14) } else { 14 };
            let w = cond << 28 | (rng.u32() & 0x0fff_ffff);
            (w, decode::decode_a32(w))
        };
        let raw2 = patch_mem(raw, &insn, thumb);
        let insn = if raw2 == raw {
            insn
        } else if thumb && insn.len == 2 {
            decode::t16::decode(raw2 as u16)
        } else if thumb {
            decode::t32::decode((raw2 >> 16) as u16, raw2 as u16)
        } else {
            decode::decode_a32(raw2)
        };
        if acceptable(&insn, thumb, in_it) {
            return if !thumb {
                vec![raw2]
            } else if insn.len == 2 {
                vec![raw2 & 0xffff]
            } else {
                vec![raw2 >> 16, raw2 & 0xffff]
            };
        }
    }
    panic!("no acceptable instruction found");
}

fn random_code(rng: &mut Rng, thumb: bool) -> Vec<u32> {
    let n = 1 + rng.below(10);
    let mut code = Vec::new();
    let mut k = 0;
    while k < n {
        if thumb && rng.below(6) == 0 {
            // an IT block
            let firstcond = rng.below(14);
            let mask = 1 + rng.below(15);
            let count = 4 - mask.trailing_zeros();
            code.push(0xbf00 | firstcond << 4 | mask);
            for _ in 0..count {
                code.extend(random_insn(rng, true, true));
            }
            k += count + 1;
        } else {
            code.extend(random_insn(rng, thumb, false));
            k += 1;
        }
    }
    code
}

/// Runs a case's sequence alone in the interpreter; `Err` if it raises an exception.
fn probe(ram: &mut FlatRam, c: &Case) -> Result<(), String> {
    let src = ram.mem[(SRC - BASE) as usize..(SRC - BASE + SCR) as usize].to_vec();
    ram.load(DST as u64, &src);
    let bytes = c.bytes();
    ram.load(PROBE as u64, &bytes);
    let end = PROBE + bytes.len() as u32;
    let mut cpu = Cpu::new_user(c.thumb);
    cpu.set_exit_on_exception(true);
    for r in 0..15 {
        cpu.set_reg(r, c.regs[r]);
    }
    cpu.set_cpsr(0x10 | (c.regs[15] & 0xf80f_0000) | if c.thumb { 1 << 5 } else { 0 });
    cpu.set_pc(PROBE);
    let mut n = 0;
    while cpu.reg(15) != end {
        if let Some(e) = cpu.step(ram) {
            return Err(format!("{e:?}"));
        }
        n += 1;
        if n > 100 || !(PROBE..end).contains(&cpu.reg(15)) && cpu.reg(15) != end {
            return Err("left the sequence".into());
        }
    }
    Ok(())
}

fn parse_corpus_line(line: &str, rng: &mut Rng) -> Option<Case> {
    let line = line.split('#').next()?.trim();
    if line.is_empty() {
        return None;
    }
    let (isa, rest) = line.split_once(':')?;
    let thumb = isa.trim() == "t32";
    let (code, regs) = match rest.split_once("regs:") {
        Some((c, r)) => (c, Some(r)),
        None => (rest, None),
    };
    let code = code
        .split_whitespace()
        .map(|h| u32::from_str_radix(h, 16).expect("hex"))
        .collect();
    let mut rr = random_regs(rng, thumb);
    if let Some(r) = regs {
        for (k, h) in r.split_whitespace().enumerate() {
            rr[k] = u32::from_str_radix(h, 16).expect("hex");
        }
    }
    Some(Case::new(thumb, code, rr))
}

#[test]
fn differential_vs_qemu_arm() {
    let _ = qemu_arm();
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_a32b);
    let count: usize = std::env::var("DBT_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut rng = Rng::seeded(seed);
    let src = scratch(&mut rng);
    let mut probe_ram = FlatRam::new(BASE as u64, (END - BASE) as usize);
    probe_ram.load(SRC as u64, &src);

    // Directed corpus first.
    let corpus_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut directed = Vec::new();
    let mut bad = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&corpus_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            if let Some(c) = parse_corpus_line(line, &mut rng) {
                match probe(&mut probe_ram, &c) {
                    Err(e) => bad.push(format!("corpus case raises {e}: {}", c.line())),
                    Ok(()) => directed.push(c),
                }
            }
        }
    }

    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let mut random = Vec::new();
    let mut rejected = 0;
    while random.len() < count {
        let thumb = random.len() % 2 == 1;
        let code = random_code(&mut rng, thumb);
        let regs = random_regs(&mut rng, thumb);
        let c = Case::new(thumb, code, regs);
        match probe(&mut probe_ram, &c) {
            Ok(()) => random.push(c),
            Err(_) => rejected += 1,
        }
    }

    let mut stats = vec![0u64; dbt_armv7::Class::COUNT];
    let mut fails = Vec::new();
    let all: Vec<Case> = directed
        .iter()
        .cloned()
        .chain(random.iter().cloned())
        .collect();
    let insns: usize = all.iter().map(|c| c.code.len()).sum();
    for (b, chunk) in all.chunks(250).enumerate() {
        fails.extend(run_batch(chunk, &src, &mut stats, &format!("batch{b}")));
    }
    // The harness code itself is counted too; subtract nothing: classes reached is what matters.
    record_coverage("diff_qemu", &stats);
    println!(
        "differential: {} directed + {} random cases ({} A32/T32 instructions, {} candidates rejected), {} mismatches",
        directed.len(),
        random.len(),
        insns,
        rejected,
        fails.len()
    );
    if !fails.is_empty() {
        for f in fails.iter().take(15) {
            eprintln!("{f}");
        }
        panic!("{} differential mismatches (seed {seed:#x})", fails.len());
    }
}

#[test]
fn harness_round_trip_without_qemu() {
    // The harness itself on the interpreter: an empty A32 case dumps the table registers.
    let mut rng = Rng(7);
    let src = scratch(&mut rng);
    let regs = random_regs(&mut rng, false);
    let c = Case::new(false, vec![0xe1a0_0000], regs);
    let img = build(std::slice::from_ref(&c), &src);
    if let Ok(p) = std::env::var("DBT_DIFF_DUMP") {
        std::fs::write(p, &img.bytes).unwrap();
    }
    let out = run_user(BASE, &img.bytes, img.entry, 1_000_000, None).unwrap();
    assert_eq!(out.len(), REC);
    for r in 0..13 {
        assert_eq!(
            u32::from_le_bytes(out[4 * r..4 * r + 4].try_into().unwrap()),
            c.regs[r]
        );
    }
    assert_eq!(&out[60..], &src[..]);
    let _ = Exit::Budget;
}
