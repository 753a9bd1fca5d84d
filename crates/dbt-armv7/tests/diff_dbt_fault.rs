//! Faults in the middle of translated blocks: random A32 sequences (the generator of
//! `diff_dbt`) with one or two accesses through r9 inserted at random positions, r9
//! pointing at unmapped guest memory (below the image, above 0xf0000000, or close enough
//! to 4 GiB that `[r9, #imm]` wraps around to page 0). The host faults on the translated
//! access (also in the guard region above 4 GiB, where the one-instruction `[xn, #imm]`
//! form lands when the guest address wraps); `a64-runner`'s signal handler sends the
//! fault back to the engine, which finds the guest instruction in its side table and runs
//! it in the interpreter, which raises the data abort. The runner (`--skip-aborts`)
//! prints the exact state at each abort (PC, r0-r14, CPSR, FSR/FAR) and continues after
//! the instruction (its IT state advanced). A third of the cases are Thumb: an IT block
//! whose second instruction is a 32-bit access through r9, then a random Thumb sequence
//! (the abort reports the IT state of the faulting instruction). Also misaligned `LDRD/STRD` (the translated code's side exit), and
//! `LDM/STM` and exclusives through r9, and VFP/Advanced SIMD accesses (VLDR/VSTR,
//! VLDM/VSTM, VLD1-4/VST1-4 of every kind) through r9. The abort lines and the records must be the same through the
//! translator as through the interpreter alone. The seed is `DBT_DIFF_SEED`; the count
//! `DBT_FAULT_CASES` (default 2000).

mod common;

use common::gen_a32::{self, sequence, IDX_REG};
use common::harness::{build, scratch, Case};
use common::Rng;

/// The register that holds the unmapped base.
const BAD: u32 = 9;
/// Destinations: the defaults but r9.
const DESTS: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 14];
const BATCH: usize = 500;

/// A load or store through r9 in any addressing form.
fn bad_access(rng: &mut Rng) -> u32 {
    let c = 14 << 28;
    let load = rng.below(2);
    let u = rng.below(2);
    let (p, w) = [(1, 0), (1, 1), (0, 0)][rng.below(3) as usize];
    let rt = loop {
        let r = gen_a32::source(rng);
        if r != BAD && (load == 0 || DESTS.contains(&r)) {
            break r;
        }
    };
    match rng.below(8) {
        // LDRD/STRD at a misaligned offset from the (mapped) scratch base: the translated
        // code leaves through its side exit, the interpreter raises the alignment fault.
        0 => {
            let rt = 2 * rng.below(5);
            let imm = 4 * rng.below(16) + 1 + rng.below(3);
            let op = if load == 1 { 0b1101 } else { 0b1111 };
            return c
                | 1 << 24
                | u << 23
                | 1 << 22
                | gen_a32::BASE_REG << 16
                | rt << 12
                | (imm >> 4) << 8
                | op << 4
                | (imm & 15);
        }
        // LDM/STM through r9.
        1 => {
            let list = (rng.u32() & 0x53ff & !(1 << BAD)) | 1;
            return c | 0x0800_0000 | rng.below(4) << 23 | load << 20 | BAD << 16 | list;
        }
        // LDREX/STREX through r9.
        2 if load == 1 => return c | 0x0190_0f9f | BAD << 16 | rt << 12,
        2 => return c | 0x0180_0f90 | BAD << 16 | 8 << 12 | rng.below(8),
        // VLDR/VSTR of a D register, VLDM/VSTM (increment after, with or without
        // writeback) through r9.
        3 => {
            let d = rng.below(28);
            let (vd, dbit) = (d & 15, d >> 4);
            let fields = dbit << 22 | load << 20 | BAD << 16 | vd << 12;
            return if rng.below(2) == 0 {
                c | 0x0d00_0b00 | u << 23 | fields | rng.below(256)
            } else {
                c | 0x0c80_0b00 | rng.below(2) << 21 | fields | (2 * (1 + rng.below(4)))
            };
        }
        // VLD1-4/VST1-4 through r9 (with or without writeback): multiple structures,
        // one lane (bytes), all lanes (loads).
        4 => {
            let d = rng.below(24);
            let rm = [15, 13][rng.below(2) as usize];
            let base = 0xf400_0000 | (d >> 4) << 22 | load << 21 | BAD << 16 | (d & 15) << 12 | rm;
            let n = rng.below(4);
            return match rng.below(3) {
                0 => {
                    let t = [0x7, 0xa, 0x6, 0x2, 0x8, 0x3, 0x4, 0x0][rng.below(8) as usize];
                    base | t << 8 | rng.below(3) << 6
                }
                1 if load == 1 => base | 1 << 23 | 3 << 10 | n << 8 | rng.below(3) << 6,
                _ => base | 1 << 23 | n << 8 | rng.below(8) << 5,
            };
        }
        _ => {}
    }
    if rng.below(3) > 0 {
        let reg = rng.below(4) == 0;
        let off = if reg {
            1 << 25 | IDX_REG
        } else {
            rng.below(4096)
        };
        c | 1 << 26
            | p << 24
            | u << 23
            | rng.below(2) << 22
            | w << 21
            | load << 20
            | BAD << 16
            | rt << 12
            | off
    } else {
        let sh = if load == 1 { 1 + rng.below(3) } else { 1 };
        let v = rng.below(256);
        c | p << 24
            | u << 23
            | 1 << 22
            | w << 21
            | load << 20
            | BAD << 16
            | rt << 12
            | (v >> 4) << 8
            | 1 << 7
            | sh << 5
            | 1 << 4
            | (v & 15)
    }
}

/// A Thumb case: an IT block whose second instruction is a 32-bit access through r9
/// (the fault restores the IT state of that instruction), then a random Thumb sequence.
fn thumb_case(rng: &mut Rng) -> Case {
    let mut c = common::gen_t32::sequence(rng);
    let firstcond = rng.below(14);
    let mask = (firstcond & 1) << 3 | 0b0100;
    let (h1, h2) = match rng.below(3) {
        0 => (0xf8d9, rng.below(8) << 12 | rng.below(4096)), // LDR.W rt, [r9, #imm12]
        1 => (0xf8c9, rng.below(8) << 12 | rng.below(4096)), // STR.W rt, [r9, #imm12]
        _ => (0xf839, rng.below(6) << 12 | 0xc00 | rng.below(256)), // LDRH rt, [r9, #-imm8]
    };
    let prefix = [0xbf00 | firstcond << 4 | mask, 0x3001, h1, h2];
    c.code.splice(0..0, prefix);
    c.regs[BAD as usize] = 0xf000_0000 + 4 * rng.below(0x4000);
    c
}

fn case(rng: &mut Rng) -> Case {
    if rng.below(3) == 0 {
        return thumb_case(rng);
    }
    let mut c = sequence(rng);
    for _ in 0..1 + rng.below(2) {
        let at = rng.below(c.code.len() as u32 + 1) as usize;
        // A forward branch before `at` may now skip the access: fine, both runs agree.
        c.code.insert(at, bad_access(rng));
    }
    c.regs[BAD as usize] = match rng.below(4) {
        0 => 0x100 + 4 * rng.below(0x3000),
        1 => 0xf000_0000 + 4 * rng.below(0x4000),
        2 => 0xffff_f000 + rng.below(0x1000),
        _ => 0u32.wrapping_sub(4 * rng.below(64)),
    };
    c
}

#[test]
fn faults_mid_block_give_the_interpreters_state() {
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_fa17);
    let count: usize = std::env::var("DBT_FAULT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    println!("translator faults: seed {seed:#x} (DBT_DIFF_SEED), {count} sequences");
    gen_a32::set_dests(DESTS);
    gen_a32::allow_exclusives(false);
    let mut rng = Rng::seeded(seed);
    let src = scratch(&mut rng);
    let cases: Vec<Case> = (0..count).map(|_| case(&mut rng)).collect();
    let dir = std::env::temp_dir().join(format!("dbt-armv7-fault-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut aborts, mut faults) = (0, 0);
    for (b, chunk) in cases.chunks(BATCH).enumerate() {
        let img = build(chunk, &src);
        let path = dir.join(format!("batch{b}.elf"));
        std::fs::write(&path, &img.bytes).unwrap();
        let p2 = path.clone();
        let t = std::thread::spawn(move || common::a64::run_with(&p2, &["--skip-aborts"]));
        let i = common::a64::run_with(&path, &["--interp", "--skip-aborts"]);
        let t = t.join().unwrap();
        for (name, o) in [("translator", &t), ("interpreter", &i)] {
            assert!(
                o.status.success(),
                "{name} failed on batch {b}: {:?} {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let lines = |o: &std::process::Output| -> Vec<String> {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| l.starts_with("abort "))
                .map(String::from)
                .collect()
        };
        let (tl, il) = (lines(&t), lines(&i));
        for (k, (x, y)) in tl.iter().zip(&il).enumerate() {
            assert_eq!(
                x, y,
                "batch {b}: abort {k} differs (translator, interpreter)"
            );
        }
        assert_eq!(tl.len(), il.len(), "batch {b}: number of aborts");
        if t.stdout != i.stdout {
            let k = (0..t.stdout.len().min(i.stdout.len()))
                .find(|&k| t.stdout[k] != i.stdout[k])
                .unwrap_or(0)
                / common::harness::REC;
            panic!("batch {b}: record of case {k} differs: {}", chunk[k].line());
        }
        aborts += tl.len();
        faults += common::a64::stats(&t.stderr)
            .iter()
            .find(|(k, _)| k == "faults")
            .map_or(0, |x| x.1);
        let _ = std::fs::remove_file(&path);
    }
    println!(
        "translator faults: {count} sequences, {aborts} data aborts, {faults} host faults in translated code mapped back, all states equal"
    );
    assert!(aborts > count / 2, "too few aborts: {aborts}");
    assert!(
        faults as usize > aborts / 2,
        "too few host faults in translated code: {faults}"
    );
}
