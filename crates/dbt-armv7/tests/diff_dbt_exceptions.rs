//! Exceptions taken and returned inside translated code (`translate::a64::exception`)
//! against the interpreter: random PL1 programs (A32 or Thumb, seed `DBT_DIFF_SEED`) that
//! switch among the modes with `CPS`, load the banked SP/LR and the flags with random
//! values, and raise `SVC` (conditional, in an IT block, or in the other instruction set
//! after a `BX`) and UNDEFINED (`UDF`). The handlers fold SPSR, CPSR, SP and LR into a checksum,
//! then rewrite the SPSR from a table of random changes (the mode: User, FIQ, IRQ, SVC,
//! Abort, Undefined, System, or unmodelled ones; NZCV, Q, GE, A, I, F) and return with
//! `MOVS pc, lr`, `SUBS pc, lr, #4` after `ADD lr, lr, #4`, or `ERET`. The program ends in
//! SVC mode and writes the checksum: the interpreter (`--interp`) and the translator must
//! write the same, and the translator must take most of the exceptions inline (few
//! entries into the code cache).

mod common;

use common::code::Code;
use common::Rng;

/// Where the image is loaded; the vectors (`VBAR`), the program, the SPSR changes and
/// the output word.
const BASE: u32 = 0x10000;
const VECTORS: u32 = 0x10800;
const MAIN: u32 = 0x11000;
const TWEAKS: u32 = 0x20000;
const OUT: u32 = 0x30000;
/// Times the random body runs.
const PASSES: u32 = 4;
/// The SPSR change the last `SVC` uses: back to SVC mode.
const FINAL_TWEAK: u32 = 0x2f000;

/// How the handlers return.
#[derive(Clone, Copy, Debug)]
enum Ret {
    Movs,
    Subs4,
    Eret,
}

/// A32 handler body (r1-r3 scratch, r4 walks the SPSR changes, r0 the checksum).
fn handler(ret: Ret) -> Vec<u32> {
    let mut v = vec![
        0xe14f_1000, // mrs r1, spsr
        0xe10f_2000, // mrs r2, cpsr
        0xe080_0001, // add r0, r0, r1
        0xe022_03e0, // eor r0, r2, r0, ror #7
        0xe080_000d, // add r0, r0, sp
        0xe080_000e, // add r0, r0, lr
        0xe494_3004, // ldr r3, [r4], #4
        0xe203_201f, // and r2, r3, #0x1f
        0xe352_0000, // cmp r2, #0
        0x13c1_101f, // bicne r1, r1, #0x1f
        0x1181_1002, // orrne r1, r1, r2
        0xe3c3_301f, // bic r3, r3, #0x1f
        0xe021_1003, // eor r1, r1, r3
        0xe16f_f001, // msr spsr_fsxc, r1
    ];
    match ret {
        Ret::Movs => v.push(0xe1b0_f00e),                   // movs pc, lr
        Ret::Subs4 => v.extend([0xe28e_e004, 0xe25e_f004]), // add lr, lr, #4; subs pc, lr, #4
        Ret::Eret => v.push(0xe160_006e),                   // eret
    }
    v
}

const MODES: [u32; 7] = [0x10, 0x11, 0x12, 0x13, 0x17, 0x1b, 0x1f];

/// A random program: its image and entry (bit 0: Thumb).
fn program(rng: &mut Rng, thumb: bool, ret: Ret, steps: usize) -> (Vec<u8>, u32) {
    let mut c = Code {
        thumb,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.both(0xee0c_1f10, 0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    c.mov32(4, TWEAKS);
    c.mov32(0, 0);
    c.mov32(6, PASSES);
    let top = c.h.len();
    for _ in 0..steps {
        match rng.below(11) {
            10 => {
                // An SVC in the other instruction set, reached and left by BX (through
                // the target cache once translated: the CPU's T bit is stale there).
                let svc = rng.below(256);
                if thumb {
                    if c.h.len() % 2 == 1 {
                        c.t16(0xbf00); // nop: word-align the ADR
                    }
                    c.h.extend([0xa101, 0x4708, 0xbf00, 0xbf00]); // adr r1, arm; bx r1
                    c.a32(0xef00_0000 | svc); // arm: svc
                    c.a32(0xe28f_1001); // add r1, pc, #1
                    c.a32(0xe12f_ff11); // bx r1
                } else {
                    c.a32(0xe28f_1001); // add r1, pc, #1
                    c.a32(0xe12f_ff11); // bx r1
                    c.h.extend([0xdf00 | svc as u16, 0xa101, 0x4708, 0xbf00]); // svc; adr r1, arm; bx r1
                }
            }
            0 | 1 => {
                let m = MODES[rng.below(7) as usize];
                c.both(0xf102_0000 | m, 0xf3af_8100 | m); // cps #m
            }
            2 | 3 => {
                // SP or LR of the current mode.
                let rd = 13 + rng.below(2);
                let v = rng.u32();
                c.mov32(1, v);
                if thumb {
                    c.t16(0x4688 | (rd as u16 & 7)); // mov sp|lr, r1
                } else {
                    c.a32(0xe1a0_0001 | rd << 12);
                }
            }
            4 => {
                // NZCVQ.
                let b = rng.below(32) << 3;
                c.mov32(1, b << 24);
                c.both(0xe128_f001, 0xf381_8800); // msr apsr_nzcvq, r1
            }
            _ => {
                let svc = rng.below(2) == 0;
                let imm = rng.u32();
                if svc {
                    if thumb {
                        if rng.below(4) == 0 {
                            c.t16(0xbf08); // it eq
                        }
                        c.t16(0xdf00 | (imm & 0xff) as u16);
                    } else {
                        let cond = if rng.below(4) == 0 { rng.below(14) } else { 14 };
                        c.a32(cond << 28 | 0x0f00_0000 | (imm & 0xff_ffff));
                    }
                } else if thumb {
                    // (A 32-bit UDF.W would return to its second halfword: LR is the
                    // instruction's address + 2 in Thumb.)
                    c.t16(0xde00 | (imm & 0xff) as u16);
                } else {
                    c.a32(0xe7f0_00f0 | (imm >> 4 & 0xfff) << 8 | (imm & 0xf));
                }
                c.both(0xe080_000d, 0xeb0d_0000); // add r0, r0, sp
                c.both(0xe020_01ee, 0xea80_00fe); // eor r0, r0, lr, ror #3
                c.both(0xe10f_1000, 0xf3ef_8100); // mrs r1, cpsr
                c.both(0xe080_05e1, 0xeb00_20f1); // add r0, r0, r1, ror #11
            }
        }
    }
    // The body again (PASSES times: translated blocks and target cache entries reused).
    c.loop_back(MAIN, top);
    // Back to SVC mode, write the checksum, exit.
    c.mov32(4, FINAL_TWEAK);
    if thumb {
        c.t16(0xdf00);
    } else {
        c.a32(common::a32::SVC0);
    }
    c.write_r0_and_exit(OUT);

    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, w: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&w.to_le_bytes());
    };
    // Vectors: UNDEFINED and SVC branch to the handler; the rest hang.
    let h = VECTORS + 0x20;
    for k in 0..8u32 {
        let at = VECTORS + 4 * k;
        let w = if k == 1 || k == 2 {
            common::a32::b(14, at, h)
        } else {
            common::a32::b(14, at, at)
        };
        put(&mut img, at, w);
    }
    for (k, w) in handler(ret).into_iter().enumerate() {
        put(&mut img, h + 4 * k as u32, w);
    }
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    assert!(MAIN as usize + 2 * c.h.len() < TWEAKS as usize);
    const NEW_MODE: [u32; 13] = [
        0, 0, 0, 0, 0x10, 0x11, 0x12, 0x13, 0x17, 0x1b, 0x1f, 0x16, 0x1a,
    ];
    for k in 0..steps as u32 * PASSES + 16 {
        let flips = rng.u32() & (0xf800_0000 | 0x000f_0000 | 0x1c0);
        let m = NEW_MODE[rng.below(NEW_MODE.len() as u32) as usize];
        put(&mut img, TWEAKS + 4 * k, flips | m);
    }
    put(&mut img, FINAL_TWEAK, 0x13);
    (img, MAIN | thumb as u32)
}

fn run(elf: &[u8], opts: &[&str]) -> (i32, Vec<u8>, Vec<(String, u64)>) {
    common::a64::run_image_output(elf, "exceptions", opts)
}

#[test]
fn inline_exceptions_agree_with_the_interpreter() {
    let seed: u64 = std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let opts = ["--privileged", "--vectors", "--svc-vectors"];
    let mut total_entries = 0;
    let mut total_exceptions = 0;
    for (case, (thumb, ret)) in [
        (false, Ret::Movs),
        (false, Ret::Subs4),
        (false, Ret::Eret),
        (true, Ret::Movs),
        (true, Ret::Subs4),
        (true, Ret::Eret),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rng = Rng::seeded(seed.wrapping_mul(31).wrapping_add(case as u64));
        let steps = 150;
        let (img, entry) = program(&mut rng, thumb, ret, steps);
        let elf = common::elf32(BASE, entry, &img);
        let (si, oi, _) = run(&elf, &["--interp", opts[0], opts[1], opts[2]]);
        let (st, ot, stats) = run(&elf, &opts);
        let what = format!("seed {seed} case {case} (thumb {thumb}, {ret:?})");
        assert_eq!(si, 0, "{what}: interpreter status");
        assert_eq!(oi.len(), 4, "{what}: interpreter output");
        assert_eq!(
            (st, &ot),
            (0, &oi),
            "{what}: translator vs interpreter {stats:?}"
        );
        let get = |k: &str| stats.iter().find(|s| s.0 == k).map_or(0, |s| s.1);
        total_entries += get("entries");
        total_exceptions += (steps as u32 * PASSES / 2) as u64;
        eprintln!("{what}: checksum {oi:02x?}, {stats:?}");
    }
    eprintln!("code cache entries {total_entries} for ~{total_exceptions} exceptions");
}

/// A loop that `BX`es from A32 into a Thumb `SVC` and back, then makes an A32 `SVC`: once
/// translated, the branches go through the target cache (the CPU's T bit is stale), and
/// each SVC's SPSR must still name its own instruction set, so that `MOVS pc, lr`
/// returns into the right one.
#[test]
fn svc_after_an_interworking_branch_saves_the_thumb_bit() {
    let mut c = Code {
        thumb: false,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.a32(0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    c.mov32(4, TWEAKS);
    c.mov32(0, 0);
    c.mov32(6, 100);
    let top = c.h.len();
    c.a32(0xe28f_1001); // add r1, pc, #1
    c.a32(0xe12f_ff11); // bx r1
                        // nop; svc #7; adds r0, #3; adr r1, arm; bx r1; nop (the first nop keeps the block's
                        // address and the SVC's return address in different target cache entries)
    c.h.extend([0xbf00, 0xdf07, 0x3003, 0xa101, 0x4708, 0xbf00]);
    c.a32(0xe280_0001); // add r0, r0, #1
    c.a32(0xef00_0008); // svc #8 (A32)
    c.loop_back(MAIN, top);
    c.write_r0_and_exit(OUT);
    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, w: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&w.to_le_bytes());
    };
    // SVC vector: r0 += SPSR.T (0x20), then return.
    put(&mut img, VECTORS + 8, 0xe14f_2000); // mrs r2, spsr
    put(&mut img, VECTORS + 12, 0xe202_2020); // and r2, r2, #0x20
    put(&mut img, VECTORS + 16, 0xe080_0002); // add r0, r0, r2
    put(&mut img, VECTORS + 20, 0xe1b0_f00e); // movs pc, lr
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    let elf = common::elf32(BASE, MAIN, &img);
    let opts = ["--privileged", "--vectors", "--svc-vectors"];
    let (si, oi, _) = run(&elf, &["--interp", opts[0], opts[1], opts[2]]);
    let (st, ot, stats) = run(&elf, &opts);
    assert_eq!(
        (si, oi.as_slice()),
        (0, &3600u32.to_le_bytes()[..]),
        "interpreter"
    );
    assert_eq!((st, ot), (0, oi), "translator: {stats:?}");
    let get = |k: &str| stats.iter().find(|s| s.0 == k).map_or(0, |s| s.1);
    assert!(
        get("entries") < 50,
        "the loop stays in the code cache: {stats:?}"
    );
}
