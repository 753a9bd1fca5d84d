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

use common::{a32, elf32, qemu_arm, record_coverage, run_user, t32_blx_to_arm, Rng};
use dbt_armv7::decode::{self, MemOff, Op};
use dbt_armv7::{Cpu, Exit, FlatRam, Insn};
use std::fmt::Write as _;

const BASE: u32 = 0x10000;
const CODE: u32 = 0x11000;
const TABLES: u32 = 0x80000;
const OUT: u32 = 0x90000;
const SRC: u32 = 0xa0000;
const DST: u32 = 0xb0000;
const SCR: u32 = 8192;
const END: u32 = 0xb4000;
const REC: usize = 60 + SCR as usize;
/// Where the pre-filter runs candidate sequences.
const PROBE: u32 = 0x40000;

#[derive(Clone, Debug)]
struct Case {
    thumb: bool,
    /// A32 words, or Thumb halfwords (one per entry).
    code: Vec<u32>,
    regs: [u32; 16],
}

impl Case {
    fn line(&self) -> String {
        let mut s = String::from(if self.thumb { "t32:" } else { "a32:" });
        for w in &self.code {
            if self.thumb {
                write!(s, " {w:04x}").unwrap();
            } else {
                write!(s, " {w:08x}").unwrap();
            }
        }
        s.push_str(" regs:");
        for r in &self.regs {
            write!(s, " {r:x}").unwrap();
        }
        s
    }
}

fn regs_pair(thumb: bool) -> (u8, u8) {
    if thumb {
        (7, 6)
    } else {
        (11, 10)
    }
}

fn random_regs(rng: &mut Rng, thumb: bool) -> [u32; 16] {
    let mut r = [0u32; 16];
    for v in r.iter_mut().take(15) {
        *v = match rng.below(8) {
            0 => 0,
            1 => 0xffff_ffff,
            2 => 0x8000_0000 ^ rng.below(4),
            3 => 0x7fff_ffff - rng.below(4),
            4 => rng.below(256),
            5 => rng.u32() & 0x8080_8080 | rng.below(0x100),
            _ => rng.u32(),
        };
    }
    let (base, idx) = regs_pair(thumb);
    r[base as usize] = DST + SCR / 2;
    r[idx as usize] = 4 * (1 + rng.below(9));
    r[13] = OUT + 56;
    r[15] = rng.u32() & 0xf80f_0000;
    r
}

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

fn code_bytes(c: &Case) -> Vec<u8> {
    let mut b = Vec::new();
    for &w in &c.code {
        if c.thumb {
            b.extend_from_slice(&(w as u16).to_le_bytes());
        } else {
            b.extend_from_slice(&w.to_le_bytes());
        }
    }
    b
}

/// Runs a case's sequence alone in the interpreter; `Err` if it raises an exception.
fn probe(ram: &mut FlatRam, c: &Case) -> Result<(), String> {
    let src = ram.mem[(SRC - BASE) as usize..(SRC - BASE + SCR) as usize].to_vec();
    ram.load(DST as u64, &src);
    let bytes = code_bytes(c);
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

struct Image {
    bytes: Vec<u8>,
    entry: u32,
}

fn build(cases: &[Case], src: &[u8]) -> Image {
    let mut img = vec![0u8; (END - BASE) as usize];
    let put32 = |img: &mut Vec<u8>, at: u32, v: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&v.to_le_bytes());
    };
    img[(SRC - BASE) as usize..(SRC - BASE + SCR) as usize].copy_from_slice(src);
    let mut pc = CODE;
    let emit = |img: &mut Vec<u8>, pc: &mut u32, w: u32| {
        put32(img, *pc, w);
        *pc += 4;
    };
    for (k, c) in cases.iter().enumerate() {
        let table = TABLES + 64 * k as u32;
        for r in 0..16 {
            put32(&mut img, table + 4 * r as u32, c.regs[r]);
        }
        for w in a32::mov32(0, SRC) {
            emit(&mut img, &mut pc, w);
        }
        for w in a32::mov32(1, DST) {
            emit(&mut img, &mut pc, w);
        }
        emit(&mut img, &mut pc, a32::movw(2, SCR / 4));
        let lp = pc;
        emit(&mut img, &mut pc, a32::ldr_post4(3, 0));
        emit(&mut img, &mut pc, a32::str_post4(3, 1));
        emit(&mut img, &mut pc, a32::subs_imm(2, 2, 1));
        let at = pc;
        emit(&mut img, &mut pc, a32::b(1, at, lp));
        for w in a32::mov32(0, table) {
            emit(&mut img, &mut pc, w);
        }
        emit(&mut img, &mut pc, a32::ldr_imm(1, 0, 60));
        emit(&mut img, &mut pc, a32::MSR_APSR_NZCVQG_R1);
        emit(&mut img, &mut pc, 0xf57f_f01f); // CLREX
        emit(&mut img, &mut pc, a32::LDM_R0_R0_R14);
        if c.thumb {
            let at = pc;
            emit(&mut img, &mut pc, a32::blx_to_thumb(at, at + 4));
            let bytes = code_bytes(c);
            let o = (pc - BASE) as usize;
            img[o..o + bytes.len()].copy_from_slice(&bytes);
            pc += bytes.len() as u32;
            let epi = (pc + 4 + 3) & !3;
            let [h1, h2] = t32_blx_to_arm(pc, epi);
            let o = (pc - BASE) as usize;
            img[o..o + 2].copy_from_slice(&h1.to_le_bytes());
            img[o + 2..o + 4].copy_from_slice(&h2.to_le_bytes());
            pc = epi;
        } else {
            for &w in &c.code {
                emit(&mut img, &mut pc, w);
            }
        }
        emit(&mut img, &mut pc, a32::STMDB_SP_R0_R12_R14);
        emit(&mut img, &mut pc, a32::MRS_R0_CPSR);
        emit(&mut img, &mut pc, a32::STR_R0_SP);
        for (buf, len) in [(OUT, 60), (DST, SCR)] {
            emit(&mut img, &mut pc, a32::mov_imm(0, 1));
            for w in a32::mov32(1, buf) {
                emit(&mut img, &mut pc, w);
            }
            emit(&mut img, &mut pc, a32::movw(2, len));
            emit(&mut img, &mut pc, a32::mov_imm(7, 4));
            emit(&mut img, &mut pc, a32::SVC0);
        }
        assert!(pc < TABLES - 0x1000, "too many cases for one image");
    }
    emit(&mut img, &mut pc, a32::mov_imm(0, 0));
    emit(&mut img, &mut pc, a32::mov_imm(7, 1));
    emit(&mut img, &mut pc, a32::SVC0);
    Image {
        bytes: elf32(BASE, CODE, &img),
        entry: CODE,
    }
}

fn describe(c: &Case, q: &[u8], o: &[u8]) -> String {
    let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let mut s = format!("{}\n", c.line());
    let names = [
        "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "lr",
        "cpsr",
    ];
    for (i, n) in names.iter().enumerate() {
        let (a, b) = (w(q, i), w(o, i));
        if a != b {
            writeln!(s, "  {n}: qemu {a:#010x} ours {b:#010x}").unwrap();
        }
    }
    if let Some(p) = (60..REC).find(|&k| q[k] != o[k]) {
        writeln!(s, "  scratch differs first at +{:#x}", p - 60).unwrap();
    }
    s
}

/// Masks the CPSR word of a record to the compared bits (NZCVQ, GE).
fn normalise(rec: &mut [u8]) {
    let c = u32::from_le_bytes(rec[56..60].try_into().unwrap()) & 0xf80f_0000;
    rec[56..60].copy_from_slice(&c.to_le_bytes());
}

fn run_batch(cases: &[Case], src: &[u8], stats: &mut Vec<u64>, tag: &str) -> Vec<String> {
    let img = build(cases, src);
    let dir = std::env::temp_dir().join(format!("dbt-armv7-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.elf"));
    std::fs::write(&path, &img.bytes).unwrap();
    // qemu-arm refuses to load a file without execute permission.
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let q = std::process::Command::new(qemu_arm())
        .arg(&path)
        .output()
        .expect("running qemu-arm (apt-get install -y qemu-user)");
    if std::env::var("DBT_DIFF_KEEP").is_err() {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(&dir);
    } else {
        eprintln!("kept {}", path.display());
    }
    let ours = run_user(BASE, &img.bytes, img.entry, 200_000_000, Some(stats));
    let mut fails = Vec::new();
    let ours = match ours {
        Ok(o) => o,
        Err(e) => {
            fails.push(format!("{tag}: interpreter stopped: {e}"));
            Vec::new()
        }
    };
    if !q.status.success() {
        fails.push(format!(
            "{tag}: qemu-arm exited with {:?} after {} cases: {}",
            q.status,
            q.stdout.len() / REC,
            String::from_utf8_lossy(&q.stderr)
        ));
    }
    for (k, c) in cases.iter().enumerate() {
        let r = k * REC..(k + 1) * REC;
        let (Some(qr), Some(or)) = (q.stdout.get(r.clone()), ours.get(r)) else {
            fails.push(format!("{tag} case {k}: missing output\n{}", c.line()));
            break;
        };
        let (mut qr, mut or) = (qr.to_vec(), or.to_vec());
        normalise(&mut qr);
        normalise(&mut or);
        if qr != or {
            fails.push(format!("{tag} case {k}: {}", describe(c, &qr, &or)));
        }
    }
    fails
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
    Some(Case {
        thumb,
        code,
        regs: rr,
    })
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
    let mut rng = Rng(seed | 1);
    let src: Vec<u8> = (0..SCR).map(|_| rng.u32() as u8).collect();
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
        let c = Case {
            thumb,
            regs: random_regs(&mut rng, thumb),
            code,
        };
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
    let src: Vec<u8> = (0..SCR).map(|_| rng.u32() as u8).collect();
    let c = Case {
        thumb: false,
        code: vec![0xe1a0_0000],
        regs: random_regs(&mut rng, false),
    };
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
