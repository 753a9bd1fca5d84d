//! Advanced SIMD data processing.

use crate::cpu::{Cpu, Exception};
use crate::exec::ExecResult;

impl Cpu {
    /// Executes an Advanced SIMD data-processing instruction (`1111 001x` in A32 layout).
    pub(crate) fn neon_data_proc(&mut self, w: u32) -> ExecResult {
        let _ = w;
        Err(Exception::Undefined)
    }
}
