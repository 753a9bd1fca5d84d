//! VFPv3/VFPv4 and Advanced SIMD (NEON) classification with core-register usage.
//!
//! Input is an A32-layout word; the T32 decoder maps its encodings onto A32 first. These
//! instructions are classified (kind, core registers read/written, VMRS/VMSR system
//! register); `Insn::raw` keeps the A32-layout word, from which `exec::vfp` decodes the
//! rest when it executes them.

use super::*;

fn mk(w: u32, thumb: bool, kind: VfpKind, reads: u16, writes: u16, sysreg: u8) -> Insn {
    let class = match (thumb, kind) {
        (true, VfpKind::NeonDataProc | VfpKind::NeonLoadStore) => Class::T32Neon,
        (true, _) => Class::T32Vfp,
        (false, VfpKind::NeonDataProc) => Class::A32Neon,
        (false, VfpKind::NeonLoadStore) => Class::A32NeonLdSt,
        (false, VfpKind::DataProc) => Class::A32VfpDp,
        (false, VfpKind::LoadStore) => Class::A32VfpLdSt,
        (false, _) => Class::A32VfpXfer,
    };
    let cond = if thumb || w >> 28 == 15 {
        14
    } else {
        (w >> 28) as u8
    };
    let mut i = Insn::new(
        w,
        4,
        thumb,
        cond,
        Op::Vfp {
            kind,
            reads,
            writes,
            sysreg,
        },
        class,
    );
    i.thumb = thumb;
    i
}

fn undef(w: u32, thumb: bool) -> Insn {
    let class = if thumb {
        Class::T32Unallocated
    } else {
        Class::A32Unallocated
    };
    Insn::new(w, 4, thumb, 14, Op::Undefined, class)
}

/// Classifies a VFP/SIMD encoding (A32 layout).
pub fn decode(w: u32, thumb: bool) -> Insn {
    let rt = bits(w, 15, 12);
    let rn = bits(w, 19, 16);
    if w >> 28 == 15 {
        if bits(w, 27, 25) == 0b001 {
            return mk(w, thumb, VfpKind::NeonDataProc, 0, 0, 0);
        }
        if bits(w, 27, 24) == 0b0100 && !bit(w, 20) || bits(w, 27, 24) == 0b0100 {
            let rm = bits(w, 3, 0);
            let mut reads = 1u16 << rn;
            let mut writes = 0;
            if rm != 15 {
                writes |= 1 << rn;
                if rm != 13 {
                    reads |= 1 << rm;
                }
            }
            return mk(w, thumb, VfpKind::NeonLoadStore, reads, writes, 0).unpred(rn == 15);
        }
        return undef(w, thumb);
    }
    match bits(w, 27, 24) {
        0b1100 | 0b1101 => {
            if bits(w, 27, 21) == 0b1100010 {
                // 64-bit transfers between core and extension registers
                let regs = 1u16 << rt | 1u16 << rn;
                let to_core = bit(w, 20);
                let unp = rt == 15 || rn == 15 || (to_core && rt == rn);
                return if to_core {
                    mk(w, thumb, VfpKind::Transfer, 0, regs, 0).unpred(unp)
                } else {
                    mk(w, thumb, VfpKind::Transfer, regs, 0, 0).unpred(unp)
                };
            }
            if bits(w, 27, 21) == 0b1100000 {
                return undef(w, thumb);
            }
            let wb = bit(w, 21);
            let writes = if wb { 1u16 << rn } else { 0 };
            mk(w, thumb, VfpKind::LoadStore, 1 << rn, writes, 0).unpred(wb && rn == 15)
        }
        0b1110 if !bit(w, 4) => mk(w, thumb, VfpKind::DataProc, 0, 0, 0),
        0b1110 => {
            let l = bit(w, 20);
            let c = bit(w, 8);
            let a = bits(w, 23, 21);
            if !c && a == 0b111 {
                let sysreg = rn as u8;
                if l {
                    // VMRS; Rt == 15 transfers FPSCR.NZCV to APSR.
                    let writes = if rt == 15 { 0 } else { 1u16 << rt };
                    return mk(w, thumb, VfpKind::Vmrs, 0, writes, sysreg);
                }
                return mk(w, thumb, VfpKind::Vmsr, 1 << rt, 0, sysreg).unpred(rt == 15);
            }
            if l {
                mk(w, thumb, VfpKind::Transfer, 0, 1 << rt, 0).unpred(rt == 15)
            } else {
                mk(w, thumb, VfpKind::Transfer, 1 << rt, 0, 0).unpred(rt == 15)
            }
        }
        _ => undef(w, thumb),
    }
}
