//! HVC and SMC: random immediates, function IDs and arguments, PSCI with good and bad
//! arguments, and the hypervisor's dirty-log calls with good and bad ranges. Checked:
//! - `HVC #imm` with imm != 0 is not an SMCCC call: `NOT_SUPPORTED` (-1) in x0;
//! - an unknown function ID (not one the SMCCC, PSCI, TRNG, the standard or the vendor
//!   hypervisor services allocate) gets `NOT_SUPPORTED`, over HVC and over SMC;
//! - HVC and SMC never raise an exception at EL1; at EL0 both are UNDEFINED;
//! - PSCI and dirty-log calls return one of the codes their specification allows for the
//!   arguments given.
//!
//! Calls that would end the VM or start a vCPU at a random address (`CPU_OFF`, `CPU_ON`,
//! `SYSTEM_*`, `MIGRATE`) and the dirty-log calls (their buffer is written) are never made
//! with random arguments; [`psci`] and [`dirty_log`] make them with chosen ones.

use crate::code;
use crate::ops::sysreg::Shown;
use crate::ops::Ctx;
use crate::rng::Rng;
use crate::tally::{self, Kind};
use crate::vectors;

/// `NOT_SUPPORTED`.
const NOT_SUPPORTED: u64 = u64::MAX;
/// PSCI return codes.
const SUCCESS: i64 = 0;
const INVALID_PARAMETERS: i64 = -2;
const DENIED: i64 = -3;
const ALREADY_ON: i64 = -4;
const ON_PENDING: i64 = -5;
const INVALID_ADDRESS: i64 = -9;

/// `HVC #imm`.
fn hvc(imm: u16) -> u32 {
    0xd400_0002 | (u32::from(imm) << 5)
}

/// `SMC #imm`.
fn smc(imm: u16) -> u32 {
    0xd400_0003 | (u32::from(imm) << 5)
}

/// True for function IDs the storm must not call with random arguments.
fn dangerous(fid: u32) -> bool {
    let f = fid & !(1 << 30); // SMC32 and SMC64 alike
    (0x8400_0000..=0x8400_001f).contains(&f) || (0x8600_0003..=0x8600_0005).contains(&f)
}

/// True for function IDs some service allocates (their answers are not checked here).
fn allocated(fid: u32) -> bool {
    if fid & (1 << 31) == 0 || (fid >> 16) & 0xff != 0 {
        return false; // yielding calls and fast calls with reserved bits 23:16 set
    }
    let owner = (fid >> 24) & 0x3f;
    let func = fid & 0xffff;
    match owner {
        0 => matches!(func, 0..=2 | 0x3fff | 0x7fff | 0x8000),
        4 => func <= 0x1f || (0x50..=0x5f).contains(&func),
        5 => func <= 0x2f,
        6 => func <= 0xff || func >= 0xff00,
        _ => false,
    }
}

/// A random function ID: anywhere, or in one of the owners' ranges.
fn random_fid(rng: &mut Rng) -> u64 {
    loop {
        let low: u32 = match rng.below(4) {
            0 => rng.next() as u32,
            1 => 0x8000_0000 | ((rng.below(64) as u32) << 24) | rng.below(0x100) as u32,
            2 => {
                rng.pick(&[
                    0x8000_0000u32,
                    0x8400_0000,
                    0x8500_0000,
                    0x8600_0000,
                    0xc400_0000,
                    0xc600_0000,
                ]) | rng.below(0x20) as u32
            }
            _ => 0x8000_0000 | (rng.next() as u32 & 0x7fff_ffff),
        };
        if dangerous(low) {
            continue;
        }
        let high = if rng.chance(1, 4) {
            rng.next() << 32
        } else {
            0
        };
        return high | u64::from(low);
    }
}

fn args(rng: &mut Rng, fid: u64) -> [u64; 8] {
    let mut a = [fid, 0, 0, 0, 0, 0, 0, 0];
    for x in a.iter_mut().skip(1) {
        *x = rng.wide();
    }
    a
}

/// `HVC #imm` (imm != 0) at EL1: x0 = NOT_SUPPORTED.
pub fn hvc_imm(ctx: &mut Ctx) {
    let imm = 1 + ctx.rng.below(0xffff) as u16;
    let x0 = ctx.rng.next();
    let a = args(&mut ctx.rng, x0);
    tally::count(Kind::HvcImm);
    vectors::clear();
    let (_, out) = code::run_el1(&[hvc(imm)], a, 0);
    let f = vectors::take();
    if f.is_some() || out.x[0] != NOT_SUPPORTED {
        tally::fail(
            Kind::HvcImm,
            format_args!(
                "HVC #{imm:#x} x0={:#x}: x0 {:#x}, {}",
                a[0],
                out.x[0],
                Shown(f)
            ),
        );
    }
}

/// The hypervisor's `HV_EXIT_COUNT` (x1 = an exit reason's index).
const HV_EXIT_COUNT: u64 = 0x8600_0002;
/// Far more exit reasons than the hypervisor counts.
const NO_SUCH_EXIT_REASON: u64 = 1 << 16;

/// An SMCCC call with a random function ID over HVC #0 or SMC #imm (sometimes
/// `HV_EXIT_COUNT` with an index out of range: NOT_SUPPORTED).
pub fn smccc(ctx: &mut Ctx, over_smc: bool) {
    let fid = if ctx.rng.chance(1, 16) {
        HV_EXIT_COUNT
    } else {
        random_fid(&mut ctx.rng)
    };
    let mut a = args(&mut ctx.rng, fid);
    if fid == HV_EXIT_COUNT {
        a[1] = NO_SUCH_EXIT_REASON + ctx.rng.below(u64::MAX - NO_SUCH_EXIT_REASON);
    }
    let (insn, kind) = if over_smc {
        let imm = if ctx.rng.chance(1, 2) {
            0
        } else {
            ctx.rng.next() as u16
        };
        (smc(imm), Kind::Smc)
    } else {
        (hvc(0), Kind::Smccc)
    };
    tally::count(kind);
    vectors::clear();
    let (_, out) = code::run_el1(&[insn], a, 0);
    let f = vectors::take();
    if f.is_some() {
        tally::fail(kind, format_args!("fid {fid:#x}: {}", Shown(f)));
    } else if (fid == HV_EXIT_COUNT || !allocated(fid as u32)) && out.x[0] != NOT_SUPPORTED {
        tally::fail(
            kind,
            format_args!(
                "unallocated fid {fid:#x}: x0 {:#x}, not NOT_SUPPORTED",
                out.x[0]
            ),
        );
    }
}

/// HVC, SMC, WFI or WFE at EL0: HVC and SMC are UNDEFINED there.
pub fn el0_misc(ctx: &mut Ctx) {
    let which = ctx.rng.below(4);
    let insn = match which {
        0 => hvc(ctx.rng.next() as u16),
        1 => smc(ctx.rng.next() as u16),
        2 => 0xd503_207f, // WFI
        _ => 0xd503_205f, // WFE
    };
    if which >= 2 {
        crate::ops::wfx::prepare_wakeup(ctx);
    }
    let fid = random_fid(&mut ctx.rng);
    tally::count(Kind::El0Misc);
    vectors::clear();
    let (pc, _) = code::run_el0(&[insn], fid, 0, 0, ctx.el0_sp);
    let f = vectors::take();
    if which >= 2 {
        crate::ops::wfx::after_wakeup();
    }
    let ok = match (which, f) {
        (0 | 1, Some(f)) => f.ec() == 0 && f.from_el0 && f.elr == pc,
        (0 | 1, None) => false,
        // WFx at EL0: completes, or traps to EL1 (SCTLR_EL1.nTWI/nTWE = 0)
        (_, None) => true,
        (_, Some(f)) => f.ec() == 0x01 && f.from_el0 && f.elr == pc,
    };
    if !ok {
        tally::fail(
            Kind::El0Misc,
            format_args!("insn {insn:#010x} at EL0: {}", Shown(f)),
        );
    }
}

/// One PSCI call with chosen arguments, checked against the codes PSCI allows.
pub fn psci(ctx: &mut Ctx) {
    let rng = &mut ctx.rng;
    let t = ctx.targets;
    let me = guest_rt::smp::this_mpidr();
    let other = t.mpidrs[..t.ncpus]
        .iter()
        .copied()
        .find(|&m| m != me)
        .unwrap_or(me);
    let absent = loop {
        let m = rng.next() & 0xff_00ff_ffff;
        if !t.mpidrs[..t.ncpus].contains(&m) {
            break m;
        }
    };
    let outside = t.outside(rng);
    let (name, a, allowed): (&str, [u64; 4], &[i64]) = match rng.below(9) {
        0 => (
            "CPU_ON(absent)",
            [0xc400_0003, absent, t.ram + 0x1000, 0],
            &[INVALID_PARAMETERS],
        ),
        1 => (
            "CPU_ON(self)",
            [0xc400_0003, me, t.ram + 0x1000, 0],
            &[ALREADY_ON],
        ),
        2 => (
            "CPU_ON(other, entry outside RAM)",
            [0xc400_0003, other, outside, 0],
            &[INVALID_ADDRESS, ALREADY_ON, ON_PENDING],
        ),
        3 => (
            "AFFINITY_INFO(absent)",
            [0xc400_0004, absent, 0, 0],
            &[INVALID_PARAMETERS],
        ),
        4 => (
            "AFFINITY_INFO(other)",
            [0xc400_0004, other, 0, 0],
            &[0, 1, 2],
        ),
        5 => (
            "AFFINITY_INFO(self, bad level)",
            [0xc400_0004, me, 1 + rng.below(u64::MAX - 1), 0],
            &[INVALID_PARAMETERS, 0],
        ),
        6 => (
            "CPU_SUSPEND(random)",
            [0xc400_0001, rng.wide(), t.ram + 0x1000, 0],
            &[SUCCESS, INVALID_PARAMETERS, DENIED],
        ),
        7 => (
            "PSCI_VERSION",
            [0x8400_0000, rng.next(), 0, 0],
            &[0x1_0000, 0x1_0001, 0x1_0002, 0x1_0003],
        ),
        _ => (
            "PSCI_FEATURES(random)",
            [0x8400_000a, random_fid(rng) & 0xffff_ffff, 0, 0],
            &[-1, 0, 1, 2, 3],
        ),
    };
    tally::count(Kind::Psci);
    vectors::clear();
    let (_, out) = code::run_el1(&[hvc(0)], [a[0], a[1], a[2], a[3], 0, 0, 0, 0], 0);
    let f = vectors::take();
    let r = out.x[0] as i64;
    if f.is_some() || !allowed.contains(&r) {
        tally::fail(
            Kind::Psci,
            format_args!(
                "{name} {:#x?}: returned {r}, allowed {allowed:?}; {}",
                &a[1..3],
                Shown(f)
            ),
        );
    }
}

/// Dirty-log calls: START over good and bad ranges, COLLECT into good and bad buffers
/// (a good one is this vCPU's scratch), STOP.
pub fn dirty_log(ctx: &mut Ctx) {
    let rng = &mut ctx.rng;
    let t = ctx.targets;
    let ram_len = t.ram_end - t.ram;
    let scratch = t.scratch(ctx.cpu) + crate::targets::CPU_SCRATCH_SIZE / 2;
    let page = |rng: &mut Rng| t.ram + (rng.below(ram_len >> 12) << 12);
    let (name, a, allowed): (&str, [u64; 3], &[i64]) = match rng.below(10) {
        0 | 1 => {
            let start = page(rng);
            let len = (rng.below((t.ram_end - start) >> 12) + 1) << 12;
            ("START(good)", [0xc600_0003, start, len], &[0, DENIED])
        }
        2 => (
            "START(unaligned)",
            [0xc600_0003, page(rng) + 1 + rng.below(0xffe), 0x1000],
            &[INVALID_PARAMETERS],
        ),
        3 => (
            "START(zero length)",
            [0xc600_0003, page(rng), 0],
            &[INVALID_PARAMETERS],
        ),
        4 => (
            "START(outside RAM)",
            [
                0xc600_0003,
                t.outside(rng) & !0xfff,
                (1 + rng.below(64)) << 12,
            ],
            &[INVALID_PARAMETERS],
        ),
        5 => (
            "START(wrapping)",
            [0xc600_0003, page(rng), 0u64.wrapping_sub(0x1000)],
            &[INVALID_PARAMETERS],
        ),
        6 => (
            "START(past RAM end)",
            [0xc600_0003, t.ram_end - 0x1000, 0x2000],
            &[INVALID_PARAMETERS],
        ),
        7 => (
            "COLLECT(good)",
            [0xc600_0004, scratch, crate::targets::CPU_SCRATCH_SIZE / 2],
            &[],
        ),
        8 => {
            let (buf, size) = match rng.below(4) {
                0 => (t.outside(rng), 1 << 20),
                1 => (scratch, rng.below(8)),
                2 => (t.ram_end - 4, 1 << 20),
                _ => (u64::MAX - 7, 64),
            };
            (
                "COLLECT(bad buffer)",
                [0xc600_0004, buf, size],
                &[INVALID_PARAMETERS, DENIED],
            )
        }
        _ => ("STOP", [0xc600_0005, rng.next(), rng.next()], &[]),
    };
    tally::count(Kind::DirtyLog);
    vectors::clear();
    let (_, out) = code::run_el1(&[hvc(0)], [a[0], a[1], a[2], 0, 0, 0, 0, 0], 0);
    let f = vectors::take();
    let r = out.x[0] as i64;
    // COLLECT(good) and STOP return a page count or DENIED (no log running)
    let ok = if allowed.is_empty() {
        r >= 0 && r as u64 <= ram_len >> 12 || r == DENIED
    } else {
        allowed.contains(&r)
    };
    if f.is_some() || !ok {
        tally::fail(
            Kind::DirtyLog,
            format_args!(
                "{name} [{:#x}, +{:#x}): returned {r}, allowed {allowed:?}; {}",
                a[1],
                a[2],
                Shown(f)
            ),
        );
    }
}
