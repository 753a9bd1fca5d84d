//! CP14 encodings once each: `MRC`/`MCR` with opc1 0 (debug), 1 (trace), 6 (ThumbEE) and
//! 7 (Jazelle), CRn/CRm 0-15, opc2 0-7, and every `MRRC`/`MCRR` (opc1/CRm 0-15), at PL1
//! (reads and writes) and at PL0 (reads), writes with the value 0 (which arms no
//! breakpoint, watchpoint or vector catch). Prints how many complete in each class and a
//! fingerprint of which: the same line in hardware AArch32 and under the DBT shows that
//! `dbt-armv7`'s CP14 answers as the hardware does (every other encoding UNDEFINED). The
//! other opc1 values hold no register in any ARMv7/ARMv8 AArch32 CP14 (the random storm
//! reaches them); PL0 writes are all UNDEFINED (the PL0 storm and probes check them).
//!
//! Left out of the fingerprint: opc1 = 0, CRn = 7, CRm 0-2, opc2 0-2 and 7, where QEMU 7.2
//! puts `DBGDEVID`, `DBGDEVID1`, `DBGDEVID2` (at opc2 0-2 instead of the architectural 7).

use crate::storm::{at_pl1, Execute};
use crate::storm_pl0::at_pl0;
use crate::uart::{putdec, puthex, puts};

/// `MRC p14, 0, r0, c0, c0, 0` without `L` (bit 20) and the operand fields.
const MCR_P14_R0: u32 = 0xee00_0e10;
/// `MCRR p14, 0, r0, r1, c0` likewise.
const MCRR_P14_R0_R1: u32 = 0xec41_0e00;
/// `L`: a read.
const READ: u32 = 1 << 20;

/// Whether QEMU 7.2 misplaces a `DBGDEVID*` register at this encoding (or the model has
/// one at the architectural one).
fn devid_quirk(opc1: u32, crn: u32, crm: u32, opc2: u32) -> bool {
    opc1 == 0 && crn == 7 && crm <= 2 && (opc2 <= 2 || opc2 == 7)
}

/// FNV-1a over the encodings that completed.
fn mix(h: u32, insn: u32) -> u32 {
    insn.to_le_bytes()
        .iter()
        .fold(h, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// Runs the sweep with `execute` (PL1 or PL0) in the directions `dirs` (`READ`, 0):
/// completed (reads, writes) and the fingerprint.
fn sweep(execute: Execute, dirs: &[u32]) -> (u32, u32, u32) {
    let (mut reads, mut writes, mut h) = (0, 0, 0x811c_9dc5);
    for &dir in dirs {
        for opc1 in [0, 1, 6, 7] {
            for crn in 0..16 {
                for crm in 0..16 {
                    for opc2 in 0..8 {
                        if devid_quirk(opc1, crn, crm, opc2) {
                            continue;
                        }
                        let insn =
                            MCR_P14_R0 | dir | (opc1 << 21) | (crn << 16) | (opc2 << 5) | crm;
                        if execute(insn, 0, 0) == 0 {
                            *(if dir == READ { &mut reads } else { &mut writes }) += 1;
                            h = mix(h, insn);
                        }
                    }
                }
            }
        }
        for opc1 in 0..16 {
            for crm in 0..16 {
                let insn = MCRR_P14_R0_R1 | dir | (opc1 << 4) | crm;
                if execute(insn, 0, 0) == 0 {
                    *(if dir == READ { &mut reads } else { &mut writes }) += 1;
                    h = mix(h, insn);
                }
            }
        }
    }
    (reads, writes, h)
}

/// Runs the sweep at PL1 and PL0 and prints one line with the counts and fingerprint.
pub fn run() {
    let (r1, w1, h1) = sweep(at_pl1, &[READ, 0]);
    let (r0, w0, h0) = sweep(at_pl0, &[READ]);
    puts("armv7-hostile: CP14 sweep completed: PL1 reads ");
    putdec(r1);
    puts(", writes ");
    putdec(w1);
    puts("; PL0 reads ");
    putdec(r0 + w0);
    puts("; fingerprint ");
    puthex(mix(h1, h0));
    puts("\n");
}
