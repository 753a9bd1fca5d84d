//! Exit counters per reason (like `kvm_stat`), so every cost can be explained by exits; a
//! guest reads its own through the vendor call `HV_EXIT_COUNT` (the order of [`ExitReason`]).

use core::fmt;

/// Why the guest exited, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum ExitReason {
    /// HVC (SMCCC/PSCI calls).
    Hvc,
    /// SMC trapped by `HCR_EL2.TSC`.
    Smc,
    /// Trapped system-register access.
    SysReg,
    /// Data abort routed to an emulated device.
    Mmio,
    /// Data abort answered with an external abort.
    DataAbortInjected,
    /// Instruction abort.
    InstructionAbort,
    /// WFI/WFE.
    Wfx,
    /// First FP/SIMD use (lazy switch).
    FpTrap,
    /// Physical IRQ/FIQ.
    Irq,
    /// Anything else (UNDEFINED injected).
    Other,
    /// A write to a page write-protected for dirty logging (marked dirty, write enabled,
    /// the guest retries the instruction).
    DirtyLog,
}

const NAMES: [&str; 11] = [
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

/// Counters, one per [`ExitReason`].
#[derive(Debug, Clone, Default)]
pub struct ExitStats {
    counts: [u64; 11],
}

impl ExitStats {
    /// Counts one exit.
    pub fn count(&mut self, r: ExitReason) {
        self.counts[r as usize] += 1;
    }

    /// Adds another set of counters.
    pub fn add(&mut self, other: &ExitStats) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    /// The count of the reason with index `index` (the order of [`ExitReason`]), or `None`
    /// for an index past the last reason.
    pub fn get(&self, index: usize) -> Option<u64> {
        self.counts.get(index).copied()
    }

    /// Total exits.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

impl fmt::Display for ExitStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "total={}", self.total())?;
        for (name, n) in NAMES.iter().zip(self.counts) {
            if n != 0 {
                write!(f, " {name}={n}")?;
            }
        }
        Ok(())
    }
}
