//! What inline exception entries are translated for ([`ExcAssume`]): state that changes
//! rarely (the host's reporting choices, `SCTLR.TE`/`EE`, the vector base), fixed at
//! translation time so that the generated code need not load and test it. The engine
//! flushes the code cache when it changes (checked at every entry into the code cache;
//! translated code leaves after any `SCTLR` or `VBAR` write).

use crate::cpu::Cpu;

/// Inline exception entries' translation-time assumptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExcAssume {
    /// `REPORT_*`, `TE` and `EE` bits.
    pub flags: u8,
    /// The vector base (`VBAR`, or `0xffff0000` with `SCTLR.V`).
    pub vector_base: u32,
}

impl ExcAssume {
    /// The host wants `SVC` reported (`Cpu::set_exit_on_svc`).
    pub const REPORT_SVC: u8 = 1;
    /// The host wants every exception reported (`Cpu::set_exit_on_exception`).
    pub const REPORT_ALL: u8 = 2;
    /// `SCTLR.TE`: exceptions are taken to Thumb.
    pub const TE: u8 = 4;
    /// `SCTLR.EE`: exceptions set `CPSR.E` (big-endian data, not translated).
    pub const EE: u8 = 8;

    /// The assumptions that hold for `cpu` now.
    pub fn of(cpu: &Cpu) -> ExcAssume {
        let sctlr = cpu.cp15.sctlr;
        let flags = (cpu.exit_on_svc as u8 * Self::REPORT_SVC)
            | (cpu.exit_on_exception as u8 * Self::REPORT_ALL)
            | ((sctlr >> 30 & 1 != 0) as u8 * Self::TE)
            | ((sctlr >> 25 & 1 != 0) as u8 * Self::EE);
        ExcAssume {
            flags,
            vector_base: cpu.vector_base(),
        }
    }

    /// Whether exceptions are taken to Thumb.
    pub fn te(self) -> bool {
        self.flags & Self::TE != 0
    }
}

/// What the CPU looked like when a block was translated, for inline exception entries
/// and returns to specialise on: the mode, its `SPSR` and `LR`. Unlike [`ExcAssume`]
/// this is a guess, not an assumption: the code checks it at run time (a few host
/// instructions) and falls back to the general sequence when it does not hold, so a
/// stale hint costs time, never correctness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExcHint {
    /// `CPSR.M` (0: no hint, as for blocks translated without a CPU).
    pub mode: u8,
    /// The mode's `SPSR` (0 in User and System mode).
    pub spsr: u32,
    /// The mode's `R14`.
    pub lr: u32,
}

impl ExcHint {
    /// The hint for a block translated at `cpu`'s current state.
    pub fn of(cpu: &Cpu) -> ExcHint {
        ExcHint {
            mode: cpu.mode as u8,
            spsr: cpu.spsr().unwrap_or(0),
            lr: cpu.r[14],
        }
    }
}
