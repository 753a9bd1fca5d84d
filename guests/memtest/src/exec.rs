//! Running one load/store instruction with fixed registers x1..x4 and catching its fault.

use guest_rt::fault::Fault;

/// Value a load destination holds before the instruction (kept if the load aborts).
pub const SENTINEL: u64 = 0x5a5a_5a5a_5a5a_5a5a;

/// x1 (base), x2, x3 (data), x4 (index) before or after the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    /// x1: base register.
    pub x1: u64,
    /// x2: first transfer register.
    pub x2: u64,
    /// x3: second transfer register.
    pub x3: u64,
    /// x4: index register.
    pub x4: u64,
}

impl Regs {
    /// Base `x1`, transfer registers holding [`SENTINEL`], index 0.
    pub const fn base(x1: u64) -> Regs {
        Regs {
            x1,
            x2: SENTINEL,
            x3: SENTINEL,
            x4: 0,
        }
    }
}

/// Runs one instruction (a string literal using x1..x4) with the registers from `$regs`,
/// a fault expected; evaluates to `(Regs after, Option<Fault>)`.
macro_rules! exec {
    ($insn:literal, $regs:expr) => {{
        let mut r: $crate::exec::Regs = $regs;
        let ((), f) = guest_rt::fault::catch(|| {
            // SAFETY: one load/store on x1..x4 to the PL011 page (or its alias), which has no
            // side effects beyond the registers the checks look at; a fault is expected
            // (fault::catch), and a faulting instruction is skipped with its outputs
            // unchanged.
            unsafe {
                core::arch::asm!(
                    $insn,
                    inout("x1") r.x1,
                    inout("x2") r.x2,
                    inout("x3") r.x3,
                    inout("x4") r.x4,
                    options(nostack),
                )
            }
        });
        (r, f)
    }};
}
pub(crate) use exec;

/// Describes an optional fault for a report line.
pub struct ShowFault(pub Option<Fault>);

impl core::fmt::Display for ShowFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(fault) => write!(f, "fault: {fault}"),
            None => f.write_str("no fault"),
        }
    }
}
