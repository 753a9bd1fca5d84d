//! Inline exception entries and returns specialised on the CPU state at translation time
//! (`ExcHint`: the mode, its SPSR and LR) against the interpreter. The random PL1 programs
//! (A32 or Thumb, seed `DBT_DIFF_SEED`) raise `SVC` and UNDEFINED from a mode that is the
//! same on every pass at some sites (`CPS`: the hint holds) and differs between passes at
//! others (`MSR CPSR_c` from a table: the hint fails and the general sequence runs), FIQ
//! mode included (banked R8-R12 differ from the others': an inline entry from FIQ would
//! show FIQ's to the handler). The SVC handler returns to many call sites with many SPSRs
//! (LR and SPSR hints fail and hold); the UNDEFINED handler is a bare return, as an OS's
//! trivial handlers are. Handlers fold LR, SPSR and R8-R12 into a checksum, and the main
//! program folds SP, LR and CPSR after each exception. A variant runs with `SCTLR.TE` set
//! (exceptions taken to Thumb handlers). The translator must print the interpreter's
//! checksum and take most exceptions without leaving the code cache.

mod common;

use common::code::Code;
use common::Rng;

const BASE: u32 = 0x10000;
const VECTORS: u32 = 0x10800;
const MAIN: u32 = 0x11000;
/// Random modes (with I and F set) that `MSR CPSR_c` sites take in turn.
const MODE_TABLE: u32 = 0x20000;
const OUT: u32 = 0x30000;
const PASSES: u32 = 6;

/// PL1 modes (no User: the program must get back to SVC mode with `CPS`).
const MODES: [u32; 6] = [0x11, 0x12, 0x13, 0x17, 0x1b, 0x1f];

/// How the SVC handler returns.
#[derive(Clone, Copy, Debug)]
enum Ret {
    /// `MOVS pc, lr` (Thumb: `SUBS pc, lr, #0`).
    Movs,
    /// `ERET`.
    Eret,
    /// `ADD lr, lr, #4` then `SUBS pc, lr, #4` (LR written in the block: no fast path).
    Subs4,
}

/// The SVC handler (in the instruction set `thumb`): LR, SPSR, R8 and R12 into r0.
fn svc_handler(thumb: bool, ret: Ret) -> Code {
    let mut c = Code {
        thumb,
        h: Vec::new(),
    };
    c.both(0xe080_000e, 0xeb00_000e); // add r0, r0, lr
    c.both(0xe14f_1000, 0xf3ff_8100); // mrs r1, spsr
    c.both(0xe080_02e1, 0xeb00_1071); // add r0, r0, r1, ror #5
    c.both(0xe080_0008, 0xeb00_0008); // add r0, r0, r8
    c.both(0xe020_04ec, 0xea80_207c); // eor r0, r0, r12, ror #9
    match ret {
        Ret::Movs => c.both(0xe1b0_f00e, 0xf3de_8f00), // movs pc, lr / subs pc, lr, #0
        Ret::Eret => c.both(0xe160_006e, 0xf3de_8f00), // eret
        Ret::Subs4 => {
            c.both(0xe28e_e004, 0xf10e_0e04); // add lr, lr, #4
            c.both(0xe25e_f004, 0xf3de_8f04); // subs pc, lr, #4
        }
    }
    c
}

/// A random program: its image and entry (bit 0: Thumb). `te`: `SCTLR.TE` set, the
/// handlers in Thumb.
fn program(rng: &mut Rng, thumb: bool, te: bool, ret: Ret, steps: usize) -> (Vec<u8>, u32) {
    let mut c = Code {
        thumb,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.both(0xee0c_1f10, 0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    if te {
        c.both(0xee11_1f10, 0xee11_1f10); // mrc p15, 0, r1, c1, c0, 0 (SCTLR)
        c.both(0xe381_1101, 0xf041_4180); // orr r1, r1, #0x40000000 (TE)
        c.both(0xee01_1f10, 0xee01_1f10); // mcr p15, 0, r1, c1, c0, 0
    }
    // FIQ's R8-R12 differ from everyone else's.
    c.both(0xf102_0011, 0xf3af_8111); // cps #0x11
    for r in 8..13 {
        c.mov32(r, rng.u32());
    }
    c.both(0xf102_0013, 0xf3af_8113); // cps #0x13
    for r in 8..13 {
        c.mov32(r, rng.u32());
    }
    c.mov32(4, MODE_TABLE);
    c.mov32(0, 0);
    c.mov32(6, PASSES);
    let top = c.h.len();
    for _ in 0..steps {
        match rng.below(10) {
            0 | 1 => {
                // The same mode on every pass.
                let m = MODES[rng.below(MODES.len() as u32) as usize];
                c.both(0xf102_0000 | m, 0xf3af_8100 | m); // cps #m
            }
            2 => {
                // A mode from the table: another one on each pass.
                c.both(0xe494_1004, 0xf854_1b04); // ldr r1, [r4], #4
                c.both(0xe121_f001, 0xf381_8100); // msr cpsr_c, r1
            }
            3 => {
                let rd = 13 + rng.below(2);
                c.mov32(1, rng.u32());
                if thumb {
                    c.t16(0x4688 | (rd as u16 & 7)); // mov sp|lr, r1
                } else {
                    c.a32(0xe1a0_0001 | rd << 12);
                }
            }
            4 => {
                let b = rng.below(32) << 3;
                c.mov32(1, b << 24);
                c.both(0xe128_f001, 0xf381_8800); // msr apsr_nzcvq, r1
            }
            _ => {
                let imm = rng.u32();
                if rng.below(3) != 0 {
                    if thumb {
                        c.t16(0xdf00 | (imm & 0xff) as u16); // svc
                    } else {
                        let cond = if rng.below(4) == 0 { rng.below(14) } else { 14 };
                        c.a32(cond << 28 | 0x0f00_0000 | (imm & 0xff_ffff));
                    }
                } else if thumb {
                    c.t16(0xde00 | (imm & 0xff) as u16); // udf
                } else {
                    c.a32(0xe7f0_00f0 | (imm >> 4 & 0xfff) << 8 | (imm & 0xf));
                }
                c.both(0xe080_000d, 0xeb0d_0000); // add r0, r0, sp
                c.both(0xe020_01ee, 0xea80_00fe); // eor r0, r0, lr, ror #3
                c.both(0xe10f_1000, 0xf3ef_8100); // mrs r1, cpsr
                c.both(0xe080_05e1, 0xeb00_20f1); // add r0, r0, r1, ror #11
                c.both(0xe080_01e9, 0xeb00_00f9); // add r0, r0, r9, ror #3
            }
        }
    }
    c.loop_back(MAIN, top);
    c.both(0xf102_0013, 0xf3af_8113); // cps #0x13
    c.write_r0_and_exit(OUT);

    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put_h = |img: &mut Vec<u8>, at: u32, h: &[u16]| {
        for (k, hw) in h.iter().enumerate() {
            let o = (at - BASE) as usize + 2 * k;
            img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
        }
    };
    // Vectors: UNDEFINED to a bare return, SVC to the handler, the rest hang.
    let und = VECTORS + 0x20;
    let svc = VECTORS + 0x40;
    for k in 0..8u32 {
        let at = VECTORS + 4 * k;
        let to = match k {
            1 => und,
            2 => svc,
            _ => at,
        };
        if te {
            let off = to.wrapping_sub(at + 4) as i32 >> 1;
            put_h(&mut img, at, &[0xe000 | (off as u16 & 0x7ff), 0xbf00]); // b.n; nop
        } else {
            let w = common::a32::b(14, at, to);
            put_h(&mut img, at, &[w as u16, (w >> 16) as u16]);
        }
    }
    let bare = svc_handler(te, Ret::Movs);
    put_h(&mut img, und, &bare.h[bare.h.len() - 2..]);
    put_h(&mut img, svc, &svc_handler(te, ret).h);
    put_h(&mut img, MAIN, &c.h);
    assert!(MAIN as usize + 2 * c.h.len() < MODE_TABLE as usize);
    for k in 0..steps as u32 * PASSES {
        let m = MODES[rng.below(MODES.len() as u32) as usize];
        let w = 0xc0 | m;
        put_h(&mut img, MODE_TABLE + 4 * k, &[w as u16, 0]);
    }
    (img, MAIN | thumb as u32)
}

fn run(elf: &[u8], opts: &[&str]) -> (i32, Vec<u8>, Vec<(String, u64)>) {
    common::a64::run_image_output(elf, "exc-hints", opts)
}

/// Runs one program under the interpreter and the translator: same output, and at most
/// `max_entries` entries into the code cache.
fn check(what: &str, img: &[u8], entry: u32, max_entries: u64) {
    check_with(what, img, entry, max_entries, &[]);
}

/// [`check`] with more runner options.
fn check_with(what: &str, img: &[u8], entry: u32, max_entries: u64, more: &[&str]) {
    let opts = [&["--privileged", "--vectors", "--svc-vectors"][..], more].concat();
    let elf = common::elf32(BASE, entry, img);
    let (si, oi, _) = run(&elf, &[&["--interp"][..], &opts].concat());
    let (st, ot, stats) = run(&elf, &opts);
    assert_eq!(si, 0, "{what}: interpreter status");
    assert_eq!(oi.len(), 4, "{what}: interpreter output");
    assert_eq!(
        (st, &ot),
        (0, &oi),
        "{what}: translator vs interpreter {stats:?}"
    );
    let get = |k: &str| stats.iter().find(|s| s.0 == k).map_or(0, |s| s.1);
    eprintln!("{what}: checksum {oi:02x?}, {stats:?}");
    assert!(
        get("entries") <= max_entries,
        "{what}: {} code cache entries (at most {max_entries}): {stats:?}",
        get("entries")
    );
}

fn seed() -> u64 {
    std::env::var("DBT_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

#[test]
fn hinted_exceptions_agree_with_the_interpreter() {
    let seed = seed();
    for (case, (thumb, ret)) in [
        (false, Ret::Movs),
        (false, Ret::Eret),
        (false, Ret::Subs4),
        (true, Ret::Movs),
        (true, Ret::Subs4),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rng = Rng::seeded(seed.wrapping_mul(37).wrapping_add(case as u64));
        let steps = 120;
        let (img, entry) = program(&mut rng, thumb, false, ret, steps);
        let what = format!("seed {seed} case {case} (thumb {thumb}, {ret:?})");
        // FIQ-mode exceptions, table modes and side exits leave the code cache; the
        // others (about half of ~60 exceptions a pass) do not.
        check(&what, &img, entry, steps as u64 * PASSES as u64);
    }
}

/// `SCTLR.TE` = 1: exceptions enter Thumb handlers (from A32 and from Thumb code), and
/// return to either instruction set.
#[test]
fn thumb_exception_entry_agrees_with_the_interpreter() {
    let seed = seed();
    for (case, thumb) in [false, true].into_iter().enumerate() {
        let mut rng = Rng::seeded(seed.wrapping_mul(41).wrapping_add(case as u64));
        let steps = 120;
        let (img, entry) = program(&mut rng, thumb, true, Ret::Movs, steps);
        let what = format!("seed {seed} TE case {case} (thumb {thumb})");
        check(&what, &img, entry, steps as u64 * PASSES as u64);
    }
}

/// `SVC` and UNDEFINED from FIQ mode, whose R8-R12 are its own: the handlers (SVC and
/// Undefined mode) must see the User bank's, so the entry must not take the inline path
/// that swaps only SP and LR. The same sites also run in IRQ mode (inline, hinted or not).
#[test]
fn svc_from_fiq_mode_agrees_with_the_interpreter() {
    let mut c = Code {
        thumb: false,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.a32(0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    c.a32(0xf102_0011); // cps #0x11 (FIQ)
    for r in 8..13 {
        c.mov32(r, 0x1111_0000 | r);
    }
    c.a32(0xf102_0013); // cps #0x13
    for r in 8..13 {
        c.mov32(r, 0x5555_0000 | r);
    }
    c.mov32(0, 0);
    c.mov32(6, 40);
    let top = c.h.len();
    c.a32(0xf102_0011); // cps #0x11 (FIQ)
    c.a32(0xef00_0001); // svc #1
    c.a32(0xe7f0_00f0); // udf #0
    c.a32(0xe080_0008); // add r0, r0, r8 (FIQ's)
    c.a32(0xf102_0012); // cps #0x12 (IRQ)
    c.a32(0xef00_0002); // svc #2
    c.a32(0xe7f0_00f1); // udf #1
    c.a32(0xe080_0009); // add r0, r0, r9 (User's)
    c.a32(0xf102_0013); // cps #0x13
    c.loop_back(MAIN, top);
    c.write_r0_and_exit(OUT);
    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, w: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&w.to_le_bytes());
    };
    // UNDEFINED: r0 += r8 * 3 (User's R8 from either mode), return. SVC: r0 ^= r12 (the
    // same), r0 += LR, return.
    let (und, svc) = (VECTORS + 0x20, VECTORS + 0x40);
    put(&mut img, VECTORS + 4, common::a32::b(14, VECTORS + 4, und));
    put(&mut img, VECTORS + 8, common::a32::b(14, VECTORS + 8, svc));
    put(&mut img, und, 0xe080_0088); // add r0, r0, r8, lsl #1
    put(&mut img, und + 4, 0xe080_0008); // add r0, r0, r8
    put(&mut img, und + 8, 0xe1b0_f00e); // movs pc, lr
    put(&mut img, svc, 0xe020_000c); // eor r0, r0, r12
    put(&mut img, svc + 4, 0xe080_000e); // add r0, r0, lr
    put(&mut img, svc + 8, 0xe1b0_f00e); // movs pc, lr
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    // FIQ-mode entries leave the code cache (2 of the 4 exceptions per pass).
    check("FIQ", &img, MAIN, 40 * 8);
}

/// System calls from User mode: a User loop raises `SVC` and UNDEFINED, whose handlers
/// (Supervisor and Undefined mode, each with its own SP) return to User with
/// `MOVS pc, lr`; the entries leave a PL0 block and the returns enter one (another
/// translation context: the code leaves to the dispatcher after the state change). The
/// last `SVC` returns to Supervisor mode (its handler rewrites the SPSR's mode).
#[test]
fn svc_from_user_mode_agrees_with_the_interpreter() {
    let mut c = Code {
        thumb: false,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.a32(0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    c.a32(0xf102_001f); // cps #0x1f (System: User's SP and LR)
    c.mov32(1, 0x1234_5670);
    c.a32(0xe1a0_d001); // mov sp, r1
    c.mov32(1, 0x0bad_cafe);
    c.a32(0xe1a0_e001); // mov lr, r1
    c.a32(0xf102_001b); // cps #0x1b (Undefined)
    c.mov32(1, 0x2222_0000);
    c.a32(0xe1a0_d001); // mov sp, r1
    c.a32(0xf102_0013); // cps #0x13
    c.mov32(1, 0x3333_0000);
    c.a32(0xe1a0_d001); // mov sp, r1
    c.mov32(0, 0);
    c.mov32(6, 50);
    c.a32(0xf102_0010); // cps #0x10 (User)
    let top = c.h.len();
    c.a32(0xef00_0001); // svc #1
    c.a32(0xe7f0_00f2); // udf #2
    c.a32(0xe080_000d); // add r0, r0, sp
    c.a32(0xe020_01ee); // eor r0, r0, lr, ror #3
    c.loop_back(MAIN, top);
    c.a32(0xef00_0003); // svc #3: back in Supervisor mode
    c.write_r0_and_exit(OUT);
    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, w: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&w.to_le_bytes());
    };
    let (und, svc) = (VECTORS + 0x20, VECTORS + 0x40);
    put(&mut img, VECTORS + 4, common::a32::b(14, VECTORS + 4, und));
    put(&mut img, VECTORS + 8, common::a32::b(14, VECTORS + 8, svc));
    for (k, w) in [
        0xe080_000e, // add r0, r0, lr
        0xe080_03ed, // add r0, r0, sp, ror #7
        0xe1b0_f00e, // movs pc, lr
    ]
    .into_iter()
    .enumerate()
    {
        put(&mut img, und + 4 * k as u32, w);
    }
    for (k, w) in [
        0xe080_000e, // add r0, r0, lr
        0xe020_02ed, // eor r0, r0, sp, ror #5
        0xe24d_d004, // sub sp, sp, #4 (SP_svc must be saved on the way back to User)
        0xe356_0000, // cmp r6, #0
        0x014f_1000, // mrseq r1, spsr
        0x03c1_101f, // biceq r1, r1, #0x1f
        0x0381_1013, // orreq r1, r1, #0x13
        0x016f_f001, // msreq spsr_fsxc, r1
        0xe1b0_f00e, // movs pc, lr
    ]
    .into_iter()
    .enumerate()
    {
        put(&mut img, svc + 4 * k as u32, w);
    }
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    // Each entry from User and each return to it goes through the dispatcher (4 a pass).
    check("User", &img, MAIN, 50 * 5);
}

/// Returns to User mode on the hinted fast path and around it: the SVC handler's return
/// block is translated for an `SVC` from A32 User code, then also returns to Thumb User
/// code (SPSR.T and LR differ from the hint), to User code inside an IT block (SPSR IT
/// bits: the interpreter returns), to Supervisor mode (SPSR not User), and with the IRQ
/// line raised by the handler (and sampled by its `WFI`: the return unmasks it, the IRQ
/// is taken before the first User instruction, and its handler folds where). Every other
/// pass stays in Supervisor mode: the same `SVC` sites with the hinted LR, an SPSR not
/// User. The User code reaches its `SVC`s
/// after `BLX`/`BX` between the instruction sets inside the code cache (the stored
/// `CPSR.T` is stale there: the entry takes T from the block).
#[test]
fn returns_to_user_agree_with_the_interpreter() {
    const THUMB: u32 = 0x12000;
    let mut c = Code {
        thumb: false,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.a32(0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    for (mode, sp) in [
        (0x1f, 0x1234_5670),
        (0x12, 0x4444_0000),
        (0x1b, 0x2222_0000),
    ] {
        c.a32(0xf102_0000 | mode); // cps #mode
        c.mov32(1, sp);
        c.a32(0xe1a0_d001); // mov sp, r1
    }
    c.a32(0xf102_0013); // cps #0x13
    c.mov32(1, 0x3333_0000);
    c.a32(0xe1a0_d001); // mov sp, r1
    c.a32(0xf108_0080); // cpsie i
    c.mov32(0, 0);
    c.mov32(6, 40);
    let top = c.h.len();
    c.a32(0xe316_0002); // tst r6, #2
    c.a32(0x0321_f010); // msreq cpsr_c, #0x10 (User; else the pass stays in Supervisor
                        // mode: the same SVC sites, LR as hinted, SPSR not User)
    c.a32(0xe206_5001); // and r5, r6, #1 (odd passes: the handler raises the IRQ line)
    c.a32(0xef00_0001); // svc #1
    c.a32(0xe080_000d); // add r0, r0, sp
    c.a32(0xe020_01ee); // eor r0, r0, lr, ror #3
    c.mov32(2, THUMB | 1);
    c.a32(0xe12f_ff32); // blx r2
    c.a32(0xef00_0004); // svc #4 (after a return from Thumb code)
    c.a32(0xe080_05e0); // add r0, r0, r0, ror #11
    c.a32(0xe7f0_00f2); // udf #2: back in Supervisor mode
    c.a32(0xef00_0005); // svc #5 (from Supervisor mode)
    c.loop_back(MAIN, top);
    c.write_r0_and_exit(OUT);
    let mut img = vec![0u8; (OUT + 0x1000 - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, words: &[u32]| {
        for (k, w) in words.iter().enumerate() {
            let o = (at - BASE) as usize + 4 * k;
            img[o..o + 4].copy_from_slice(&w.to_le_bytes());
        }
    };
    let (und, svc, irq) = (VECTORS + 0x20, VECTORS + 0x40, VECTORS + 0x80);
    put(
        &mut img,
        VECTORS + 4,
        &[common::a32::b(14, VECTORS + 4, und)],
    );
    put(
        &mut img,
        VECTORS + 8,
        &[common::a32::b(14, VECTORS + 8, svc)],
    );
    put(
        &mut img,
        VECTORS + 0x18,
        &[common::a32::b(14, VECTORS + 0x18, irq)],
    );
    put(
        &mut img,
        und,
        &[
            0xe080_000e, // add r0, r0, lr
            0xe14f_1000, // mrs r1, spsr
            0xe3c1_101f, // bic r1, r1, #0x1f
            0xe381_1013, // orr r1, r1, #0x13
            0xe16f_f001, // msr spsr_fsxc, r1
            0xe1b0_f00e, // movs pc, lr
        ],
    );
    let (ret, raise) = (svc + 24, svc + 28);
    put(
        &mut img,
        svc,
        &[
            0xe080_000e,                         // add r0, r0, lr
            0xe14f_1000,                         // mrs r1, spsr
            0xe080_02e1,                         // add r0, r0, r1, ror #5
            0xe020_03ed,                         // eor r0, r0, sp, ror #7
            0xe355_0000,                         // cmp r5, #0
            common::a32::b(1, svc + 20, raise),  // bne raise
            0xe1b0_f00e, // ret: movs pc, lr (a block of its own: the hinted return)
            0xe3a0_2001, // raise: mov r2, #1
            0xee0e_2f33, // mcr p15, 0, r2, c14, c3, 1 (CNTV_CTL: the IRQ line rises)
            0xe320_f003, // wfi (samples the line: pending, masked, so it goes on)
            0xe3a0_5000, // mov r5, #0
            common::a32::b(14, raise + 16, ret), // b ret
        ],
    );
    put(
        &mut img,
        irq,
        &[
            0xe3a0_2000, // mov r2, #0
            0xee0e_2f33, // mcr p15, 0, r2, c14, c3, 1 (the line falls)
            0xe080_000e, // add r0, r0, lr (where the IRQ was taken)
            0xe14f_1000, // mrs r1, spsr
            0xe020_0001, // eor r0, r0, r1
            0xe25e_f004, // subs pc, lr, #4
        ],
    );
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    let mut t = Code {
        thumb: true,
        h: Vec::new(),
    };
    t.t16(0x4673); // mov r3, lr (a Supervisor-mode pass's SVCs overwrite LR)
    t.t16(0xdf02); // svc #2 (entered from A32 code: the stored CPSR.T is stale)
    t.t16(0x3001); // adds r0, #1
    t.t16(0x42b6); // cmp r6, r6
    t.t16(0xbf04); // itt eq
    t.t16(0xdf03); // svceq #3 (the return's SPSR holds the IT state of the next)
    t.t16(0x4430); // addeq r0, r6
    t.t16(0x4718); // bx r3
    for (k, hw) in t.h.iter().enumerate() {
        let o = (THUMB - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    check_with(
        "returns to User",
        &img,
        MAIN,
        40 * 16,
        &["--irq-line", "--slice=100000"],
    );
}
