//! A32 decoder (ARM ARM ARMv7-A/R section A5), including the virtualization and security
//! extensions (ERET, HVC, SMC, banked MRS/MSR) and the LPAE 64-bit CP15 transfers.

use super::*;

fn r(w: u32, lo: u32) -> u8 {
    ((w >> lo) & 15) as u8
}

fn insn(w: u32, op: Op, class: Class) -> Insn {
    Insn::new(w, 4, false, (w >> 28) as u8, op, class)
}

/// "Should be zero" bits that are not: UNPREDICTABLE (ARM ARM `(0)` fields).
fn sbz(w: u32, mask: u32) -> bool {
    w & mask != 0
}

/// "Should be one" bits that are not: UNPREDICTABLE (ARM ARM `(1)` fields).
fn sbo(w: u32, mask: u32) -> bool {
    w & mask != mask
}

fn undef(w: u32, class: Class) -> Insn {
    insn(w, Op::Undefined, class)
}

/// Decodes one A32 instruction.
pub fn decode(w: u32) -> Insn {
    if w >> 28 == 0xf {
        return unconditional(w);
    }
    match bits(w, 27, 25) {
        0 | 1 => dp_misc(w),
        2 => ldst_word_byte(w),
        3 if !bit(w, 4) => ldst_word_byte(w),
        3 => media(w),
        4 => block(w),
        5 => {
            let off = sext(bits(w, 23, 0), 24) << 2;
            if bit(w, 24) {
                insn(w, Op::Bl { off }, Class::A32Branch)
            } else {
                insn(w, Op::B { off }, Class::A32Branch)
            }
        }
        _ => coproc(w),
    }
}

fn dp_misc(w: u32) -> Insn {
    let op = bit(w, 25);
    let op1 = bits(w, 24, 20);
    let op2 = bits(w, 7, 4);
    if !op {
        if op1 & 0b11001 != 0b10000 && op2 & 1 == 0 {
            return dp_reg(w);
        }
        if op1 & 0b11001 != 0b10000 && op2 & 0b1001 == 0b0001 {
            return dp_rsr(w);
        }
        if op1 & 0b11001 == 0b10000 && op2 & 0b1000 == 0 {
            return misc(w);
        }
        if op1 & 0b11001 == 0b10000 && op2 & 0b1001 == 0b1000 {
            return mul_half(w);
        }
        if op2 == 0b1001 {
            return if op1 & 0b10000 == 0 { mul(w) } else { sync(w) };
        }
        // op2 == 1011 or 11x1: extra load/store
        return extra_ldst(w);
    }
    match op1 {
        0b10000 | 0b10100 => {
            let imm = (bits(w, 19, 16) << 12 | bits(w, 11, 0)) as u16;
            let rd = r(w, 12);
            let o = if op1 == 0b10000 {
                Op::Movw { rd, imm }
            } else {
                Op::Movt { rd, imm }
            };
            insn(w, o, Class::A32MovwMovt).unpred(rd == 15)
        }
        0b10010 | 0b10110 => msr_imm_hints(w),
        _ => {
            let (value, carry) = a32_expand_imm(bits(w, 11, 0));
            dp_common(w, Operand2::Imm { value, carry }, Class::A32DpImm)
        }
    }
}

fn dp_common(w: u32, op2: Operand2, class: Class) -> Insn {
    let op = DpOp::from_a32(bits(w, 24, 21));
    let s = bit(w, 20);
    let rd = r(w, 12);
    let rn = r(w, 16);
    let class = if rd == 15 && !op.is_test() && class != Class::A32DpRsr {
        Class::A32DpPc
    } else {
        class
    };
    let sb = (op.is_move() && rn != 0) || (op.is_test() && rd != 0);
    insn(w, Op::Dp { op, s, rd, rn, op2 }, class).unpred(sb)
}

fn dp_reg(w: u32) -> Insn {
    let (shift, amount) = Shift::decode_imm(bits(w, 6, 5), bits(w, 11, 7));
    dp_common(
        w,
        Operand2::ShiftImm {
            rm: r(w, 0),
            shift,
            amount,
        },
        Class::A32DpReg,
    )
}

fn dp_rsr(w: u32) -> Insn {
    let i = dp_common(
        w,
        Operand2::ShiftReg {
            rm: r(w, 0),
            shift: Shift::decode_reg(bits(w, 6, 5)),
            rs: r(w, 8),
        },
        Class::A32DpRsr,
    );
    let op = DpOp::from_a32(bits(w, 24, 21));
    let pc = r(w, 0) == 15
        || r(w, 8) == 15
        || (!op.is_test() && r(w, 12) == 15)
        || (!op.is_move() && r(w, 16) == 15);
    i.unpred(pc)
}

fn misc(w: u32) -> Insn {
    let op = bits(w, 22, 21);
    let op2 = bits(w, 6, 4);
    let rd = r(w, 12);
    let rn = r(w, 16);
    let rm = r(w, 0);
    match op2 {
        0 => {
            let spsr = bit(w, 22);
            if bit(w, 9) {
                let sysm = (bits(w, 8, 8) << 4 | bits(w, 19, 16)) as u8;
                if op & 1 == 0 {
                    insn(w, Op::MrsBanked { rd, r: spsr, sysm }, Class::A32Banked)
                        .unpred(rd == 15 || sbz(w, 0xcff))
                } else {
                    insn(
                        w,
                        Op::MsrBanked {
                            rn: rm,
                            r: spsr,
                            sysm,
                        },
                        Class::A32Banked,
                    )
                    .unpred(rm == 15 || sbo(w, 0xf000) || sbz(w, 0xc00))
                }
            } else if op & 1 == 0 {
                insn(w, Op::Mrs { rd, spsr }, Class::A32Status)
                    .unpred(rd == 15 || sbo(w, 0xf_0000) || sbz(w, 0xfff))
            } else {
                let mask = bits(w, 19, 16) as u8;
                insn(
                    w,
                    Op::Msr {
                        spsr,
                        mask,
                        src: MsrSrc::Reg(rm),
                    },
                    Class::A32Status,
                )
                .unpred(rm == 15 || mask == 0 || sbo(w, 0xf000) || sbz(w, 0xf00))
            }
        }
        1 if op == 1 => insn(w, Op::Bx { rm }, Class::A32BxBlx).unpred(sbo(w, 0xf_ff00)),
        1 if op == 3 => insn(
            w,
            Op::Rev {
                op: RevOp::Clz,
                rd,
                rm,
            },
            Class::A32Clz,
        )
        .unpred(rd == 15 || rm == 15 || sbo(w, 0xf_0f00)),
        2 if op == 1 => {
            insn(w, Op::Bxj { rm }, Class::A32BxBlx).unpred(rm == 15 || sbo(w, 0xf_ff00))
        }
        3 if op == 1 => {
            insn(w, Op::Blx { rm }, Class::A32BxBlx).unpred(rm == 15 || sbo(w, 0xf_ff00))
        }
        5 => {
            let q = [QOp::Qadd, QOp::Qsub, QOp::Qdadd, QOp::Qdsub][op as usize];
            insn(w, Op::QAddSub { op: q, rd, rn, rm }, Class::A32Saturating)
                .unpred(rd == 15 || rn == 15 || rm == 15 || sbz(w, 0xf00))
        }
        6 if op == 3 => insn(w, Op::Eret, Class::A32Eret).unpred(w & 0xf_ff0f != 0xe),
        7 if op == 1 => {
            let imm = (bits(w, 19, 8) << 4 | bits(w, 3, 0)) as u16;
            // BKPT is unconditional; a condition other than AL is UNPREDICTABLE.
            insn(w, Op::Bkpt { imm }, Class::A32Bkpt).unpred(w >> 28 != 14)
        }
        7 if op == 2 => {
            let imm = (bits(w, 19, 8) << 4 | bits(w, 3, 0)) as u16;
            insn(w, Op::Hvc { imm }, Class::A32HvcSmc).unpred(w >> 28 != 14)
        }
        7 if op == 3 => insn(
            w,
            Op::Smc {
                imm: bits(w, 3, 0) as u8,
            },
            Class::A32HvcSmc,
        ),
        _ => undef(w, Class::A32Unallocated),
    }
}

fn msr_imm_hints(w: u32) -> Insn {
    let spsr = bit(w, 22);
    let mask = bits(w, 19, 16) as u8;
    if !spsr && mask == 0 {
        let h = match bits(w, 7, 0) {
            0 => Hint::Nop,
            1 => Hint::Yield,
            2 => Hint::Wfe,
            3 => Hint::Wfi,
            4 => Hint::Sev,
            0xf0..=0xff => Hint::Dbg,
            _ => Hint::Nop,
        };
        return insn(w, Op::Hint(h), Class::A32Hint).unpred(sbo(w, 0xf000) || sbz(w, 0xf00));
    }
    let (value, _) = a32_expand_imm(bits(w, 11, 0));
    insn(
        w,
        Op::Msr {
            spsr,
            mask,
            src: MsrSrc::Imm(value),
        },
        Class::A32MsrImm,
    )
    .unpred(sbo(w, 0xf000))
}

fn mul_half(w: u32) -> Insn {
    let rd = r(w, 16);
    let ra = r(w, 12);
    let rm = r(w, 8);
    let rn = r(w, 0);
    let n_high = bit(w, 5);
    let m_high = bit(w, 6);
    let (kind, n_high) = match bits(w, 22, 21) {
        0 => (MulHalf::Smla, n_high),
        1 => (
            if bit(w, 5) {
                MulHalf::Smulw
            } else {
                MulHalf::Smlaw
            },
            false,
        ),
        2 => (MulHalf::Smlal, n_high),
        _ => (MulHalf::Smul, n_high),
    };
    let uses_ra = matches!(kind, MulHalf::Smla | MulHalf::Smlaw | MulHalf::Smlal);
    let bad = rd == 15 || rn == 15 || rm == 15 || (uses_ra && ra == 15);
    let bad = bad || (kind == MulHalf::Smlal && rd == ra) || (!uses_ra && ra != 0);
    insn(
        w,
        Op::MulHalf {
            kind,
            n_high,
            m_high,
            rd,
            rn,
            rm,
            ra: if uses_ra { ra } else { 15 },
        },
        Class::A32MulHalf,
    )
    .unpred(bad)
}

fn mul(w: u32) -> Insn {
    let s = bit(w, 20);
    let rd = r(w, 16);
    let ra = r(w, 12);
    let rm = r(w, 8);
    let rn = r(w, 0);
    match bits(w, 23, 21) {
        0 | 1 | 3 => {
            let op = bits(w, 23, 21);
            if op == 3 && s {
                return undef(w, Class::A32Unallocated);
            }
            let sb = op == 0 && ra != 0;
            let ra = if op == 0 { 15 } else { ra };
            insn(
                w,
                Op::Mul {
                    s: s && op != 3,
                    sub: op == 3,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                Class::A32Mul,
            )
            .unpred(rd == 15 || rn == 15 || rm == 15 || (op != 0 && ra == 15) || sb)
        }
        2 => {
            if s {
                return undef(w, Class::A32Unallocated);
            }
            mul_long(w, MulLong::Umaal, false)
        }
        4 => mul_long(w, MulLong::Umull, s),
        5 => mul_long(w, MulLong::Umlal, s),
        6 => mul_long(w, MulLong::Smull, s),
        _ => mul_long(w, MulLong::Smlal, s),
    }
}

fn mul_long(w: u32, kind: MulLong, s: bool) -> Insn {
    let rdhi = r(w, 16);
    let rdlo = r(w, 12);
    let rm = r(w, 8);
    let rn = r(w, 0);
    insn(
        w,
        Op::MulLong {
            kind,
            s,
            rdlo,
            rdhi,
            rn,
            rm,
        },
        Class::A32MulLong,
    )
    .unpred(rdhi == 15 || rdlo == 15 || rn == 15 || rm == 15 || rdhi == rdlo)
}

fn sync(w: u32) -> Insn {
    let rn = r(w, 16);
    let rt = r(w, 12);
    let rt2 = r(w, 0);
    let op = bits(w, 23, 20);
    if op & 0b1011 == 0 {
        // SWP/SWPB: Rt2 at [3:0] is the value stored.
        let byte = bit(w, 22);
        return insn(w, Op::Swp { byte, rt, rt2, rn }, Class::A32Swp)
            .unpred(rt == 15 || rt2 == 15 || rn == 15 || rn == rt || rn == rt2 || sbz(w, 0xf00));
    }
    if op & 0b1000 == 0 {
        return undef(w, Class::A32Unallocated);
    }
    let size = match bits(w, 22, 21) {
        0 => Size::W,
        1 => Size::D,
        2 => Size::B,
        _ => Size::H,
    };
    if bit(w, 20) {
        let rt2 = if size == Size::D { rt + 1 } else { 15 };
        let bad =
            rn == 15 || rt == 15 || (size == Size::D && (rt & 1 == 1 || rt == 14)) || sbo(w, 0xf0f);
        insn(
            w,
            Op::Ldrex {
                size,
                rt,
                rt2: rt2 & 15,
                rn,
                imm: 0,
            },
            Class::A32Exclusive,
        )
        .unpred(bad)
    } else {
        let rd = rt;
        let rt = r(w, 0);
        let rt2 = if size == Size::D { rt + 1 } else { 15 };
        let bad = rd == 15
            || rt == 15
            || rn == 15
            || rd == rn
            || rd == rt
            || (size == Size::D && (rt & 1 == 1 || rt == 14 || rd == rt2))
            || sbo(w, 0xf00);
        insn(
            w,
            Op::Strex {
                size,
                rd,
                rt,
                rt2: rt2 & 15,
                rn,
                imm: 0,
            },
            Class::A32Exclusive,
        )
        .unpred(bad)
    }
}

fn extra_ldst(w: u32) -> Insn {
    let p = bit(w, 24);
    let u = bit(w, 23);
    let imm_form = bit(w, 22);
    let wbit = bit(w, 21);
    let l = bit(w, 20);
    let rn = r(w, 16);
    let rt = r(w, 12);
    let op2 = bits(w, 6, 5);
    let off = if imm_form {
        MemOff::Imm(bits(w, 11, 8) << 4 | bits(w, 3, 0))
    } else {
        MemOff::Reg {
            rm: r(w, 0),
            shift: Shift::Lsl,
            amount: 0,
        }
    };
    let rm = r(w, 0);
    let unpriv = !p && wbit;
    let addr = Addr {
        rn,
        off,
        add: u,
        index: p,
        wback: !p || wbit,
    };
    let reg_bad = !imm_form && (rm == 15 || sbz(w, 0xf00));
    let wb_bad = addr.wback && (rn == 15 || rn == rt);
    if unpriv {
        // LDRHT/STRHT/LDRSBT/LDRSHT; the dual forms have no T variant.
        let (load, size, signed) = match (op2, l) {
            (1, false) => (false, Size::H, false),
            (1, true) => (true, Size::H, false),
            (2, true) => (true, Size::B, true),
            (3, true) => (true, Size::H, true),
            _ => return undef(w, Class::A32ExtraLdStT).unpred(true),
        };
        let bad = rt == 15 || rn == 15 || rn == rt || reg_bad;
        return insn(
            w,
            Op::Mem {
                load,
                size,
                signed,
                rt,
                addr,
                unpriv: true,
            },
            Class::A32ExtraLdStT,
        )
        .unpred(bad);
    }
    let wb_bad_load = addr.wback && rn == 15;
    match (op2, l) {
        (2, false) | (3, false) => {
            // LDRD / STRD
            let load = op2 == 2;
            let rt2 = (rt + 1) & 15;
            let mut bad = rt & 1 == 1 || rt == 14 || reg_bad;
            if addr.wback && (rn == 15 || rn == rt || rn == rt2) {
                bad = true;
            }
            if load && !imm_form && (rm == rt || rm == rt2) {
                bad = true;
            }
            if !imm_form && addr.wback && rm == rn {
                bad = true;
            }
            insn(
                w,
                Op::MemDual {
                    load,
                    rt,
                    rt2,
                    addr,
                },
                Class::A32ExtraLdSt,
            )
            .unpred(bad)
        }
        _ => {
            let (load, size, signed) = match (op2, l) {
                (1, false) => (false, Size::H, false),
                (1, true) => (true, Size::H, false),
                (2, true) => (true, Size::B, true),
                _ => (true, Size::H, true),
            };
            let bad = rt == 15
                || reg_bad
                || if load {
                    wb_bad
                } else {
                    wb_bad_load || (addr.wback && rn == rt)
                }
                || (!imm_form && addr.wback && rm == rn);
            insn(
                w,
                Op::Mem {
                    load,
                    size,
                    signed,
                    rt,
                    addr,
                    unpriv: false,
                },
                Class::A32ExtraLdSt,
            )
            .unpred(bad)
        }
    }
}

fn ldst_word_byte(w: u32) -> Insn {
    let reg = bit(w, 25);
    let p = bit(w, 24);
    let u = bit(w, 23);
    let b = bit(w, 22);
    let wb = bit(w, 21);
    let l = bit(w, 20);
    let rn = r(w, 16);
    let rt = r(w, 12);
    let rm = r(w, 0);
    let off = if reg {
        let (shift, amount) = Shift::decode_imm(bits(w, 6, 5), bits(w, 11, 7));
        MemOff::Reg { rm, shift, amount }
    } else {
        MemOff::Imm(bits(w, 11, 0))
    };
    let unpriv = !p && wb;
    let addr = Addr {
        rn,
        off,
        add: u,
        index: p,
        wback: !p || wb,
    };
    let class = if unpriv {
        Class::A32LdStT
    } else if reg {
        Class::A32LdStReg
    } else {
        Class::A32LdStImm
    };
    let mut bad = reg && rm == 15;
    if addr.wback && (rn == 15 || rn == rt) {
        bad = true;
    }
    if reg && addr.wback && rm == rn {
        bad = true;
    }
    if b && rt == 15 {
        bad = true;
    }
    if unpriv && rt == 15 {
        bad = true;
    }
    insn(
        w,
        Op::Mem {
            load: l,
            size: if b { Size::B } else { Size::W },
            signed: false,
            rt,
            addr,
            unpriv,
        },
        class,
    )
    .unpred(bad)
}

fn media(w: u32) -> Insn {
    let op1 = bits(w, 24, 20);
    let op2 = bits(w, 7, 5);
    let rd = r(w, 12);
    let rn = r(w, 16);
    let rm = r(w, 0);
    match op1 >> 3 {
        0 => parallel(w),
        1 => pack_sat(w),
        2 => signed_mul(w),
        _ => match (op1, op2) {
            (0b11000, 0) => {
                // USAD8 (Rd[15:12]==1111) / USADA8; fields: Rd=19:16, Ra=15:12, Rm=11:8, Rn=3:0
                let rd = r(w, 16);
                let ra = r(w, 12);
                let rm = r(w, 8);
                let rn = r(w, 0);
                insn(w, Op::Usad8 { rd, rn, rm, ra }, Class::A32Usad)
                    .unpred(rd == 15 || rm == 15 || rn == 15)
            }
            (0b11010 | 0b11011, 2 | 6) | (0b11110 | 0b11111, 2 | 6) => {
                let op = if op1 & 4 != 0 { BfOp::Ubfx } else { BfOp::Sbfx };
                let lsb = bits(w, 11, 7);
                let widthm1 = bits(w, 20, 16);
                insn(
                    w,
                    Op::Bitfield {
                        op,
                        rd,
                        rn: rm,
                        lsb: lsb as u8,
                        width: (widthm1 + 1) as u8,
                    },
                    Class::A32Bitfield,
                )
                .unpred(rd == 15 || rm == 15 || lsb + widthm1 > 31)
            }
            (0b11100 | 0b11101, 0 | 4) => {
                let lsb = bits(w, 11, 7);
                let msb = bits(w, 20, 16);
                let op = if rm == 15 { BfOp::Bfc } else { BfOp::Bfi };
                insn(
                    w,
                    Op::Bitfield {
                        op,
                        rd,
                        rn: rm,
                        lsb: lsb as u8,
                        width: (msb as i32 - lsb as i32 + 1).max(0) as u8,
                    },
                    Class::A32Bitfield,
                )
                .unpred(rd == 15 || msb < lsb)
            }
            (0b11111, 7) => {
                let imm = (bits(w, 19, 8) << 4 | bits(w, 3, 0)) as u16;
                if w >> 28 == 14 {
                    insn(w, Op::Udf { imm }, Class::A32Udf)
                } else {
                    undef(w, Class::A32Udf)
                }
            }
            _ => {
                let _ = (rd, rn);
                undef(w, Class::A32Unallocated)
            }
        },
    }
}

fn parallel(w: u32) -> Insn {
    let rd = r(w, 12);
    let rn = r(w, 16);
    let rm = r(w, 0);
    let u = bit(w, 22);
    let prefix = match (u, bits(w, 21, 20)) {
        (false, 1) => ParPrefix::S,
        (false, 2) => ParPrefix::Q,
        (false, 3) => ParPrefix::Sh,
        (true, 1) => ParPrefix::U,
        (true, 2) => ParPrefix::Uq,
        (true, 3) => ParPrefix::Uh,
        _ => return undef(w, Class::A32Unallocated),
    };
    let op = match bits(w, 7, 5) {
        0 => ParOp::Add16,
        1 => ParOp::Asx,
        2 => ParOp::Sax,
        3 => ParOp::Sub16,
        4 => ParOp::Add8,
        7 => ParOp::Sub8,
        _ => return undef(w, Class::A32Unallocated),
    };
    insn(
        w,
        Op::Parallel {
            prefix,
            op,
            rd,
            rn,
            rm,
        },
        Class::A32Parallel,
    )
    .unpred(rd == 15 || rn == 15 || rm == 15 || sbo(w, 0xf00))
}

fn pack_sat(w: u32) -> Insn {
    let op1 = bits(w, 22, 20);
    let op2 = bits(w, 7, 5);
    let rd = r(w, 12);
    let rn = r(w, 16);
    let rm = r(w, 0);
    let rot = (bits(w, 11, 10) * 8) as u8;
    let c = Class::A32PackSat;
    let ext = |signed, size| {
        insn(
            w,
            Op::Extend {
                signed,
                size,
                rd,
                rn,
                rm,
                rot,
            },
            c,
        )
        .unpred(rd == 15 || rm == 15 || sbz(w, 0x300))
    };
    let rev =
        |op| insn(w, Op::Rev { op, rd, rm }, c).unpred(rd == 15 || rm == 15 || sbo(w, 0xf_0f00));
    match (op1, op2) {
        (0, 0 | 2 | 4 | 6) => {
            let tb = bit(w, 6);
            let (_, amount) = Shift::decode_imm(if tb { 2 } else { 0 }, bits(w, 11, 7));
            insn(
                w,
                Op::Pkh {
                    tb,
                    rd,
                    rn,
                    rm,
                    amount,
                },
                c,
            )
            .unpred(rd == 15 || rn == 15 || rm == 15)
        }
        (0, 3) => ext(true, ExtSize::B16),
        (0, 5) => insn(w, Op::Sel { rd, rn, rm }, c)
            .unpred(rd == 15 || rn == 15 || rm == 15 || sbo(w, 0xf00)),
        (2 | 3, 0 | 2 | 4 | 6) | (6 | 7, 0 | 2 | 4 | 6) => {
            let signed = op1 & 4 == 0;
            let (shift, amount) = Shift::decode_imm(bits(w, 6, 5), bits(w, 11, 7));
            let sat = bits(w, 20, 16) as u8;
            insn(
                w,
                Op::Sat {
                    signed,
                    rd,
                    sat,
                    rn: rm,
                    shift,
                    amount,
                },
                c,
            )
            .unpred(rd == 15 || rm == 15)
        }
        (2, 1) | (6, 1) => {
            let sat = bits(w, 19, 16) as u8;
            insn(
                w,
                Op::Sat16 {
                    signed: op1 == 2,
                    rd,
                    sat,
                    rn: rm,
                },
                c,
            )
            .unpred(rd == 15 || rm == 15 || sbo(w, 0xf00))
        }
        (2, 3) => ext(true, ExtSize::B),
        (3, 1) => rev(RevOp::Rev),
        (3, 3) => ext(true, ExtSize::H),
        (3, 5) => rev(RevOp::Rev16),
        (4, 3) => ext(false, ExtSize::B16),
        (6, 3) => ext(false, ExtSize::B),
        (7, 1) => rev(RevOp::Rbit),
        (7, 3) => ext(false, ExtSize::H),
        (7, 5) => rev(RevOp::Revsh),
        _ => undef(w, Class::A32Unallocated),
    }
}

fn signed_mul(w: u32) -> Insn {
    let op1 = bits(w, 22, 20);
    let op2 = bits(w, 7, 5);
    let rd = r(w, 16);
    let ra = r(w, 12);
    let rm = r(w, 8);
    let rn = r(w, 0);
    let swap = bit(w, 5);
    let c = Class::A32SignedMul;
    let basic_bad = rd == 15 || rn == 15 || rm == 15;
    match (op1, op2 >> 1) {
        (0, 0) | (0, 1) => {
            let kind = if op2 >> 1 == 0 {
                MulDual::Smlad
            } else {
                MulDual::Smlsd
            };
            insn(
                w,
                Op::MulDual {
                    kind,
                    swap,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                c,
            )
            .unpred(basic_bad)
        }
        (1, 0) | (3, 0) if op2 == 0 => insn(
            w,
            Op::Div {
                signed: op1 == 1,
                rd,
                rn,
                rm,
            },
            Class::A32Div,
        )
        .unpred(basic_bad || ra != 15),
        (4, 0) | (4, 1) => {
            let kind = if op2 >> 1 == 0 {
                MulDual::Smlald
            } else {
                MulDual::Smlsld
            };
            insn(
                w,
                Op::MulDual {
                    kind,
                    swap,
                    rd,
                    rn,
                    rm,
                    ra,
                },
                c,
            )
            .unpred(basic_bad || ra == 15 || rd == ra)
        }
        (5, 0) => insn(
            w,
            Op::MulMost {
                sub: false,
                round: swap,
                rd,
                rn,
                rm,
                ra,
            },
            c,
        )
        .unpred(basic_bad),
        (5, 3) => insn(
            w,
            Op::MulMost {
                sub: true,
                round: swap,
                rd,
                rn,
                rm,
                ra,
            },
            c,
        )
        .unpred(basic_bad || ra == 15),
        _ => undef(w, Class::A32Unallocated),
    }
}

fn block(w: u32) -> Insn {
    let rn = r(w, 16);
    let list = (w & 0xffff) as u16;
    let load = bit(w, 20);
    let wback = bit(w, 21);
    let user = bit(w, 22);
    let inc = bit(w, 23);
    let before = bit(w, 24);
    let class = if user {
        if load && list & 0x8000 != 0 {
            Class::A32LdmExcRet
        } else {
            Class::A32LdmStmUser
        }
    } else {
        Class::A32LdmStm
    };
    let mut bad = rn == 15 || list == 0;
    if user && list & 0x8000 == 0 && wback {
        bad = true;
    }
    if wback && load && list & (1 << rn) != 0 {
        bad = true;
    }
    insn(
        w,
        Op::Multi {
            load,
            rn,
            list,
            inc,
            before,
            wback,
            user,
        },
        class,
    )
    .unpred(bad)
}

fn coproc(w: u32) -> Insn {
    let op1 = bits(w, 25, 20);
    let cp = bits(w, 11, 8) as u8;
    if op1 >> 4 == 3 {
        return insn(w, Op::Svc { imm: w & 0xff_ffff }, Class::A32Svc);
    }
    if op1 & 0b111110 == 0 {
        return undef(w, Class::A32Unallocated);
    }
    if cp & 0b1110 == 0b1010 {
        return vfp::decode(w, false);
    }
    coproc_generic(w, false)
}

/// MCR/MRC/MCRR/MRRC/LDC/STC/CDP (shared with the T32 decoder, and with the `2` forms).
pub(crate) fn coproc_generic(w: u32, thumb: bool) -> Insn {
    let op1 = bits(w, 25, 20);
    let cp = bits(w, 11, 8) as u8;
    let rt = r(w, 12);
    let rn = r(w, 16);
    let uncond = w >> 28 == 0xf;
    let cls = |a: Class, t: Class| {
        if uncond && !thumb {
            Class::A32Coproc2
        } else if thumb {
            t
        } else {
            a
        }
    };
    let mk = |op, class| {
        let mut i = insn(w, op, class);
        if thumb {
            i.thumb = true;
            i.cond = 14;
        }
        i
    };
    // No coprocessor of this model accepts MCR2/MRC2/MCRR2/MRRC2: the ARM ARM makes every
    // `2` form that targets CP15 or CP14 UNDEFINED (only MCR/MRC/MCRR/MRRC access them),
    // CP10/CP11 are decoded as VFP, and the others are absent. QEMU agrees (systest).
    let is_mcr = op1 == 0b000100 || op1 == 0b000101 || (op1 >> 4 == 0b10 && bit(w, 4));
    if uncond && is_mcr {
        let cls = if thumb {
            if op1 >> 4 == 0b10 {
                Class::T32Mcr
            } else {
                Class::T32Mcrr
            }
        } else {
            Class::A32Coproc2
        };
        return mk(Op::Undefined, cls);
    }
    if op1 == 0b000100 || op1 == 0b000101 {
        let to_cp = op1 == 0b000100;
        let rt2 = rn;
        let bad =
            rt == 15 || rt2 == 15 || (!to_cp && rt == rt2) || (thumb && (rt == 13 || rt2 == 13));
        return mk(
            Op::Mcrr {
                to_cp,
                cp,
                opc1: bits(w, 7, 4) as u8,
                crm: bits(w, 3, 0) as u8,
                rt,
                rt2,
            },
            cls(Class::A32Mcrr, Class::T32Mcrr),
        )
        .unpred(bad);
    }
    if op1 >> 5 == 0 {
        let load = bit(w, 20);
        let wback = bit(w, 21);
        let p = bit(w, 24);
        let bad = wback && rn == 15 || (!p && !wback && !bit(w, 23));
        return mk(
            Op::Ldc {
                load,
                cp,
                rn,
                wback,
            },
            cls(Class::A32LdcStc, Class::T32LdcStc),
        )
        .unpred(bad);
    }
    if !bit(w, 4) {
        return mk(Op::Cdp { cp }, cls(Class::A32Cdp, Class::T32Cdp));
    }
    let to_cp = !bit(w, 20);
    mk(
        Op::Mcr {
            to_cp,
            cp,
            opc1: bits(w, 23, 21) as u8,
            crn: bits(w, 19, 16) as u8,
            crm: bits(w, 3, 0) as u8,
            opc2: bits(w, 7, 5) as u8,
            rt,
        },
        cls(Class::A32Mcr, Class::T32Mcr),
    )
    .unpred((to_cp && rt == 15) || (thumb && rt == 13))
}

fn unconditional(w: u32) -> Insn {
    let op1 = bits(w, 27, 20);
    if op1 >> 7 == 0 {
        return uncond_misc(w);
    }
    match op1 >> 5 {
        0b100 => {
            let p = bit(w, 24);
            let u = bit(w, 23);
            let wb = bit(w, 21);
            if op1 & 0b101 == 0b100 {
                // SRS: 1111 100P U1W0 1101 ...
                let mode = bits(w, 4, 0) as u8;
                return insn(
                    w,
                    Op::Srs {
                        mode,
                        inc: u,
                        before: p,
                        wback: wb,
                    },
                    Class::A32SrsRfe,
                );
            }
            if op1 & 0b101 == 0b001 {
                let rn = r(w, 16);
                return insn(
                    w,
                    Op::Rfe {
                        rn,
                        inc: u,
                        before: p,
                        wback: wb,
                    },
                    Class::A32SrsRfe,
                )
                .unpred(rn == 15);
            }
            undef(w, Class::A32Unallocated)
        }
        0b101 => {
            let off = (sext(bits(w, 23, 0), 24) << 2) | ((bit(w, 24) as i32) << 1);
            insn(w, Op::BlxImm { off }, Class::A32BlxImm)
        }
        _ => {
            if op1 & 0b1111_1110 == 0b1100_0000 {
                return undef(w, Class::A32Unallocated);
            }
            if op1 >> 4 == 0b1111 {
                return undef(w, Class::A32Unallocated);
            }
            coproc_generic(w, false)
        }
    }
}

fn uncond_misc(w: u32) -> Insn {
    let op1 = bits(w, 26, 20);
    let op2 = bits(w, 7, 4);
    let rn = r(w, 16);
    if op1 == 0b0010000 {
        if op2 & 0b0010 == 0 && !bit(w, 16) {
            let imod = bits(w, 19, 18) as u8;
            let m = bit(w, 17);
            let aif = bits(w, 8, 6) as u8;
            let mode = if m { Some(bits(w, 4, 0) as u8) } else { None };
            let bad = (imod == 0 && !m) || imod == 1 || ((imod >> 1 == 1) != (aif != 0));
            return insn(w, Op::Cps { imod, aif, mode }, Class::A32Cps).unpred(bad);
        }
        if op2 == 0 && bit(w, 16) {
            return insn(w, Op::Setend { big: bit(w, 9) }, Class::A32Setend);
        }
        return undef(w, Class::A32Unallocated);
    }
    if op1 >> 5 == 0b01 {
        return vfp::decode(w, false);
    }
    if op1 & 0b1110001 == 0b1000000 {
        return vfp::decode(w, false);
    }
    let preload = |reg: bool| {
        let rm = if reg { r(w, 0) } else { 15 };
        insn(w, Op::Preload { rn, rm }, Class::A32Preload).unpred(reg && rm == 15)
    };
    match op1 {
        0b1010111 => match op2 {
            1 => insn(w, Op::Clrex, Class::A32Barrier),
            4 => insn(w, Op::Barrier(Barrier::Dsb), Class::A32Barrier),
            5 => insn(w, Op::Barrier(Barrier::Dmb), Class::A32Barrier),
            6 => insn(w, Op::Barrier(Barrier::Isb), Class::A32Barrier),
            _ => undef(w, Class::A32Unallocated),
        },
        // PLI (immediate), PLD/PLDW (immediate/literal)
        0b1000101 | 0b1001101 | 0b1010001 | 0b1011001 | 0b1010101 | 0b1011101 => preload(false),
        // unallocated memory hints: NOP (ARM ARM A5.7.1: 100x001, and 110x001 with op2 xxx0)
        0b1000001 | 0b1001001 => insn(w, Op::Hint(Hint::Nop), Class::A32Preload),
        0b1100001 | 0b1101001 if op2 & 1 == 0 => insn(w, Op::Hint(Hint::Nop), Class::A32Preload),
        0b1100101 | 0b1101101 | 0b1110001 | 0b1111001 | 0b1110101 | 0b1111101 if op2 & 1 == 0 => {
            preload(true)
        }
        _ => undef(w, Class::A32Unallocated),
    }
}
