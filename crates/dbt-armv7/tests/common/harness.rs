//! The differential harness shared by `diff_qemu` and `diff_branches`: a batch of cases
//! becomes one static ELF32 that, for each case, sets r0-r14 and NZCVQ/GE from a table,
//! runs the case's code, and writes r0-r12, LR, the CPSR and an 8 KiB scratch window to
//! stdout. The ELF runs under `qemu-arm` and under our interpreter, and the records are
//! compared register for register, flag for flag and byte for byte.

use super::{a32, elf32, qemu_arm, run_user_partial, t32_blx_to_arm, Rng};
use std::fmt::Write as _;

pub const BASE: u32 = 0x10000;
pub const CODE: u32 = 0x11000;
pub const TABLES: u32 = 0x80000;
/// The record (r0-r12, LR, CPSR) is stored below `OUT + 60`; SP is `OUT + 56` on entry to
/// a case and must be again when its code ends. Memory below `TABLES + 0x4000` .. `OUT` is
/// free for a case's stack.
pub const OUT: u32 = 0x90000;
pub const SRC: u32 = 0xa0000;
pub const DST: u32 = 0xb0000;
pub const SCR: u32 = 8192;
pub const END: u32 = 0xb4000;
pub const REC: usize = 60 + SCR as usize;

#[derive(Clone, Debug)]
pub struct Case {
    /// Entered in Thumb state.
    pub thumb: bool,
    /// A32 words, or Thumb halfwords (one per entry).
    pub code: Vec<u32>,
    pub regs: [u32; 16],
    /// The code leaves in A32 state at its (4-aligned) end, so the harness appends no
    /// Thumb-to-A32 `BLX` (which would overwrite LR).
    pub ends_arm: bool,
    /// What the case does, for failure reports.
    pub note: String,
}

impl Case {
    pub fn new(thumb: bool, code: Vec<u32>, regs: [u32; 16]) -> Case {
        Case {
            thumb,
            code,
            regs,
            ends_arm: false,
            note: String::new(),
        }
    }

    pub fn line(&self) -> String {
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
        if !self.note.is_empty() {
            write!(s, "   # {}", self.note).unwrap();
        }
        s
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        for &w in &self.code {
            if self.thumb {
                b.extend_from_slice(&(w as u16).to_le_bytes());
            } else {
                b.extend_from_slice(&w.to_le_bytes());
            }
        }
        b
    }
}

/// The scratch base and index registers of a case (A32: r11/r10, Thumb: r7/r6).
pub fn regs_pair(thumb: bool) -> (u8, u8) {
    if thumb {
        (7, 6)
    } else {
        (11, 10)
    }
}

pub fn random_regs(rng: &mut Rng, thumb: bool) -> [u32; 16] {
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

pub struct Image {
    pub bytes: Vec<u8>,
    pub entry: u32,
}

pub fn build(cases: &[Case], src: &[u8]) -> Image {
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
        }
        let bytes = c.bytes();
        let o = (pc - BASE) as usize;
        img[o..o + bytes.len()].copy_from_slice(&bytes);
        pc += bytes.len() as u32;
        if c.thumb && !c.ends_arm {
            let epi = (pc + 4 + 3) & !3;
            let [h1, h2] = t32_blx_to_arm(pc, epi);
            let o = (pc - BASE) as usize;
            img[o..o + 2].copy_from_slice(&h1.to_le_bytes());
            img[o + 2..o + 4].copy_from_slice(&h2.to_le_bytes());
            pc = epi;
        }
        assert_eq!(pc % 4, 0, "case code must end 4-aligned in A32 state");
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

pub fn describe(c: &Case, q: &[u8], o: &[u8]) -> String {
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
pub fn normalise(rec: &mut [u8]) {
    let c = u32::from_le_bytes(rec[56..60].try_into().unwrap()) & 0xf80f_0000;
    rec[56..60].copy_from_slice(&c.to_le_bytes());
}

/// Writes `bytes` to a temporary executable file, runs it under `qemu-arm` (with `args`
/// before the file name, killed after 120 s), removes the file (unless `DBT_DIFF_KEEP` is
/// set) and returns the output.
pub fn run_qemu(bytes: &[u8], args: &[&str], tag: &str) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("dbt-armv7-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.elf"));
    std::fs::write(&path, bytes).unwrap();
    // qemu-arm refuses to load a file without execute permission.
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let q = std::process::Command::new("timeout")
        .arg("120")
        .arg(qemu_arm())
        .args(args)
        .arg(&path)
        .output()
        .expect("running qemu-arm (apt-get install -y qemu-user)");
    if std::env::var("DBT_DIFF_KEEP").is_err() {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir(&dir);
    } else {
        eprintln!("kept {}", path.display());
    }
    q
}

/// Runs a batch three ways: under `qemu-arm` (the reference), in the interpreter, and
/// through the translator (`a64-runner` under `qemu-aarch64`); returns every difference.
pub fn run_batch(cases: &[Case], src: &[u8], stats: &mut Vec<u64>, tag: &str) -> Vec<String> {
    let img = build(cases, src);
    let dir = std::env::temp_dir().join(format!("dbt-armv7-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.elf"));
    std::fs::write(&path, &img.bytes).unwrap();
    // qemu-arm refuses to load a file without execute permission.
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let qchild = std::process::Command::new("timeout")
        .arg("120")
        .arg(qemu_arm())
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running qemu-arm (apt-get install -y qemu-user)");
    let tpath = path.clone();
    let tchild = std::thread::spawn(move || super::a64::run(&tpath, false));
    let ours = run_user_partial(BASE, &img.bytes, img.entry, 200_000_000, Some(stats));
    let q = qchild.wait_with_output().expect("qemu-arm");
    let t = tchild.join().unwrap();
    if std::env::var("DBT_DIFF_KEEP").is_err() {
        let _ = std::fs::remove_file(&path);
    } else {
        eprintln!("kept {}", path.display());
    }
    let mut fails = Vec::new();
    let ours = match ours {
        Ok(o) => o,
        Err((e, o)) => {
            fails.push(format!(
                "{tag}: interpreter stopped in case {}: {e}",
                o.len() / REC
            ));
            o
        }
    };
    for (name, o) in [("qemu-arm", &q), ("translator", &t)] {
        if !o.status.success() {
            fails.push(format!(
                "{tag}: {name} exited with {:?} after {} cases: {}",
                o.status,
                o.stdout.len() / REC,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    for (k, c) in cases.iter().enumerate() {
        let r = k * REC..(k + 1) * REC;
        let (Some(qr), Some(or), Some(tr)) = (
            q.stdout.get(r.clone()),
            ours.get(r.clone()),
            t.stdout.get(r),
        ) else {
            fails.push(format!("{tag} case {k}: missing output\n{}", c.line()));
            break;
        };
        let (mut qr, mut or, mut tr) = (qr.to_vec(), or.to_vec(), tr.to_vec());
        normalise(&mut qr);
        normalise(&mut or);
        normalise(&mut tr);
        if qr != or {
            fails.push(format!("{tag} case {k}: {}", describe(c, &qr, &or)));
        } else if qr != tr {
            fails.push(format!(
                "{tag} case {k} (translator): {}",
                describe(c, &qr, &tr)
            ));
        }
    }
    fails
}

/// The random scratch contents of a run (`SCR` bytes).
pub fn scratch(rng: &mut Rng) -> Vec<u8> {
    (0..SCR).map(|_| rng.u32() as u8).collect()
}
