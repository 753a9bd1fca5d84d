//! Long-descriptor (LPAE) translation (ARM ARM B3.6): TTBR0/TTBR1 regions from T0SZ/T1SZ,
//! 1 GiB/2 MiB blocks and 4 KiB pages, hierarchical APTable/XNTable/PXNTable, AF, AP, XN/PXN.

use super::{apply_wxn, perm, Fault, FaultKind, Walk};
use crate::bus::Bus;
use crate::cp15::Cp15;

/// Walks the long-descriptor tables.
pub fn walk(cp15: &Cp15, bus: &mut dyn Bus, va: u32) -> Result<Walk, Fault> {
    let fault = |kind, level| Fault {
        kind,
        level,
        domain: 0,
    };
    let t0sz = cp15.ttbcr & 7;
    let t1sz = (cp15.ttbcr >> 16) & 7;
    let va64 = va as u64;
    let ttbr1_start = if t1sz == 0 {
        u64::MAX
    } else {
        (1u64 << 32) - (1u64 << (32 - t1sz))
    };
    let ttbr0_end = if t0sz == 0 {
        1u64 << 32
    } else {
        1u64 << (32 - t0sz)
    };
    let (ttbr, txsz, epd) = if t1sz != 0 && va64 >= ttbr1_start {
        (cp15.ttbr1, t1sz, cp15.ttbcr & (1 << 23) != 0)
    } else if va64 < ttbr0_end {
        (cp15.ttbr0, t0sz, cp15.ttbcr & (1 << 7) != 0)
    } else {
        return Err(fault(FaultKind::Translation, 1));
    };
    if epd {
        return Err(fault(FaultKind::Translation, 1));
    }
    let mut level: u8 = if txsz <= 1 { 1 } else { 2 };
    let mut table = ttbr & 0x00ff_ffff_fff8;
    let mut first = true;
    let (mut ap_no_write, mut ap_no_user, mut xn_t, mut pxn_t) = (false, false, false, false);
    loop {
        let shift = match level {
            1 => 30,
            2 => 21,
            _ => 12,
        };
        let bits = match (level, first) {
            (1, _) => 2 - txsz as u64,
            (2, true) => 11 - txsz as u64,
            _ => 9,
        };
        let idx = (va64 >> shift) & ((1u64 << bits) - 1);
        let da = table + idx * 8;
        first = false;
        let d = bus
            .read(da, 8)
            .map_err(|_| fault(FaultKind::WalkExternal, level))?;
        let ty = d & 3;
        if ty & 1 == 0 || (level == 3 && ty != 3) {
            return Err(fault(FaultKind::Translation, level));
        }
        if ty == 3 && level < 3 {
            ap_no_write |= d & (1 << 62) != 0;
            ap_no_user |= d & (1 << 61) != 0;
            xn_t |= d & (1 << 60) != 0;
            pxn_t |= d & (1 << 59) != 0;
            table = d & 0xff_ffff_f000;
            level += 1;
            continue;
        }
        let out_mask: u64 = (1u64 << shift) - 1;
        let pa_page = (d & 0xff_ffff_f000 & !out_mask) | (va64 & out_mask & !0xfff);
        if d & (1 << 10) == 0 {
            return Err(fault(FaultKind::AccessFlag, level));
        }
        let ap = (d >> 6) & 3;
        let ro = ap & 2 != 0 || ap_no_write;
        let user = ap & 1 != 0 && !ap_no_user;
        let mut p = perm::PR;
        if !ro {
            p |= perm::PW;
        }
        if user {
            p |= perm::UR;
            if !ro {
                p |= perm::UW;
            }
        }
        let xn = d & (1 << 54) != 0 || xn_t;
        let pxn = d & (1 << 53) != 0 || pxn_t;
        if !xn {
            if !pxn {
                p |= perm::PX;
            }
            if user {
                p |= perm::UX;
            }
        }
        return Ok(Walk {
            pa_page,
            perms: apply_wxn(cp15, p),
            level,
            domain: 0,
            manager: false,
            global: d & (1 << 11) == 0,
            size_log2: shift as u8,
            mem: super::attrs::lpae(cp15, (d >> 2) as u32 & 7),
        });
    }
}
