//! Advanced SIMD element and structure loads and stores (VLD1-4/VST1-4).

use crate::bus::Bus;
use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

impl Cpu {
    /// Executes an Advanced SIMD load/store (`1111 0100 xxx0` in A32 layout).
    pub(crate) fn neon_load_store(&mut self, bus: &mut dyn Bus, w: u32) -> ExecResult {
        let _ = (bus, w);
        Err(Exception::Undefined)
    }
}
