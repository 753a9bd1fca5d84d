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
