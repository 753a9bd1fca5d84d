//! A pending IRQ under the translator: taken when the guest unmasks it, and within a slice
//! while translated code runs with IRQs unmasked. The runner's `--irq-line` lets the
//! guest raise its own IRQ input (a `CNTV_CTL` write with `ENABLE` set, see
//! `a64-runner/src/irq.rs`), and `--slice=N` runs it in slices of N guest instructions
//! with the input set before each, as the in-VM runtime runs a guest. The IRQ handler
//! exits with the number of loop iterations between the line rising and the interrupt
//! (capped at 250; 255: never taken).
//!
//! The unmask case is what stalled SMP Linux under the DBT: an IPI that arrived while
//! the guest had IRQs masked (Linux's idle loop: `WFI` with `CPSR.I` set, then
//! `cpsie i`) was not taken at the `CPS`: the engine decided from the line as the host
//! had set it at the start of the slice, and the guest ran on until the slice ended.

mod common;

/// Vector table at 0x10800 (`VBAR`; the ELF headers are at 0x10000), IRQ handler at
/// 0x10900, `main` at 0x11000, `main2` at 0x11100.
fn image() -> Vec<u8> {
    let mut img = vec![0u8; 0x1200];
    let mut put = |at: usize, words: &[u32]| {
        for (i, w) in words.iter().enumerate() {
            img[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
    };
    put(0x800, &[0xeaff_fffe]); // b .
    put(0x818, &[0xea00_0038]); // IRQ: b irq
    put(
        0x900,
        &[
            0xe3a0_2000, // irq: mov r2, #0
            0xee0e_2f33, // mcr p15, 0, r2, c14, c3, 1   CNTV_CTL = 0: the line falls
            0xe051_0009, // subs r0, r1, r9              iterations since it rose
            0x43a0_00fe, // movmi r0, #254
            0xe350_00fa, // cmp r0, #250
            0x83a0_00fa, // movhi r0, #250
            0xe3a0_7001, // mov r7, #1
            0xef00_0000, // svc #0                       exit(r0)
        ],
    );
    let vbar = [
        0xe300_0800, // movw r0, #0x800
        0xe340_0001, // movt r0, #1
        0xee0c_0f10, // mcr p15, 0, r0, c12, c0, 0   VBAR = 0x10800
        0xf57f_f06f, // isb
        0xe3a0_1000, // mov r1, #0
    ];
    let never = [
        0xe3a0_00ff, // mov r0, #255                 the IRQ was never taken
        0xe3a0_7001, // mov r7, #1
        0xef00_0000, // svc #0
    ];
    // main: the line rises with IRQs masked, then `cpsie i` and a counting loop.
    put(0x1000, &vbar);
    put(
        0x1014,
        &[
            0xe3a0_9000, // mov r9, #0
            0xe3a0_2001, // mov r2, #1
            0xee0e_2f33, // mcr p15, 0, r2, c14, c3, 1   the line rises (masked)
            0xf108_0080, // cpsie i
            0xe281_1001, // loop: add r1, r1, #1
            0xe351_0801, // cmp r1, #0x10000
            0xbaff_fffc, // blt loop
        ],
    );
    put(0x1030, &never);
    // main2: IRQs unmasked; the line rises inside the loop at iteration 100.
    put(0x1100, &vbar);
    put(
        0x1114,
        &[
            0xe3a0_9064, // mov r9, #100
            0xe3a0_2001, // mov r2, #1
            0xf108_0080, // cpsie i
            0xe281_1001, // loop2: add r1, r1, #1
            0xe151_0009, // cmp r1, r9
            0x0e0e_2f33, // mcreq p15, 0, r2, c14, c3, 1   the line rises
            0xe351_0801, // cmp r1, #0x10000
            0xbaff_fffa, // blt loop2
        ],
    );
    put(0x1134, &never);
    img
}

fn run(entry: u32, opts: &[&str]) -> (i32, Vec<(String, u64)>) {
    let elf = common::elf32(0x10000, entry, &image());
    let all = [&["--privileged", "--vectors", "--irq-line"][..], opts].concat();
    common::a64::run_image_status(&elf, "irq-unmask", &all)
}

#[test]
fn an_irq_pending_while_masked_is_taken_at_the_unmasking_cps() {
    let (i, _) = run(0x11000, &["--interp", "--slice=100000"]);
    assert_eq!(i, 0, "interpreter: taken right after cpsie i");
    let (t, st) = run(0x11000, &["--slice=100000"]);
    assert_eq!(
        t, 0,
        "translator: taken at cpsie i, not at the slice's end {st:?}"
    );
    let translated = st.iter().find(|s| s.0 == "translated").map_or(0, |s| s.1);
    assert!(translated > 0, "the code ran translated: {st:?}");
}

#[test]
fn an_irq_raised_in_a_translated_loop_is_taken_within_a_slice() {
    let (i, _) = run(0x11100, &["--interp", "--slice=1000"]);
    assert_eq!(i, 0, "interpreter: taken before the next instruction");
    // A loop iteration is 5 guest instructions: at most a slice of 1000 of them runs
    // before the engine looks at the line again.
    let (t, st) = run(0x11100, &["--slice=1000"]);
    assert!(
        t <= 1000 / 5,
        "translator: taken within a slice, {t} iterations late {st:?}"
    );
    let links = st.iter().find(|s| s.0 == "links").map_or(0, |s| s.1);
    assert!(
        links > 0,
        "the loop ran as linked translated blocks: {st:?}"
    );
}
