//! Integer data processing: shifter, ALU, multiplies, saturation, parallel arithmetic,
//! packing/extension, bit fields, and branches.

use super::ExecResult;
use crate::cpu::{psr, Cpu};
use crate::decode::*;

/// `Shift_C`: shifts `v` by `amount`, returning the result and the carry-out.
#[inline]
pub fn shift_c(v: u32, shift: Shift, amount: u32, carry: bool) -> (u32, bool) {
    if amount == 0 && shift != Shift::Rrx {
        return (v, carry);
    }
    match shift {
        Shift::Lsl => match amount {
            1..=31 => (v << amount, (v >> (32 - amount)) & 1 != 0),
            32 => (0, v & 1 != 0),
            _ => (0, false),
        },
        Shift::Lsr => match amount {
            1..=31 => (v >> amount, (v >> (amount - 1)) & 1 != 0),
            32 => (0, v >> 31 != 0),
            _ => (0, false),
        },
        Shift::Asr => {
            if amount >= 32 {
                let s = ((v as i32) >> 31) as u32;
                (s, s & 1 != 0)
            } else {
                (((v as i32) >> amount) as u32, (v >> (amount - 1)) & 1 != 0)
            }
        }
        Shift::Ror => {
            let r = v.rotate_right(amount & 31);
            (r, r >> 31 != 0)
        }
        Shift::Rrx => ((carry as u32) << 31 | v >> 1, v & 1 != 0),
    }
}

/// `AddWithCarry`: result, carry-out, overflow.
#[inline]
pub fn add_with_carry(x: u32, y: u32, c: bool) -> (u32, bool, bool) {
    let u = x as u64 + y as u64 + c as u64;
    let s = x as i32 as i64 + y as i32 as i64 + c as i64;
    let r = u as u32;
    (r, u >> 32 != 0, r as i32 as i64 != s)
}

fn ssat(v: i64, bits: u32) -> (u32, bool) {
    let max = (1i64 << (bits - 1)) - 1;
    let min = -(1i64 << (bits - 1));
    if v > max {
        (max as u32, true)
    } else if v < min {
        (min as u32, true)
    } else {
        (v as u32, false)
    }
}

fn usat(v: i64, bits: u32) -> (u32, bool) {
    let max = (1i64 << bits) - 1;
    if v > max {
        (max as u32, true)
    } else if v < 0 {
        (0, true)
    } else {
        (v as u32, false)
    }
}

fn lo16(v: u32) -> i64 {
    v as u16 as i16 as i64
}

fn hi16(v: u32) -> i64 {
    (v >> 16) as u16 as i16 as i64
}

impl Cpu {
    #[inline]
    pub(crate) fn operand2(&self, op2: &Operand2) -> (u32, bool) {
        let c = self.flag(psr::C);
        match *op2 {
            Operand2::Imm { value, carry } => (value, carry.unwrap_or(c)),
            Operand2::ShiftImm { rm, shift, amount } => {
                shift_c(self.rr(rm), shift, amount as u32, c)
            }
            Operand2::ShiftReg { rm, shift, rs } => {
                // Register-shifted operands read PC as +12 in A32 (UNPREDICTABLE; not modelled).
                shift_c(self.rr(rm), shift, self.rr(rs) & 0xff, c)
            }
        }
    }

    fn set_q(&mut self, q: bool) {
        if q {
            self.cpsr |= psr::Q;
        }
    }

    fn set_ge(&mut self, ge: u32) {
        self.cpsr = (self.cpsr & !(0xf << psr::GE_SHIFT)) | (ge & 0xf) << psr::GE_SHIFT;
    }

    fn dp(&mut self, op: DpOp, s: bool, rd: u8, rn: u8, op2: &Operand2) -> ExecResult {
        let (b, sc) = self.operand2(op2);
        let a = if op.is_move() { 0 } else { self.rr(rn) };
        let c = self.flag(psr::C);
        let (res, carry, ov) = match op {
            DpOp::And | DpOp::Tst => (a & b, sc, None),
            DpOp::Eor | DpOp::Teq => (a ^ b, sc, None),
            DpOp::Orr => (a | b, sc, None),
            DpOp::Orn => (a | !b, sc, None),
            DpOp::Bic => (a & !b, sc, None),
            DpOp::Mov => (b, sc, None),
            DpOp::Mvn => (!b, sc, None),
            DpOp::Sub | DpOp::Cmp => {
                let (r, c, v) = add_with_carry(a, !b, true);
                (r, c, Some(v))
            }
            DpOp::Rsb => {
                let (r, c, v) = add_with_carry(b, !a, true);
                (r, c, Some(v))
            }
            DpOp::Add | DpOp::Cmn => {
                let (r, c, v) = add_with_carry(a, b, false);
                (r, c, Some(v))
            }
            DpOp::Adc => {
                let (r, c, v) = add_with_carry(a, b, c);
                (r, c, Some(v))
            }
            DpOp::Sbc => {
                let (r, c, v) = add_with_carry(a, !b, c);
                (r, c, Some(v))
            }
            DpOp::Rsc => {
                let (r, c, v) = add_with_carry(b, !a, c);
                (r, c, Some(v))
            }
        };
        if rd == 15 && !op.is_test() {
            if s && self.mode.has_spsr() {
                let spsr = self.spsr[self.mode.bank()];
                self.exception_return(res, spsr);
            } else {
                self.wr_alu(15, res);
            }
            return Ok(None);
        }
        if !op.is_test() {
            self.r[rd as usize] = res;
        }
        if s {
            self.set_nz(res);
            self.set_flag(psr::C, carry);
            if let Some(v) = ov {
                self.set_flag(psr::V, v);
            }
        }
        Ok(None)
    }

    pub(crate) fn exec_alu(&mut self, i: &Insn) -> ExecResult {
        match i.op {
            Op::Dp { op, s, rd, rn, op2 } => return self.dp(op, s, rd, rn, &op2),
            Op::Adr { rd, imm } => {
                let v = (self.pc_read & !3).wrapping_add(imm as u32);
                self.wr_alu(rd, v);
            }
            Op::Movw { rd, imm } => self.r[rd as usize] = imm as u32,
            Op::Movt { rd, imm } => {
                self.r[rd as usize] = (self.r[rd as usize] & 0xffff) | (imm as u32) << 16
            }
            Op::Mul {
                s,
                sub,
                rd,
                rn,
                rm,
                ra,
            } => {
                let p = self.rr(rn).wrapping_mul(self.rr(rm));
                let v = if ra == 15 {
                    p
                } else if sub {
                    self.rr(ra).wrapping_sub(p)
                } else {
                    self.rr(ra).wrapping_add(p)
                };
                self.r[rd as usize] = v;
                if s {
                    self.set_nz(v);
                }
            }
            Op::MulLong {
                kind,
                s,
                rdlo,
                rdhi,
                rn,
                rm,
            } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                let acc = (self.rr(rdhi) as u64) << 32 | self.rr(rdlo) as u64;
                let v: u64 = match kind {
                    MulLong::Umull => n as u64 * m as u64,
                    MulLong::Umlal => (n as u64 * m as u64).wrapping_add(acc),
                    MulLong::Smull => (n as i32 as i64 * m as i32 as i64) as u64,
                    MulLong::Smlal => {
                        ((n as i32 as i64 * m as i32 as i64) as u64).wrapping_add(acc)
                    }
                    MulLong::Umaal => {
                        n as u64 * m as u64 + self.rr(rdhi) as u64 + self.rr(rdlo) as u64
                    }
                };
                self.r[rdlo as usize] = v as u32;
                self.r[rdhi as usize] = (v >> 32) as u32;
                if s {
                    self.set_flag(psr::N, v >> 63 != 0);
                    self.set_flag(psr::Z, v == 0);
                }
            }
            Op::MulHalf {
                kind,
                n_high,
                m_high,
                rd,
                rn,
                rm,
                ra,
            } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                let nh = if n_high { hi16(n) } else { lo16(n) };
                let mh = if m_high { hi16(m) } else { lo16(m) };
                match kind {
                    MulHalf::Smul => self.r[rd as usize] = (nh * mh) as u32,
                    MulHalf::Smla => {
                        let r = nh * mh + self.rr(ra) as i32 as i64;
                        self.r[rd as usize] = r as u32;
                        self.set_q(r != r as i32 as i64);
                    }
                    MulHalf::Smulw => self.r[rd as usize] = ((n as i32 as i64 * mh) >> 16) as u32,
                    MulHalf::Smlaw => {
                        let r = ((n as i32 as i64 * mh) >> 16) + self.rr(ra) as i32 as i64;
                        self.r[rd as usize] = r as u32;
                        self.set_q(r != r as i32 as i64);
                    }
                    MulHalf::Smlal => {
                        let acc = ((self.rr(rd) as u64) << 32 | self.rr(ra) as u64) as i64;
                        let r = acc.wrapping_add(nh * mh) as u64;
                        self.r[ra as usize] = r as u32;
                        self.r[rd as usize] = (r >> 32) as u32;
                    }
                }
            }
            Op::MulDual {
                kind,
                swap,
                rd,
                rn,
                rm,
                ra,
            } => {
                let n = self.rr(rn);
                let m = if swap {
                    self.rr(rm).rotate_right(16)
                } else {
                    self.rr(rm)
                };
                let p1 = lo16(n) * lo16(m);
                let p2 = hi16(n) * hi16(m);
                match kind {
                    MulDual::Smlad | MulDual::Smlsd => {
                        let mut r = if kind == MulDual::Smlad {
                            p1 + p2
                        } else {
                            p1 - p2
                        };
                        if ra != 15 {
                            r += self.rr(ra) as i32 as i64;
                        }
                        self.r[rd as usize] = r as u32;
                        self.set_q(r != r as i32 as i64);
                    }
                    MulDual::Smlald | MulDual::Smlsld => {
                        let acc = ((self.rr(rd) as u64) << 32 | self.rr(ra) as u64) as i64;
                        let p = if kind == MulDual::Smlald {
                            p1 + p2
                        } else {
                            p1 - p2
                        };
                        let r = acc.wrapping_add(p) as u64;
                        self.r[ra as usize] = r as u32;
                        self.r[rd as usize] = (r >> 32) as u32;
                    }
                }
            }
            Op::MulMost {
                sub,
                round,
                rd,
                rn,
                rm,
                ra,
            } => {
                let p = self.rr(rn) as i32 as i64 * self.rr(rm) as i32 as i64;
                let acc = if ra == 15 {
                    0
                } else {
                    (self.rr(ra) as i64) << 32
                };
                let mut r = if sub {
                    acc.wrapping_sub(p)
                } else {
                    acc.wrapping_add(p)
                };
                if round {
                    r = r.wrapping_add(0x8000_0000);
                }
                self.r[rd as usize] = (r >> 32) as u32;
            }
            Op::Div { signed, rd, rn, rm } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                let v = if m == 0 {
                    0
                } else if signed {
                    (n as i32).wrapping_div(m as i32) as u32
                } else {
                    n / m
                };
                self.r[rd as usize] = v;
            }
            Op::Usad8 { rd, rn, rm, ra } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                let mut s = if ra == 15 { 0u32 } else { self.rr(ra) };
                for k in 0..4 {
                    let a = (n >> (8 * k)) & 0xff;
                    let b = (m >> (8 * k)) & 0xff;
                    s = s.wrapping_add(a.abs_diff(b));
                }
                self.r[rd as usize] = s;
            }
            Op::QAddSub { op, rd, rn, rm } => {
                let m = self.rr(rm) as i32 as i64;
                let mut n = self.rr(rn) as i32 as i64;
                let mut q = false;
                if matches!(op, QOp::Qdadd | QOp::Qdsub) {
                    let (d, qq) = ssat(2 * n, 32);
                    n = d as i32 as i64;
                    q = qq;
                }
                let r = if matches!(op, QOp::Qadd | QOp::Qdadd) {
                    m + n
                } else {
                    m - n
                };
                let (v, qq) = ssat(r, 32);
                self.r[rd as usize] = v;
                self.set_q(q || qq);
            }
            Op::Sat {
                signed,
                rd,
                sat,
                rn,
                shift,
                amount,
            } => {
                let (v, _) = shift_c(self.rr(rn), shift, amount as u32, false);
                let (r, q) = if signed {
                    ssat(v as i32 as i64, sat as u32 + 1)
                } else {
                    usat(v as i32 as i64, sat as u32)
                };
                self.r[rd as usize] = r;
                self.set_q(q);
            }
            Op::Sat16 {
                signed,
                rd,
                sat,
                rn,
            } => {
                let v = self.rr(rn);
                let (a, qa, b, qb) = if signed {
                    let (a, qa) = ssat(lo16(v), sat as u32 + 1);
                    let (b, qb) = ssat(hi16(v), sat as u32 + 1);
                    (a, qa, b, qb)
                } else {
                    let (a, qa) = usat(lo16(v), sat as u32);
                    let (b, qb) = usat(hi16(v), sat as u32);
                    (a, qa, b, qb)
                };
                self.r[rd as usize] = (a & 0xffff) | b << 16;
                self.set_q(qa || qb);
            }
            Op::Parallel {
                prefix,
                op,
                rd,
                rn,
                rm,
            } => self.parallel(prefix, op, rd, rn, rm),
            Op::Extend {
                signed,
                size,
                rd,
                rn,
                rm,
                rot,
            } => {
                let v = self.rr(rm).rotate_right(rot as u32);
                let add = if rn == 15 { 0 } else { self.rr(rn) };
                let r = match (size, signed) {
                    (ExtSize::B, true) => (v as i8 as i32 as u32).wrapping_add(add),
                    (ExtSize::B, false) => (v & 0xff).wrapping_add(add),
                    (ExtSize::H, true) => (v as i16 as i32 as u32).wrapping_add(add),
                    (ExtSize::H, false) => (v & 0xffff).wrapping_add(add),
                    (ExtSize::B16, s) => {
                        let ext = |b: u32| {
                            if s {
                                b as u8 as i8 as i32 as u32
                            } else {
                                b & 0xff
                            }
                        };
                        let lo = ext(v).wrapping_add(add) & 0xffff;
                        let hi = ext(v >> 16).wrapping_add(add >> 16) & 0xffff;
                        lo | hi << 16
                    }
                };
                self.r[rd as usize] = r;
            }
            Op::Pkh {
                tb,
                rd,
                rn,
                rm,
                amount,
            } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                self.r[rd as usize] = if tb {
                    let (s, _) = shift_c(m, Shift::Asr, amount as u32, false);
                    (n & 0xffff_0000) | (s & 0xffff)
                } else {
                    (n & 0xffff) | ((m << amount) & 0xffff_0000)
                };
            }
            Op::Sel { rd, rn, rm } => {
                let n = self.rr(rn);
                let m = self.rr(rm);
                let ge = (self.cpsr >> psr::GE_SHIFT) & 0xf;
                let mut r = 0;
                for k in 0..4 {
                    let src = if ge & (1 << k) != 0 { n } else { m };
                    r |= src & (0xff << (8 * k));
                }
                self.r[rd as usize] = r;
            }
            Op::Rev { op, rd, rm } => {
                let v = self.rr(rm);
                self.r[rd as usize] = match op {
                    RevOp::Rev => v.swap_bytes(),
                    RevOp::Rev16 => ((v & 0xff00_ff00) >> 8) | ((v & 0x00ff_00ff) << 8),
                    RevOp::Revsh => (v as u16).swap_bytes() as i16 as i32 as u32,
                    RevOp::Rbit => v.reverse_bits(),
                    RevOp::Clz => v.leading_zeros(),
                };
            }
            Op::Bitfield {
                op,
                rd,
                rn,
                lsb,
                width,
            } => {
                let mask = if width >= 32 { !0 } else { (1u32 << width) - 1 };
                let lsb = lsb as u32;
                let v = match op {
                    BfOp::Ubfx => (self.rr(rn) >> lsb) & mask,
                    BfOp::Sbfx => {
                        let x = (self.rr(rn) >> lsb) & mask;
                        let sh = 32 - width as u32;
                        (((x << sh) as i32) >> sh) as u32
                    }
                    BfOp::Bfi => (self.rr(rd) & !(mask << lsb)) | ((self.rr(rn) & mask) << lsb),
                    BfOp::Bfc => self.rr(rd) & !(mask << lsb),
                };
                self.r[rd as usize] = v;
            }
            Op::B { off } => self.next_pc = self.pc_read.wrapping_add(off as u32),
            Op::Bl { off } => {
                let thumb = self.thumb();
                self.r[14] = self.next_pc | thumb as u32;
                self.next_pc = self.pc_read.wrapping_add(off as u32);
            }
            Op::BlxImm { off } => {
                if self.thumb() {
                    self.r[14] = self.next_pc | 1;
                    self.cpsr &= !psr::T;
                    self.next_pc = (self.pc_read & !3).wrapping_add(off as u32);
                } else {
                    self.r[14] = self.next_pc;
                    self.cpsr |= psr::T;
                    self.next_pc = self.pc_read.wrapping_add(off as u32);
                }
            }
            Op::Bx { rm } | Op::Bxj { rm } => {
                let v = self.rr(rm);
                self.bx_write_pc(v);
            }
            Op::Blx { rm } => {
                let v = self.rr(rm);
                self.r[14] = self.next_pc | self.thumb() as u32;
                self.bx_write_pc(v);
            }
            Op::Cbz { nonzero, rn, off } => {
                if (self.rr(rn) != 0) == nonzero {
                    self.next_pc = self.pc_read.wrapping_add(off);
                }
            }
            Op::It { firstcond, mask } => self.it = firstcond << 4 | mask,
            _ => return Err(crate::cpu::Exception::Undefined),
        }
        Ok(None)
    }

    fn parallel(&mut self, prefix: ParPrefix, op: ParOp, rd: u8, rn: u8, rm: u8) {
        let n = self.rr(rn);
        let m = self.rr(rm);
        let signed = matches!(prefix, ParPrefix::S | ParPrefix::Q | ParPrefix::Sh);
        let (lanes, width) = match op {
            ParOp::Add8 | ParOp::Sub8 => (4, 8),
            _ => (2, 16),
        };
        let lane = |v: u32, k: u32| -> i64 {
            let x = (v >> (k * width)) & ((1u32 << width) - 1);
            if signed {
                ((x << (32 - width)) as i32 >> (32 - width)) as i64
            } else {
                x as i64
            }
        };
        let mut res = 0u32;
        let mut ge = 0u32;
        for k in 0..lanes {
            let (a, b, add) = match op {
                ParOp::Add16 | ParOp::Add8 => (lane(n, k), lane(m, k), true),
                ParOp::Sub16 | ParOp::Sub8 => (lane(n, k), lane(m, k), false),
                ParOp::Asx => (lane(n, k), lane(m, 1 - k), k == 1),
                ParOp::Sax => (lane(n, k), lane(m, 1 - k), k == 0),
            };
            let r = if add { a + b } else { a - b };
            let v: u32 = match prefix {
                ParPrefix::S | ParPrefix::U => r as u32,
                ParPrefix::Q => ssat(r, width).0,
                ParPrefix::Uq => usat(r, width).0,
                ParPrefix::Sh | ParPrefix::Uh => (r >> 1) as u32,
            };
            let g = match prefix {
                ParPrefix::S => r >= 0,
                ParPrefix::U => {
                    if add {
                        r >= 1 << width
                    } else {
                        r >= 0
                    }
                }
                _ => false,
            };
            let per = 4 / lanes;
            if g {
                ge |= ((1 << per) - 1) << (k * per);
            }
            res |= (v & ((1u32 << width) - 1)) << (k * width);
        }
        self.r[rd as usize] = res;
        if matches!(prefix, ParPrefix::S | ParPrefix::U) {
            self.set_ge(ge);
        }
    }
}
