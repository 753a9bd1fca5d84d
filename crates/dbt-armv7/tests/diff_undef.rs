//! UNDEFINED agreement with `qemu-arm -cpu cortex-a15`.
//!
//! Candidates are encodings that our decoder calls UNDEFINED (`Info::undefined`: unallocated
//! space and UDF) and not UNPREDICTABLE: random A32 words (any condition; the flags are set
//! so that the condition passes), random T32 instructions, and *every* 16-bit Thumb
//! halfword. Each one must
//!
//! - raise the Undefined Instruction exception in our interpreter, and
//! - raise `SIGILL` at its own address under `qemu-arm`.
//!
//! BKPT (A32 and T16) is checked the same way against `SIGTRAP` (our interpreter raises a
//! prefetch abort with a debug-event FSR).
//!
//! Excluded by construction: UNPREDICTABLE encodings (QEMU is free to execute them), and
//! VFP/Advanced SIMD (`Op::Vfp`, including VMRS/VMSR): QEMU's Cortex-A15 model implements
//! VFPv4 and NEON, and we report all of them UNDEFINED by design, so they are not
//! candidates (the decoder gives them their own op, not `Op::Undefined`). CDP/LDC/STC and
//! coprocessor accesses are likewise their own ops, not candidates.
//!
//! One static ELF runs a batch of candidates. It installs a handler (on an alternate stack)
//! for SIGILL, SIGTRAP, SIGBUS, SIGFPE and SIGSEGV. Each slot stores its index, loads known
//! registers and flags, and runs its candidate (Thumb ones via `BLX`). The handler records
//! the signal and the faulting PC, then resumes at the next slot. A candidate that runs
//! without a signal records "executed".
//!
//! Seed `DBT_DIFF_SEED`; counts `DBT_UNDEF_A32` and `DBT_UNDEF_T32` (default 2000 each).

mod common;

use common::harness::run_qemu;
use common::{a32, elf32, record_coverage, Rng};
use dbt_armv7::cpu::Exception;
use dbt_armv7::decode::{self, Op};
use dbt_armv7::{Cpu, Exit, FlatRam, Insn};

const BASE: u32 = 0x10000;
const CODE: u32 = 0x11000;
const CUR: u32 = 0x10400;
const RESUME: u32 = 0x10404;
const REGTAB: u32 = 0x10440;
const SIGACT: u32 = 0x10480;
const SIGSTK: u32 = 0x104a0;
const RES: u32 = 0x200000;
const ALTSTACK: u32 = 0x210000;
const STACK: u32 = 0x220000;
const DATA: u32 = 0x230000;
const END: u32 = 0x240000;
const SIGILL: u32 = 4;
const SIGTRAP: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Isa {
    A32,
    T16,
    T32,
}

#[derive(Clone, Copy)]
struct Cand {
    isa: Isa,
    raw: u32,
    /// NZCV flags (bits 31:28) that make an A32 condition pass.
    flags: u32,
    /// Expected signal.
    sig: u32,
}

impl Cand {
    fn insn(&self) -> Insn {
        match self.isa {
            Isa::A32 => decode::decode_a32(self.raw),
            Isa::T16 => decode::t16::decode(self.raw as u16),
            Isa::T32 => decode::t32::decode((self.raw >> 16) as u16, self.raw as u16),
        }
    }
    fn hex(&self) -> String {
        match self.isa {
            Isa::A32 => format!("a32 {:08x}", self.raw),
            Isa::T16 => format!("t16 {:04x}", self.raw),
            Isa::T32 => format!("t32 {:04x} {:04x}", self.raw >> 16, self.raw & 0xffff),
        }
    }
}

fn cond_passes(cond: u32, nzcv: u32) -> bool {
    let (n, z, c, v) = (nzcv & 8 != 0, nzcv & 4 != 0, nzcv & 2 != 0, nzcv & 1 != 0);
    let r = match cond >> 1 {
        0 => z,
        1 => c,
        2 => n,
        3 => v,
        4 => c && !z,
        5 => n == v,
        6 => n == v && !z,
        _ => true,
    };
    if cond & 1 != 0 && cond != 15 {
        !r
    } else {
        r
    }
}

/// An UNDEFINED, predictable candidate?
fn is_candidate(i: &Insn) -> bool {
    let f = i.info();
    f.undefined && !f.unpredictable
}

/// The signal `qemu-arm` raises for an UNDEFINED encoding, or `None` when QEMU gives it a
/// meaning of its own (not architectural, hence excluded):
///
/// - A32 coprocessor-space words for CP1/CP2: `qemu-arm` emulates the obsolete FPA11
///   floating-point coprocessor (NWFPE, as old Linux kernels did) when such a word is
///   UNDEFINED, so it may run instead of raising SIGILL.
/// - `HLT #0x3c` (T16 `babc`) and `HLT #0xf000` (A32 `x10f0070`) are QEMU's semihosting
///   traps: an ARMv8 instruction, UNDEFINED in ARMv7, that QEMU honours on every CPU.
///
/// The Linux kernel's breakpoint UDFs (A32 `x7f001f0`, T16 `de01`, T32 `f7f0 a000`) raise
/// SIGTRAP instead of SIGILL under Linux and `qemu-arm`: expected as such.
fn qemu_signal(isa: Isa, raw: u32) -> Option<u32> {
    match isa {
        Isa::A32 if raw & 0x0c00_0000 == 0x0c00_0000 && matches!(raw >> 8 & 0xf, 1 | 2) => None,
        Isa::A32 if raw & 0x0fff_ffff == 0x010f_0070 => None,
        Isa::T16 if raw == 0xbabc => None,
        Isa::A32 if raw & 0x0fff_ffff == 0x07f0_01f0 => Some(SIGTRAP),
        Isa::T16 if raw == 0xde01 => Some(SIGTRAP),
        Isa::T32 if raw == 0xf7f0_a000 => Some(SIGTRAP),
        _ => Some(SIGILL),
    }
}

fn flags_for(rng: &mut Rng, raw: u32) -> u32 {
    let cond = raw >> 28;
    loop {
        let nzcv = rng.below(16);
        if cond >= 14 || cond_passes(cond, nzcv) {
            return nzcv << 28;
        }
    }
}

struct Image {
    bytes: Vec<u8>,
    /// Address of each candidate.
    at: Vec<u32>,
}

fn build(cands: &[Cand]) -> Image {
    let mut img = vec![0u8; (END - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, b: &[u8]| {
        let o = (at - BASE) as usize;
        img[o..o + b.len()].copy_from_slice(b);
    };
    let mut pc = CODE;
    let emit = |img: &mut Vec<u8>, pc: &mut u32, w: u32| {
        put(img, *pc, &w.to_le_bytes());
        *pc += 4;
    };
    let mov32 = |img: &mut Vec<u8>, pc: &mut u32, rd: u32, v: u32| {
        for w in a32::mov32(rd, v) {
            emit(img, pc, w);
        }
    };
    // Registers for every candidate: pointers into the middle of DATA, SP on STACK.
    for r in 0..15u32 {
        let v = if r == 13 {
            STACK
        } else {
            DATA + 0x8000 + 16 * r
        };
        put(&mut img, REGTAB + 4 * r, &v.to_le_bytes());
    }
    // sigaltstack and sigaction structures.
    for (k, v) in [ALTSTACK, 0, 0x8000].iter().enumerate() {
        put(&mut img, SIGSTK + 4 * k as u32, &v.to_le_bytes());
    }
    let handler = CODE;
    // SA_SIGINFO | SA_ONSTACK | SA_NODEFER
    for (k, v) in [handler, 0x4800_0004, 0, 0, 0].iter().enumerate() {
        put(&mut img, SIGACT + 4 * k as u32, &v.to_le_bytes());
    }
    // The handler: r0 = signal, r2 = ucontext (arm_sp at +84, arm_pc +92, arm_cpsr +96).
    mov32(&mut img, &mut pc, 3, CUR);
    emit(&mut img, &mut pc, 0xe593_3000); // ldr r3, [r3]
    mov32(&mut img, &mut pc, 4, RES);
    emit(&mut img, &mut pc, 0xe084_4183); // add r4, r4, r3, lsl #3
    emit(&mut img, &mut pc, 0xe584_0000); // str r0, [r4]
    emit(&mut img, &mut pc, 0xe592_505c); // ldr r5, [r2, #92]
    emit(&mut img, &mut pc, 0xe584_5004); // str r5, [r4, #4]
    mov32(&mut img, &mut pc, 5, RESUME);
    emit(&mut img, &mut pc, 0xe595_5000); // ldr r5, [r5]
    emit(&mut img, &mut pc, 0xe582_505c); // str r5, [r2, #92]
    emit(&mut img, &mut pc, 0xe592_5060); // ldr r5, [r2, #96]
    emit(&mut img, &mut pc, 0xe3c5_5020); // bic r5, r5, #0x20 (T)
    emit(&mut img, &mut pc, 0xe3c5_5406); // bic r5, r5, #0x06000000 (IT[1:0])
    emit(&mut img, &mut pc, 0xe3c5_5cfe); // bic r5, r5, #0xfe00 (IT[7:2], E)
    emit(&mut img, &mut pc, 0xe582_5060); // str r5, [r2, #96]
    mov32(&mut img, &mut pc, 5, STACK);
    emit(&mut img, &mut pc, 0xe582_5054); // str r5, [r2, #84]
    emit(&mut img, &mut pc, 0xe12f_ff1e); // bx lr
    let entry = pc;
    // sigaltstack(&ss, NULL)
    mov32(&mut img, &mut pc, 0, SIGSTK);
    emit(&mut img, &mut pc, a32::mov_imm(1, 0));
    emit(&mut img, &mut pc, a32::mov_imm(7, 186));
    emit(&mut img, &mut pc, a32::SVC0);
    for sig in [4, 5, 7, 8, 11] {
        // rt_sigaction(sig, &act, NULL, 8)
        emit(&mut img, &mut pc, a32::mov_imm(0, sig));
        mov32(&mut img, &mut pc, 1, SIGACT);
        emit(&mut img, &mut pc, a32::mov_imm(2, 0));
        emit(&mut img, &mut pc, a32::mov_imm(3, 8));
        emit(&mut img, &mut pc, a32::mov_imm(7, 174));
        emit(&mut img, &mut pc, a32::SVC0);
    }
    let mut at = Vec::new();
    for (k, c) in cands.iter().enumerate() {
        let k = k as u32;
        let thumb = c.isa != Isa::A32;
        // The slot's length is fixed, so `resume` is known before it is emitted.
        let len = 4 * (5 + 5 + 3 + 3 + 4) + if thumb { 12 } else { 4 };
        let resume = pc + len;
        mov32(&mut img, &mut pc, 0, CUR);
        mov32(&mut img, &mut pc, 1, k);
        emit(&mut img, &mut pc, 0xe580_1000); // str r1, [r0]
        mov32(&mut img, &mut pc, 0, RESUME);
        mov32(&mut img, &mut pc, 1, resume);
        emit(&mut img, &mut pc, 0xe580_1000);
        mov32(&mut img, &mut pc, 1, c.flags);
        emit(&mut img, &mut pc, a32::MSR_APSR_NZCVQG_R1);
        mov32(&mut img, &mut pc, 0, REGTAB);
        emit(&mut img, &mut pc, a32::LDM_R0_R0_R14);
        if thumb {
            let b = pc;
            emit(&mut img, &mut pc, a32::blx_to_thumb(b, b + 4));
            at.push(pc);
            let mut hw = if c.isa == Isa::T32 {
                vec![(c.raw >> 16) as u16, c.raw as u16]
            } else {
                vec![c.raw as u16, 0xbf00]
            };
            hw.extend([0x4778, 0x46c0]); // BX pc ; NOP
            for h in hw {
                put(&mut img, pc, &h.to_le_bytes());
                pc += 2;
            }
        } else {
            at.push(pc);
            emit(&mut img, &mut pc, c.raw);
        }
        // Executed without a signal: record -1.
        mov32(&mut img, &mut pc, 0, RES + 8 * k);
        emit(&mut img, &mut pc, 0xe3e0_1000); // mvn r1, #0
        emit(&mut img, &mut pc, 0xe580_1000); // str r1, [r0]
        assert_eq!(pc, resume);
        assert!(pc < RES - 0x100, "too many candidates for one image");
    }
    // write(1, RES, 8n); exit(0)
    emit(&mut img, &mut pc, a32::mov_imm(0, 1));
    mov32(&mut img, &mut pc, 1, RES);
    mov32(&mut img, &mut pc, 2, 8 * cands.len() as u32);
    emit(&mut img, &mut pc, a32::mov_imm(7, 4));
    emit(&mut img, &mut pc, a32::SVC0);
    emit(&mut img, &mut pc, a32::mov_imm(0, 0));
    emit(&mut img, &mut pc, a32::mov_imm(7, 1));
    emit(&mut img, &mut pc, a32::SVC0);
    Image {
        bytes: elf32(BASE, entry, &img),
        at,
    }
}

/// Runs one candidate in our interpreter: the exception it raises, if any.
fn ours(cpu: &mut Cpu, ram: &mut FlatRam, c: &Cand) -> Option<Exception> {
    const AT: u32 = 0x1000;
    match c.isa {
        Isa::A32 => ram.load(AT as u64, &c.raw.to_le_bytes()),
        Isa::T16 => ram.load(AT as u64, &(c.raw as u16).to_le_bytes()),
        Isa::T32 => {
            let b = [
                ((c.raw >> 16) as u16).to_le_bytes(),
                (c.raw as u16).to_le_bytes(),
            ];
            ram.load(AT as u64, &b.concat());
        }
    }
    for r in 0..15 {
        cpu.set_reg(r, 0x2000 + 16 * r as u32);
    }
    let t = if c.isa == Isa::A32 { 0 } else { 1 << 5 };
    cpu.set_cpsr(0x10 | c.flags | t);
    cpu.set_pc(AT);
    match cpu.step(ram) {
        Some(Exit::Exception(e)) => Some(e),
        _ => None,
    }
}

fn sig_name(s: u32) -> String {
    match s {
        0 => "not reached".into(),
        0xffff_ffff => "executed without a signal".into(),
        4 => "SIGILL".into(),
        5 => "SIGTRAP".into(),
        7 => "SIGBUS".into(),
        8 => "SIGFPE".into(),
        11 => "SIGSEGV".into(),
        n => format!("signal {n}"),
    }
}

#[test]
fn undefined_agrees_with_qemu_arm() {
    let _ = common::qemu_arm();
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_a32b);
    let count = |v: &str| -> usize {
        std::env::var(v)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000)
    };
    let mut rng = Rng::seeded(seed);
    let mut cands = Vec::new();
    // `DBT_UNDEF_WORDS="a32:f61bc7e7 t16:de01 t32:f7f0a000"` checks only the given encodings.
    let only: Vec<Cand> = std::env::var("DBT_UNDEF_WORDS")
        .unwrap_or_default()
        .split_whitespace()
        .map(|w| {
            let (isa, hex) = w.split_once(':').expect("isa:hex");
            let raw = u32::from_str_radix(hex, 16).expect("hex");
            let isa = match isa {
                "a32" => Isa::A32,
                "t16" => Isa::T16,
                _ => Isa::T32,
            };
            let flags = if isa == Isa::A32 {
                flags_for(&mut rng, raw)
            } else {
                0
            };
            let sig = qemu_signal(isa, raw).unwrap_or(0);
            Cand {
                isa,
                raw,
                flags,
                sig,
            }
        })
        .collect();
    let (mut tried_a32, mut tried_t32, mut t16) = (0u64, 0u64, 0);
    let overridden = !only.is_empty();
    if overridden {
        cands = only;
    } else {
        // A32: random words. Half are drawn from the unconditional (cond = 1111) space,
        // where most unallocated encodings live.
        let mut n = 0;
        while n < count("DBT_UNDEF_A32") {
            tried_a32 += 1;
            let w = if rng.below(2) == 0 {
                0xf000_0000 | rng.u32() & 0x0fff_ffff
            } else {
                rng.u32()
            };
            if let (true, Some(sig)) = (
                is_candidate(&decode::decode_a32(w)),
                qemu_signal(Isa::A32, w),
            ) {
                let flags = flags_for(&mut rng, w);
                cands.push(Cand {
                    isa: Isa::A32,
                    raw: w,
                    flags,
                    sig,
                });
                n += 1;
            }
        }
        // T16: every halfword.
        for h in 0..0xe800u32 {
            let i = decode::t16::decode(h as u16);
            let sig = if matches!(i.op, Op::Bkpt { .. }) {
                if h & 0xf != 0 {
                    continue; // 16 BKPTs are enough
                }
                SIGTRAP
            } else if let (true, Some(sig)) = (is_candidate(&i), qemu_signal(Isa::T16, h)) {
                sig
            } else {
                continue;
            };
            t16 += 1;
            cands.push(Cand {
                isa: Isa::T16,
                raw: h,
                flags: 0,
                sig,
            });
        }
        // T32: random instructions.
        let mut n = 0;
        while n < count("DBT_UNDEF_T32") {
            tried_t32 += 1;
            let w = (0xe800 + rng.below(0x1800)) << 16 | rng.below(0x1_0000);
            let c = Cand {
                isa: Isa::T32,
                raw: w,
                flags: 0,
                sig: qemu_signal(Isa::T32, w).unwrap_or(0),
            };
            if is_candidate(&c.insn()) && c.sig != 0 {
                cands.push(c);
                n += 1;
            }
        }
        // BKPT (A32).
        for imm in [0u32, 0x1234, 0xffff] {
            cands.push(Cand {
                isa: Isa::A32,
                raw: 0xe120_0070 | (imm >> 4) << 8 | (imm & 0xf),
                flags: 0,
                sig: SIGTRAP,
            });
        }
    }

    // Our interpreter.
    let mut fails = Vec::new();
    let mut ram = FlatRam::new(0, 0x4000);
    let mut cpu = Cpu::new_user(false);
    cpu.set_exit_on_exception(true);
    cpu.enable_class_stats();
    for c in &cands {
        let e = ours(&mut cpu, &mut ram, c);
        let ok = if matches!(c.insn().op, Op::Bkpt { .. }) {
            matches!(e, Some(Exception::PrefetchAbort { .. }))
        } else {
            e == Some(Exception::Undefined)
        };
        if !ok {
            fails.push(format!(
                "{} ({:?}): our interpreter raises {e:?}",
                c.hex(),
                c.insn().class
            ));
        }
    }
    if !overridden {
        record_coverage("diff_undef", cpu.class_stats());
    }

    // qemu-arm.
    for (b, chunk) in cands.chunks(2500).enumerate() {
        let img = build(chunk);
        let q = run_qemu(&img.bytes, &["-cpu", "cortex-a15"], &format!("undef{b}"));
        if !q.status.success() || q.stdout.len() != 8 * chunk.len() {
            fails.push(format!(
                "batch {b}: qemu-arm exited with {:?} after {} bytes: {}",
                q.status,
                q.stdout.len(),
                String::from_utf8_lossy(&q.stderr)
            ));
            continue;
        }
        for (k, c) in chunk.iter().enumerate() {
            let w = |i: usize| u32::from_le_bytes(q.stdout[i..i + 4].try_into().unwrap());
            let (sig, pc) = (w(8 * k), w(8 * k + 4));
            if sig != c.sig || pc != img.at[k] {
                let wh = if sig == 0xffff_ffff || sig == 0 {
                    String::new()
                } else {
                    format!(" at {:+}", pc.wrapping_sub(img.at[k]) as i32)
                };
                fails.push(format!(
                    "{} ({:?}): qemu-arm: {}{wh}, expected {}",
                    c.hex(),
                    c.insn().class,
                    sig_name(sig),
                    sig_name(c.sig)
                ));
            }
        }
    }
    let by_isa = |isa| cands.iter().filter(|c| c.isa == isa).count();
    println!(
        "undefined: {} A32 (from {tried_a32} words), {t16} T16 (all halfwords), {} T32 (from {tried_t32}), {} mismatches",
        by_isa(Isa::A32),
        by_isa(Isa::T32),
        fails.len()
    );
    if !fails.is_empty() {
        for f in fails.iter().take(40) {
            eprintln!("{f}");
        }
        panic!("{} UNDEFINED mismatches (seed {seed:#x})", fails.len());
    }
}
