//! The VFP/Advanced SIMD register file and its system registers: D0-D31 (Q0-Q15 and
//! S0-S31 alias them), FPSCR, FPEXC, the ID registers VMRS reads (FPSID, MVFR0, MVFR1),
//! and the access checks of `CPACR.cp10/cp11/ASEDIS` and `FPEXC.EN`.

use super::{Cpu, Exception, Mode};

/// FPSCR fields (ARM ARM B6.1.41).
pub mod fpscr {
    /// Condition flags of the last VCMP (N, Z, C, V in bits 31:28).
    pub const NZCV: u32 = 0xf000_0000;
    /// Cumulative saturation (Advanced SIMD saturating instructions).
    pub const QC: u32 = 1 << 27;
    /// Alternative half-precision format.
    pub const AHP: u32 = 1 << 26;
    /// Default NaN mode.
    pub const DN: u32 = 1 << 25;
    /// Flush-to-zero mode.
    pub const FZ: u32 = 1 << 24;
    /// Rounding mode field shift (bits 23:22: RN, RP, RM, RZ).
    pub const RMODE_SHIFT: u32 = 22;
    /// Input Denormal cumulative flag.
    pub const IDC: u32 = 1 << 7;
    /// Inexact cumulative flag.
    pub const IXC: u32 = 1 << 4;
    /// Underflow cumulative flag.
    pub const UFC: u32 = 1 << 3;
    /// Overflow cumulative flag.
    pub const OFC: u32 = 1 << 2;
    /// Division by Zero cumulative flag.
    pub const DZC: u32 = 1 << 1;
    /// Invalid Operation cumulative flag.
    pub const IOC: u32 = 1 << 0;
    /// Len (bits 18:16) and Stride (bits 21:20). A Cortex-A15 has no short vectors
    /// (`MVFR0.FPShVec` = 0): the fields hold what is written, and a VFP data-processing
    /// instruction that would be vectorised while they are not zero is UNDEFINED.
    pub const LEN_STRIDE: u32 = 0x0037_0000;
    /// The bits a Cortex-A15 implements (the trap enables are RAZ/WI: no trapping).
    pub const WRITABLE: u32 = 0xffc0_009f | LEN_STRIDE;
}

/// `FPEXC.EN`: the VFP/Advanced SIMD unit is enabled.
pub const FPEXC_EN: u32 = 1 << 30;
/// `FPEXC` bits a Cortex-A15 implements (EX is RAZ/WI: no trapped exceptions).
const FPEXC_WRITABLE: u32 = FPEXC_EN;
/// FPSID of a Cortex-A15 (VFPv4, no software emulation).
pub const FPSID: u32 = 0x4104_30f0;
/// MVFR0 of a Cortex-A15: 32 double registers, single/double precision, divide, square
/// root, all rounding modes, no short vectors, no trapping.
pub const MVFR0: u32 = 0x1011_0222;
/// MVFR1 of a Cortex-A15: Advanced SIMD integer/single-precision/load-store, FZ and DN
/// supported, half-precision conversions, fused multiply-add.
pub const MVFR1: u32 = 0x1111_1111;

/// `CPACR.ASEDIS`: Advanced SIMD instructions (not VFP) are UNDEFINED.
pub const CPACR_ASEDIS: u32 = 1 << 31;
/// `CPACR.D32DIS`: D16-D31 are not accessible.
pub const CPACR_D32DIS: u32 = 1 << 30;
/// The CPACR bits the model implements (cp10, cp11, ASEDIS, D32DIS).
pub const CPACR_WRITABLE: u32 = 0xc0f0_0000;

/// The extension register file and FP system registers.
#[derive(Clone, Debug, Default)]
pub struct FpState {
    /// D0-D31; Q\[n\] is D\[2n+1\]:D\[2n\], S\[2n\]/S\[2n+1\] the low/high half of D\[n\].
    pub d: [u64; 32],
    /// FPSCR (only [`fpscr::WRITABLE`] bits can be set).
    pub fpscr: u32,
    /// FPEXC (EN only; 0 at reset).
    pub fpexc: u32,
}

impl FpState {
    /// Single-precision register `n` (0..32).
    pub fn s(&self, n: usize) -> u32 {
        (self.d[n / 2] >> (32 * (n % 2))) as u32
    }

    /// Writes single-precision register `n`.
    pub fn set_s(&mut self, n: usize, v: u32) {
        let sh = 32 * (n % 2);
        let d = &mut self.d[n / 2];
        *d = (*d & !(0xffff_ffff << sh)) | (v as u64) << sh;
    }

    /// Quadword register `n` (0..16) as (low, high) doublewords.
    pub fn q(&self, n: usize) -> [u64; 2] {
        [self.d[2 * n], self.d[2 * n + 1]]
    }

    /// Writes quadword register `n`.
    pub fn set_q(&mut self, n: usize, v: [u64; 2]) {
        self.d[2 * n] = v[0];
        self.d[2 * n + 1] = v[1];
    }

    /// Writes FPSCR as `VMSR` does (unimplemented bits stay zero).
    pub fn write_fpscr(&mut self, v: u32) {
        self.fpscr = v & fpscr::WRITABLE;
    }

    /// Writes FPEXC as `VMSR` does.
    pub fn write_fpexc(&mut self, v: u32) {
        self.fpexc = v & FPEXC_WRITABLE;
    }
}

impl Cpu {
    /// The VFP/Advanced SIMD registers.
    pub fn fp(&self) -> &FpState {
        &self.fp
    }

    /// The VFP/Advanced SIMD registers, writable (boot state, tests, a translator's
    /// write-back).
    pub fn fp_mut(&mut self) -> &mut FpState {
        &mut self.fp
    }

    /// Whether `CPACR.cp10` allows the current privilege level (0b01: PL1 only, 0b11:
    /// PL0 and PL1; 0b00 and the reserved 0b10 deny).
    pub(crate) fn cpacr_allows_fp(&self) -> bool {
        let cp10 = (self.cp15.cpacr >> 20) & 3;
        match cp10 {
            0b11 => true,
            0b01 => self.mode != Mode::Usr,
            _ => false,
        }
    }

    /// The checks every VFP/Advanced SIMD instruction but a PL1 `VMRS`/`VMSR` of FPEXC,
    /// FPSID or MVFR* makes (ARM ARM `CheckVFPEnabled`/`CheckAdvSIMDEnabled`): CPACR
    /// grants access, `FPEXC.EN` is set, and for Advanced SIMD `CPACR.ASEDIS` is clear.
    /// Otherwise the instruction is UNDEFINED.
    pub(crate) fn check_fp_enabled(&self, simd: bool) -> Result<(), Exception> {
        if !self.cpacr_allows_fp() || self.fp.fpexc & FPEXC_EN == 0 {
            return Err(Exception::Undefined);
        }
        if simd && self.cp15.cpacr & CPACR_ASEDIS != 0 {
            return Err(Exception::Undefined);
        }
        Ok(())
    }

    /// `D32DIS` check for a D register number (D16-D31 UNDEFINED when set).
    pub(crate) fn check_dreg(&self, n: usize) -> Result<(), Exception> {
        if n >= 16 && self.cp15.cpacr & CPACR_D32DIS != 0 {
            return Err(Exception::Undefined);
        }
        Ok(())
    }

    /// Enables VFP and Advanced SIMD as Linux does for user processes: `CPACR.cp10/cp11`
    /// full access and `FPEXC.EN` set.
    pub fn enable_fp(&mut self) {
        self.cp15.cpacr |= 0x00f0_0000;
        self.fp.fpexc |= FPEXC_EN;
    }
}
