//! `LDREXD`/`STREXD` against `qemu-arm`, at every byte offset of a doubleword.
//!
//! The architecture requires a doubleword-aligned address for both (ARM ARM pseudocode:
//! `if address<2:0> != '000' then AlignmentFault(address, ...)`), whatever `SCTLR.A` says.
//! The interpreter used to hold the *second* word (at `address + 4`) to 8-byte alignment as
//! well, so every `LDREXD`/`STREXD` faulted; `diff_qemu` never reached them because its
//! generator keeps only what the interpreter runs without an exception.
//!
//! - Aligned (offset 0 of a doubleword): an A32 and a T32 sequence (load-exclusive,
//!   modify, store-exclusive that succeeds, a second store-exclusive that fails, a
//!   `CLREX`'d store that fails) must give the same registers, flags and memory as under
//!   `qemu-arm`.
//! - Misaligned (offsets 1..7, including the word-aligned offset 4): the first
//!   instruction must raise an alignment fault in the interpreter (data abort, short-format
//!   FSR `0b00001`, `DFAR` = the address, PC at the instruction, no register written).
//!   Under `qemu-arm`, `LDREXD` must raise `SIGBUS`. QEMU deviates for `STREXD`: it checks
//!   the alignment only after the address matched the monitor, so with the monitor clear
//!   the store just fails (`Rd = 1`). The ARM ARM's `ExclusiveMonitorsPass` checks the
//!   alignment first (only the *MMU* abort may come after the monitor check, IMPLEMENTATION
//!   DEFINED), and the interpreter follows the ARM ARM; the test checks QEMU's answer as
//!   what it is.
//!
//! A host-only test also checks `STREXD` with `SCTLR.A = 1` (it used to check only word
//! alignment there).

mod common;

use common::harness::{build, random_regs, run_batch, run_qemu, scratch, Case, BASE, DST};
use common::{qemu_arm, run_user_partial, Rng};
use dbt_armv7::cpu::Exception;
use dbt_armv7::{Cpu, Exit, FlatRam};
use std::os::unix::process::ExitStatusExt;

/// `ldrexd r0, r1, [r11]`.
const A32_LDREXD: u32 = 0xe1bb_0f9f;
/// `strexd r2, r0, r1, [r11]`.
const A32_STREXD_R2: u32 = 0xe1ab_2f90;
/// `strexd r3, r0, r1, [r11]`.
const A32_STREXD_R3: u32 = 0xe1ab_3f90;
/// `add r0, r0, #1`.
const A32_ADD_R0_1: u32 = 0xe280_0001;
/// `clrex`.
const A32_CLREX: u32 = 0xf57f_f01f;
/// `strexd r4, r0, r1, [r11]`.
const A32_STREXD_R4: u32 = 0xe1ab_4f90;
/// `ldrexd r3, r5, [r7]` (T32 allows any pair).
const T32_LDREXD: [u32; 2] = [0xe8d7, 0x357f];
/// `strexd r2, r3, r5, [r7]`.
const T32_STREXD_R2: [u32; 2] = [0xe8c7, 0x3572];
/// `strexd r4, r3, r5, [r7]`.
const T32_STREXD_R4: [u32; 2] = [0xe8c7, 0x3574];
/// `adds r3, #1`.
const T16_ADDS_R3_1: u32 = 0x3301;
/// `nop` (T16), to keep the T32 code a multiple of 4 bytes.
const T16_NOP: u32 = 0xbf00;
/// `SIGBUS`: `qemu-arm` dies of it (and `timeout` re-raises it).
const SIGBUS: i32 = 7;

fn aligned_cases(rng: &mut Rng) -> Vec<Case> {
    let mut a = random_regs(rng, false);
    a[11] = DST + 0x100;
    let mut t = random_regs(rng, true);
    t[7] = DST + 0x208;
    let t32: Vec<u32> = T32_LDREXD
        .iter()
        .copied()
        .chain([T16_ADDS_R3_1])
        .chain(T32_STREXD_R2)
        .chain(T32_STREXD_R4)
        .chain([T16_NOP])
        .collect();
    vec![
        Case::new(
            false,
            vec![
                A32_LDREXD,
                A32_ADD_R0_1,
                A32_STREXD_R2,
                A32_STREXD_R3,
                A32_LDREXD,
                A32_CLREX,
                A32_STREXD_R4,
            ],
            a,
        ),
        Case::new(true, t32, t),
    ]
}

#[test]
fn ldrexd_strexd_aligned_match_qemu() {
    let _ = qemu_arm();
    let mut rng = Rng(0x1d_4e_0d);
    let src = scratch(&mut rng);
    let cases = aligned_cases(&mut rng);
    let mut stats = vec![0u64; dbt_armv7::Class::COUNT];
    let fails = run_batch(&cases, &src, &mut stats, "exclusive-aligned");
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

#[test]
fn ldrexd_strexd_misaligned_fault_like_qemu() {
    let _ = qemu_arm();
    let mut rng = Rng(0x1d_4e_0e);
    let src = scratch(&mut rng);
    let mut fails = Vec::new();
    for off in 1..8u32 {
        for (thumb, code) in [
            (false, vec![A32_LDREXD]),
            (false, vec![A32_STREXD_R2]),
            (true, T32_LDREXD.to_vec()),
            (true, T32_STREXD_R2.to_vec()),
        ] {
            let mut regs = random_regs(&mut rng, thumb);
            let (base, addr) = if thumb {
                (7, DST + 0x208 + off)
            } else {
                (11, DST + 0x100 + off)
            };
            regs[base] = addr;
            let c = Case::new(thumb, code, regs);
            let img = build(std::slice::from_ref(&c), &src);
            let what = format!("offset {off}: {}", c.line());
            // The interpreter: an alignment fault on the instruction itself.
            match run_user_partial(BASE, &img.bytes, img.entry, 1_000_000, None) {
                Err((e, _)) => {
                    let want = format!(
                        "{:?}",
                        Exit::Exception(Exception::DataAbort {
                            fsr: 0b00001 | if is_store(&c) { 1 << 11 } else { 0 },
                            far: addr
                        })
                    );
                    if !e.starts_with(&want) {
                        fails.push(format!("{what}: interpreter: {e}, expected {want}"));
                    }
                }
                Ok(_) => fails.push(format!("{what}: interpreter ran it without a fault")),
            }
            let q = run_qemu(&img.bytes, &[], &format!("exclusive-{off}"));
            if is_store(&c) {
                // QEMU checks a store-exclusive's alignment only once the monitor matched
                // (the harness ran CLREX): the store fails, Rd = 1, memory is untouched.
                if !q.status.success() || q.stdout.get(8..12) != Some(&1u32.to_le_bytes()[..]) {
                    fails.push(format!("{what}: qemu-arm: {:?}, expected r2 = 1", q.status));
                }
            } else if q.status.signal() != Some(SIGBUS) {
                fails.push(format!("{what}: qemu-arm: {:?}, expected SIGBUS", q.status));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

fn is_store(c: &Case) -> bool {
    if c.thumb {
        c.code[0] == T32_STREXD_R2[0]
    } else {
        c.code[0] == A32_STREXD_R2
    }
}

/// Runs `code` (A32) in SVC mode with `r11 = addr` and the given `SCTLR.A`.
fn run_svc(code: &[u32], addr: u32, sctlr_a: bool) -> (Exit, Cpu) {
    let mut ram = FlatRam::new(0, 0x10000);
    for (i, w) in code.iter().enumerate() {
        ram.load(4 * i as u64, &w.to_le_bytes());
    }
    let mut cpu = Cpu::new();
    cpu.set_exit_on_exception(true);
    if sctlr_a {
        cpu.cp15.sctlr |= 2;
    }
    cpu.set_reg(11, addr);
    cpu.set_reg(0, 0x1111_1111);
    cpu.set_reg(1, 0x2222_2222);
    let exit = cpu.run(&mut ram, code.len() as u64);
    (exit, cpu)
}

#[test]
fn strexd_needs_doubleword_alignment_with_sctlr_a() {
    for a in [false, true] {
        // Aligned: the pair succeeds and stores both words.
        let (exit, cpu) = run_svc(&[A32_LDREXD, A32_STREXD_R2], 0x8000, a);
        assert_eq!(exit, Exit::Budget, "SCTLR.A={a}");
        assert_eq!(cpu.reg(2), 0, "SCTLR.A={a}: strexd succeeded");
        // Word- but not doubleword-aligned: both fault, SCTLR.A or not.
        for code in [A32_LDREXD, A32_STREXD_R2] {
            let (exit, cpu) = run_svc(&[code], 0x8004, a);
            assert!(
                matches!(exit, Exit::Exception(Exception::DataAbort { fsr, far: 0x8004 }) if fsr & 0x40f == 1),
                "{code:08x} SCTLR.A={a}: {exit:?}"
            );
            assert_eq!(cpu.reg(15), 0, "PC stays at the faulting instruction");
        }
    }
}
