//! Advanced SIMD element and structure loads and stores (ARM ARM A7.7): VLD1-4/VST1-4
//! of multiple structures, of a single lane, and VLD1-4 to all lanes, with their
//! alignment qualifiers (an alignment fault when the address is not aligned) and base
//! writeback (`!` or a register).

use super::neon::{lane, mask, set_lane};
use super::{field, flag};
use crate::bus::Bus;
use crate::cpu::{Cpu, Exception, Mode};
use crate::exec::ExecResult;
use crate::mmu::{Fault, FaultKind};

/// What to transfer: `n`-element structures into registers `d + k*inc`, for `regs`
/// consecutive groups (VLD1/VLD2 multiple), elements of `e` bits.
struct Shape {
    n: usize,
    inc: usize,
    regs: usize,
    e: u32,
    align: u32,
    kind: Kind,
}

#[derive(PartialEq)]
enum Kind {
    Multiple,
    Lane(usize),
    AllLanes,
}

fn undef<T>() -> Result<T, Exception> {
    Err(Exception::Undefined)
}

/// Decodes the shape of a VLDn/VSTn (A32 layout).
fn shape(w: u32) -> Result<Shape, Exception> {
    let a = flag(w, 23);
    let load = flag(w, 21);
    let b = field(w, 11, 8);
    let size = field(w, 7, 6);
    let al = field(w, 5, 4);
    if !a {
        let e = 8 << size;
        let align = if al == 0 { 1 } else { 4 << al };
        let (n, inc, regs) = match b {
            0b0111 if al & 2 == 0 => (1, 1, 1),
            0b1010 if al != 3 => (1, 1, 2),
            0b0110 if al & 2 == 0 => (1, 1, 3),
            0b0010 => (1, 1, 4),
            0b1000 | 0b1001 if size != 3 && al != 3 => (2, 1 + (b & 1) as usize, 1),
            0b0011 if size != 3 => (2, 2, 2),
            0b0100 | 0b0101 if size != 3 && al & 2 == 0 => (3, 1 + (b & 1) as usize, 1),
            0b0000 | 0b0001 if size != 3 => (4, 1 + (b & 1) as usize, 1),
            _ => return undef(),
        };
        return Ok(Shape {
            n,
            inc,
            regs,
            e,
            align,
            kind: Kind::Multiple,
        });
    }
    let n = (b & 3) as usize + 1;
    let sz = b >> 2;
    if sz == 3 {
        // To all lanes (loads only).
        if !load {
            return undef();
        }
        let t = flag(w, 5);
        let abit = flag(w, 4);
        let mut e = 8 << size;
        let inc = 1 + t as usize;
        let align = match n {
            1 => {
                if size == 3 || (size == 0 && abit) {
                    return undef();
                }
                if abit {
                    e / 8
                } else {
                    1
                }
            }
            2 => {
                if size == 3 {
                    return undef();
                }
                if abit {
                    2 * e / 8
                } else {
                    1
                }
            }
            3 => {
                if size == 3 || abit {
                    return undef();
                }
                1
            }
            _ => {
                if size == 3 {
                    if !abit {
                        return undef();
                    }
                    e = 32;
                    16
                } else if abit {
                    if size == 2 {
                        8
                    } else {
                        4 * e / 8
                    }
                } else {
                    1
                }
            }
        };
        return Ok(Shape {
            n,
            inc: if n == 1 { 1 } else { inc },
            regs: if n == 1 { inc } else { 1 },
            e,
            align,
            kind: Kind::AllLanes,
        });
    }
    let ia = field(w, 7, 4);
    let e = 8u32 << sz;
    let (index, inc, align) = match (n, sz) {
        (1, 0) if ia & 1 == 0 => (ia >> 1, 1, 1),
        (1, 1) if ia & 2 == 0 => (ia >> 2, 1, if ia & 1 != 0 { 2 } else { 1 }),
        (1, 2) if ia & 4 == 0 && (ia & 3 == 0 || ia & 3 == 3) => {
            (ia >> 3, 1, if ia & 3 == 3 { 4 } else { 1 })
        }
        (2, 0) => (ia >> 1, 1, if ia & 1 != 0 { 2 } else { 1 }),
        (2, 1) => (ia >> 2, 1 + (ia >> 1 & 1), if ia & 1 != 0 { 4 } else { 1 }),
        (2, 2) if ia & 2 == 0 => (ia >> 3, 1 + (ia >> 2 & 1), if ia & 1 != 0 { 8 } else { 1 }),
        (3, 0) if ia & 1 == 0 => (ia >> 1, 1, 1),
        (3, 1) if ia & 1 == 0 => (ia >> 2, 1 + (ia >> 1 & 1), 1),
        (3, 2) if ia & 3 == 0 => (ia >> 3, 1 + (ia >> 2 & 1), 1),
        (4, 0) => (ia >> 1, 1, if ia & 1 != 0 { 4 } else { 1 }),
        (4, 1) => (ia >> 2, 1 + (ia >> 1 & 1), if ia & 1 != 0 { 8 } else { 1 }),
        (4, 2) if ia & 3 != 3 => (
            ia >> 3,
            1 + (ia >> 2 & 1),
            if ia & 3 == 0 { 1 } else { 4 << (ia & 3) },
        ),
        _ => return undef(),
    };
    Ok(Shape {
        n,
        inc: inc as usize,
        regs: 1,
        e,
        align,
        kind: Kind::Lane(index as usize),
    })
}

impl Cpu {
    fn neon_read(
        &mut self,
        bus: &mut dyn Bus,
        va: u32,
        e: u32,
        user: bool,
    ) -> Result<u64, Exception> {
        if e == 64 {
            let lo = self.read_mem(bus, va, 4, user, 1)? as u64;
            let hi = self.read_mem(bus, va.wrapping_add(4), 4, user, 1)? as u64;
            return Ok(hi << 32 | lo);
        }
        Ok(self.read_mem(bus, va, e / 8, user, 1)? as u64)
    }

    fn neon_write(
        &mut self,
        bus: &mut dyn Bus,
        va: u32,
        e: u32,
        v: u64,
        user: bool,
    ) -> Result<(), Exception> {
        if e == 64 {
            self.write_mem(bus, va, 4, v as u32, user, 1)?;
            return self.write_mem(bus, va.wrapping_add(4), 4, (v >> 32) as u32, user, 1);
        }
        self.write_mem(bus, va, e / 8, v as u32, user, 1)
    }

    /// Executes an Advanced SIMD load/store (`1111 0100 xxx0` in A32 layout).
    pub(crate) fn neon_load_store(&mut self, bus: &mut dyn Bus, w: u32) -> ExecResult {
        let s = shape(w)?;
        let load = flag(w, 21);
        let rn = field(w, 19, 16) as usize;
        let rm = field(w, 3, 0) as usize;
        let d = ((flag(w, 22) as u32) << 4 | field(w, 15, 12)) as usize;
        let last = d + (s.n - 1) * s.inc + s.regs - 1;
        if rn == 15 || last > 31 {
            return Err(Exception::Undefined); // UNPREDICTABLE
        }
        self.check_dreg(last)?;
        let user = self.mode == Mode::Usr;
        let base = self.r[rn];
        if s.align > 1 && base & (s.align - 1) != 0 {
            return Err(Exception::DataAbort {
                fsr: Fault::new(FaultKind::Alignment).fsr(self.cp15.lpae(), !load),
                far: base,
            });
        }
        let eb = s.e / 8;
        let mut regs = self.fp.d;
        let mut addr = base;
        match s.kind {
            Kind::Multiple => {
                let lanes = (64 / s.e) as usize;
                for r in 0..s.regs {
                    for i in 0..lanes {
                        for k in 0..s.n {
                            let reg = d + r + k * s.inc;
                            if load {
                                let v = self.neon_read(bus, addr, s.e, user)?;
                                set_lane(&mut regs[reg..reg + 1], s.e, i, v);
                            } else {
                                let v = lane(&regs[reg..reg + 1], s.e, i);
                                self.neon_write(bus, addr, s.e, v, user)?;
                            }
                            addr = addr.wrapping_add(eb);
                        }
                    }
                }
            }
            Kind::Lane(i) => {
                for k in 0..s.n {
                    let reg = d + k * s.inc;
                    if load {
                        let v = self.neon_read(bus, addr, s.e, user)?;
                        set_lane(&mut regs[reg..reg + 1], s.e, i, v);
                    } else {
                        let v = lane(&regs[reg..reg + 1], s.e, i);
                        self.neon_write(bus, addr, s.e, v, user)?;
                    }
                    addr = addr.wrapping_add(eb);
                }
            }
            Kind::AllLanes => {
                for k in 0..s.n {
                    let v = self.neon_read(bus, addr, s.e, user)? & mask(s.e);
                    let rep = v.wrapping_mul(u64::MAX / mask(s.e));
                    for r in 0..s.regs {
                        regs[d + k * s.inc + r] = rep;
                    }
                    addr = addr.wrapping_add(eb);
                }
            }
        }
        if load {
            self.fp.d = regs;
        }
        match rm {
            15 => {}
            13 => self.r[rn] = addr,
            _ => self.r[rn] = base.wrapping_add(self.r[rm]),
        }
        Ok(None)
    }
}
