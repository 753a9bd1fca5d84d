//! Exit attribution under this workspace's hypervisor: the vendor hypercall `HV_EXIT_COUNT`
//! (SMCCC owner 6, function 2; x1 = reason index, x0 = the calling vCPU's exits of that
//! reason so far, the call itself included) read before and after a span of work, outside
//! any timed region, gives the exits the span cost. Natively QEMU's PSCI firmware answers
//! NOT_SUPPORTED and [`snapshot`] returns `None`.

use core::arch::asm;
use core::fmt;

/// The hypervisor's exit-count call.
pub const HV_EXIT_COUNT: u64 = 0x8600_0002;
/// SMCCC NOT_SUPPORTED (-1).
const NOT_SUPPORTED: u64 = u64::MAX;
/// Exit reasons in the hypervisor's order (`ExitReason` in `crates/hypervisor/src/stats.rs`).
pub const REASONS: [&str; 11] = [
    "hvc",
    "smc",
    "sysreg",
    "mmio",
    "dabt-injected",
    "iabt",
    "wfx",
    "fp",
    "irq",
    "other",
    "dirty",
];
/// Index of `hvc` in [`REASONS`].
const HVC: usize = 0;

/// This vCPU's exit counters at one moment, or `None` without the hypercall (native).
pub type Snapshot = Option<[u64; REASONS.len()]>;

/// Exit counts of a span: per reason, the after-minus-before difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delta([i64; REASONS.len()]);

/// `HV_EXIT_COUNT` for reason `index`.
fn count(index: usize) -> u64 {
    let x0: u64;
    // SAFETY: the call only reads the hypervisor's counters (natively QEMU answers
    // NOT_SUPPORTED); clobbers as for any SMCCC call.
    unsafe {
        asm!(
            "hvc #0",
            inout("x0") HV_EXIT_COUNT => x0,
            inout("x1") index as u64 => _,
            clobber_abi("C"),
            options(nostack)
        )
    };
    x0
}

/// Reads every counter (one HVC exit each, counted by the call itself).
#[inline(never)]
pub fn snapshot() -> Snapshot {
    let mut c = [0u64; REASONS.len()];
    for (i, v) in c.iter_mut().enumerate() {
        *v = count(i);
        if *v == NOT_SUPPORTED {
            return None;
        }
    }
    Some(c)
}

/// Exits between two snapshots, without the HVC exits of the reading: between reading one
/// reason before and the same reason after there are exactly `REASONS.len()` reads.
pub fn delta(before: Snapshot, after: Snapshot) -> Option<Delta> {
    let (b, a) = (before?, after?);
    let mut d = [0i64; REASONS.len()];
    for (i, v) in d.iter_mut().enumerate() {
        *v = a[i] as i64 - b[i] as i64;
    }
    d[HVC] -= REASONS.len() as i64;
    Some(Delta(d))
}

impl Delta {
    /// `self - other`, per reason.
    pub fn minus(self, other: Delta) -> Delta {
        let mut d = self.0;
        for (a, b) in d.iter_mut().zip(other.0) {
            *a -= b;
        }
        Delta(d)
    }

    /// The count of reason `name` (0 for an unknown name).
    pub fn get(&self, name: &str) -> i64 {
        REASONS
            .iter()
            .position(|r| *r == name)
            .map_or(0, |i| self.0[i])
    }

    /// These exits divided by `n` operations, displayed as ` reason=x.yy ...`: reasons that
    /// do not round to 0.00 (two decimals, half away from zero), or ` 0` when there are none.
    pub fn per_op(self, n: u64) -> PerOp {
        PerOp(self, n.max(1))
    }
}

/// A [`Delta`] divided by an operation count; see [`Delta::per_op`].
pub struct PerOp(Delta, u64);

impl fmt::Display for PerOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.1 as i64;
        let mut any = false;
        for (name, &v) in REASONS.iter().zip(&self.0 .0) {
            // Hundredths, rounded half away from zero; reasons that round to 0 are left out.
            let h = (v.abs() * 100 + n / 2) / n;
            if h == 0 {
                continue;
            }
            any = true;
            let sign = if v < 0 { "-" } else { "" };
            write!(f, " {name}={sign}{}.{:02}", h / 100, h % 100)?;
        }
        if !any {
            f.write_str(" 0")?;
        }
        Ok(())
    }
}
