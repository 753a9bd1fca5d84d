//! The toy guest: a script of trapping instructions, played by a `WorldSwitch` test double.
//!
//! Each `run` first checks that the VMM handled the previous instruction the way the guest
//! expects (the guest "reads its registers"), then sets up the registers of the next one and
//! returns the exit the hardware would report for it. Guest EL1 registers live in the
//! `VcpuContext`, as with the non-VHE backend between `vcpu_put` and `vcpu_load`.

use std::collections::VecDeque;
use std::sync::Mutex;

use el2_core::exit::{ec, ExitInfo};
use el2_core::switch::{el1_field, Backend, El1Reg, ExitKind, RawExit, WorldSwitch};
use el2_core::vcpu::VcpuContext;

/// Guest virtual (and intermediate physical: the MMU is off) address of the first
/// instruction of the script.
pub const CODE_BASE: u64 = 0x4008_0000;
/// The guest's `VBAR_EL1`: its exception vector table.
pub const VBAR: u64 = 0x4010_0000;
/// Length of an A64 instruction.
const INSN_BYTES: u64 = 4;
/// Offset of "synchronous exception from the current EL with SP_ELx" in an EL1 vector table
/// (the guest kernel runs at EL1h).
const VECTOR_SYNC_CURRENT_SPX: u64 = 0x200;

/// What the guest expects to find when the VMM resumes it.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// The instruction was emulated: the guest resumes after it, with `Xn` = value if given.
    Next(Option<(u8, u64)>),
    /// Nothing was emulated (the exit was an interrupt): the guest resumes at the same
    /// instruction.
    Same,
    /// The VMM refused the instruction: the guest takes a synchronous exception to its EL1
    /// vector with this `ESR_EL1`, and its handler skips the instruction.
    Exception {
        /// The `ESR_EL1` the guest's handler reads.
        esr_el1: u64,
    },
    /// The VMM must never resume the guest after this instruction (`SYSTEM_OFF`).
    Stop,
}

/// One trapping instruction of the guest.
#[derive(Debug, Clone)]
pub struct Step {
    /// The instruction, as the guest's assembly would show it.
    pub insn: &'static str,
    /// General registers the guest set up before executing it.
    pub regs: Vec<(u8, u64)>,
    /// What the hardware reports when it traps.
    pub exit: RawExit,
    /// How the VMM must handle it.
    pub expect: Expect,
}

/// Where the script stands.
struct Player {
    steps: VecDeque<Step>,
    /// The step the guest last executed and its address, not yet checked.
    pending: Option<(u64, Step)>,
    next_pc: u64,
    checked: usize,
}

/// A `WorldSwitch` whose "guest" plays a script of steps.
pub struct ScriptedGuest {
    player: Mutex<Player>,
}

impl ScriptedGuest {
    /// A guest that will execute `steps` in order, starting at [`CODE_BASE`].
    pub fn new(steps: Vec<Step>) -> Self {
        Self {
            player: Mutex::new(Player {
                steps: steps.into(),
                pending: None,
                next_pc: CODE_BASE,
                checked: 0,
            }),
        }
    }

    /// After the VMM stopped: checks that it stopped at a `Stop` step with nothing of the
    /// script left over, and returns how many steps were checked in all.
    pub fn finish(&self) -> usize {
        let mut p = self.player.lock().expect("guest script lock");
        match p.pending.take() {
            Some((_, step)) if matches!(step.expect, Expect::Stop) => p.checked += 1,
            Some((_, step)) => panic!(
                "the VMM stopped after `{}`, which expects {:?}",
                step.insn, step.expect
            ),
            None => panic!("the VMM stopped before the guest ran"),
        }
        assert!(
            p.steps.is_empty(),
            "the VMM stopped with {} guest instructions left",
            p.steps.len()
        );
        p.checked
    }
}

/// Panics unless `actual == expected`, naming the instruction and what was checked.
fn check(insn: &str, what: &str, actual: u64, expected: u64) {
    assert!(
        actual == expected,
        "guest check after `{insn}` failed: {what} is {actual:#x}, expected {expected:#x}"
    );
}

/// Checks the vCPU after the VMM handled `step` at `pc`; returns where the guest continues.
fn verify(pc: u64, step: &Step, vcpu: &mut VcpuContext) -> u64 {
    let insn = step.insn;
    match step.expect {
        Expect::Next(reg) => {
            check(insn, "PC", vcpu.regs.pc, pc + INSN_BYTES);
            if let Some((n, value)) = reg {
                check(insn, &format!("X{n}"), vcpu.regs.read(n), value);
            }
            pc + INSN_BYTES
        }
        Expect::Same => {
            check(insn, "PC", vcpu.regs.pc, pc);
            pc
        }
        Expect::Exception { esr_el1 } => {
            check(
                insn,
                "PC (EL1 vector)",
                vcpu.regs.pc,
                VBAR + VECTOR_SYNC_CURRENT_SPX,
            );
            check(insn, "ELR_EL1", vcpu.el1.elr_el1, pc);
            check(insn, "ESR_EL1", vcpu.el1.esr_el1, esr_el1);
            println!(
                "[guest]   EL1 handler: ESR_EL1 = {:#x}, ELR_EL1 = {pc:#x}; returns past it",
                vcpu.el1.esr_el1
            );
            // The guest's handler returns past the faulting instruction (ERET restores
            // PSTATE from SPSR_EL1).
            vcpu.regs.pstate = vcpu.el1.spsr_el1;
            pc + INSN_BYTES
        }
        Expect::Stop => panic!("the VMM resumed the guest after `{insn}`"),
    }
}

impl WorldSwitch for ScriptedGuest {
    fn backend(&self) -> Backend {
        Backend::NonVhe
    }

    unsafe fn vcpu_load(&self, _vcpu: &mut VcpuContext) {}

    unsafe fn run(&self, vcpu: &mut VcpuContext) -> RawExit {
        let mut p = self.player.lock().expect("guest script lock");
        if let Some((pc, step)) = p.pending.take() {
            p.next_pc = verify(pc, &step, vcpu);
            p.checked += 1;
        }
        let step = p
            .steps
            .pop_front()
            .expect("the guest has no instructions left: the VMM should have stopped");
        let pc = p.next_pc;
        println!("[guest] {pc:#x}: {}", step.insn);
        for &(n, value) in &step.regs {
            vcpu.regs.write(n, value);
        }
        let info = ExitInfo {
            esr: step.exit.esr,
            ..ExitInfo::default()
        };
        // HVC is taken, not trapped: ELR_EL2 already points at the next instruction.
        let taken = step.exit.kind == ExitKind::Sync && info.ec() == ec::HVC64;
        vcpu.regs.pc = if taken { pc + INSN_BYTES } else { pc };
        let exit = step.exit;
        p.pending = Some((pc, step));
        exit
    }

    unsafe fn vcpu_put(&self, _vcpu: &mut VcpuContext) {}

    unsafe fn fp_trap(&self, _vcpu: &mut VcpuContext) {
        unreachable!("the toy guest does not use FP/SIMD");
    }

    fn el1_read(&self, vcpu: &VcpuContext, reg: El1Reg) -> u64 {
        *el1_field(&mut vcpu.el1.clone(), reg)
    }

    fn el1_write(&self, vcpu: &mut VcpuContext, reg: El1Reg, value: u64) {
        *el1_field(&mut vcpu.el1, reg) = value;
    }
}
