//! Random system-register encodings (MRS, MSR, SYS, SYSL) generated at run time, at EL1
//! and at EL0. The answers that are checked:
//! - an EL2 or EL3 register (`op1` = 4, 6) or an EL12/EL02 alias (`op1` = 5) at EL1 is
//!   UNDEFINED (`ESR_EL1.EC` = 0x00, taken on the instruction itself);
//! - a read of the ID space (`op0` = 3, `op1` = 0, `CRn` = 0, `CRm` = 1..7) does not fault
//!   (unallocated ID registers are RAZ) and a write to it is UNDEFINED;
//! - anything else either completes or raises an exception of a class the architecture
//!   allows for it (UNDEFINED, FP/SVE/SME access traps, a trap to EL1 from EL0, a data abort
//!   from a cache operation on an unmapped VA), always on the instruction itself.
//!
//! MSR writes at EL1 skip the registers the storm runs on (translation, vectors, exception
//! state, PSTATE, thread pointer, EL1 timer and GIC CPU-interface state, the EL1 virtual
//! timer that QEMU 7.2 mishandles at infinity) and clear the enable bits of debug
//! breakpoints/watchpoints; the values are random otherwise.

use crate::code;
use crate::paging;
use crate::rng::Rng;
use crate::tally::{self, Kind};
use crate::vectors::{self, Taken};

/// MRS/MSR/SYS/SYSL encoding with `Rt` = x0.
fn encode(read: bool, op0: u32, op1: u32, crn: u32, crm: u32, op2: u32) -> u32 {
    0xd500_0000
        | (u32::from(read) << 21)
        | (op0 << 19)
        | (op1 << 16)
        | (crn << 12)
        | (crm << 8)
        | (op2 << 5)
}

/// `ISS` of a trapped MRS/MSR (`EC` 0x18) of this encoding with `Rt` = x0.
fn iss_of(read: bool, op0: u32, op1: u32, crn: u32, crm: u32, op2: u32) -> u64 {
    u64::from((op0 << 20) | (op2 << 17) | (op1 << 14) | (crn << 10) | (crm << 1) | u32::from(read))
}

/// A random encoding `(op0, op1, CRn, CRm, op2)`, often near the allocated space.
fn random_encoding(rng: &mut Rng) -> (u32, u32, u32, u32, u32) {
    let op0 = 1 + rng.below(3) as u32;
    let op1 = if rng.chance(1, 2) {
        rng.pick(&[0, 0, 3, 4])
    } else {
        rng.below(8) as u32
    };
    (
        op0,
        op1,
        rng.below(16) as u32,
        rng.below(16) as u32,
        rng.below(8) as u32,
    )
}

/// True for encodings the storm must not write at EL1 (see the module doc).
fn write_excluded(op0: u32, op1: u32, crn: u32, crm: u32, op2: u32) -> bool {
    match (op0, op1) {
        (3, 0) => {
            matches!(crn, 1 | 2 | 4 | 5 | 6 | 10 | 13 | 14)
                || (crn == 12 && !gic_write_allowed(crm, op2))
        }
        (3, 3) => crn == 4 || (crn == 14 && crm == 3),
        // SYS: DC ZVA/GVA/GZVA zero memory: their address is made safe by the caller, so
        // nothing is excluded here; TLBI/AT/IC have no lasting effect on the storm.
        _ => false,
    }
}

/// GICv3 CPU-interface registers the storm writes with random values: SGI generation
/// (`ICC_SGI1R/ASGI1R/SGI0R_EL1`), end of interrupt and deactivation of random INTIDs
/// (`ICC_EOIR0/EOIR1/DIR_EL1`: none of them is active, the storm never acknowledges) and
/// the binary points. The rest (`ICC_CTLR`, `ICC_SRE`, `ICC_IGRPEN*`, `ICC_AP*R`, `VBAR`,
/// `RMR`) would take away the timer interrupt the WFI operations need, or the vectors.
fn gic_write_allowed(crm: u32, op2: u32) -> bool {
    matches!(
        (crm, op2),
        (11, 5..=7) | (8, 1) | (12, 1) | (11, 1) | (8, 3) | (12, 3)
    )
}

/// A value for an MSR: random, with debug enables cleared.
fn write_value(rng: &mut Rng, op0: u32, crn: u32, crm: u32, op2: u32) -> u64 {
    let mut v = rng.wide();
    if op0 == 2 && crn == 0 && (op2 == 5 || op2 == 7) {
        v &= !1; // DBGBCR<n>_EL1.E, DBGWCR<n>_EL1.E
    }
    if op0 == 2 && crn == 0 && crm == 2 && op2 == 2 {
        v &= !((1 << 15) | (1 << 13) | 1); // MDSCR_EL1.MDE, KDE, SS
    }
    v
}

/// A VA for a SYS operand (DC/IC/AT/TLBI by address): unmapped at stage 1, or this vCPU's
/// scratch through the identity map, so `DC ZVA` cannot zero anything the storm needs.
fn sys_operand(rng: &mut Rng, scratch: u64) -> u64 {
    if rng.chance(1, 2) {
        scratch + (rng.below(crate::targets::CPU_SCRATCH_SIZE / 2) & !63)
    } else {
        paging::UNMAPPED_VA + (rng.below(paging::VA_END - paging::UNMAPPED_VA) & !63)
    }
}

/// One EL1 operation: MRS, MSR or SYS/SYSL of a random encoding.
pub fn el1(rng: &mut Rng, scratch: u64) {
    let (op0, op1, crn, crm, op2) = random_encoding(rng);
    let read = rng.chance(1, 2);
    let kind = match (op0, read) {
        (1, _) => Kind::SysInsn,
        (_, true) => Kind::SysregRead,
        (_, false) => Kind::SysregWrite,
    };
    if !read && op0 != 1 && write_excluded(op0, op1, crn, crm, op2) {
        return;
    }
    // ICC_IAR0_EL1 / ICC_IAR1_EL1: a read acknowledges an interrupt that nothing would
    // ever end, raising the running priority for good (the WFI operations need the timer).
    if read
        && ((op0, op1, crn, crm, op2) == (3, 0, 12, 8, 0)
            || (op0, op1, crn, crm, op2) == (3, 0, 12, 12, 0))
    {
        return;
    }
    let value = if op0 == 1 {
        sys_operand(rng, scratch)
    } else {
        write_value(rng, op0, crn, crm, op2)
    };
    let insn = encode(read, op0, op1, crn, crm, op2);
    tally::count(kind);
    vectors::clear();
    let (pc, _) = code::run_el1(&[insn], [value, 0, 0, 0, 0, 0, 0, 0], 0);
    let f = vectors::take();
    let name = Enc(read, op0, op1, crn, crm, op2);
    if let Some(f) = f {
        if f.elr != pc {
            tally::fail(
                kind,
                format_args!(
                    "{name}: exception at {:#x}, not at the instruction {pc:#x}: ESR {:#x}",
                    f.elr, f.esr
                ),
            );
            return;
        }
    }
    let undef = f.is_some_and(|f| f.ec() == 0);
    if op0 != 1 && matches!(op1, 4..=6) && !undef {
        tally::fail(
            kind,
            format_args!(
                "{name}: EL2/EL3 register at EL1 must be UNDEFINED, got {}",
                Shown(f)
            ),
        );
        return;
    }
    if op0 == 3 && op1 == 0 && crn == 0 && (1..=7).contains(&crm) {
        if read && f.is_some() {
            tally::fail(
                kind,
                format_args!(
                    "{name}: ID space read must not fault (RAZ if unallocated), got {}",
                    Shown(f)
                ),
            );
        } else if !read && !undef {
            tally::fail(
                kind,
                format_args!(
                    "{name}: write to the ID space must be UNDEFINED, got {}",
                    Shown(f)
                ),
            );
        }
        return;
    }
    if let Some(f) = f {
        let ok = match f.ec() {
            0x00 | 0x07 | 0x19 | 0x1d => true,
            // FEAT_IDST: an unallocated register of the ID space reports EC 0x18 with the
            // access's own syndrome instead of UNDEFINED
            0x18 => {
                op0 == 3
                    && crn == 0
                    && matches!(op1, 0 | 1 | 3)
                    && f.esr & 0x1ff_ffff == iss_of(read, op0, op1, crn, crm, op2)
            }
            // a DC/IC/AT operation on an unmapped VA: a data abort (translation fault)
            0x25 => op0 == 1 && (4..=7).contains(&f.fsc()),
            _ => false,
        };
        if !ok {
            tally::fail(
                kind,
                format_args!("{name}: exception class not allowed: {}", Shown(Some(f))),
            );
        }
    }
}

/// One EL0 operation: a random encoding (its address operand unmapped or in this vCPU's
/// scratch seen from EL0, which is EL1-only: a permission fault at worst).
pub fn el0(rng: &mut Rng, scratch: u64, el0_sp: u64) {
    let (op0, op1, crn, crm, op2) = random_encoding(rng);
    let read = rng.chance(1, 2);
    let value = if op0 == 1 {
        sys_operand(rng, scratch)
    } else {
        rng.wide()
    };
    tally::count(Kind::El0Sysreg);
    vectors::clear();
    let insn = encode(read, op0, op1, crn, crm, op2);
    let (pc, _) = code::run_el0(&[insn], value, 0, 0, el0_sp);
    let Some(f) = vectors::take() else { return };
    let name = Enc(read, op0, op1, crn, crm, op2);
    let ok = f.from_el0
        && f.elr == pc
        && match f.ec() {
            0x00 | 0x07 | 0x18 | 0x19 | 0x1d => true,
            0x24 => op0 == 1 && matches!(f.fsc(), 0x04..=0x07 | 0x0c..=0x0f),
            _ => false,
        };
    if !ok {
        tally::fail(
            Kind::El0Sysreg,
            format_args!("{name} at EL0 ({pc:#x}): {}", Shown(Some(f))),
        );
    }
}

/// An encoding, printed as `MRS S3_0_C0_C1_2`.
struct Enc(bool, u32, u32, u32, u32, u32);

impl core::fmt::Display for Enc {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let Enc(read, op0, op1, crn, crm, op2) = *self;
        let m = match (op0, read) {
            (1, true) => "SYSL",
            (1, false) => "SYS",
            (_, true) => "MRS",
            (_, false) => "MSR",
        };
        write!(f, "{m} S{op0}_{op1}_C{crn}_C{crm}_{op2}")
    }
}

/// An optional exception, printed.
pub struct Shown(pub Option<Taken>);

impl core::fmt::Display for Shown {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            None => write!(f, "no exception"),
            Some(t) => write!(
                f,
                "EC {:#04x} ({}) ESR {:#x} FAR {:#x} ELR {:#x}{}",
                t.ec(),
                tally::ec_name(t.ec()),
                t.esr,
                t.far,
                t.elr,
                if t.from_el0 { " from EL0" } else { "" }
            ),
        }
    }
}
