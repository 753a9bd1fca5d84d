//! Load/store pairs and writeback forms against the PL011 at 0x0900_0000.
//!
//! The identification registers (PeriphID0-3 at 0xFE0, PCellID0-3 at 0xFF0) read
//! `0x11 0x10 0x14 0x00` and `0x0D 0xF0 0x05 0xB1` on QEMU's PL011 (r1p5) and on the
//! hypervisor's model. IBRD (0x024, 16 bits) and FBRD (0x028, 6 bits) are read/write and are
//! used for stores and sign-extending loads; their values are restored afterwards.

use crate::exec::{exec, Regs, ShowFault};
use guest_rt::report::Report;

/// PL011 base address on QEMU `virt`.
pub const UART: u64 = 0x0900_0000;
/// PeriphID0.
const PERIPH_ID: u64 = 0xfe0;
/// PCellID0.
const PCELL_ID: u64 = 0xff0;
/// Integer baud rate divisor.
const IBRD: u64 = 0x024;

/// The identification registers, in address order from 0xFE0.
pub const ID: [u64; 8] = [0x11, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1];

/// Checks `got` equals `want` and no fault happened.
pub fn expect(report: &mut Report, name: &str, got: Regs, want: Regs, f: Option<guest_rt::Fault>) {
    report.check(
        name,
        f.is_none() && got == want,
        format_args!(
            "x1={:#x} x2={:#x} x3={:#x}, want x1={:#x} x2={:#x} x3={:#x}; {}",
            got.x1,
            got.x2,
            got.x3,
            want.x1,
            want.x2,
            want.x3,
            ShowFault(f)
        ),
    );
}

/// Checks the instruction took a synchronous external abort at `far` and left every
/// register, the base included, unchanged.
pub fn expect_abort(
    report: &mut Report,
    name: &str,
    got: Regs,
    before: Regs,
    far: u64,
    f: Option<guest_rt::Fault>,
) {
    let ok = f.is_some_and(|f| f.is_sync_external_abort() && f.far == far) && got == before;
    report.check(
        name,
        ok,
        format_args!(
            "external abort at {far:#x} with registers unchanged expected: x1={:#x} x2={:#x}; {}",
            got.x1,
            got.x2,
            ShowFault(f)
        ),
    );
}

/// Accepts either the values `want` without a fault, or a synchronous external abort at
/// `far` with the registers as `before`.
#[allow(clippy::too_many_arguments)]
pub fn expect_or_abort(
    report: &mut Report,
    name: &str,
    got: Regs,
    want: Regs,
    before: Regs,
    far: u64,
    f: Option<guest_rt::Fault>,
) {
    if f.is_some() {
        expect_abort(report, name, got, before, far, f);
    } else {
        expect(report, name, got, want, f);
    }
}

/// Runs the PL011 checks (MMU off: the addresses are IPAs).
pub fn run(report: &mut Report) {
    id_pairs(report, UART);
    let b = UART;

    // ldr (post-index) and ldr (register offset).
    let r = Regs::base(b + PERIPH_ID);
    let (got, f) = exec!("ldr w2, [x1], #4", r);
    let want = Regs {
        x1: r.x1 + 4,
        x2: ID[0],
        ..r
    };
    expect(report, "ldr w, [x1], #4 (post-index)", got, want, f);
    let r = Regs {
        x4: 7,
        ..Regs::base(b + PERIPH_ID)
    };
    let (got, f) = exec!("ldr w2, [x1, x4, lsl #2]", r);
    expect(
        report,
        "ldr w, [x1, x4, lsl #2]",
        got,
        Regs { x2: ID[7], ..r },
        f,
    );

    // Save IBRD/FBRD.
    let (saved, f) = exec!("ldp w2, w3, [x1]", Regs::base(b + IBRD));
    if f.is_some() {
        report.check("read IBRD/FBRD", false, format_args!("{}", ShowFault(f)));
        return;
    }

    // stp (pre-index) then ldp back.
    let r = Regs {
        x1: b,
        x2: 0xff85,
        x3: 0x15,
        x4: 0,
    };
    let (got, f) = exec!("stp w2, w3, [x1, #0x24]!", r);
    expect(
        report,
        "stp w, w, [x1, #0x24]! (pre-index)",
        got,
        Regs { x1: b + IBRD, ..r },
        f,
    );
    let r = Regs::base(b + IBRD);
    let (got, f) = exec!("ldp w2, w3, [x1]", r);
    expect(
        report,
        "ldp w, w of IBRD/FBRD",
        got,
        Regs {
            x2: 0xff85,
            x3: 0x15,
            ..r
        },
        f,
    );

    // Sign-extending loads: IBRD = 0xff85.
    let r = Regs::base(b + IBRD);
    let (got, f) = exec!("ldrsh x2, [x1]", r);
    expect(
        report,
        "ldrsh x, [x1]",
        got,
        Regs {
            x2: 0xffff_ffff_ffff_ff85,
            ..r
        },
        f,
    );
    let (got, f) = exec!("ldrsh w2, [x1], #4", r);
    let want = Regs {
        x1: r.x1 + 4,
        x2: 0xffff_ff85,
        ..r
    };
    expect(report, "ldrsh w, [x1], #4 (post-index)", got, want, f);
    let (got, f) = exec!("ldrsb x2, [x1]", r);
    expect(
        report,
        "ldrsb x, [x1]",
        got,
        Regs {
            x2: 0xffff_ffff_ffff_ff85,
            ..r
        },
        f,
    );
    let r = Regs::base(b);
    let (got, f) = exec!("ldrsh w2, [x1, #0x24]!", r);
    let want = Regs {
        x1: b + IBRD,
        x2: 0xffff_ff85,
        ..r
    };
    expect(report, "ldrsh w, [x1, #0x24]! (pre-index)", got, want, f);

    // Restore IBRD/FBRD (post-index store pair).
    let r = Regs {
        x1: b + IBRD,
        x2: saved.x2,
        x3: saved.x3,
        x4: 0,
    };
    let (got, f) = exec!("stp w2, w3, [x1], #-0x24", r);
    expect(
        report,
        "stp w, w, [x1], #-0x24 (post-index)",
        got,
        Regs { x1: b, ..r },
        f,
    );

    // 64-bit accesses. QEMU's PL011 splits them into two 32-bit register accesses; an
    // emulated one may instead answer with an external abort ("works or gets a clean abort").
    // Either is accepted, and each is checked exactly: the values of two registers, or no
    // effect at all (base register included).
    let r = Regs::base(b + PERIPH_ID);
    let (got, f) = exec!("ldp x2, x3, [x1]", r);
    let want = Regs {
        x2: ID[1] << 32 | ID[0],
        x3: ID[3] << 32 | ID[2],
        ..r
    };
    expect_or_abort(report, "ldp x, x (64-bit)", got, want, r, r.x1, f);
    let (got, f) = exec!("ldr x2, [x1], #8", r);
    let want = Regs {
        x1: r.x1 + 8,
        x2: ID[1] << 32 | ID[0],
        ..r
    };
    expect_or_abort(
        report,
        "ldr x, [x1], #8 (64-bit post-index)",
        got,
        want,
        r,
        r.x1,
        f,
    );
    // str x over ILPR+IBRD, then stp x over ILPR, IBRD, FBRD, LCR_H (ILPR and LCR_H written
    // back with their current values). 64-bit accesses are 8-byte aligned: Device memory.
    let (old, f) = exec!("ldr w2, [x1, #0x20]", Regs::base(b));
    let r = Regs {
        x1: b,
        x2: 0x1234 << 32 | old.x2,
        x3: 0,
        x4: 0,
    };
    let (got, f1) = exec!("str x2, [x1, #0x20]!", r);
    let want = Regs { x1: b + 0x20, ..r };
    let stored = f1.is_none();
    expect_or_abort(
        report,
        "str x, [x1, #0x20]! (64-bit pre-index)",
        got,
        want,
        r,
        b + 0x20,
        f1,
    );
    if stored {
        let (got, f) = exec!("ldr w2, [x1]", Regs::base(b + IBRD));
        let want = Regs {
            x2: 0x1234,
            ..Regs::base(b + IBRD)
        };
        expect(report, "IBRD after str x", got, want, f);
    }
    let (old_lcr, f2) = exec!("ldr w2, [x1, #0x2c]", Regs::base(b));
    if f.is_none() && f2.is_none() {
        let r = Regs {
            x1: b + 0x10,
            x2: 0xff85 << 32 | old.x2,
            x3: old_lcr.x2 << 32 | 0x15,
            x4: 0,
        };
        let (got, f) = exec!("stp x2, x3, [x1, #0x10]!", r);
        let want = Regs { x1: b + 0x20, ..r };
        let stored = f.is_none();
        expect_or_abort(
            report,
            "stp x, x, [x1, #0x10]! (64-bit pre-index)",
            got,
            want,
            r,
            b + 0x20,
            f,
        );
        if stored {
            let (got, f) = exec!("ldp w2, w3, [x1]", Regs::base(b + IBRD));
            let want = Regs {
                x2: 0xff85,
                x3: 0x15,
                ..Regs::base(b + IBRD)
            };
            expect(report, "IBRD/FBRD after stp x", got, want, f);
        }
    }
    // Restore IBRD/FBRD again.
    let r = Regs {
        x1: b + IBRD,
        x2: saved.x2,
        x3: saved.x3,
        x4: 0,
    };
    let (got, f) = exec!("stp w2, w3, [x1]", r);
    expect(report, "stp w, w (restore IBRD/FBRD)", got, r, f);
}

/// Reads the eight identification registers with `ldp w, w` in its three addressing forms,
/// `base` being the PL011's address (an IPA, or a VA alias with the MMU on).
pub fn id_pairs(report: &mut Report, base: u64) {
    let r = Regs::base(base + PERIPH_ID);
    let (got, f) = exec!("ldp w2, w3, [x1]", r);
    expect(
        report,
        "ldp w, w PeriphID0/1",
        got,
        Regs {
            x2: ID[0],
            x3: ID[1],
            ..r
        },
        f,
    );
    let (got, f) = exec!("ldp w2, w3, [x1, #8]!", r);
    let want = Regs {
        x1: r.x1 + 8,
        x2: ID[2],
        x3: ID[3],
        ..r
    };
    expect(
        report,
        "ldp w, w, [x1, #8]! PeriphID2/3 (pre-index)",
        got,
        want,
        f,
    );
    let r = Regs::base(base + PCELL_ID);
    let (got, f) = exec!("ldp w2, w3, [x1], #8", r);
    let want = Regs {
        x1: r.x1 + 8,
        x2: ID[4],
        x3: ID[5],
        ..r
    };
    expect(
        report,
        "ldp w, w, [x1], #8 PCellID0/1 (post-index)",
        got,
        want,
        f,
    );
    let (got, f) = exec!("ldp w2, w3, [x1, #8]", r);
    expect(
        report,
        "ldp w, w, [x1, #8] PCellID2/3",
        got,
        Regs {
            x2: ID[6],
            x3: ID[7],
            ..r
        },
        f,
    );
}
