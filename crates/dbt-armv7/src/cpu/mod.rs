//! CPU state: registers, modes, exceptions and the run loop.

pub mod exceptions;
pub mod fp;
pub mod modes;
pub mod state;

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

pub use exceptions::Exception;
pub use fp::FpState;
pub use modes::{psr, Mode};

use crate::cp15::Cp15;
use crate::decode::{Class, Insn};
use crate::mmu::tlb::Tlb;

/// Source of the generic timer's system counter (`CNTPCT`/`CNTVCT`).
pub trait SysCounter {
    /// Current count.
    fn count(&mut self) -> u64;
    /// Frequency in Hz reported by `CNTFRQ` at reset.
    fn frequency(&self) -> u32 {
        62_500_000
    }
}

/// Coprocessor registers that the host implements itself, ahead of the model: in a VM
/// (the DBT runtime) the generic timer's `CNTV_*`/`CNTP_*`, `CNTVCT`/`CNTPCT` and the
/// GICv3 CPU interface's AArch32 `ICC_*` encodings are the hardware's own AArch64 EL1
/// registers, not model state. Each method answers `None` (or `false`) for an access the
/// host leaves to the model. Called after the PL0 accessibility check, for `cp` 15.
pub trait CoprocHost {
    /// Whether `MRC`/`MCR p<cp>, opc1, CRn, CRm, opc2` is UNDEFINED by the host's policy
    /// (e.g. IMPLEMENTATION DEFINED `c15` registers, which the hypervisor makes UNDEFINED
    /// for hardware AArch32 guests under `HCR_EL2.TIDCP`). Asked first; by default none.
    fn undefined(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8) -> bool {
        let _ = (cp, opc1, crn, crm, opc2);
        false
    }
    /// `MRC p<cp>, opc1, Rt, CRn, CRm, opc2`: the value, if the host implements it.
    fn read(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8) -> Option<u32>;
    /// `MCR p<cp>, ...`: whether the host implemented (and performed) the write.
    fn write(&mut self, cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8, value: u32) -> bool;
    /// `MRRC p<cp>, opc1, Rt, Rt2, CRm`: the 64-bit value, if the host implements it.
    fn read64(&mut self, cp: u8, opc1: u8, crm: u8) -> Option<u64>;
    /// `MCRR p<cp>, ...`: whether the host implemented (and performed) the write.
    fn write64(&mut self, cp: u8, opc1: u8, crm: u8, value: u64) -> bool;
    /// The IRQ and FIQ input levels now, if the host samples them itself (a VM's runtime
    /// reads `ISR_EL1`): asked before each interpreted instruction while `CPSR.I` or
    /// `CPSR.F` is clear and at `WFI`, so an interrupt the guest just acknowledged or
    /// masked at its controller is not taken again from a stale [`Cpu::irq_line`].
    /// `None` (the default): the fields are the inputs.
    fn interrupt_lines(&mut self) -> Option<(bool, bool)> {
        None
    }
}

/// Why [`Cpu::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The instruction budget is spent.
    Budget,
    /// `SVC #imm` (only with [`Cpu::set_exit_on_svc`]); PC points after it.
    Svc(u32),
    /// `HVC #imm`: a call to the platform (PSCI); PC points after it.
    Hvc(u16),
    /// `SMC #imm`; PC points after it.
    Smc(u8),
    /// `WFI`/`WFE` with no interrupt pending; PC points after it.
    Wfi,
    /// An exception was raised while [`Cpu::set_exit_on_exception`] is set; PC points
    /// at the faulting instruction and no state was changed.
    Exception(Exception),
}

pub(crate) const DCACHE_SIZE: usize = 4096;

/// An ARMv7-A processor (one core).
pub struct Cpu {
    pub(crate) r: [u32; 16],
    pub(crate) cpsr: u32,
    pub(crate) it: u8,
    pub(crate) mode: Mode,
    pub(crate) bank_sp_lr: [[u32; 2]; 6],
    pub(crate) bank_r8_12: [[u32; 5]; 2],
    pub(crate) spsr: [u32; 6],
    /// CP15 system registers.
    pub cp15: Cp15,
    /// CP14 debug and trivial Jazelle registers.
    pub cp14: crate::cp14::Cp14,
    pub(crate) fp: FpState,
    pub(crate) tlb: Tlb,
    pub(crate) monitor: Option<u32>,
    pub(crate) exit_on_svc: bool,
    pub(crate) exit_on_exception: bool,
    /// Level of the IRQ input (from an interrupt controller model).
    pub irq_line: bool,
    /// Level of the FIQ input.
    pub fiq_line: bool,
    /// Retired instructions (also the default system counter).
    pub icount: u64,
    /// The guest addresses `[lo, hi)` (`hi` = 2^32 for all) whose instructions an
    /// instruction-cache invalidation (`ICIALLU`, `ICIALLUIS`, `ICIMVAU`) just made
    /// stale, until a translator takes it ([`Cpu::take_code_invalidation`]).
    pub(crate) code_invalidation: Option<(u32, u64)>,
    pub(crate) counter: Option<Box<dyn SysCounter>>,
    pub(crate) coproc_host: Option<Box<dyn CoprocHost>>,
    pub(crate) dcache: Vec<(u32, u32, Insn)>,
    pub(crate) class_hits: Option<Vec<u64>>,
    // Per-step scratch: PC as read by the instruction, and the next PC.
    pub(crate) pc_read: u32,
    pub(crate) next_pc: u32,
    pub(crate) cur_len: u32,
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu::new()
    }
}

impl Cpu {
    /// A CPU in its reset state: SVC mode, A32, interrupts masked, MMU off, PC 0.
    pub fn new() -> Cpu {
        let dummy = crate::decode::decode_a32(0);
        Cpu {
            r: [0; 16],
            cpsr: Mode::Svc as u32 | psr::A | psr::I | psr::F,
            it: 0,
            mode: Mode::Svc,
            bank_sp_lr: [[0; 2]; 6],
            bank_r8_12: [[0; 5]; 2],
            spsr: [0; 6],
            cp15: Cp15::new(),
            cp14: crate::cp14::Cp14::new(),
            fp: FpState::default(),
            tlb: Tlb::new(),
            monitor: None,
            exit_on_svc: false,
            exit_on_exception: false,
            irq_line: false,
            fiq_line: false,
            icount: 0,
            code_invalidation: None,
            counter: None,
            coproc_host: None,
            dcache: vec![(u32::MAX, 0, dummy); DCACHE_SIZE],
            class_hits: None,
            pc_read: 0,
            next_pc: 0,
            cur_len: 4,
        }
    }

    /// A CPU in User mode (for user-level tests), A32 or Thumb, with VFP and Advanced
    /// SIMD enabled as Linux enables them for a process.
    pub fn new_user(thumb: bool) -> Cpu {
        let mut c = Cpu::new();
        c.enable_fp();
        c.switch_mode(Mode::Usr);
        c.cpsr = Mode::Usr as u32 | if thumb { psr::T } else { 0 };
        c
    }

    /// The guest address range `[lo, hi)` whose code the guest invalidated in the
    /// instruction cache since the last call, if any: a translator drops its translations
    /// of it.
    pub fn take_code_invalidation(&mut self) -> Option<(u32, u64)> {
        self.code_invalidation.take()
    }

    /// Return [`Exit::Svc`] instead of taking the SVC exception (user-mode emulation).
    pub fn set_exit_on_svc(&mut self, on: bool) {
        self.exit_on_svc = on;
    }

    /// Return [`Exit::Exception`] instead of taking any synchronous exception.
    pub fn set_exit_on_exception(&mut self, on: bool) {
        self.exit_on_exception = on;
    }

    /// Installs the system counter (default: the retired-instruction count).
    pub fn set_counter(&mut self, c: Box<dyn SysCounter>) {
        self.cp15.cntfrq = c.frequency();
        self.counter = Some(c);
    }

    /// Installs host-implemented coprocessor registers ([`CoprocHost`]), consulted before
    /// the model on every CP15 `MRC`/`MCR`/`MRRC`/`MCRR`.
    pub fn set_coproc_host(&mut self, h: Box<dyn CoprocHost>) {
        self.coproc_host = Some(h);
    }

    /// Starts counting executed instructions per encoding [`Class`].
    pub fn enable_class_stats(&mut self) {
        self.class_hits = Some(vec![0; Class::COUNT]);
    }

    /// Executed instructions per class (empty unless enabled).
    pub fn class_stats(&self) -> &[u64] {
        self.class_hits.as_deref().unwrap_or(&[])
    }

    /// Drops all cached translations and decoded instructions.
    pub fn flush_caches(&mut self) {
        self.tlb.flush();
        for e in self.dcache.iter_mut() {
            e.0 = u32::MAX;
        }
    }

    pub(crate) fn counter_value(&mut self) -> u64 {
        match self.counter.as_mut() {
            Some(c) => c.count(),
            None => self.icount,
        }
    }
}
