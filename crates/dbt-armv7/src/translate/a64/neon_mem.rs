//! Lowering of the Advanced SIMD element and structure loads and stores (`VLD1`-`VLD4`,
//! `VST1`-`VST4`: multiple structures, one lane, all lanes) to A64 `LDP`/`STP` of D
//! registers, `LD2`-`LD4`/`ST2`-`ST4`, the single-structure `LDn`/`STn` to a lane and
//! `LDnR`. Registers go through temporaries (`v0`-`v7`) so that a fault (the first
//! access is always the host instruction that faults) leaves every guest register as it
//! was; the alignment qualifier is checked first (a misaligned base leaves through the
//! side exit and the interpreter raises the alignment fault); the base is written back
//! last (`Rm` = 13: by the bytes transferred, other `Rm`: by `Rm`, PC: not). With
//! `SCTLR.A` set, where every element access is alignment-checked, these instructions
//! stay in the interpreter.

use alloc::vec::Vec;

use super::asm::{Asm, Label};
use super::enc::{self, AddSub};
use super::enc_fp::*;
use super::neon::nreg;
use super::vfp::{commit, field, flag, host_d, mem_at, off_d, src};
use super::STATE;

/// Lowers a VLDn/VSTn (A32 layout), or returns false.
pub fn load_store(a: &mut Asm, w: u32, side: &mut Option<Label>) -> bool {
    let rn = field(w, 19, 16) as u8;
    let rm = field(w, 3, 0) as u8;
    if rn == 15 || a.strict_align {
        return false;
    }
    let bytes = if !flag(w, 23) {
        multiple(a, w, rn, side)
    } else if field(w, 11, 10) == 3 {
        all_lanes(a, w, rn, side)
    } else {
        one_lane(a, w, rn, side)
    };
    let Some(bytes) = bytes else {
        return false;
    };
    match rm {
        15 => {}
        13 => a.put(enc::w_addsub_imm(AddSub::Add, rn, rn, bytes, false)),
        _ => a.put(enc::w_addsub_reg(AddSub::Add, rn, rn, rm, enc::Sh::Lsl, 0)),
    }
    true
}

/// Branches to the side exit unless guest register `rn` is a multiple of `align` bytes
/// (a power of two; 1 checks nothing).
fn check_align(a: &mut Asm, rn: u8, align: u32, side: &mut Option<Label>) {
    if align <= 1 {
        return;
    }
    let l = *side.get_or_insert_with(|| a.label());
    for bit in 0..align.trailing_zeros() as u8 {
        a.tbnz_to(rn, bit, l);
    }
}

/// Guest D registers `slots` into consecutive temporaries `v0`, `v1`, ...
fn gather(a: &mut Asm, slots: &[u32]) {
    for (k, &s) in slots.iter().enumerate() {
        let r = src(a, true, s, k as u8);
        if r != k as u8 {
            a.put(fmov_d(k as u8, r));
        }
    }
}

/// Temporaries `v0`, `v1`, ... into guest D registers `slots`.
fn scatter(a: &mut Asm, slots: &[u32]) {
    for (k, &s) in slots.iter().enumerate() {
        commit(a, true, s, k as u8);
    }
}

/// Multiple structures (`VLD1`-`VLD4` of whole registers). Returns the bytes moved.
fn multiple(a: &mut Asm, w: u32, rn: u8, side: &mut Option<Label>) -> Option<u32> {
    let load = flag(w, 21);
    let d = nreg(w, 15, 22);
    let t = field(w, 11, 8);
    let size = field(w, 7, 6);
    let align = field(w, 5, 4);
    // (A64 opcode, vectors of 128 bits, registers, register increment)
    let (opcode, q, regs, inc) = match t {
        7 if align < 2 => return vld1_whole(a, w, rn, d, 1, side),
        10 if align < 3 => return vld1_whole(a, w, rn, d, 2, side),
        6 if align < 2 => return vld1_whole(a, w, rn, d, 3, side),
        2 => return vld1_whole(a, w, rn, d, 4, side),
        8 | 9 if align < 3 && size < 3 => (0b1000, false, 2, t - 7),
        3 if size < 3 => (0b1000, true, 4, 1),
        4 | 5 if align < 2 && size < 3 => (0b0100, false, 3, t - 3),
        0 | 1 if size < 3 => (0b0000, false, 4, t + 1),
        _ => return None,
    };
    let slots: Vec<u32> = (0..regs).map(|k| d + k * inc).collect();
    if slots[slots.len() - 1] > 31 {
        return None;
    }
    check_align(a, rn, if align == 0 { 1 } else { 4 << align }, side);
    if q {
        // VLD2/VST2 of four registers: A64 LD2 of two Q vectors (d:d+1, d+2:d+3).
        if load {
            a.put(ldst_multi(true, true, opcode, size, 0, rn));
            a.put(dup_d1(2, 0));
            a.put(dup_d1(3, 1));
            scatter(a, &[d, d + 2, d + 1, d + 3]);
        } else {
            for j in 0..2u32 {
                let r1 = src(a, true, d + 2 * j, 6);
                let r2 = src(a, true, d + 2 * j + 1, 7);
                a.put(zip1_2d(j as u8, r1, r2));
            }
            a.put(ldst_multi(false, true, opcode, size, 0, rn));
        }
    } else if load {
        a.put(ldst_multi(true, false, opcode, size, 0, rn));
        scatter(a, &slots);
    } else {
        gather(a, &slots);
        a.put(ldst_multi(false, false, opcode, size, 0, rn));
    }
    Some(8 * regs)
}

/// One structure to all lanes (`VLDn {Dd[]..}`). Returns the bytes moved.
fn all_lanes(a: &mut Asm, w: u32, rn: u8, side: &mut Option<Label>) -> Option<u32> {
    if !flag(w, 21) {
        return None;
    }
    let d = nreg(w, 15, 22);
    let n = field(w, 9, 8) + 1;
    let size = field(w, 7, 6);
    let t = flag(w, 5);
    let al = flag(w, 4);
    let ebytes = 1u32 << size.min(2);
    let (slots, align, esize): (Vec<u32>, u32, u32) = match n {
        1 if size < 3 && !(size == 0 && al) => {
            let regs = 1 + t as u32;
            (
                (0..regs).map(|k| d + k).collect(),
                if al { ebytes } else { 1 },
                size,
            )
        }
        2 | 3 if size < 3 && !(n == 3 && al) => {
            let inc = 1 + t as u32;
            let align = if al { 2 * ebytes } else { 1 };
            ((0..n).map(|k| d + k * inc).collect(), align, size)
        }
        4 if size < 3 || al => {
            let inc = 1 + t as u32;
            let align = match (size, al) {
                (_, false) => 1,
                (3, _) => 16,
                (2, _) => 8,
                _ => 4 * ebytes,
            };
            ((0..4).map(|k| d + k * inc).collect(), align, size.min(2))
        }
        _ => return None,
    };
    if slots[slots.len() - 1] > 31 {
        return None;
    }
    check_align(a, rn, align, side);
    let count = if n == 1 { 1 } else { n };
    a.put(ld_rep(count, false, esize, 0, rn));
    if n == 1 && slots.len() == 2 {
        a.put(fmov_d(1, 0));
    }
    scatter(a, &slots);
    Some(n * (1 << esize))
}

/// One structure to or from one lane (`VLDn/VSTn {Dd[x]..}`). Returns the bytes moved.
fn one_lane(a: &mut Asm, w: u32, rn: u8, side: &mut Option<Label>) -> Option<u32> {
    let load = flag(w, 21);
    let d = nreg(w, 15, 22);
    let size = field(w, 11, 10);
    let n = field(w, 9, 8) + 1;
    let ia = field(w, 7, 4);
    let ebytes = 1u32 << size;
    let index = ia >> (size + 1);
    let bit = |k: u32| ia >> k & 1 == 1;
    let inc2 = size > 0 && bit(size);
    // (valid, register increment, alignment in bytes)
    let (ok, inc, align) = match (n, size) {
        (1, 0) => (!bit(0), 1, 1),
        (1, 1) => (!bit(1), 1, if bit(0) { 2 } else { 1 }),
        (1, _) => (
            !bit(2) && (ia & 3 == 0 || ia & 3 == 3),
            1,
            if bit(0) { 4 } else { 1 },
        ),
        (2, 0) => (true, 1, if bit(0) { 2 } else { 1 }),
        (2, 1) => (true, 1 + inc2 as u32, if bit(0) { 4 } else { 1 }),
        (2, _) => (!bit(1), 1 + inc2 as u32, if bit(0) { 8 } else { 1 }),
        (3, 0) => (!bit(0), 1, 1),
        (3, 1) => (!bit(0), 1 + inc2 as u32, 1),
        (3, _) => (ia & 3 == 0, 1 + inc2 as u32, 1),
        (4, 0) => (true, 1, if bit(0) { 4 } else { 1 }),
        (4, 1) => (true, 1 + inc2 as u32, if bit(0) { 8 } else { 1 }),
        _ => (
            ia & 3 != 3,
            1 + inc2 as u32,
            [1, 8, 16, 1][(ia & 3) as usize],
        ),
    };
    let slots: Vec<u32> = (0..n).map(|k| d + k * inc).collect();
    if !ok || slots[slots.len() - 1] > 31 {
        return None;
    }
    check_align(a, rn, align, side);
    gather(a, &slots);
    a.put(ldst_lane(load, n, ebytes, index, 0, rn));
    if load {
        scatter(a, &slots);
    }
    Some(n * ebytes)
}

/// VLD1/VST1 of 1-4 whole D registers, with the alignment qualifier checked (side exit).
fn vld1_whole(
    a: &mut Asm,
    w: u32,
    rn: u8,
    d: u32,
    regs: u32,
    side: &mut Option<Label>,
) -> Option<u32> {
    let load = flag(w, 21);
    let align = field(w, 5, 4);
    if d + regs > 32 {
        return None;
    }
    check_align(a, rn, if align == 0 { 1 } else { 4 << align }, side);
    if load {
        // Registers go in pairs (one LDP of two D registers) from the highest pair down;
        // all but the last load go to temporaries v0-v3 first, so that a fault leaves the
        // registers untouched. The last one loads straight into mapped registers.
        let mut direct = Vec::new();
        let mut k = if regs % 2 == 1 { regs - 1 } else { regs - 2 };
        loop {
            let two = k + 1 < regs;
            let last = k == 0;
            let mapped = host_d(d + k).is_some() && (!two || host_d(d + k + 1).is_some());
            let (t1, t2) = if last && mapped {
                direct.extend([k, k + 1]);
                (8 + (d + k) as u8, 9 + (d + k) as u8)
            } else {
                (k as u8, k as u8 + 1)
            };
            if two {
                a.put(dlsp(true, t1, t2, rn, 8 * k));
            } else {
                a.put(fls(true, Sz::D, t1, rn, 8 * k));
            }
            if last {
                break;
            }
            k -= 2;
        }
        for j in (0..regs).filter(|j| !direct.contains(j)) {
            commit(a, true, d + j, j as u8);
        }
    } else {
        let mut k = 0u32;
        while k < regs {
            let two = k + 1 < regs;
            if two
                && host_d(d + k).is_none()
                && host_d(d + k + 1).is_none()
                && (d + k).is_multiple_of(2)
            {
                a.put(fls(true, Sz::Q, k as u8, STATE, off_d(d + k)));
                mem_at(a, false, Sz::Q, k as u8, rn, 8 * k as i32);
            } else {
                for j in k..k + 1 + two as u32 {
                    let r = src(a, true, d + j, j as u8);
                    mem_at(a, false, Sz::D, r, rn, 8 * j as i32);
                }
            }
            k += 1 + two as u32;
        }
    }
    Some(8 * regs)
}
