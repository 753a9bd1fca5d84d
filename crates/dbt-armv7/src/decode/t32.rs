//! 32-bit Thumb-2 decoder (ARM ARM section A6.3). `a` is the first halfword, `b` the second.

use super::*;

fn insn(w: u32, op: Op, class: Class) -> Insn {
    Insn::new(w, 4, true, 14, op, class)
}

fn undef(w: u32) -> Insn {
    insn(w, Op::Undefined, Class::T32Unallocated)
}

fn r(x: u32, lo: u32) -> u8 {
    ((x >> lo) & 15) as u8
}

/// A register number that is SP or PC: UNPREDICTABLE in most Thumb-2 operand positions.
fn bad(r: u8) -> bool {
    r == 13 || r == 15
}

/// Decodes one 32-bit Thumb instruction.
pub fn decode(hw1: u16, hw2: u16) -> Insn {
    let a = hw1 as u32;
    let b = hw2 as u32;
    let w = a << 16 | b;
    let op1 = bits(a, 12, 11);
    let op2 = bits(a, 10, 4);
    match op1 {
        1 => {
            if op2 & 0b1100100 == 0 {
                ldm_stm(w, a, b)
            } else if op2 & 0b1100100 == 0b0000100 {
                dual_excl_tb(w, a, b)
            } else if op2 & 0b1100000 == 0b0100000 {
                dp_shifted(w, a, b)
            } else {
                coproc(w, a)
            }
        }
        2 => {
            if bit(b, 15) {
                branch_misc(w, a, b)
            } else if bit(a, 9) {
                dp_plain(w, a, b)
            } else {
                dp_modimm(w, a, b)
            }
        }
        _ => {
            if op2 & 0b1110001 == 0 {
                store(w, a, b)
            } else if op2 & 0b1100111 == 0b0000001 {
                load(w, a, b, Size::B)
            } else if op2 & 0b1100111 == 0b0000011 {
                load(w, a, b, Size::H)
            } else if op2 & 0b1100111 == 0b0000101 {
                load(w, a, b, Size::W)
            } else if op2 & 0b1100111 == 0b0000111 {
                undef(w)
            } else if op2 & 0b1110001 == 0b0010000 {
                vfp::decode(thumb_to_a32_simd(w), true)
            } else if op2 & 0b1110000 == 0b0100000 {
                dp_reg(w, a, b)
            } else if op2 & 0b1111000 == 0b0110000 {
                mul(w, a, b)
            } else if op2 & 0b1111000 == 0b0111000 {
                mul_long(w, a, b)
            } else {
                coproc(w, a)
            }
        }
    }
}

/// Maps the T32 Advanced SIMD encodings onto their A32 equivalents
/// (`111U 1111` → `1111 001U`, `1111 1001` → `1111 0100`).
fn thumb_to_a32_simd(w: u32) -> u32 {
    if w >> 24 & 0xef == 0xef {
        let u = (w >> 28) & 1;
        (w & 0x00ff_ffff) | 0xf200_0000 | u << 24
    } else if w >> 24 == 0xf9 {
        (w & 0x00ff_ffff) | 0xf400_0000
    } else {
        w
    }
}

fn coproc(w: u32, a: u32) -> Insn {
    if bits(a, 9, 8) == 3 {
        return vfp::decode(thumb_to_a32_simd(w), true);
    }
    let op1 = bits(a, 9, 4);
    if op1 & 0b111110 == 0 {
        return undef(w);
    }
    let cp = bits(w, 11, 8);
    if cp & 0b1110 == 0b1010 {
        return vfp::decode(w, true);
    }
    super::a32::coproc_generic(w, true)
}

fn ldm_stm(w: u32, a: u32, b: u32) -> Insn {
    let op = bits(a, 8, 7);
    let l = bit(a, 4);
    let wb = bit(a, 5);
    let rn = r(a, 0);
    if op == 0 || op == 3 {
        let inc = op == 3;
        if l {
            return insn(
                w,
                Op::Rfe {
                    rn,
                    inc,
                    before: !inc,
                    wback: wb,
                },
                Class::T32SrsRfe,
            )
            .unpred(rn == 15);
        }
        return insn(
            w,
            Op::Srs {
                mode: bits(b, 4, 0) as u8,
                inc,
                before: !inc,
                wback: wb,
            },
            Class::T32SrsRfe,
        );
    }
    let list = b as u16;
    let inc = op == 1;
    let mut unp = rn == 15 || list.count_ones() < 2 || list & 0x2000 != 0;
    if l {
        unp |= list & 0xc000 == 0xc000;
    } else {
        unp |= list & 0x8000 != 0;
    }
    if wb && list & (1 << rn) != 0 {
        unp = true;
    }
    insn(
        w,
        Op::Multi {
            load: l,
            rn,
            list,
            inc,
            before: !inc,
            wback: wb,
            user: false,
        },
        Class::T32LdmStm,
    )
    .unpred(unp)
}

fn dual_excl_tb(w: u32, a: u32, b: u32) -> Insn {
    let op1 = bits(a, 8, 7);
    let op2 = bits(a, 5, 4);
    let op3 = bits(b, 7, 4);
    let rn = r(a, 0);
    let rt = r(b, 12);
    let rt2 = r(b, 8);
    let rd = r(b, 0);
    let imm8 = bits(b, 7, 0);
    if op1 == 0 && op2 == 0 {
        let rd = r(b, 8);
        return insn(
            w,
            Op::Strex {
                size: Size::W,
                rd,
                rt,
                rt2: 15,
                rn,
                imm: imm8 << 2,
            },
            Class::T32Exclusive,
        )
        .unpred(bad(rd) || bad(rt) || rn == 15 || rd == rn || rd == rt);
    }
    if op1 == 0 && op2 == 1 {
        return insn(
            w,
            Op::Ldrex {
                size: Size::W,
                rt,
                rt2: 15,
                rn,
                imm: imm8 << 2,
            },
            Class::T32Exclusive,
        )
        .unpred(bad(rt) || rn == 15 || bits(b, 11, 8) != 15);
    }
    if op1 & 2 != 0 || op2 & 2 != 0 {
        let p = bit(a, 8);
        let u = bit(a, 7);
        let wbit = bit(a, 5);
        let load = bit(a, 4);
        let addr = Addr {
            rn,
            off: MemOff::Imm(imm8 << 2),
            add: u,
            index: p,
            wback: wbit,
        };
        let mut unp = bad(rt) || bad(rt2) || (wbit && (rn == rt || rn == rt2 || rn == 15));
        if load && rt == rt2 {
            unp = true;
        }
        if !load && rn == 15 {
            unp = true;
        }
        return insn(
            w,
            Op::MemDual {
                load,
                rt,
                rt2,
                addr,
            },
            Class::T32LdStDual,
        )
        .unpred(unp);
    }
    // op1 == 01
    let size = match op3 {
        4 => Size::B,
        5 => Size::H,
        7 => Size::D,
        _ => Size::W,
    };
    if op2 == 0 {
        if !matches!(op3, 4 | 5 | 7) {
            return undef(w);
        }
        let rt2x = if size == Size::D { rt2 } else { 15 };
        let unp = bad(rd)
            || bad(rt)
            || rn == 15
            || rd == rn
            || rd == rt
            || (size == Size::D && (bad(rt2) || rd == rt2))
            || (size != Size::D && rt2 != 15);
        return insn(
            w,
            Op::Strex {
                size,
                rd,
                rt,
                rt2: rt2x,
                rn,
                imm: 0,
            },
            Class::T32Exclusive,
        )
        .unpred(unp);
    }
    match op3 {
        0 | 1 => insn(
            w,
            Op::Tb {
                half: op3 == 1,
                rn,
                rm: rd,
            },
            Class::T32TableBranch,
        )
        .unpred(rn == 13 || bad(rd) || bits(b, 15, 8) != 0xf0),
        4 | 5 | 7 => {
            let rt2x = if size == Size::D { rt2 } else { 15 };
            let unp = bad(rt)
                || rn == 15
                || (size == Size::D && (bad(rt2) || rt == rt2))
                || (size != Size::D && rt2 != 15)
                || bits(b, 3, 0) != 15;
            insn(
                w,
                Op::Ldrex {
                    size,
                    rt,
                    rt2: rt2x,
                    rn,
                    imm: 0,
                },
                Class::T32Exclusive,
            )
            .unpred(unp)
        }
        _ => undef(w),
    }
}

/// Opcode table shared by the shifted-register and modified-immediate forms.
fn dp_t32(w: u32, a: u32, b: u32, op2: Operand2, class: Class, is_imm: bool) -> Insn {
    let op = bits(a, 8, 5);
    let s = bit(a, 4);
    let rn = r(a, 0);
    let rd = r(b, 8);
    let rm = match op2 {
        Operand2::ShiftImm { rm, .. } => rm,
        _ => 0,
    };
    let rm_bad = !is_imm && bad(rm);
    let mk = |o: DpOp, rd: u8, rn: u8, s: bool| {
        insn(
            w,
            Op::Dp {
                op: o,
                s,
                rd,
                rn,
                op2,
            },
            class,
        )
    };
    let test = |o: DpOp| mk(o, 0, rn, true).unpred(rn == 15 || rm_bad);
    let normal = |o: DpOp| mk(o, rd, rn, s).unpred(bad(rd) || rn == 15 || rm_bad);
    let addsub = |o: DpOp| {
        let sp_ok = rn == 13;
        mk(o, rd, rn, s).unpred((rd == 13 && !sp_ok) || rd == 15 || rn == 15 || rm_bad)
    };
    match op {
        0 if rd == 15 && s => test(DpOp::Tst),
        0 => normal(DpOp::And),
        1 => normal(DpOp::Bic),
        2 if rn == 15 => mk(DpOp::Mov, rd, 0, s).unpred(
            rd == 15
                || (rd == 13
                    && (s
                        || !matches!(
                            op2,
                            Operand2::ShiftImm {
                                amount: 0,
                                shift: Shift::Lsl,
                                ..
                            }
                        ))
                    && !is_imm)
                || (is_imm && bad(rd))
                || rm_bad,
        ),
        2 => normal(DpOp::Orr),
        3 if rn == 15 => mk(DpOp::Mvn, rd, 0, s).unpred(bad(rd) || rm_bad),
        3 => normal(DpOp::Orn),
        4 if rd == 15 && s => test(DpOp::Teq),
        4 => normal(DpOp::Eor),
        6 if !is_imm => {
            let (tb, amount) = match op2 {
                Operand2::ShiftImm { shift, amount, .. } => (shift != Shift::Lsl, amount),
                _ => (false, 0),
            };
            if bit(b, 4) {
                return undef(w);
            }
            insn(
                w,
                Op::Pkh {
                    tb,
                    rd,
                    rn,
                    rm,
                    amount,
                },
                class,
            )
            .unpred(bad(rd) || bad(rn) || bad(rm) || s)
        }
        8 if rd == 15 && s => test(DpOp::Cmn),
        8 => addsub(DpOp::Add),
        10 => normal(DpOp::Adc),
        11 => normal(DpOp::Sbc),
        13 if rd == 15 && s => test(DpOp::Cmp),
        13 => addsub(DpOp::Sub),
        14 => normal(DpOp::Rsb),
        _ => undef(w),
    }
}

fn dp_shifted(w: u32, a: u32, b: u32) -> Insn {
    let (shift, amount) = Shift::decode_imm(bits(b, 5, 4), bits(b, 14, 12) << 2 | bits(b, 7, 6));
    let op2 = Operand2::ShiftImm {
        rm: r(b, 0),
        shift,
        amount,
    };
    dp_t32(w, a, b, op2, Class::T32DpShiftReg, false).unpred(bit(b, 15))
}

fn dp_modimm(w: u32, a: u32, b: u32) -> Insn {
    let imm12 = bits(a, 10, 10) << 11 | bits(b, 14, 12) << 8 | bits(b, 7, 0);
    match t32_expand_imm(imm12) {
        Some((value, carry)) => dp_t32(
            w,
            a,
            b,
            Operand2::Imm { value, carry },
            Class::T32DpModImm,
            true,
        ),
        None => {
            let i = dp_t32(
                w,
                a,
                b,
                Operand2::Imm {
                    value: 0,
                    carry: None,
                },
                Class::T32DpModImm,
                true,
            );
            i.unpred(true)
        }
    }
}

fn dp_plain(w: u32, a: u32, b: u32) -> Insn {
    let op = bits(a, 8, 4);
    let rn = r(a, 0);
    let rd = r(b, 8);
    let imm12 = bits(a, 10, 10) << 11 | bits(b, 14, 12) << 8 | bits(b, 7, 0);
    let imm16 = (bits(a, 3, 0) << 12 | imm12) as u16;
    let lsb = (bits(b, 14, 12) << 2 | bits(b, 7, 6)) as u8;
    let f5 = bits(b, 4, 0) as u8;
    let imm = Operand2::Imm {
        value: imm12,
        carry: None,
    };
    let c = Class::T32DpPlainImm;
    let i = dp_plain_ops(w, a, b, op, rn, rd, imm12, imm16, lsb, f5, imm, c);
    // SSAT/USAT/SBFX/UBFX/BFI/BFC: hw1 bit 10 and hw2 bit 5 are (0).
    i.unpred(op >= 0b10000 && (bit(a, 10) || bit(b, 5)))
}

#[allow(clippy::too_many_arguments)]
fn dp_plain_ops(
    w: u32,
    a: u32,
    _b: u32,
    op: u32,
    rn: u8,
    rd: u8,
    imm12: u32,
    imm16: u16,
    lsb: u8,
    f5: u8,
    imm: Operand2,
    c: Class,
) -> Insn {
    match op {
        0 | 0b01010 => {
            let sub = op != 0;
            if rn == 15 {
                let imm = if sub { -(imm12 as i32) } else { imm12 as i32 };
                return insn(w, Op::Adr { rd, imm }, c).unpred(bad(rd));
            }
            let o = if sub { DpOp::Sub } else { DpOp::Add };
            insn(
                w,
                Op::Dp {
                    op: o,
                    s: false,
                    rd,
                    rn,
                    op2: imm,
                },
                c,
            )
            .unpred(rd == 15 || (rd == 13 && rn != 13))
        }
        0b00100 => insn(w, Op::Movw { rd, imm: imm16 }, c).unpred(bad(rd)),
        0b01100 => insn(w, Op::Movt { rd, imm: imm16 }, c).unpred(bad(rd)),
        0b10000 | 0b10010 | 0b11000 | 0b11010 => {
            let signed = op & 0b01000 == 0;
            let sh = bit(a, 5);
            if sh && lsb == 0 {
                return insn(
                    w,
                    Op::Sat16 {
                        signed,
                        rd,
                        sat: f5 & 15,
                        rn,
                    },
                    Class::T32Sat,
                )
                .unpred(bad(rd) || bad(rn) || f5 & 0x10 != 0);
            }
            let (shift, amount) = Shift::decode_imm(if sh { 2 } else { 0 }, lsb as u32);
            insn(
                w,
                Op::Sat {
                    signed,
                    rd,
                    sat: f5,
                    rn,
                    shift,
                    amount,
                },
                Class::T32Sat,
            )
            .unpred(bad(rd) || bad(rn))
        }
        0b10100 | 0b11100 => {
            let op = if op == 0b10100 {
                BfOp::Sbfx
            } else {
                BfOp::Ubfx
            };
            insn(
                w,
                Op::Bitfield {
                    op,
                    rd,
                    rn,
                    lsb,
                    width: f5 + 1,
                },
                Class::T32Bitfield,
            )
            .unpred(bad(rd) || bad(rn) || lsb as u32 + f5 as u32 > 31)
        }
        0b10110 => {
            let op = if rn == 15 { BfOp::Bfc } else { BfOp::Bfi };
            insn(
                w,
                Op::Bitfield {
                    op,
                    rd,
                    rn,
                    lsb,
                    width: (f5 as i32 - lsb as i32 + 1).max(0) as u8,
                },
                Class::T32Bitfield,
            )
            .unpred(bad(rd) || rn == 13 || f5 < lsb)
        }
        _ => undef(w),
    }
}

fn branch_misc(w: u32, a: u32, b: u32) -> Insn {
    let op = bits(a, 10, 4);
    let op1 = bits(b, 14, 12);
    let s = bits(a, 10, 10);
    let j1 = bits(b, 13, 13);
    let j2 = bits(b, 11, 11);
    if op1 & 1 == 1 || op1 & 4 == 4 {
        let i1 = !(j1 ^ s) & 1;
        let i2 = !(j2 ^ s) & 1;
        let imm = s << 24 | i1 << 23 | i2 << 22 | bits(a, 9, 0) << 12 | bits(b, 10, 0) << 1;
        let off = sext(imm, 25);
        return match op1 {
            1 | 3 => insn(w, Op::B { off }, Class::T32Branch),
            5 | 7 => insn(w, Op::Bl { off }, Class::T32Branch),
            _ => insn(w, Op::BlxImm { off }, Class::T32Branch).unpred(b & 1 != 0),
        };
    }
    // op1 == 0x0
    if op & 0b0111000 != 0b0111000 {
        let imm = s << 20 | j2 << 19 | j1 << 18 | bits(a, 5, 0) << 12 | bits(b, 10, 0) << 1;
        let mut i = insn(w, Op::B { off: sext(imm, 21) }, Class::T32CondBranch);
        i.cond = bits(a, 9, 6) as u8;
        return i;
    }
    let rn = r(a, 0);
    let rd = r(b, 8);
    let i = branch_misc_sys(w, a, b, op, op1, rn, rd);
    // hw2 bit 13 is (0) in every system form; hints/CPS/barriers have hw1[3:0] = (1111).
    let sbo_rn = matches!(op, 0b0111010 | 0b0111011) && bits(a, 3, 0) != 15;
    let sbo_b = op == 0b0111011 && bits(b, 11, 8) != 15;
    i.unpred((op1 == 0 && bit(b, 13)) || sbo_rn || sbo_b)
}

fn branch_misc_sys(w: u32, a: u32, b: u32, op: u32, op1: u32, rn: u8, rd: u8) -> Insn {
    match op {
        0b0111000 | 0b0111001 => {
            let spsr = bit(a, 4);
            if bit(b, 5) {
                let sysm = (bits(b, 4, 4) << 4 | bits(b, 11, 8)) as u8;
                return insn(w, Op::MsrBanked { rn, r: spsr, sysm }, Class::T32Banked)
                    .unpred(bad(rn));
            }
            let mask = bits(b, 11, 8) as u8;
            insn(
                w,
                Op::Msr {
                    spsr,
                    mask,
                    src: MsrSrc::Reg(rn),
                },
                Class::T32Status,
            )
            .unpred(bad(rn) || mask == 0)
        }
        0b0111010 => {
            let hop1 = bits(b, 10, 8);
            if hop1 != 0 {
                let imod = bits(b, 10, 9) as u8;
                let m = bit(b, 8);
                let aif = bits(b, 7, 5) as u8;
                let mode = if m { Some(bits(b, 4, 0) as u8) } else { None };
                let unp = (imod == 0 && !m) || imod == 1 || ((imod >> 1 == 1) != (aif != 0));
                return insn(w, Op::Cps { imod, aif, mode }, Class::T32HintCps).unpred(unp);
            }
            let h = match bits(b, 7, 0) {
                0 => Hint::Nop,
                1 => Hint::Yield,
                2 => Hint::Wfe,
                3 => Hint::Wfi,
                4 => Hint::Sev,
                0xf0..=0xff => Hint::Dbg,
                _ => Hint::Nop,
            };
            insn(w, Op::Hint(h), Class::T32HintCps)
        }
        0b0111011 => match bits(b, 7, 4) {
            2 => insn(w, Op::Clrex, Class::T32Barrier),
            4 => insn(w, Op::Barrier(Barrier::Dsb), Class::T32Barrier),
            5 => insn(w, Op::Barrier(Barrier::Dmb), Class::T32Barrier),
            6 => insn(w, Op::Barrier(Barrier::Isb), Class::T32Barrier),
            _ => undef(w),
        },
        0b0111100 => insn(w, Op::Bxj { rm: rn }, Class::T32Bxj).unpred(bad(rn)),
        0b0111101 => {
            let imm = bits(b, 7, 0);
            if imm == 0 && rn == 14 {
                return insn(w, Op::Eret, Class::T32SubsPcLr);
            }
            insn(
                w,
                Op::Dp {
                    op: DpOp::Sub,
                    s: true,
                    rd: 15,
                    rn,
                    op2: Operand2::Imm {
                        value: imm,
                        carry: None,
                    },
                },
                Class::T32SubsPcLr,
            )
            .unpred(rn != 14)
        }
        0b0111110 | 0b0111111 => {
            let spsr = bit(a, 4);
            if bit(b, 5) {
                let sysm = (bits(b, 4, 4) << 4 | bits(a, 3, 0)) as u8;
                return insn(w, Op::MrsBanked { rd, r: spsr, sysm }, Class::T32Banked)
                    .unpred(bad(rd));
            }
            insn(w, Op::Mrs { rd, spsr }, Class::T32Status).unpred(bad(rd))
        }
        0b1111110 if op1 == 0 => {
            let imm = (bits(a, 3, 0) << 12 | bits(b, 11, 0)) as u16;
            insn(w, Op::Hvc { imm }, Class::T32HvcSmc)
        }
        0b1111111 if op1 == 0 => insn(
            w,
            Op::Smc {
                imm: bits(a, 3, 0) as u8,
            },
            Class::T32HvcSmc,
        ),
        0b1111111 if op1 == 2 => {
            let imm = (bits(a, 3, 0) << 12 | bits(b, 11, 0)) as u16;
            insn(w, Op::Udf { imm }, Class::T32Udf)
        }
        _ => undef(w),
    }
}

fn store(w: u32, a: u32, b: u32) -> Insn {
    let op1 = bits(a, 7, 5);
    let rn = r(a, 0);
    let rt = r(b, 12);
    let size = match op1 & 3 {
        0 => Size::B,
        1 => Size::H,
        2 => Size::W,
        _ => return undef(w),
    };
    let mk = |addr: Addr, unpriv: bool, class| {
        insn(
            w,
            Op::Mem {
                load: false,
                size,
                signed: false,
                rt,
                addr,
                unpriv,
            },
            class,
        )
    };
    if op1 & 4 != 0 {
        let addr = Addr {
            rn,
            off: MemOff::Imm(bits(b, 11, 0)),
            add: true,
            index: true,
            wback: false,
        };
        return mk(addr, false, Class::T32Store)
            .unpred(rn == 15 || rt == 15 || (size != Size::W && rt == 13));
    }
    if bit(b, 11) {
        let p = bit(b, 10);
        let u = bit(b, 9);
        let wb = bit(b, 8);
        if !p && !wb {
            return undef(w);
        }
        let unpriv = p && u && !wb;
        let addr = Addr {
            rn,
            off: MemOff::Imm(bits(b, 7, 0)),
            add: u,
            index: p,
            wback: wb,
        };
        let class = if unpriv {
            Class::T32LdStT
        } else {
            Class::T32Store
        };
        let unp = rn == 15 || rt == 15 || (size != Size::W && rt == 13) || (wb && rn == rt);
        return mk(addr, unpriv, class).unpred(unp);
    }
    if bits(b, 10, 6) != 0 {
        return undef(w);
    }
    let rm = r(b, 0);
    let addr = Addr {
        rn,
        off: MemOff::Reg {
            rm,
            shift: Shift::Lsl,
            amount: bits(b, 5, 4) as u8,
        },
        add: true,
        index: true,
        wback: false,
    };
    mk(addr, false, Class::T32Store)
        .unpred(rn == 15 || rt == 15 || bad(rm) || (size != Size::W && rt == 13))
}

fn load(w: u32, a: u32, b: u32, size: Size) -> Insn {
    let signed = bit(a, 8);
    let u = bit(a, 7);
    let rn = r(a, 0);
    let rt = r(b, 12);
    if signed && size == Size::W {
        return undef(w);
    }
    let preload = rt == 15 && size != Size::W;
    let mk = |addr: Addr, unpriv: bool, class| {
        if preload {
            let rm = match addr.off {
                MemOff::Reg { rm, .. } => rm,
                _ => 15,
            };
            return insn(w, Op::Preload { rn: addr.rn, rm }, Class::T32Preload)
                .unpred(unpriv || addr.wback || !addr.index);
        }
        insn(
            w,
            Op::Mem {
                load: true,
                size,
                signed,
                rt,
                addr,
                unpriv,
            },
            class,
        )
    };
    let t_bad = |rt: u8| if size == Size::W { false } else { rt == 13 };
    if rn == 15 {
        let addr = Addr {
            rn,
            off: MemOff::Imm(bits(b, 11, 0)),
            add: u,
            index: true,
            wback: false,
        };
        return mk(addr, false, Class::T32Load).unpred(t_bad(rt));
    }
    if u {
        let addr = Addr {
            rn,
            off: MemOff::Imm(bits(b, 11, 0)),
            add: true,
            index: true,
            wback: false,
        };
        return mk(addr, false, Class::T32Load).unpred(t_bad(rt));
    }
    if bit(b, 11) {
        let p = bit(b, 10);
        let uu = bit(b, 9);
        let wb = bit(b, 8);
        if !p && !wb {
            return undef(w);
        }
        let unpriv = p && uu && !wb;
        let addr = Addr {
            rn,
            off: MemOff::Imm(bits(b, 7, 0)),
            add: uu,
            index: p,
            wback: wb,
        };
        let class = if unpriv {
            Class::T32LdStT
        } else {
            Class::T32Load
        };
        let unp = t_bad(rt) || (wb && rn == rt) || (unpriv && rt == 15);
        return mk(addr, unpriv, class).unpred(unp);
    }
    if bits(b, 10, 6) != 0 {
        return undef(w);
    }
    let rm = r(b, 0);
    let addr = Addr {
        rn,
        off: MemOff::Reg {
            rm,
            shift: Shift::Lsl,
            amount: bits(b, 5, 4) as u8,
        },
        add: true,
        index: true,
        wback: false,
    };
    mk(addr, false, Class::T32Load).unpred(bad(rm) || t_bad(rt))
}

fn dp_reg(w: u32, a: u32, b: u32) -> Insn {
    let op1 = bits(a, 7, 4);
    let op2 = bits(b, 7, 4);
    let rn = r(a, 0);
    let rd = r(b, 8);
    let rm = r(b, 0);
    if bits(b, 15, 12) != 0xf {
        return undef(w);
    }
    if op1 >> 1 <= 3 && op2 == 0 {
        let shift = Shift::decode_reg(op1 >> 1);
        return insn(
            w,
            Op::Dp {
                op: DpOp::Mov,
                s: op1 & 1 != 0,
                rd,
                rn: 0,
                op2: Operand2::ShiftReg {
                    rm: rn,
                    shift,
                    rs: rm,
                },
            },
            Class::T32ShiftReg,
        )
        .unpred(bad(rd) || bad(rn) || bad(rm));
    }
    if op1 <= 5 && op2 & 8 != 0 {
        let (signed, size) = match op1 {
            0 => (true, ExtSize::H),
            1 => (false, ExtSize::H),
            2 => (true, ExtSize::B16),
            3 => (false, ExtSize::B16),
            4 => (true, ExtSize::B),
            _ => (false, ExtSize::B),
        };
        return insn(
            w,
            Op::Extend {
                signed,
                size,
                rd,
                rn,
                rm,
                rot: (bits(b, 5, 4) * 8) as u8,
            },
            Class::T32Extend,
        )
        .unpred(bad(rd) || bad(rm) || rn == 13 || bit(b, 6));
    }
    if op1 & 8 != 0 && op2 & 8 == 0 {
        let prefix = match (op2 >> 2, op2 & 3) {
            (0, 0) => ParPrefix::S,
            (0, 1) => ParPrefix::Q,
            (0, 2) => ParPrefix::Sh,
            (1, 0) => ParPrefix::U,
            (1, 1) => ParPrefix::Uq,
            (1, 2) => ParPrefix::Uh,
            _ => return undef(w),
        };
        let op = match op1 & 7 {
            1 => ParOp::Add16,
            2 => ParOp::Asx,
            6 => ParOp::Sax,
            5 => ParOp::Sub16,
            0 => ParOp::Add8,
            4 => ParOp::Sub8,
            _ => return undef(w),
        };
        return insn(
            w,
            Op::Parallel {
                prefix,
                op,
                rd,
                rn,
                rm,
            },
            Class::T32Parallel,
        )
        .unpred(bad(rd) || bad(rn) || bad(rm));
    }
    if op1 & 0b1100 == 0b1000 && op2 & 0b1100 == 0b1000 {
        let c = Class::T32Misc;
        let unp3 = bad(rd) || bad(rn) || bad(rm);
        let rev = |op| insn(w, Op::Rev { op, rd, rm }, c).unpred(bad(rd) || bad(rm) || rn != rm);
        return match (op1 & 3, op2 & 3) {
            (0, q) => {
                let op = [QOp::Qadd, QOp::Qdadd, QOp::Qsub, QOp::Qdsub][q as usize];
                insn(w, Op::QAddSub { op, rd, rn, rm }, c).unpred(unp3)
            }
            (1, 0) => rev(RevOp::Rev),
            (1, 1) => rev(RevOp::Rev16),
            (1, 2) => rev(RevOp::Rbit),
            (1, 3) => rev(RevOp::Revsh),
            (2, 0) => insn(w, Op::Sel { rd, rn, rm }, c).unpred(unp3),
            (3, 0) => rev(RevOp::Clz),
            _ => undef(w),
        };
    }
    undef(w)
}

fn mul(w: u32, a: u32, b: u32) -> Insn {
    let op1 = bits(a, 6, 4);
    let op2 = bits(b, 5, 4);
    let rn = r(a, 0);
    let ra = r(b, 12);
    let rd = r(b, 8);
    let rm = r(b, 0);
    if bits(b, 7, 6) != 0 {
        return undef(w);
    }
    let c = Class::T32Mul;
    let unp = bad(rd) || bad(rn) || bad(rm) || ra == 13;
    let nb = bit(b, 5);
    let mb = bit(b, 4);
    match (op1, op2) {
        (0, 0) | (0, 1) => insn(
            w,
            Op::Mul {
                s: false,
                sub: op2 == 1,
                rd,
                rn,
                rm,
                ra,
            },
            c,
        )
        .unpred(unp || (op2 == 1 && ra == 15)),
        (1, _) => {
            let kind = if ra == 15 {
                MulHalf::Smul
            } else {
                MulHalf::Smla
            };
            insn(
                w,
                Op::MulHalf {
                    kind,
                    n_high: nb,
                    m_high: mb,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                c,
            )
            .unpred(unp)
        }
        (2, 0) | (2, 1) | (4, 0) | (4, 1) => {
            let kind = if op1 == 2 {
                MulDual::Smlad
            } else {
                MulDual::Smlsd
            };
            insn(
                w,
                Op::MulDual {
                    kind,
                    swap: mb,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                c,
            )
            .unpred(unp)
        }
        (3, 0) | (3, 1) => {
            let kind = if ra == 15 {
                MulHalf::Smulw
            } else {
                MulHalf::Smlaw
            };
            insn(
                w,
                Op::MulHalf {
                    kind,
                    n_high: false,
                    m_high: mb,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                c,
            )
            .unpred(unp)
        }
        (5, 0) | (5, 1) | (6, 0) | (6, 1) => insn(
            w,
            Op::MulMost {
                sub: op1 == 6,
                round: mb,
                rd,
                rn,
                rm,
                ra,
            },
            c,
        )
        .unpred(unp || (op1 == 6 && ra == 15)),
        (7, 0) => insn(w, Op::Usad8 { rd, rn, rm, ra }, c).unpred(unp),
        _ => undef(w),
    }
}

fn mul_long(w: u32, a: u32, b: u32) -> Insn {
    let op1 = bits(a, 6, 4);
    let op2 = bits(b, 7, 4);
    let rn = r(a, 0);
    let rdlo = r(b, 12);
    let rdhi = r(b, 8);
    let rm = r(b, 0);
    let c = Class::T32MulLong;
    let unp = bad(rdlo) || bad(rdhi) || bad(rn) || bad(rm) || rdhi == rdlo;
    let long = |kind| {
        insn(
            w,
            Op::MulLong {
                kind,
                s: false,
                rdlo,
                rdhi,
                rn,
                rm,
            },
            c,
        )
        .unpred(unp)
    };
    match (op1, op2) {
        (0, 0) => long(MulLong::Smull),
        (2, 0) => long(MulLong::Umull),
        (4, 0) => long(MulLong::Smlal),
        (6, 0) => long(MulLong::Umlal),
        (6, 6) => long(MulLong::Umaal),
        (1, 15) | (3, 15) => insn(
            w,
            Op::Div {
                signed: op1 == 1,
                rd: rdhi,
                rn,
                rm,
            },
            c,
        )
        .unpred(bad(rdhi) || bad(rn) || bad(rm) || rdlo != 15),
        (4, 8..=11) => insn(
            w,
            Op::MulHalf {
                kind: MulHalf::Smlal,
                n_high: bit(b, 5),
                m_high: bit(b, 4),
                rd: rdhi,
                rn,
                rm,
                ra: rdlo,
            },
            c,
        )
        .unpred(unp),
        (4, 12) | (4, 13) | (5, 12) | (5, 13) => {
            let kind = if op1 == 4 {
                MulDual::Smlald
            } else {
                MulDual::Smlsld
            };
            insn(
                w,
                Op::MulDual {
                    kind,
                    swap: bit(b, 4),
                    rd: rdhi,
                    rn,
                    rm,
                    ra: rdlo,
                },
                c,
            )
            .unpred(unp)
        }
        _ => undef(w),
    }
}
