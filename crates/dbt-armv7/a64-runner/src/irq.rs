//! `--irq-line`: an interrupt source for the guest, driven by the guest itself. A write
//! of `CNTV_CTL` (`MCR p15, 0, Rt, c14, c3, 1`) with `ENABLE` (bit 0) set raises the
//! core's IRQ input at once (a virtual timer that has already expired); a write with it
//! clear lowers it (the handler's acknowledgement). The engine samples the line through
//! [`CoprocHost::interrupt_lines`], as the in-VM runtime's host samples `ISR_EL1`; with
//! `--slice=N` the runner also sets `Cpu::irq_line` from it before every slice of N guest
//! instructions, as the runtime does. Other coprocessor registers are the model's.

use core::sync::atomic::{AtomicBool, Ordering};
use dbt_armv7::cpu::CoprocHost;

/// The IRQ input's level.
static LINE: AtomicBool = AtomicBool::new(false);

/// The IRQ input's level now.
pub fn line() -> bool {
    LINE.load(Ordering::Relaxed)
}

/// The coprocessor host that owns `CNTV_CTL` writes and the interrupt lines.
pub struct TimerLine;

impl CoprocHost for TimerLine {
    fn read(&mut self, _: u8, _: u8, _: u8, _: u8, _: u8) -> Option<u32> {
        None
    }

    fn write(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8, value: u32) -> bool {
        if (cp, opc1, crn, crm, opc2) != (15, 0, 14, 3, 1) {
            return false;
        }
        LINE.store(value & 1 != 0, Ordering::Relaxed);
        true
    }

    fn read64(&mut self, _: u8, _: u8, _: u8) -> Option<u64> {
        None
    }

    fn write64(&mut self, _: u8, _: u8, _: u8, _: u64) -> bool {
        false
    }

    fn interrupt_lines(&mut self) -> Option<(bool, bool)> {
        Some((line(), false))
    }
}
