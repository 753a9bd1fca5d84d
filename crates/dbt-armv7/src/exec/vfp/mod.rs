//! VFPv3/VFPv4 and Advanced SIMD execution. The decoder classifies these encodings as
//! [`Op::Vfp`] and keeps the A32-layout word in `Insn::raw` (T32 encodings are mapped
//! onto A32 first), so the executors here decode the fields they need from it.
//!
//! - [`softfloat`]: the ARM ARM's floating-point pseudocode on integers (exact on any host);
//! - `scalar`: VFP data processing (arithmetic, VMOV immediate/register, compare, convert);
//! - `xfer`: VMRS/VMSR, core register transfers, VLDR/VSTR/VLDM/VSTM;
//! - `neon`, `neon_shift`, `neon_misc`, `neon_long`: Advanced SIMD data processing (see
//!   `neon`'s module doc for what is UNDEFINED);
//! - `neon_mem`: VLD1-4/VST1-4.
//!
//! Every instruction first makes the checks of `CheckVFPEnabled`/`CheckAdvSIMDEnabled`
//! (`CPACR.cp10`, `FPEXC.EN`, `CPACR.ASEDIS`): failing them is UNDEFINED.

mod estimate;
mod neon;
mod neon_long;
mod neon_mem;
mod neon_misc;
mod neon_shift;
mod scalar;
pub mod softfloat;
mod xfer;

use super::ExecResult;
use crate::bus::Bus;
use crate::cpu::{Cpu, Exception};
use crate::decode::{Insn, Op, VfpKind};

/// Bits `hi..=lo` of `w`.
pub(crate) fn field(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// Bit `n` of `w`.
pub(crate) fn flag(w: u32, n: u32) -> bool {
    w >> n & 1 != 0
}

impl Cpu {
    /// Executes a VFP or Advanced SIMD instruction.
    pub(crate) fn exec_vfp(&mut self, bus: &mut dyn Bus, i: &Insn) -> ExecResult {
        let Op::Vfp { kind, .. } = i.op else {
            return Err(Exception::Undefined);
        };
        let w = i.raw;
        match kind {
            VfpKind::Vmrs => self.vmrs(w),
            VfpKind::Vmsr => self.vmsr(w),
            VfpKind::Transfer => self.vfp_transfer(w),
            VfpKind::LoadStore => self.vfp_load_store(bus, w),
            VfpKind::DataProc => {
                self.check_fp_enabled(false)?;
                self.vfp_data_proc(w)
            }
            VfpKind::NeonDataProc => {
                self.check_fp_enabled(true)?;
                self.neon_data_proc(w)
            }
            VfpKind::NeonLoadStore => {
                self.check_fp_enabled(true)?;
                self.neon_load_store(bus, w)
            }
        }
    }
}
