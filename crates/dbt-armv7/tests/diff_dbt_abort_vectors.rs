//! Guest Data Aborts from translated code taken through the guest's own vectors
//! (`a64-runner --vectors`: the engine's fault exit, the interpreter's abort, the handler
//! block), against the interpreter, A32 and Thumb. Each pass of the loop makes a load and
//! a store through r9 (unmapped guest memory) abort, then an `STM` of three words whose
//! first two rewrite a two-instruction routine (`ADD r0, r0, #k`, `BX LR`) in the last
//! mapped page and whose third aborts (the page's end), then calls the routine: the
//! host's write-protection fault on the translated routine's page is repeated by the
//! interpreter, which writes the two words and takes the abort, so the routine's old
//! translation must be dropped without the engine's own write-protection check (skipped
//! for an instruction that took the Data Abort). The handler folds `DFSR`, `DFAR`,
//! `SPSR_abt` and `LR_abt` into r0 and returns past the aborted (32-bit) instruction with
//! `SUBS pc, lr, #4`; r0 ends up in the output, which must be the interpreter's. From
//! the second pass on the load's and the store's aborts are taken by the runner's fault
//! handler itself (`a64::deliver_guest_abort`); the flags they save in `SPSR_abt` change
//! every pass, and the retired instruction count must be the interpreter's. Each program
//! also runs with `TTBCR.EAE` set (long-descriptor fault status; the MMU stays off).

mod common;

use common::code::Code;

/// Where the image is loaded; the vectors (`VBAR`), the handler, the program and the
/// output word. The image ends at `END`; `a64-runner` maps one more page, so the routine
/// sits in that page's last 8 bytes and the page after it is unmapped.
const BASE: u32 = 0x10000;
const VECTORS: u32 = 0x10800;
const HANDLER: u32 = 0x10900;
const MAIN: u32 = 0x11000;
const OUT: u32 = 0x12000;
const END: u32 = 0x13000;
const ROUTINE: u32 = END + 0x1000 - 8;
/// Unmapped guest memory.
const BAD: u32 = 0xf000_0000;
/// Passes of the loop.
const PASSES: u32 = 200;

impl Code {
    /// `SVC #0`: a system call of the runner (the guest's vectors take only aborts).
    fn svc(&mut self) {
        if self.thumb {
            self.h.push(0xdf00);
        } else {
            self.a32(common::a32::SVC0);
        }
    }
    fn here(&self) -> u32 {
        MAIN + 2 * self.h.len() as u32
    }
}

/// The program's image and entry (bit 0: Thumb); `lpae`: `TTBCR.EAE` set first (the MMU
/// stays off; the fault status is in the long-descriptor format).
fn program(thumb: bool, lpae: bool) -> (Vec<u8>, u32) {
    let mut c = Code {
        thumb,
        h: Vec::new(),
    };
    c.mov32(1, VECTORS);
    c.both(0xee0c_1f10, 0xee0c_1f10); // mcr p15, 0, r1, c12, c0, 0 (VBAR)
    if lpae {
        c.mov32(1, 0x8000_0000);
        c.both(0xee02_1f50, 0xee02_1f50); // mcr p15, 0, r1, c2, c0, 2 (TTBCR.EAE)
    }
    c.mov32(9, BAD);
    c.mov32(8, ROUTINE);
    c.mov32(0, 0);
    c.mov32(6, PASSES);
    c.mov32(1, 0xe280_0001); // add r0, r0, #1
    c.mov32(2, 0xe12f_ff1e); // bx lr
    c.both(0xe588_1000, 0xf8c8_1000); // str r1, [r8]
    c.both(0xe588_2004, 0xf8c8_2004); // str r2, [r8, #4]
    c.mov32(3, 0xe280_0000); // add r0, r0, #0 (the routine's first word, k added)
    let top = c.here();
    c.both(0xe316_0001, 0xf016_0f01); // tst r6, #1: SPSR_abt's Z alternates
    c.both(0xe599_2004, 0xf8d9_2004); // ldr r2, [r9, #4]: aborts
    c.both(0xe080_0002, 0xeb00_0002); // add r0, r0, r2
    c.both(0xe589_6008, 0xf8c9_6008); // str r6, [r9, #8]: aborts
    c.both(0xe206_10ff, 0xf006_01ff); // and r1, r6, #0xff
    c.both(0xe181_1003, 0xea41_0103); // orr r1, r1, r3: add r0, r0, #(r6 & 0xff)
    c.mov32(2, 0xe12f_ff1e); // bx lr
    c.both(0xe888_000e, 0xe888_000e); // stm r8, {r1, r2, r3}: the third word aborts
    if thumb {
        c.h.push(0x47c0); // blx r8
        c.h.push(0x3e01); // subs r6, #1
        let at = c.here();
        let off = top.wrapping_sub(at + 4) as i32;
        let (s, j1, j2) = ((off >> 20) & 1, (off >> 18) & 1, (off >> 19) & 1);
        c.t32(
            0xf000_8000
                | (s as u32) << 26
                | 1 << 22 // cond NE
                | ((off >> 12) as u32 & 0x3f) << 16
                | (j1 as u32) << 13
                | (j2 as u32) << 11
                | ((off >> 1) as u32 & 0x7ff),
        ); // bne.w top
    } else {
        c.a32(0xe12f_ff38); // blx r8
        c.a32(0xe256_6001); // subs r6, r6, #1
        let at = c.here();
        c.a32(common::a32::b(1, at, top)); // bne top
    }
    c.mov32(5, OUT);
    c.both(0xe585_0000, 0xf8c5_0000); // str r0, [r5]
    c.mov32(0, 1);
    c.mov32(1, OUT);
    c.mov32(2, 4);
    c.mov32(7, 4);
    c.svc(); // write(1, OUT, 4)
    c.mov32(0, 0);
    c.mov32(7, 1);
    c.svc(); // exit(0)
    assert!(c.here() < OUT);

    let mut img = vec![0u8; (END - BASE) as usize];
    let put = |img: &mut Vec<u8>, at: u32, w: u32| {
        let o = (at - BASE) as usize;
        img[o..o + 4].copy_from_slice(&w.to_le_bytes());
    };
    // Vectors: the Data Abort one branches to the handler; the rest hang.
    for k in 0..8u32 {
        let at = VECTORS + 4 * k;
        let to = if k == 4 { HANDLER } else { at };
        put(&mut img, at, common::a32::b(14, at, to));
    }
    let handler = [
        0xee15_af10, // mrc p15, 0, r10, c5, c0, 0 (DFSR)
        0xe080_000a, // add r0, r0, r10
        0xee16_af10, // mrc p15, 0, r10, c6, c0, 0 (DFAR)
        0xe02a_03e0, // eor r0, r10, r0, ror #7
        0xe14f_a000, // mrs r10, spsr
        0xe080_000a, // add r0, r0, r10
        0xe080_000e, // add r0, r0, lr
        0xe25e_f004, // subs pc, lr, #4
    ];
    for (k, w) in handler.into_iter().enumerate() {
        put(&mut img, HANDLER + 4 * k as u32, w);
    }
    for (k, hw) in c.h.iter().enumerate() {
        let o = (MAIN - BASE) as usize + 2 * k;
        img[o..o + 2].copy_from_slice(&hw.to_le_bytes());
    }
    (img, MAIN | thumb as u32)
}

fn run(elf: &[u8], opts: &[&str]) -> (i32, Vec<u8>, Vec<(String, u64)>) {
    let out = common::a64::run_image(elf, "abort_vectors", opts);
    let code = out.status.code().expect("runner exit status");
    if code != 0 {
        eprintln!("{opts:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    (code, out.stdout, common::a64::stats(&out.stderr))
}

#[test]
fn data_aborts_through_the_guests_vectors_agree_with_the_interpreter() {
    let opts = ["--privileged", "--vectors"];
    for (thumb, lpae) in [(false, false), (true, false), (false, true), (true, true)] {
        let (img, entry) = program(thumb, lpae);
        let elf = common::elf32(BASE, entry, &img);
        let (si, oi, interp) = run(&elf, &["--interp", opts[0], opts[1]]);
        let (st, ot, stats) = run(&elf, &opts);
        let what = format!("thumb {thumb} lpae {lpae}");
        assert_eq!((si, oi.len()), (0, 4), "{what}: interpreter");
        assert_eq!(
            (st, &ot),
            (0, &oi),
            "{what}: translator vs interpreter {stats:?}"
        );
        let get = |k: &str| stats.iter().find(|s| s.0 == k).map_or(0, |s| s.1);
        let icount = |s: &[(String, u64)]| s.iter().find(|s| s.0 == "icount").map(|s| s.1);
        // The same instructions retired: the aborts taken in the fault handler charge
        // the aborted instruction and the block's ones before it.
        assert_eq!(icount(&stats), icount(&interp), "{what}: icount");
        // Three host faults per pass (the load, the store, the STM on the routine's
        // write-protected page) and the routine translated again after each STM. From
        // the second pass on, the load's and the store's aborts are delivered by the
        // fault handler (single accesses whose site took the abort before; the code
        // cache's flush in the run forgets the sites once).
        let delivered = get("aborts_delivered");
        assert!(
            get("faults") + delivered >= 3 * PASSES as u64,
            "{what}: {stats:?}"
        );
        assert!(delivered >= 2 * (PASSES as u64 - 2), "{what}: {stats:?}");
        assert!(get("smc") >= PASSES as u64 - 1, "{what}: {stats:?}");
        eprintln!("{what}: checksum {oi:02x?}, {stats:?}");
    }
}
