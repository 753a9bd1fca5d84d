//! Accesses of more than one register: `LDRD/STRD` (one `LDP`/`STP`), `LDM/STM` (pairs
//! of `LDP`/`STP` at offsets from one base) and the exclusives (`LDREX*`/`STREX*` as
//! `LDXR*`/`STXR*`/`LDXP`/`STXP`, `CLREX`).
//!
//! A32 requires word alignment for `LDRD/STRD/LDM/STM` whatever `SCTLR.A` says, and A64's
//! pair accesses to normal memory do not check it: a misaligned base leaves the block
//! through a side exit (two `TBNZ`) and the interpreter raises the alignment fault. The
//! exclusives' alignment is checked by the host (a host alignment fault goes through the
//! fault path). `LDM` loads its base register last and writes the base back after every
//! access, so a fault on its first access leaves the guest state exact; a fault on a later
//! access (an `LDM` across a page boundary) may leave earlier destination registers
//! loaded, which the architecture allows (their values are UNKNOWN after the abort).

use super::asm::{Asm, Label};
use super::enc::{self, AddSub, ExSize, Ls};
use super::gen::mov32;
use super::lower::Lowered;
use super::{T_ADDR, T_OP2, T_PCV};
use crate::decode::{Addr, MemOff, Shift, Size};

/// Branches to the side exit (made on first use) when `r` is not word-aligned, unless
/// the block already knows it is ([`Asm::aligned`]); from here on it knows.
fn check_word(a: &mut Asm, r: u8, side: &mut Option<Label>) {
    let known = r < 15 && a.aligned & (1 << r) != 0;
    if !known {
        let l = *side.get_or_insert_with(|| a.label());
        a.tbnz_to(r, 0, l);
        a.tbnz_to(r, 1, l);
    }
    if r < 15 {
        a.aligned |= 1 << r;
    }
}

/// `rd = rn +- imm` in 32 bits (`imm` < 4096).
fn add_imm(a: &mut Asm, rd: u8, rn: u8, add: bool, imm: u32) {
    let f = if add { AddSub::Add } else { AddSub::Sub };
    a.put(enc::w_addsub_imm(f, rd, rn, imm, false));
}

/// `LDRD/STRD` (A32: `rt2 = rt + 1`; T32: any two registers).
pub fn dual(
    a: &mut Asm,
    load: bool,
    rt: u8,
    rt2: u8,
    addr: Addr,
    pc: u32,
    side: &mut Option<Label>,
) -> Lowered {
    if rt == 15 || rt2 == 15 || load && rt == rt2 || (addr.wback || !addr.index) && addr.rn == 15 {
        return Lowered::Unsupported;
    }
    let off = |a: &mut Asm, d: u8, n: u8| match addr.off {
        MemOff::Imm(i) => add_imm(a, d, n, addr.add, i),
        MemOff::Reg { rm, .. } => {
            let f = if addr.add { AddSub::Add } else { AddSub::Sub };
            a.put(enc::w_addsub_reg(f, d, n, rm, enc::Sh::Lsl, 0));
        }
    };
    match addr.off {
        MemOff::Reg { rm, shift, amount } if rm == 15 || shift != Shift::Lsl || amount != 0 => {
            return Lowered::Unsupported
        }
        MemOff::Imm(i) if i >= 4096 => return Lowered::Unsupported,
        _ => {}
    }
    let base = if addr.rn == 15 {
        // A literal: the address is a constant, checked here.
        let MemOff::Imm(i) = addr.off else {
            return Lowered::Unsupported;
        };
        let ea = if addr.add {
            (pc & !3).wrapping_add(i)
        } else {
            (pc & !3).wrapping_sub(i)
        };
        if ea & 3 != 0 {
            return Lowered::Unsupported;
        }
        mov32(a, T_ADDR, ea);
        T_ADDR
    } else if addr.index && addr.off != MemOff::Imm(0) {
        off(a, T_ADDR, addr.rn);
        T_ADDR
    } else {
        addr.rn
    };
    if addr.rn != 15 {
        check_word(a, base, side);
    }
    if load {
        a.put(enc::w_ldp(rt, rt2, base, 0));
    } else {
        a.put(enc::w_stp(rt, rt2, base, 0));
    }
    if addr.wback {
        if addr.index {
            a.put(enc::w_mov(addr.rn, base));
        } else {
            off(a, addr.rn, addr.rn);
        }
    }
    Lowered::Done
}

/// `LDM/STM` (IA/IB/DA/DB, with or without writeback; not the `^` forms). A loaded PC
/// goes to [`T_PCV`]; the caller makes the exit. A stored PC is `pc_read`.
#[allow(clippy::too_many_arguments)]
pub fn multi(
    a: &mut Asm,
    load: bool,
    rn: u8,
    list: u16,
    inc: bool,
    before: bool,
    wback: bool,
    pc_read: u32,
    side: &mut Option<Label>,
) -> Lowered {
    let n = list.count_ones();
    if rn == 15 || n == 0 || (wback && list & (1 << rn) != 0) {
        return Lowered::Unsupported;
    }
    if !load && list & 0x8000 != 0 {
        // STM of the PC stores PC + 8 (the value the interpreter also stores; the
        // architecture allows + 8 or + 12).
        mov32(a, T_PCV, pc_read);
    }
    let first: i32 = match (inc, before) {
        (true, false) => 0,
        (true, true) => 4,
        (false, false) => 4 - 4 * n as i32,
        (false, true) => -4 * n as i32,
    };
    // The accesses are at offsets from the base register itself (-64..64): an address
    // that a guest would wrap lands in the host's guard regions and faults, as for
    // `[rn, #imm]`. The offsets are multiples of 4, so the base's alignment is theirs.
    check_word(a, rn, side);
    // (register, offset) in memory order; for loads the base comes last.
    let slots: alloc::vec::Vec<(u8, i32)> = (0..16u8)
        .filter(|r| list & (1 << r) != 0)
        .enumerate()
        .map(|(j, r)| (r, first + 4 * j as i32))
        .collect();
    let late = |r: u8| load && r == rn;
    // A loaded PC goes to T_PCV.
    let host = |r: u8| if r == 15 { T_PCV } else { r };
    let single = |a: &mut Asm, r: u8, o: i32| {
        let op = if load { Ls::Ldr } else { Ls::Str };
        if o >= 0 {
            a.put(enc::ls_uimm(op, host(r), rn, o as u32));
        } else {
            a.put(enc::ls_unscaled(op, host(r), rn, o));
        }
    };
    // The accesses in memory order: pairs, then singles.
    let mut groups: alloc::vec::Vec<(u8, Option<u8>, i32)> = alloc::vec::Vec::new();
    let mut k = 0;
    while k < slots.len() {
        let (r, o) = slots[k];
        if late(r) {
            k += 1;
            continue;
        }
        match slots.get(k + 1) {
            Some(&(r2, _)) if !late(r2) => {
                groups.push((r, Some(r2), o));
                k += 2;
            }
            _ => {
                groups.push((r, None, o));
                k += 1;
            }
        }
    }
    // `STMDB rn!` (a push): the lowest access goes last, pre-indexed, and writes the
    // base back (rn - 4n, the access's own address: below 4 GiB once it succeeded, and
    // not done when it faults, so a fault leaves the base as it was).
    let pre_wback = !load && wback && !inc && before;
    if pre_wback {
        groups.rotate_left(1);
    }
    for (j, &(r, r2, o)) in groups.iter().enumerate() {
        let pre = pre_wback && j + 1 == groups.len();
        match (r2, load, pre) {
            (Some(r2), true, _) => a.put(enc::w_ldp(host(r), host(r2), rn, o)),
            (Some(r2), false, false) => a.put(enc::w_stp(host(r), host(r2), rn, o)),
            (Some(r2), false, true) => a.put(enc::w_stp_pre(host(r), host(r2), rn, o)),
            (None, false, true) => a.put(enc::ls_pre(Ls::Str, host(r), rn, o)),
            (None, _, _) => single(a, r, o),
        }
    }
    if let Some(&(r, o)) = slots.iter().find(|s| late(s.0)) {
        single(a, r, o);
    }
    if wback && !pre_wback {
        add_imm(a, rn, rn, inc, 4 * n);
    }
    Lowered::Done
}

fn ex_size(size: Size) -> Option<ExSize> {
    match size {
        Size::B => Some(ExSize::B),
        Size::H => Some(ExSize::H),
        Size::W => Some(ExSize::W),
        Size::D => None,
    }
}

/// The exclusive's address register: `rn`, or `rn + imm` in [`T_OP2`].
fn ex_base(a: &mut Asm, rn: u8, imm: u32) -> u8 {
    if imm == 0 {
        rn
    } else {
        mov32(a, T_OP2, imm);
        a.put(enc::w_addsub_reg(
            AddSub::Add,
            T_OP2,
            rn,
            T_OP2,
            enc::Sh::Lsl,
            0,
        ));
        T_OP2
    }
}

/// `LDREX{B,H,D}`.
pub fn ldrex(a: &mut Asm, size: Size, rt: u8, rt2: u8, rn: u8, imm: u32) -> Lowered {
    if rt == 15 || rn == 15 || size == Size::D && (rt2 == 15 || rt2 == rt) {
        return Lowered::Unsupported;
    }
    let b = ex_base(a, rn, imm);
    match ex_size(size) {
        Some(s) => a.put(enc::ldxr(s, rt, b)),
        None => a.put(enc::w_ldxp(rt, rt2, b)),
    }
    Lowered::Done
}

/// `STREX{B,H,D}`: the status (0 stored, 1 not) goes to `rd` as on the guest. A32
/// checks the alignment before the monitor, so a misaligned store-exclusive faults even
/// when it would fail; a host may check the monitor first (QEMU does), so the alignment
/// is checked here and a misaligned one leaves through the side exit.
#[allow(clippy::too_many_arguments)]
pub fn strex(
    a: &mut Asm,
    size: Size,
    rd: u8,
    rt: u8,
    rt2: u8,
    rn: u8,
    imm: u32,
    side: &mut Option<Label>,
) -> Lowered {
    if [rd, rt, rn].contains(&15)
        || rd == rt
        || rd == rn
        || size == Size::D && (rt2 == 15 || rd == rt2)
    {
        return Lowered::Unsupported;
    }
    let b = ex_base(a, rn, imm);
    let bits = match size {
        Size::B => 0,
        Size::H => 1,
        Size::W => 2,
        Size::D => 3,
    };
    if bits > 0 {
        let l = *side.get_or_insert_with(|| a.label());
        for bit in 0..bits {
            a.tbnz_to(b, bit, l);
        }
    }
    match ex_size(size) {
        Some(s) => a.put(enc::stxr(s, rd, rt, b)),
        None => a.put(enc::w_stxp(rd, rt, rt2, b)),
    }
    Lowered::Done
}
