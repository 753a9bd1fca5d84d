//! The register file: current registers, banks, CPSR/SPSR and IT state.

use super::modes::{psr, Mode};
use super::Cpu;

impl Cpu {
    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Reads a register of the current mode (R15 is the address of the next instruction
    /// to execute between steps).
    pub fn reg(&self, n: usize) -> u32 {
        self.r[n]
    }

    /// Writes a register of the current mode (R15 sets the next instruction address).
    pub fn set_reg(&mut self, n: usize, v: u32) {
        self.r[n] = v;
    }

    /// Sets the PC (address of the next instruction).
    pub fn set_pc(&mut self, pc: u32) {
        self.r[15] = pc;
    }

    /// The full CPSR, with the IT bits merged in.
    pub fn cpsr(&self) -> u32 {
        let it = self.it as u32;
        (self.cpsr & !psr::IT_MASK) | (it & 3) << 25 | (it >> 2) << 10
    }

    /// Whether the CPU is in Thumb state.
    pub fn thumb(&self) -> bool {
        self.cpsr & psr::T != 0
    }

    /// Writes the whole CPSR as an exception return does (mode switch, IT state).
    pub fn set_cpsr(&mut self, v: u32) {
        let mode = Mode::from_bits(v).unwrap_or(self.mode);
        self.switch_mode(mode);
        self.cpsr = (v & !psr::IT_MASK & !psr::M) | mode as u32;
        self.it = (((v >> 25) & 3) | ((v >> 10) & 0x3f) << 2) as u8;
    }

    /// SPSR of the current mode (`None` in usr/sys).
    pub fn spsr(&self) -> Option<u32> {
        self.mode.has_spsr().then(|| self.spsr[self.mode.bank()])
    }

    /// Writes the SPSR of the current mode (ignored in usr/sys: UNPREDICTABLE).
    pub fn set_spsr(&mut self, v: u32) {
        if self.mode.has_spsr() {
            self.spsr[self.mode.bank()] = v;
        }
    }

    /// Switches to `new`, swapping the banked registers.
    pub fn switch_mode(&mut self, new: Mode) {
        let old = self.mode;
        if old == new {
            return;
        }
        let ob = old.bank();
        let nb = new.bank();
        if ob != nb {
            self.bank_sp_lr[ob] = [self.r[13], self.r[14]];
            [self.r[13], self.r[14]] = self.bank_sp_lr[nb];
        }
        let of = (old == Mode::Fiq) as usize;
        let nf = (new == Mode::Fiq) as usize;
        if of != nf {
            self.bank_r8_12[of].copy_from_slice(&self.r[8..13]);
            self.r[8..13].copy_from_slice(&self.bank_r8_12[nf]);
        }
        self.mode = new;
        self.cpsr = (self.cpsr & !psr::M) | new as u32;
    }

    /// Reads the User-mode copy of register `n` (for `LDM/STM ^`).
    pub fn user_reg(&self, n: usize) -> u32 {
        match n {
            8..=12 if self.mode == Mode::Fiq => self.bank_r8_12[0][n - 8],
            13 | 14 if self.mode.bank() != 0 => self.bank_sp_lr[0][n - 13],
            _ => self.r[n],
        }
    }

    /// Writes the User-mode copy of register `n`.
    pub fn set_user_reg(&mut self, n: usize, v: u32) {
        match n {
            8..=12 if self.mode == Mode::Fiq => self.bank_r8_12[0][n - 8] = v,
            13 | 14 if self.mode.bank() != 0 => self.bank_sp_lr[0][n - 13] = v,
            _ => self.r[n] = v,
        }
    }

    /// Register `n` (8..=14) of the bank for `mode`, as seen from any other mode.
    pub fn banked_reg(&self, mode: Mode, n: usize) -> u32 {
        if mode == self.mode || (mode.bank() == 0 && self.mode.bank() == 0 && n >= 13) {
            return self.r[n];
        }
        match n {
            8..=12 => {
                let want_fiq = mode == Mode::Fiq;
                if want_fiq == (self.mode == Mode::Fiq) {
                    self.r[n]
                } else {
                    self.bank_r8_12[want_fiq as usize][n - 8]
                }
            }
            _ => {
                if mode.bank() == self.mode.bank() {
                    self.r[n]
                } else {
                    self.bank_sp_lr[mode.bank()][n - 13]
                }
            }
        }
    }

    /// Writes register `n` (8..=14) of the bank for `mode`.
    pub fn set_banked_reg(&mut self, mode: Mode, n: usize, v: u32) {
        match n {
            8..=12 => {
                let want_fiq = mode == Mode::Fiq;
                if want_fiq == (self.mode == Mode::Fiq) {
                    self.r[n] = v
                } else {
                    self.bank_r8_12[want_fiq as usize][n - 8] = v
                }
            }
            _ => {
                if mode.bank() == self.mode.bank() {
                    self.r[n] = v
                } else {
                    self.bank_sp_lr[mode.bank()][n - 13] = v
                }
            }
        }
    }

    /// SPSR of a given mode.
    pub fn banked_spsr(&self, mode: Mode) -> u32 {
        self.spsr[mode.bank()]
    }

    /// Sets the SPSR of a given mode.
    pub fn set_banked_spsr(&mut self, mode: Mode, v: u32) {
        self.spsr[mode.bank()] = v;
    }

    pub(crate) fn flag(&self, f: u32) -> bool {
        self.cpsr & f != 0
    }

    pub(crate) fn set_nz(&mut self, v: u32) {
        self.cpsr =
            (self.cpsr & !(psr::N | psr::Z)) | (v & psr::N) | if v == 0 { psr::Z } else { 0 };
    }

    pub(crate) fn set_flag(&mut self, f: u32, on: bool) {
        if on {
            self.cpsr |= f
        } else {
            self.cpsr &= !f
        }
    }

    /// `ConditionPassed` for condition `c`.
    pub fn cond_passed(&self, c: u8) -> bool {
        let n = self.flag(psr::N);
        let z = self.flag(psr::Z);
        let cf = self.flag(psr::C);
        let v = self.flag(psr::V);
        let r = match c >> 1 {
            0 => z,
            1 => cf,
            2 => n,
            3 => v,
            4 => cf && !z,
            5 => n == v,
            6 => !z && n == v,
            _ => return true,
        };
        if c & 1 == 1 {
            !r
        } else {
            r
        }
    }

    pub(crate) fn in_it(&self) -> bool {
        self.it & 0xf != 0
    }

    pub(crate) fn advance_it(&mut self) {
        if self.it & 7 == 0 {
            self.it = 0;
        } else {
            self.it = (self.it & 0xe0) | ((self.it << 1) & 0x1f);
        }
    }
}
