//! 16-bit Thumb decoder (ARM ARM section A6.2).
//!
//! Flag setting of the 16-bit data-processing forms depends on the IT state at execution
//! time ("S outside an IT block"): those are decoded with `s == true` and the interpreter
//! clears it inside an IT block (see [`t16_sets_flags_outside_it`]).

use super::*;

fn insn(hw: u16, op: Op, class: Class) -> Insn {
    Insn::new(hw as u32, 2, true, 14, op, class)
}

fn lo(hw: u32, at: u32) -> u8 {
    ((hw >> at) & 7) as u8
}

/// Whether this 16-bit encoding sets flags only outside an IT block.
pub fn t16_sets_flags_outside_it(hw: u16) -> bool {
    let hw = hw as u32;
    match hw >> 10 {
        0b000000..=0b000111 => true,
        0b001000..=0b001111 => bits(hw, 12, 11) != 0b01,
        0b010000 => !matches!(bits(hw, 9, 6), 0b1000 | 0b1010 | 0b1011),
        _ => false,
    }
}

fn dp(hw: u16, op: DpOp, rd: u8, rn: u8, op2: Operand2, s: bool, class: Class) -> Insn {
    insn(hw, Op::Dp { op, s, rd, rn, op2 }, class)
}

fn reg(rm: u8) -> Operand2 {
    Operand2::ShiftImm {
        rm,
        shift: Shift::Lsl,
        amount: 0,
    }
}

fn imm(v: u32) -> Operand2 {
    Operand2::Imm {
        value: v,
        carry: None,
    }
}

/// Decodes one 16-bit Thumb instruction.
pub fn decode(hw: u16) -> Insn {
    let w = hw as u32;
    match w >> 12 {
        0b0000 | 0b0001 => {
            let op = bits(w, 12, 11);
            if op == 3 {
                // ADD/SUB register or imm3
                let sub = bit(w, 9);
                let rd = lo(w, 0);
                let rn = lo(w, 3);
                let op2 = if bit(w, 10) {
                    imm(bits(w, 8, 6))
                } else {
                    reg(lo(w, 6))
                };
                let o = if sub { DpOp::Sub } else { DpOp::Add };
                return dp(hw, o, rd, rn, op2, true, Class::T16AddSub);
            }
            let (shift, amount) = Shift::decode_imm(op, bits(w, 10, 6));
            let rm = lo(w, 3);
            let rd = lo(w, 0);
            let op2 = Operand2::ShiftImm { rm, shift, amount };
            dp(hw, DpOp::Mov, rd, 0, op2, true, Class::T16ShiftImm)
        }
        0b0010 | 0b0011 => {
            let rd = lo(w, 8);
            let v = imm(bits(w, 7, 0));
            let o = [DpOp::Mov, DpOp::Cmp, DpOp::Add, DpOp::Sub][bits(w, 12, 11) as usize];
            dp(hw, o, rd, rd, v, true, Class::T16Imm8)
        }
        0b0100 => match bits(w, 11, 10) {
            0 => data_proc(hw),
            1 => hi_reg(hw),
            _ => {
                let rt = lo(w, 8);
                insn(
                    hw,
                    Op::Mem {
                        load: true,
                        size: Size::W,
                        signed: false,
                        rt,
                        addr: Addr {
                            rn: 15,
                            off: MemOff::Imm(bits(w, 7, 0) << 2),
                            add: true,
                            index: true,
                            wback: false,
                        },
                        unpriv: false,
                    },
                    Class::T16LdrLit,
                )
            }
        },
        0b0101 => {
            let rt = lo(w, 0);
            let rn = lo(w, 3);
            let rm = lo(w, 6);
            let (load, size, signed) = match bits(w, 11, 9) {
                0 => (false, Size::W, false),
                1 => (false, Size::H, false),
                2 => (false, Size::B, false),
                3 => (true, Size::B, true),
                4 => (true, Size::W, false),
                5 => (true, Size::H, false),
                6 => (true, Size::B, false),
                _ => (true, Size::H, true),
            };
            mem(
                hw,
                load,
                size,
                signed,
                rt,
                rn,
                MemOff::Reg {
                    rm,
                    shift: Shift::Lsl,
                    amount: 0,
                },
                Class::T16LdStReg,
            )
        }
        0b0110..=0b1000 => {
            let rt = lo(w, 0);
            let rn = lo(w, 3);
            let imm5 = bits(w, 10, 6);
            let load = bit(w, 11);
            let (size, scale) = match w >> 12 {
                0b0110 => (Size::W, 4),
                0b0111 => (Size::B, 1),
                _ => (Size::H, 2),
            };
            mem(
                hw,
                load,
                size,
                false,
                rt,
                rn,
                MemOff::Imm(imm5 * scale),
                Class::T16LdStImm,
            )
        }
        0b1001 => {
            let rt = lo(w, 8);
            mem(
                hw,
                bit(w, 11),
                Size::W,
                false,
                rt,
                13,
                MemOff::Imm(bits(w, 7, 0) << 2),
                Class::T16LdStSp,
            )
        }
        0b1010 => {
            let rd = lo(w, 8);
            let v = bits(w, 7, 0) << 2;
            if bit(w, 11) {
                dp(hw, DpOp::Add, rd, 13, imm(v), false, Class::T16Adr)
            } else {
                insn(hw, Op::Adr { rd, imm: v as i32 }, Class::T16Adr)
            }
        }
        0b1011 => misc(hw),
        0b1100 => {
            let rn = lo(w, 8);
            let list = (w & 0xff) as u16;
            let load = bit(w, 11);
            // LDM writes back unless rn is in the list.
            let wback = !load || list & (1 << rn) == 0;
            let bad = list == 0 || (!load && list & (1 << rn) != 0 && list & ((1 << rn) - 1) != 0);
            insn(
                hw,
                Op::Multi {
                    load,
                    rn,
                    list,
                    inc: true,
                    before: false,
                    wback,
                    user: false,
                },
                Class::T16LdmStm,
            )
            .unpred(bad)
        }
        0b1101 => {
            let cond = bits(w, 11, 8) as u8;
            match cond {
                14 => insn(
                    hw,
                    Op::Udf {
                        imm: (w & 0xff) as u16,
                    },
                    Class::T16Udf,
                ),
                15 => insn(hw, Op::Svc { imm: w & 0xff }, Class::T16Svc),
                _ => {
                    let mut i = insn(
                        hw,
                        Op::B {
                            off: sext(w & 0xff, 8) << 1,
                        },
                        Class::T16CondBranch,
                    );
                    i.cond = cond;
                    i
                }
            }
        }
        0b1110 => insn(
            hw,
            Op::B {
                off: sext(w & 0x7ff, 11) << 1,
            },
            Class::T16Branch,
        ),
        _ => insn(hw, Op::Undefined, Class::T32Unallocated),
    }
}

#[allow(clippy::too_many_arguments)]
fn mem(
    hw: u16,
    load: bool,
    size: Size,
    signed: bool,
    rt: u8,
    rn: u8,
    off: MemOff,
    class: Class,
) -> Insn {
    insn(
        hw,
        Op::Mem {
            load,
            size,
            signed,
            rt,
            addr: Addr {
                rn,
                off,
                add: true,
                index: true,
                wback: false,
            },
            unpriv: false,
        },
        class,
    )
}

fn data_proc(hw: u16) -> Insn {
    let w = hw as u32;
    let rdn = lo(w, 0);
    let rm = lo(w, 3);
    let c = Class::T16DataProc;
    let sh = |shift| Operand2::ShiftReg {
        rm: rdn,
        shift,
        rs: rm,
    };
    match bits(w, 9, 6) {
        0 => dp(hw, DpOp::And, rdn, rdn, reg(rm), true, c),
        1 => dp(hw, DpOp::Eor, rdn, rdn, reg(rm), true, c),
        2 => dp(hw, DpOp::Mov, rdn, 0, sh(Shift::Lsl), true, c),
        3 => dp(hw, DpOp::Mov, rdn, 0, sh(Shift::Lsr), true, c),
        4 => dp(hw, DpOp::Mov, rdn, 0, sh(Shift::Asr), true, c),
        5 => dp(hw, DpOp::Adc, rdn, rdn, reg(rm), true, c),
        6 => dp(hw, DpOp::Sbc, rdn, rdn, reg(rm), true, c),
        7 => dp(hw, DpOp::Mov, rdn, 0, sh(Shift::Ror), true, c),
        8 => dp(hw, DpOp::Tst, 0, rdn, reg(rm), true, c),
        9 => dp(hw, DpOp::Rsb, rdn, rm, imm(0), true, c),
        10 => dp(hw, DpOp::Cmp, 0, rdn, reg(rm), true, c),
        11 => dp(hw, DpOp::Cmn, 0, rdn, reg(rm), true, c),
        12 => dp(hw, DpOp::Orr, rdn, rdn, reg(rm), true, c),
        13 => insn(
            hw,
            Op::Mul {
                s: true,
                sub: false,
                rd: rdn,
                rn: rm,
                rm: rdn,
                ra: 15,
            },
            c,
        ),
        14 => dp(hw, DpOp::Bic, rdn, rdn, reg(rm), true, c),
        _ => dp(hw, DpOp::Mvn, rdn, 0, reg(rm), true, c),
    }
}

fn hi_reg(hw: u16) -> Insn {
    let w = hw as u32;
    let rdn = (bits(w, 7, 7) << 3 | bits(w, 2, 0)) as u8;
    let rm = bits(w, 6, 3) as u8;
    let c = Class::T16HiReg;
    match bits(w, 9, 8) {
        0 => dp(hw, DpOp::Add, rdn, rdn, reg(rm), false, c).unpred(rdn == 15 && rm == 15),
        1 => dp(hw, DpOp::Cmp, 0, rdn, reg(rm), true, c)
            .unpred((rdn < 8 && rm < 8) || rdn == 15 || rm == 15),
        2 => dp(hw, DpOp::Mov, rdn, 0, reg(rm), false, c),
        _ => {
            if bit(w, 7) {
                insn(hw, Op::Blx { rm }, Class::T16BxBlx).unpred(rm == 15 || w & 7 != 0)
            } else {
                insn(hw, Op::Bx { rm }, Class::T16BxBlx).unpred(w & 7 != 0)
            }
        }
    }
}

fn misc(hw: u16) -> Insn {
    let w = hw as u32;
    let op = bits(w, 11, 5);
    let rd = lo(w, 0);
    let rm = lo(w, 3);
    match op {
        0b0000000..=0b0000011 => dp(
            hw,
            DpOp::Add,
            13,
            13,
            imm(bits(w, 6, 0) << 2),
            false,
            Class::T16SpAdj,
        ),
        0b0000100..=0b0000111 => dp(
            hw,
            DpOp::Sub,
            13,
            13,
            imm(bits(w, 6, 0) << 2),
            false,
            Class::T16SpAdj,
        ),
        0b0010000..=0b0010111 => {
            let (signed, size) = match bits(w, 7, 6) {
                0 => (true, ExtSize::H),
                1 => (true, ExtSize::B),
                2 => (false, ExtSize::H),
                _ => (false, ExtSize::B),
            };
            insn(
                hw,
                Op::Extend {
                    signed,
                    size,
                    rd,
                    rn: 15,
                    rm,
                    rot: 0,
                },
                Class::T16Extend,
            )
        }
        0b0001000..=0b0001111
        | 0b0011000..=0b0011111
        | 0b1001000..=0b1001111
        | 0b1011000..=0b1011111 => {
            let off = (bits(w, 9, 9) << 6) | (bits(w, 7, 3) << 1);
            insn(
                hw,
                Op::Cbz {
                    nonzero: bit(w, 11),
                    rn: rd,
                    off,
                },
                Class::T16Cbz,
            )
        }
        0b0100000..=0b0101111 => {
            let list = (w & 0xff) as u16 | (bits(w, 8, 8) as u16) << 14;
            insn(
                hw,
                Op::Multi {
                    load: false,
                    rn: 13,
                    list,
                    inc: false,
                    before: true,
                    wback: true,
                    user: false,
                },
                Class::T16PushPop,
            )
            .unpred(list == 0)
        }
        0b1100000..=0b1101111 => {
            let list = (w & 0xff) as u16 | (bits(w, 8, 8) as u16) << 15;
            insn(
                hw,
                Op::Multi {
                    load: true,
                    rn: 13,
                    list,
                    inc: true,
                    before: false,
                    wback: true,
                    user: false,
                },
                Class::T16PushPop,
            )
            .unpred(list == 0)
        }
        0b0110010 => insn(hw, Op::Setend { big: bit(w, 3) }, Class::T16CpsSetend),
        0b0110011 => {
            let imod = if bit(w, 4) { 3 } else { 2 };
            let aif = bits(w, 2, 0) as u8;
            insn(
                hw,
                Op::Cps {
                    imod,
                    aif,
                    mode: None,
                },
                Class::T16CpsSetend,
            )
            .unpred(aif == 0)
        }
        0b1010000..=0b1010001 => insn(
            hw,
            Op::Rev {
                op: RevOp::Rev,
                rd,
                rm,
            },
            Class::T16Rev,
        ),
        0b1010010..=0b1010011 => insn(
            hw,
            Op::Rev {
                op: RevOp::Rev16,
                rd,
                rm,
            },
            Class::T16Rev,
        ),
        0b1010110..=0b1010111 => insn(
            hw,
            Op::Rev {
                op: RevOp::Revsh,
                rd,
                rm,
            },
            Class::T16Rev,
        ),
        0b1110000..=0b1110111 => insn(
            hw,
            Op::Bkpt {
                imm: (w & 0xff) as u16,
            },
            Class::T16Bkpt,
        ),
        0b1111000..=0b1111111 => {
            let opa = bits(w, 7, 4);
            let opb = bits(w, 3, 0);
            if opb != 0 {
                let firstcond = opa as u8;
                let bad = firstcond == 15 || (firstcond == 14 && opb.count_ones() != 1);
                return insn(
                    hw,
                    Op::It {
                        firstcond,
                        mask: opb as u8,
                    },
                    Class::T16It,
                )
                .unpred(bad);
            }
            let h = match opa {
                0 => Hint::Nop,
                1 => Hint::Yield,
                2 => Hint::Wfe,
                3 => Hint::Wfi,
                4 => Hint::Sev,
                _ => Hint::Nop,
            };
            insn(hw, Op::Hint(h), Class::T16Hint)
        }
        _ => insn(hw, Op::Undefined, Class::T32Unallocated),
    }
}
