//! Short-descriptor translation (ARM ARM B3.5): sections, supersections, large and small
//! pages, domains, AP/APX (with `SCTLR.AFE` access flags), XN/PXN.

use super::{apply_wxn, perm, Fault, FaultKind, Walk};
use crate::bus::Bus;
use crate::cp15::Cp15;

fn read_desc(bus: &mut dyn Bus, pa: u64, level: u8) -> Result<u32, Fault> {
    bus.read(pa, 4).map(|v| v as u32).map_err(|_| Fault {
        kind: FaultKind::WalkExternal,
        level,
        domain: 0,
    })
}

/// Permissions from AP[2:0] (or AP[2:1] with the access flag model).
fn ap_perms(afe: bool, ap: u32) -> u8 {
    use perm::*;
    if afe {
        return match (ap >> 1) & 3 {
            0 => PR | PW,
            1 => PR | PW | UR | UW,
            2 => PR,
            _ => PR | UR,
        };
    }
    match ap & 7 {
        0 => 0,
        1 => PR | PW,
        2 => PR | PW | UR,
        3 => PR | PW | UR | UW,
        5 => PR,
        6 | 7 => PR | UR,
        _ => 0,
    }
}

/// Walks the short-descriptor tables.
pub fn walk(cp15: &Cp15, bus: &mut dyn Bus, va: u32) -> Result<Walk, Fault> {
    let n = cp15.ttbcr & 7;
    let use_ttbr1 = n != 0 && (va >> (32 - n)) != 0;
    let fault = |kind, level, domain| Fault {
        kind,
        level,
        domain,
    };
    let (base, disabled) = if use_ttbr1 {
        (
            (cp15.ttbr1 as u32) & 0xffff_c000,
            cp15.ttbcr & (1 << 5) != 0,
        )
    } else {
        let mask = 0xffff_ffffu32 << (14 - n);
        ((cp15.ttbr0 as u32) & mask, cp15.ttbcr & (1 << 4) != 0)
    };
    if disabled {
        return Err(fault(FaultKind::Translation, 1, 0));
    }
    let idx = if use_ttbr1 {
        va >> 20
    } else {
        (va << n) >> (20 + n)
    };
    let l1 = read_desc(bus, (base | idx << 2) as u64, 1)?;
    let afe = cp15.sctlr & (1 << 29) != 0;
    let (pa_page, ap, xn, pxn, domain, level, af, ng, size_log2, tex, cb);
    match l1 & 3 {
        0 => return Err(fault(FaultKind::Translation, 1, 0)),
        1 => {
            domain = ((l1 >> 5) & 15) as u8;
            pxn = l1 & 4 != 0;
            let l2a = (l1 & 0xffff_fc00) | ((va >> 12) & 0xff) << 2;
            let l2 = read_desc(bus, l2a as u64, 2)?;
            level = 2;
            match l2 & 3 {
                0 => return Err(fault(FaultKind::Translation, 2, domain)),
                1 => {
                    pa_page = ((l2 & 0xffff_0000) | (va & 0xf000)) as u64;
                    xn = l2 & (1 << 15) != 0;
                    size_log2 = 16;
                    tex = (l2 >> 12) & 7;
                }
                _ => {
                    pa_page = (l2 & 0xffff_f000) as u64;
                    xn = l2 & 1 != 0;
                    size_log2 = 12;
                    tex = (l2 >> 6) & 7;
                }
            }
            ap = ((l2 >> 9) & 1) << 2 | ((l2 >> 4) & 3);
            af = l2 & (1 << 4) != 0;
            ng = l2 & (1 << 11) != 0;
            cb = l2 & 0xc;
        }
        _ => {
            level = 1;
            pxn = l1 & 1 != 0;
            xn = l1 & (1 << 4) != 0;
            ap = ((l1 >> 15) & 1) << 2 | ((l1 >> 10) & 3);
            af = l1 & (1 << 10) != 0;
            ng = l1 & (1 << 17) != 0;
            tex = (l1 >> 12) & 7;
            cb = l1 & 0xc;
            if l1 & (1 << 18) != 0 {
                // supersection: PA[39:32] from bits [8:5] and [23:20], domain 0
                domain = 0;
                size_log2 = 24;
                let hi = (((l1 >> 5) & 15) as u64) << 36 | (((l1 >> 20) & 15) as u64) << 32;
                pa_page = hi | ((l1 & 0xff00_0000) | (va & 0x00ff_f000)) as u64;
            } else {
                domain = ((l1 >> 5) & 15) as u8;
                size_log2 = 20;
                pa_page = ((l1 & 0xfff0_0000) | (va & 0x000f_f000)) as u64;
            }
        }
    }
    let dacr = (cp15.dacr >> (domain * 2)) & 3;
    if dacr == 0 || dacr == 2 {
        return Err(fault(FaultKind::Domain, level, domain));
    }
    if afe && !af {
        return Err(fault(FaultKind::AccessFlag, level, domain));
    }
    let manager = dacr == 3;
    let mut p = if manager {
        perm::PR | perm::PW | perm::UR | perm::UW
    } else {
        ap_perms(afe, ap)
    };
    if !xn {
        if p & perm::PR != 0 && !pxn {
            p |= perm::PX;
        }
        if p & perm::UR != 0 {
            p |= perm::UX;
        }
    }
    Ok(Walk {
        pa_page,
        perms: apply_wxn(cp15, p),
        level,
        domain,
        manager,
        global: !ng,
        size_log2,
        mem: super::attrs::short(cp15, tex, cb & 8 != 0, cb & 4 != 0),
    })
}
