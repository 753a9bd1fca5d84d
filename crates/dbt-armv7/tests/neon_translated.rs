//! Which Advanced SIMD instructions the translator lowers to A64 rather than leaving to
//! the interpreter: 20,000 words from the differential test's seeded NEON generator
//! (`tests/common/gen_vfp.rs`, every family: three-same integer and float, shifts,
//! long/wide/narrow, by-scalar, two-register misc, VEXT, VTBL/VTBX, VDUP, VLDn/VSTn of
//! every form), decoded as A32 and as T32. Every one the decoder accepts as a defined,
//! predictable instruction must be translatable (`CodeGen::supports`) except the few
//! groups left to the interpreter by design, which are listed and counted.

mod common;

use common::gen_vfp::neon_insn;
use common::Rng;
use dbt_armv7::decode::{decode_a32, decode_thumb};
use dbt_armv7::translate::a64::A64Gen;
use dbt_armv7::translate::backend::CodeGen;
use std::collections::BTreeMap;

/// Groups the translator leaves to the interpreter: `VZIP`/`VUZP`/`VTRN` of a register
/// with itself and single-structure loads and stores whose register list passes D31
/// (UNPREDICTABLE; the interpreter gives qemu-arm's result), and `VRECPS`/`VRSQRTS`
/// (ARMv7 rounds their product; A64's FRECPS/FRSQRTS are fused).
fn by_design(w: u32) -> bool {
    if w & 0xfe80_0f10 == 0xf200_0f10 && w >> 24 & 1 == 0 && w >> 20 & 1 == 0 {
        return true;
    }
    let d = (w >> 12 & 15) | (w >> 22 & 1) << 4;
    let m = (w & 15) | (w >> 5 & 1) << 4;
    let b = w >> 7 & 0xf;
    if w & 0xffb3_0000 == 0xf3b2_0000 && (1..=3).contains(&b) {
        return d == m;
    }
    if w >> 24 == 0xf4 && w >> 23 & 1 == 1 {
        let n = (w >> 8 & 3) + 1;
        let size = w >> 10 & 3;
        let last = match size {
            3 if n == 1 => d + (w >> 5 & 1),
            3 => d + (n - 1) * (1 + (w >> 5 & 1)),
            0 => d + n - 1,
            1 => d + (n - 1) * (1 + (w >> 5 & 1)),
            _ => d + (n - 1) * (1 + (w >> 6 & 1)),
        };
        return last > 31;
    }
    false
}

/// The A32 word's family, for the report: its top 12 bits and bits 11:8.
fn family(w: u32) -> String {
    format!("{:03x}x{:x}xx", w >> 20, w >> 8 & 15)
}

#[test]
fn neon_data_processing_and_memory_are_translated() {
    let gen = A64Gen::new();
    let mut rng = Rng(0x5eed_2e0e);
    let (mut defined, mut translated, mut designed) = (0u32, 0u32, 0u32);
    let mut missing: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for _ in 0..20_000 {
        let words = neon_insn(&mut rng);
        let w = *words.last().unwrap();
        let t32 = match w >> 24 {
            0xf2 | 0xf3 => 0xef00_0000 | (w >> 24 & 1) << 28 | (w & 0xff_ffff),
            _ => 0xf900_0000 | (w & 0xff_ffff),
        };
        for insn in [decode_a32(w), decode_thumb((t32 >> 16) as u16, t32 as u16)] {
            if insn.is_undefined() || insn.unpredictable {
                continue;
            }
            defined += 1;
            if gen.supports(&insn) {
                translated += 1;
            } else if by_design(w) {
                designed += 1;
            } else {
                missing.entry(family(w)).or_insert((0, w)).0 += 1;
            }
        }
    }
    println!("NEON: {defined} defined, {translated} translated, {designed} interpreted by design");
    for (f, (n, w)) in &missing {
        println!("  not translated: {f} x{n} (e.g. {w:08x})");
    }
    assert!(
        defined > 30_000,
        "the generator produced {defined} defined words"
    );
    assert!(
        missing.is_empty(),
        "{} families not translated",
        missing.len()
    );
}
