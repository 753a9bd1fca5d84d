//! Register-shifted register operands (`<rm>, <shift> <rs>`) at the amounts where A32 and
//! A64 variable shifts part ways, three ways (`qemu-arm`, the interpreter, the
//! translator): `rs<7:0>` of 0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 192 and 255, with
//! bits above 7 set or clear (A32 ignores them, A64's `LSRV` of a 64-bit register would
//! not), for every shift type, in operations without the shifter carry (the translator's
//! three-instruction form with a `CBZ` past the large-amount result), flag-setting logical
//! ones (with the carry) and compares, and with the destination or the shifted register
//! the same as `rs`. Each sequence runs in a loop, so the code is translated, then reached
//! again linked.

mod common;

use common::a32;
use common::harness::{random_regs, run_batch, scratch, Case};
use common::Rng;

/// Low bytes of `rs` around the A32/A64 boundaries (0, 32, 64, 128 and up).
const AMOUNTS: [u32; 12] = [0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 192, 255];

/// `<op>{s} rd, rn, rm, <shift> rs` (A32, always).
fn dp_shift_reg(op: u32, s: u32, rd: u32, rn: u32, rm: u32, shift: u32, rs: u32) -> u32 {
    0xe000_0010 | op << 21 | s << 20 | rn << 16 | rd << 12 | rs << 8 | shift << 5 | rm
}

/// One case: four register-shifted operations reading `rs` = r2 (and r3 = r2 + 1) and
/// `rm` = r1 (a sign bit set on half the cases), in a loop of three iterations that
/// changes the amount each time (`add r2, r2, #31`).
fn case(rng: &mut Rng, amount: u32) -> Case {
    let mut regs = random_regs(rng, false);
    let high = match rng.below(3) {
        0 => 0,
        1 => rng.u32() & !0xff,
        _ => 0x100,
    };
    regs[1] = if rng.below(2) == 0 {
        rng.u32() | 0x8000_0000
    } else {
        rng.u32() & 0x7fff_ffff
    };
    regs[2] = high | amount;
    regs[3] = regs[2].wrapping_add(1);
    regs[6] = 3;
    let shift = |rng: &mut Rng| rng.below(4);
    // EOR, ADD, SUB, ORR, MOV, BIC, MVN, CMP, TST: S on a third of the non-test ones.
    let ops = [1u32, 4, 2, 12, 13, 14, 15, 10, 8];
    let mut body = Vec::new();
    for k in 0..4 {
        let op = ops[rng.below(ops.len() as u32) as usize];
        let test = (8..12).contains(&op);
        let s = if test { 1 } else { (rng.below(3) == 0) as u32 };
        let rd = match (test, k) {
            (true, _) => 0,
            // The destination is rs, or the shifted register, on some.
            (false, 1) => 3,
            (false, 2) => 1,
            _ => 4 + k,
        };
        let rn = if op == 13 || op == 15 { 0 } else { 5 };
        let (rm, rs) = if k == 3 { (2, 2) } else { (1, 2 + (k & 1)) };
        body.push(dp_shift_reg(op, s, rd, rn, rm, shift(rng), rs));
    }
    let mut code = Vec::new();
    code.extend_from_slice(&body);
    code.push(0xe282_201f); // add  r2, r2, #31
    code.push(0xe256_6001); // subs r6, r6, #1
    code.push(a32::b(1, 4 * code.len() as u32, 0)); // bne  0
    let mut c = Case::new(false, code, regs);
    c.note = format!("rs {:#x}", regs[2]);
    c
}

#[test]
fn register_shifted_operands_agree_at_every_amount() {
    let mut rng = Rng(0x5_41f7);
    let src = scratch(&mut rng);
    let mut cases = Vec::new();
    for _ in 0..6 {
        for amount in AMOUNTS {
            cases.push(case(&mut rng, amount));
        }
    }
    let mut stats = Vec::new();
    let fails = run_batch(&cases, &src, &mut stats, "shift-reg");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}
