//! The storm's operations and the generator that picks them.

pub mod calls;
pub mod fetch;
pub mod forms;
pub mod mem;
pub mod sysreg;
pub mod virtq;
pub mod wfx;

use core::arch::asm;

use guest_rt::platform::GicInfo;

use crate::rng::Rng;
use crate::tally::{self, Kind};
use crate::targets::Targets;
use crate::vectors;

/// What one vCPU's operations need.
pub struct Ctx<'a> {
    /// This vCPU's random stream.
    pub rng: Rng,
    /// This vCPU's index.
    pub cpu: usize,
    /// The VM's layout.
    pub targets: &'a Targets,
    /// The GIC.
    pub gic: GicInfo,
    /// The virtual timer's PPI.
    pub timer_ppi: u32,
    /// LSE atomics are implemented (`ID_AA64ISAR0_EL1.Atomic` >= 2).
    pub lse: bool,
    /// `DC ZVA` is allowed and zeroes 64 bytes (`DCZID_EL0` = 4).
    pub zva64: bool,
    /// SP for EL0 operations (an EL0 alias VA).
    pub el0_sp: u64,
    /// This vCPU's page of `RET`s (identity IPA).
    pub ret_page: u64,
    /// Print each of the first `trace` operations before running it (`trace=N`).
    pub trace: u64,
}

/// Weights of the operations, in the order of [`run_one`]'s match (sum 1000).
const WEIGHTS: [(u64, Op); 17] = [
    (130, Op::SysregEl1),
    (330, Op::Mem),
    (40, Op::GicWrite),
    (30, Op::Fetch),
    (30, Op::HvcImm),
    (60, Op::Smccc),
    (30, Op::Smc),
    (40, Op::Psci),
    (10, Op::CpuRace),
    (30, Op::DirtyLog),
    (20, Op::Virtq),
    (8, Op::Wfi),
    (12, Op::Wfe),
    (80, Op::El0Sysreg),
    (120, Op::El0Mem),
    (20, Op::El0Misc),
    (10, Op::Sysreg2),
];

#[derive(Clone, Copy, Debug)]
enum Op {
    SysregEl1,
    Sysreg2,
    Mem,
    GicWrite,
    Fetch,
    HvcImm,
    Smccc,
    Smc,
    Psci,
    CpuRace,
    DirtyLog,
    Virtq,
    Wfi,
    Wfe,
    El0Sysreg,
    El0Mem,
    El0Misc,
}

/// Runs one randomly chosen operation; `race` is the CPU_ON/OFF race (vCPU 0 only).
pub fn run_one(ctx: &mut Ctx, race: &mut dyn FnMut(&mut Ctx)) {
    let mut pick = ctx.rng.below(1000);
    let mut op = Op::Mem;
    for (w, o) in WEIGHTS {
        if pick < w {
            op = o;
            break;
        }
        pick -= w;
    }
    let scratch = ctx.targets.scratch(ctx.cpu);
    if ctx.trace > 0 {
        ctx.trace -= 1;
        guest_rt::println!(
            "storm: trace cpu {} op {} {:?}",
            ctx.cpu,
            tally::total(),
            op
        );
    }
    match op {
        Op::SysregEl1 | Op::Sysreg2 => sysreg::el1(&mut ctx.rng, scratch),
        Op::Mem => mem::op(ctx, false, false),
        Op::GicWrite => mem::op(ctx, false, true),
        Op::Fetch => fetch::op(ctx),
        Op::HvcImm => calls::hvc_imm(ctx),
        Op::Smccc => calls::smccc(ctx, false),
        Op::Smc => calls::smccc(ctx, true),
        Op::Psci => calls::psci(ctx),
        Op::CpuRace => race(ctx),
        Op::DirtyLog => calls::dirty_log(ctx),
        Op::Virtq => virtq::op(ctx),
        Op::Wfi => wfx::op(ctx, false),
        Op::Wfe => wfx::op(ctx, true),
        Op::El0Sysreg => sysreg::el0(&mut ctx.rng, scratch, ctx.el0_sp),
        Op::El0Mem => mem::op(ctx, true, false),
        Op::El0Misc => calls::el0_misc(ctx),
    }
}

const _: () = {
    let mut sum = 0;
    let mut i = 0;
    while i < WEIGHTS.len() {
        sum += WEIGHTS[i].0;
        i += 1;
    }
    assert!(sum == 1000);
};

/// A 32-bit device read through the identity map; `None` if it aborted.
pub fn dev_read32(addr: u64) -> Option<u32> {
    let v: u32;
    vectors::clear();
    // SAFETY: a single load from a device register in the identity-mapped device
    // gigabyte; an abort is caught by the storm's vectors, which skip the load.
    unsafe {
        asm!("mov {v:w}, #0", "ldr {v:w}, [{a}]", v = out(reg) v, a = in(reg) addr, options(nostack))
    };
    match vectors::take() {
        None => Some(v),
        Some(f) => {
            check_device_abort(f, addr);
            None
        }
    }
}

/// A 32-bit device write through the identity map; false if it aborted.
pub fn dev_write32(addr: u64, value: u32) -> bool {
    vectors::clear();
    // SAFETY: as in `dev_read32`, a single store to a device register.
    unsafe { asm!("str {v:w}, [{a}]", v = in(reg) value, a = in(reg) addr, options(nostack)) };
    match vectors::take() {
        None => true,
        Some(f) => {
            check_device_abort(f, addr);
            false
        }
    }
}

/// A device register access may only abort with a synchronous external abort at `addr`.
fn check_device_abort(f: vectors::Taken, addr: u64) {
    if !(f.ec() == 0x25 && f.fsc() == 0x10 && (f.esr & (1 << 10) != 0 || f.far == addr)) {
        tally::fail(
            Kind::Virtq,
            format_args!("device register {addr:#x}: {}", sysreg::Shown(Some(f))),
        );
    }
}
