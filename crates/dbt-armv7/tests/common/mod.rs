//! Shared test helpers: a tiny A32 encoder for harness code, a static ELF32 writer, a
//! user-mode runner for the interpreter (Linux `write`/`exit` syscalls), and the class
//! coverage recorder.

#![allow(dead_code)]

pub mod a64;
pub mod code;
pub mod gen_a32;
pub mod gen_t32;
pub mod gen_vfp;
pub mod harness;
pub mod kernels;
pub mod rewrite_loop;
pub mod run3;

use dbt_armv7::{Bus, Cpu, Exit, FlatRam};
use std::path::PathBuf;

/// A32 encodings used by the harness code (all with cond = AL).
pub mod a32 {
    pub fn movw(rd: u32, imm: u32) -> u32 {
        0xe300_0000 | (imm >> 12 & 0xf) << 16 | rd << 12 | (imm & 0xfff)
    }
    pub fn movt(rd: u32, imm: u32) -> u32 {
        0xe340_0000 | (imm >> 12 & 0xf) << 16 | rd << 12 | (imm & 0xfff)
    }
    pub fn mov32(rd: u32, v: u32) -> [u32; 2] {
        [movw(rd, v & 0xffff), movt(rd, v >> 16)]
    }
    pub fn mov_imm(rd: u32, imm8: u32) -> u32 {
        0xe3a0_0000 | rd << 12 | imm8
    }
    pub fn ldr_post4(rt: u32, rn: u32) -> u32 {
        0xe490_0004 | rn << 16 | rt << 12
    }
    pub fn str_post4(rt: u32, rn: u32) -> u32 {
        0xe480_0004 | rn << 16 | rt << 12
    }
    pub fn subs_imm(rd: u32, rn: u32, imm8: u32) -> u32 {
        0xe250_0000 | rn << 16 | rd << 12 | imm8
    }
    pub fn ldr_imm(rt: u32, rn: u32, imm12: u32) -> u32 {
        0xe590_0000 | rn << 16 | rt << 12 | imm12
    }
    /// `B<cond>` from `at` to `target`.
    pub fn b(cond: u32, at: u32, target: u32) -> u32 {
        cond << 28 | 0x0a00_0000 | ((target.wrapping_sub(at + 8) >> 2) & 0xff_ffff)
    }
    /// `BLX` (immediate) from A32 at `at` to Thumb code at `target`.
    pub fn blx_to_thumb(at: u32, target: u32) -> u32 {
        let off = target.wrapping_sub(at + 8);
        0xfa00_0000 | ((off >> 1) & 1) << 24 | ((off >> 2) & 0xff_ffff)
    }
    pub const MSR_APSR_NZCVQG_R1: u32 = 0xe12c_f001;
    pub const LDM_R0_R0_R14: u32 = 0xe890_7fff;
    pub const STMDB_SP_R0_R12_R14: u32 = 0xe90d_5fff;
    pub const MRS_R0_CPSR: u32 = 0xe10f_0000;
    pub const STR_R0_SP: u32 = 0xe58d_0000;
    pub const SVC0: u32 = 0xef00_0000;
}

/// T32 `BLX` (immediate) from Thumb at `at` to A32 code at `target` (4-aligned):
/// returns the two halfwords.
pub fn t32_blx_to_arm(at: u32, target: u32) -> [u16; 2] {
    let imm = target.wrapping_sub((at + 4) & !3);
    let s = (imm >> 24) & 1;
    let i1 = (imm >> 23) & 1;
    let i2 = (imm >> 22) & 1;
    let j1 = (!(i1 ^ s)) & 1;
    let j2 = (!(i2 ^ s)) & 1;
    let hi = (imm >> 12) & 0x3ff;
    let lo = (imm >> 2) & 0x3ff;
    [
        (0xf000 | s << 10 | hi) as u16,
        (0xc000 | j1 << 13 | j2 << 11 | lo << 1) as u16,
    ]
}

/// Builds a static ARM ELF32 executable with one RWX segment at `base` holding `image`.
pub fn elf32(base: u32, entry: u32, image: &[u8]) -> Vec<u8> {
    let mut e = Vec::with_capacity(image.len());
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
    e.extend_from_slice(&[0; 8]);
    let h16 = |e: &mut Vec<u8>, v: u16| e.extend_from_slice(&v.to_le_bytes());
    let h32 = |e: &mut Vec<u8>, v: u32| e.extend_from_slice(&v.to_le_bytes());
    h16(&mut e, 2); // ET_EXEC
    h16(&mut e, 40); // EM_ARM
    h32(&mut e, 1);
    h32(&mut e, entry);
    h32(&mut e, 52); // phoff
    h32(&mut e, 0); // shoff
    h32(&mut e, 0x0500_0400); // EABI5, hard-float ABI flag irrelevant
    h16(&mut e, 52);
    h16(&mut e, 32);
    h16(&mut e, 1);
    h16(&mut e, 40);
    h16(&mut e, 0);
    h16(&mut e, 0);
    // PT_LOAD: file offset 0 maps to `base`; the image starts at its own offset.
    h32(&mut e, 1);
    h32(&mut e, 0);
    h32(&mut e, base);
    h32(&mut e, base);
    h32(&mut e, image.len() as u32);
    h32(&mut e, image.len() as u32);
    h32(&mut e, 7);
    h32(&mut e, 0x1000);
    let mut out = image.to_vec();
    out[..e.len()].copy_from_slice(&e);
    out
}

/// Runs a user-mode program image in the interpreter, emulating Linux `write` (4) and
/// `exit` (1). Returns stdout, or an error describing an unexpected exception.
pub fn run_user(
    base: u32,
    image: &[u8],
    entry: u32,
    budget: u64,
    stats: Option<&mut Vec<u64>>,
) -> Result<Vec<u8>, String> {
    run_user_partial(base, image, entry, budget, stats).map_err(|(e, _)| e)
}

/// As [`run_user`], but an error also returns what was written before it.
pub fn run_user_partial(
    base: u32,
    image: &[u8],
    entry: u32,
    budget: u64,
    stats: Option<&mut Vec<u64>>,
) -> Result<Vec<u8>, (String, Vec<u8>)> {
    let mut ram = FlatRam::new(base as u64, image.len() + 0x1000);
    ram.load(base as u64, image);
    let mut cpu = Cpu::new_user(entry & 1 != 0);
    cpu.set_pc(entry & !1);
    cpu.set_exit_on_svc(true);
    cpu.set_exit_on_exception(true);
    if stats.is_some() {
        cpu.enable_class_stats();
    }
    let mut out = Vec::new();
    let mut left = budget;
    let res = loop {
        let before = cpu.icount;
        let exit = cpu.run(&mut ram, left);
        left = left.saturating_sub(cpu.icount - before);
        match exit {
            Exit::Svc(_) => match cpu.reg(7) {
                4 => {
                    let (p, n) = (cpu.reg(1) as u64, cpu.reg(2) as u64);
                    for k in 0..n {
                        out.push(ram.read(p + k, 1).unwrap() as u8);
                    }
                    cpu.set_reg(0, n as u32);
                }
                1 => break Ok(()),
                n => break Err(format!("unexpected syscall {n}")),
            },
            Exit::Budget => break Err("instruction budget exhausted".into()),
            e => break Err(format!("{e:?} at pc {:#x}", cpu.reg(15))),
        }
    };
    if let Some(s) = stats {
        for (a, b) in s.iter_mut().zip(cpu.class_stats()) {
            *a += b;
        }
    }
    match res {
        Ok(()) => Ok(out),
        Err(e) => Err((e, out)),
    }
}

/// Path of `qemu-arm`, or a panic telling how to install it.
pub fn qemu_arm() -> PathBuf {
    for p in ["/usr/bin/qemu-arm", "/usr/local/bin/qemu-arm"] {
        if std::path::Path::new(p).exists() {
            return p.into();
        }
    }
    if let Ok(o) = std::process::Command::new("sh")
        .args(["-c", "command -v qemu-arm"])
        .output()
    {
        let s = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if !s.is_empty() {
            return s.into();
        }
    }
    panic!("qemu-arm not found: install Debian's user-mode emulator with `apt-get install -y qemu-user`");
}

/// Where the per-class execution counts of each test binary are recorded for the
/// coverage report (`target/dbt-armv7-coverage/<name>.txt`).
pub fn record_coverage(name: &str, counts: &[u64]) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/dbt-armv7-coverage");
    let _ = std::fs::create_dir_all(&dir);
    let mut s = String::new();
    for (c, n) in dbt_armv7::Class::ALL.iter().zip(counts) {
        s.push_str(&format!("{} {}\n", c.name(), n));
    }
    let _ = std::fs::write(dir.join(format!("{name}.txt")), s);
}

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    /// A generator for `seed`: the seed goes through SplitMix64 so that every seed gives a
    /// different, non-zero xorshift state (`seed | 1` made seeds 2k and 2k+1 the same run).
    pub fn seeded(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
}
