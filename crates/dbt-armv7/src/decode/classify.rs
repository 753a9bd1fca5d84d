//! Sensitive-instruction classification: the STAR paper's Table 1 (seed 004), completed for
//! ARMv7-A with the security, virtualization and LPAE extensions.
//!
//! | group | control flow | sensitive |
//! |---|---|---|
//! | ALU writing PC (`MOV pc, lr`) | yes | no |
//! | ALU exception return (`MOVS pc, lr`, `SUBS pc, lr, #4`) | yes | yes |
//! | B, BL, BLX, BX, BXJ, CBZ/CBNZ, TBB/TBH | yes | no |
//! | CPS, MSR writing CPSR control/extension bits (c, x fields) or any SPSR | no | yes |
//! | MRS (reads CPSR mode bits / SPSR), MRS/MSR banked registers | no | yes |
//! | CDP, LDC, STC, MCR, MRC, MCRR, MRRC (any coprocessor, incl. CP14/CP15) | no | yes |
//! | VMRS/VMSR of FPSID, MVFR*, FPEXC (anything but FPSCR) | no | yes |
//! | LDM/LDR/POP loading PC | yes | no |
//! | LDM exception return (`LDM sp!, {..., pc}^`), RFE, ERET | yes | yes |
//! | SRS, LDM/STM user registers (`^` without PC) | no | yes |
//! | LDRT, LDRBT, LDRHT, LDRSBT, LDRSHT, STRT, STRBT, STRHT | no | yes |
//! | SVC, HVC, SMC, BKPT, UDF and UNDEFINED encodings (exception generating) | yes | yes |
//! | WFI, WFE (and YIELD/SEV are not sensitive) | no | yes |
//!
//! UNPREDICTABLE encodings are reported through [`Info::unpredictable`] and are treated as
//! sensitive (a translator must trap them so the interpreter raises UNDEFINED).

use super::*;

/// What a translator needs to know about one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// Core registers read (bit n = Rn; bit 15 = PC used as an operand).
    pub reads: u16,
    /// Core registers written (bit 15 = writes the PC, i.e. branches).
    pub writes: u16,
    /// Changes control flow (branch, PC write, exception generation or return).
    pub control_flow: bool,
    /// Behaves differently when run unprivileged, or touches system state (seed 004).
    pub sensitive: bool,
    /// Reads the PC as a data operand (PC-relative addressing, `ADR`, `MOV rX, pc`, `STM {..pc}`).
    pub reads_pc: bool,
    /// Reads the condition flags (beyond its condition code).
    pub reads_flags: bool,
    /// May write the condition flags.
    pub writes_flags: bool,
    /// Accesses memory.
    pub memory: bool,
    /// UNPREDICTABLE encoding.
    pub unpredictable: bool,
    /// UNDEFINED encoding.
    pub undefined: bool,
}

fn m(r: u8) -> u16 {
    1u16 << (r & 15)
}

fn op2_reads(op2: &Operand2) -> u16 {
    match *op2 {
        Operand2::Imm { .. } => 0,
        Operand2::ShiftImm { rm, .. } => m(rm),
        Operand2::ShiftReg { rm, rs, .. } => m(rm) | m(rs),
    }
}

fn addr_reads(a: &Addr) -> u16 {
    let mut r = m(a.rn);
    if let MemOff::Reg { rm, .. } = a.off {
        r |= m(rm);
    }
    r
}

fn opt(r: u8) -> u16 {
    if r == 15 {
        0
    } else {
        m(r)
    }
}

/// Computes [`Info`] for a decoded instruction.
pub fn info(i: &Insn) -> Info {
    let mut f = Info {
        unpredictable: i.unpredictable,
        undefined: i.is_undefined(),
        ..Info::default()
    };
    match i.op {
        Op::Dp { op, s, rd, rn, op2 } => {
            f.reads = op2_reads(&op2);
            if !op.is_move() {
                f.reads |= m(rn);
            }
            if !op.is_test() {
                f.writes = m(rd);
            }
            f.writes_flags = s;
            f.reads_flags = matches!(op, DpOp::Adc | DpOp::Sbc | DpOp::Rsc)
                || matches!(
                    op2,
                    Operand2::ShiftImm {
                        shift: Shift::Rrx,
                        ..
                    }
                )
                || (s && op.is_logical());
            if rd == 15 && !op.is_test() {
                f.control_flow = true;
                if s {
                    f.sensitive = true;
                    f.writes_flags = true;
                }
            }
        }
        Op::Adr { rd, .. } => {
            f.reads = m(15);
            f.writes = m(rd);
        }
        Op::Movw { rd, .. } => f.writes = m(rd),
        Op::Movt { rd, .. } => {
            f.reads = m(rd);
            f.writes = m(rd);
        }
        Op::Mul {
            s, rd, rn, rm, ra, ..
        } => {
            f.reads = m(rn) | m(rm) | opt(ra);
            f.writes = m(rd);
            f.writes_flags = s;
        }
        Op::MulLong {
            kind,
            s,
            rdlo,
            rdhi,
            rn,
            rm,
        } => {
            f.reads = m(rn) | m(rm);
            if matches!(kind, MulLong::Umlal | MulLong::Smlal | MulLong::Umaal) {
                f.reads |= m(rdlo) | m(rdhi);
            }
            f.writes = m(rdlo) | m(rdhi);
            f.writes_flags = s;
        }
        Op::MulHalf {
            kind,
            rd,
            rn,
            rm,
            ra,
            ..
        } => {
            f.reads = m(rn) | m(rm) | opt(ra);
            f.writes = m(rd);
            if kind == MulHalf::Smlal {
                f.reads |= m(rd);
                f.writes |= m(ra);
            } else {
                f.writes_flags = kind != MulHalf::Smul && kind != MulHalf::Smulw;
            }
        }
        Op::MulDual {
            kind,
            rd,
            rn,
            rm,
            ra,
            ..
        } => {
            f.reads = m(rn) | m(rm) | opt(ra);
            f.writes = m(rd);
            if matches!(kind, MulDual::Smlald | MulDual::Smlsld) {
                f.reads |= m(rd);
                f.writes |= m(ra);
            } else {
                f.writes_flags = true; // Q
            }
        }
        Op::MulMost { rd, rn, rm, ra, .. } => {
            f.reads = m(rn) | m(rm) | opt(ra);
            f.writes = m(rd);
        }
        Op::Div { rd, rn, rm, .. } => {
            f.reads = m(rn) | m(rm);
            f.writes = m(rd);
        }
        Op::Usad8 { rd, rn, rm, ra } => {
            f.reads = m(rn) | m(rm) | opt(ra);
            f.writes = m(rd);
        }
        Op::QAddSub { rd, rn, rm, .. } => {
            f.reads = m(rn) | m(rm);
            f.writes = m(rd);
            f.writes_flags = true;
        }
        Op::Sat { rd, rn, .. } | Op::Sat16 { rd, rn, .. } => {
            f.reads = m(rn);
            f.writes = m(rd);
            f.writes_flags = true;
        }
        Op::Parallel {
            prefix, rd, rn, rm, ..
        } => {
            f.reads = m(rn) | m(rm);
            f.writes = m(rd);
            f.writes_flags = matches!(prefix, ParPrefix::S | ParPrefix::U);
        }
        Op::Extend { rd, rn, rm, .. } => {
            f.reads = m(rm) | opt(rn);
            f.writes = m(rd);
        }
        Op::Pkh { rd, rn, rm, .. } => {
            f.reads = m(rn) | m(rm);
            f.writes = m(rd);
        }
        Op::Sel { rd, rn, rm } => {
            f.reads = m(rn) | m(rm);
            f.writes = m(rd);
            f.reads_flags = true;
        }
        Op::Rev { rd, rm, .. } => {
            f.reads = m(rm);
            f.writes = m(rd);
        }
        Op::Bitfield { op, rd, rn, .. } => {
            f.writes = m(rd);
            f.reads = match op {
                BfOp::Bfc => m(rd),
                BfOp::Bfi => m(rd) | m(rn),
                _ => m(rn),
            };
        }
        Op::Mem {
            load,
            rt,
            addr,
            unpriv,
            ..
        } => {
            f.memory = true;
            f.reads = addr_reads(&addr);
            if addr.wback {
                f.writes |= m(addr.rn);
            }
            if load {
                f.writes |= m(rt);
                if rt == 15 {
                    f.control_flow = true;
                }
            } else {
                f.reads |= m(rt);
            }
            f.sensitive = unpriv;
        }
        Op::MemDual {
            load,
            rt,
            rt2,
            addr,
        } => {
            f.memory = true;
            f.reads = addr_reads(&addr);
            if addr.wback {
                f.writes |= m(addr.rn);
            }
            if load {
                f.writes |= m(rt) | m(rt2);
            } else {
                f.reads |= m(rt) | m(rt2);
            }
        }
        Op::Ldrex { rt, rt2, rn, .. } => {
            f.memory = true;
            f.reads = m(rn);
            f.writes = m(rt) | opt(rt2);
        }
        Op::Strex {
            rd, rt, rt2, rn, ..
        } => {
            f.memory = true;
            f.reads = m(rn) | m(rt) | opt(rt2);
            f.writes = m(rd);
        }
        Op::Clrex => {}
        Op::Swp { rt, rt2, rn, .. } => {
            f.memory = true;
            f.reads = m(rn) | m(rt2);
            f.writes = m(rt);
        }
        Op::Multi {
            load,
            rn,
            list,
            wback,
            user,
            ..
        } => {
            f.memory = true;
            f.reads = m(rn);
            if wback {
                f.writes |= m(rn);
            }
            if load {
                f.writes |= list;
                if list & 0x8000 != 0 {
                    f.control_flow = true;
                }
            } else {
                f.reads |= list;
            }
            if user {
                f.sensitive = true;
                if load && list & 0x8000 != 0 {
                    f.writes_flags = true;
                }
            }
        }
        Op::B { .. } | Op::Bl { .. } | Op::BlxImm { .. } => {
            f.control_flow = true;
            f.writes = m(15);
            if !matches!(i.op, Op::B { .. }) {
                f.writes |= m(14);
            }
        }
        Op::Bx { rm } | Op::Bxj { rm } => {
            f.control_flow = true;
            f.reads = m(rm);
            f.writes = m(15);
        }
        Op::Blx { rm } => {
            f.control_flow = true;
            f.reads = m(rm);
            f.writes = m(15) | m(14);
        }
        Op::Cbz { rn, .. } => {
            f.control_flow = true;
            f.reads = m(rn);
            f.writes = m(15);
        }
        Op::Tb { rn, rm, .. } => {
            f.control_flow = true;
            f.memory = true;
            f.reads = m(rn) | m(rm);
            f.writes = m(15);
        }
        Op::It { .. } => f.reads_flags = true,
        Op::Mrs { rd, .. } | Op::MrsBanked { rd, .. } => {
            f.writes = m(rd);
            f.reads_flags = true;
            f.sensitive = true;
        }
        Op::Msr { spsr, mask, src } => {
            if let MsrSrc::Reg(rn) = src {
                f.reads = m(rn);
            }
            f.writes_flags = !spsr && mask & 0b1000 != 0;
            f.sensitive = spsr || mask & 0b0011 != 0;
        }
        Op::MsrBanked { rn, .. } => {
            f.reads = m(rn);
            f.sensitive = true;
        }
        Op::Cps { .. } => f.sensitive = true,
        Op::Setend { .. } => {}
        Op::Srs { .. } => {
            f.memory = true;
            f.reads = m(14);
            f.sensitive = true;
        }
        Op::Rfe { rn, wback, .. } => {
            f.memory = true;
            f.control_flow = true;
            f.sensitive = true;
            f.reads = m(rn);
            f.writes = m(15) | if wback { m(rn) } else { 0 };
            f.writes_flags = true;
        }
        Op::Eret => {
            f.control_flow = true;
            f.sensitive = true;
            f.reads = m(14);
            f.writes = m(15);
            f.writes_flags = true;
        }
        Op::Mcr { to_cp, rt, .. } => {
            f.sensitive = true;
            if to_cp {
                f.reads = m(rt);
            } else if rt == 15 {
                f.writes_flags = true;
            } else {
                f.writes = m(rt);
            }
        }
        Op::Mcrr { to_cp, rt, rt2, .. } => {
            f.sensitive = true;
            if to_cp {
                f.reads = m(rt) | m(rt2);
            } else {
                f.writes = m(rt) | m(rt2);
            }
        }
        Op::Ldc { rn, wback, .. } => {
            f.sensitive = true;
            f.memory = true;
            f.reads = m(rn);
            if wback {
                f.writes = m(rn);
            }
        }
        Op::Cdp { .. } => f.sensitive = true,
        Op::Vfp {
            kind,
            reads,
            writes,
            sysreg,
        } => {
            f.reads = reads;
            f.writes = writes;
            f.memory = matches!(kind, VfpKind::LoadStore | VfpKind::NeonLoadStore);
            match kind {
                VfpKind::Vmrs | VfpKind::Vmsr => {
                    f.sensitive = sysreg != 1;
                    f.writes_flags = kind == VfpKind::Vmrs && writes == 0;
                }
                _ => {}
            }
        }
        Op::Svc { .. } | Op::Bkpt { .. } | Op::Hvc { .. } | Op::Smc { .. } => {
            f.control_flow = true;
            f.sensitive = true;
        }
        Op::Udf { .. } | Op::Undefined => {
            f.control_flow = true;
            f.sensitive = true;
        }
        Op::Hint(h) => f.sensitive = matches!(h, Hint::Wfi | Hint::Wfe),
        Op::Barrier(_) => {}
        Op::Preload { rn, rm } => f.reads = m(rn) | opt(rm),
    }
    if let Op::Mem { addr, .. } | Op::MemDual { addr, .. } = i.op {
        if addr.rn == 15 {
            f.reads |= m(15);
        }
    }
    f.reads_pc = f.reads & m(15) != 0;
    if f.writes & m(15) != 0 {
        f.control_flow = true;
    }
    if f.unpredictable {
        f.sensitive = true;
    }
    f
}
