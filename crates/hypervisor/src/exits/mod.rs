//! Guest exit handling: one small function per exception class, picked from a table
//! indexed by `ESR_EL2.EC` (the shape of Linux's `arch/arm64/kvm/handle_exit.c`
//! `arm_exit_handlers[]`), each working on one [`ExitCtx`]: the vCPU, its VM and the exit's
//! syndrome, which each handler decodes for its own class.
//!
//! Which file handles which exit:
//!
//! | exit | file |
//! |---|---|
//! | `HVC`/`SMC` (AArch64 and AArch32): SMCCC, PSCI, vendor calls | `smccc.rs` |
//! | `MSR`/`MRS`/`SYS` (EC 0x18) | `sysreg.rs` |
//! | data abort (EC 0x24): dirty log, MMIO | `dabt.rs`, `mmio.rs` (AArch32 without syndrome: `mmio_a32.rs`) |
//! | instruction abort (EC 0x20) | `iabt.rs` |
//! | `WFI`/`WFE`/`WFIT` (EC 0x01) | `wfx.rs` |
//! | FP/SIMD first use (EC 0x07) | `fp.rs` |
//! | AArch32 coprocessor accesses (EC 0x03..0x08, 0x0C) | `aarch32.rs`, registers in `cp15.rs` |
//! | classes never emulated (UNDEFINED) | `refuse.rs` |
//! | physical IRQ/FIQ, SError | `irq.rs` |
//! | the hot ones among the above, before any run-loop work | `fast.rs` |
//!
//! The module is plain Rust: it builds and is tested on the host against a mock world
//! switch and a mock [`ExitHost`] (`tests/`); the hypervisor implements [`ExitHost`] in
//! `arch/vcpu_host.rs`. Whatever a guest puts in its registers or syndrome, a handler
//! answers architecturally and never panics.

mod aarch32;
mod cp15;
mod cpuif;
mod dabt;
mod fast;
mod fp;
mod host;
mod iabt;
mod irq;
mod mmio;
mod mmio_a32;
#[cfg(any(test, feature = "exit-mock"))]
pub mod mock;
mod refuse;
mod smccc;
mod sysreg;
mod table;
#[cfg(test)]
mod tests;
mod wfx;

pub use fast::{try_fast, Fast, FastCtx};
pub use host::{
    Devices, ExitHost, GuestLog, HostIrqs, Interrupts, Platform, S2Page, Scheduling, VcpuPower,
    VendorCalls, VmEnd, VmMemory,
};
pub use smccc::{HV_EXIT_COUNT, HV_YIELD};
pub use sysreg::SysRegName;

use el2_core::exit::{decode, Exit, ExitInfo};
use el2_core::inject;
use el2_core::switch::{ExitKind, RawExit, WorldSwitch};
use el2_core::vcpu::VcpuContext;
use vtimer::VcpuTimer;

use crate::stats::ExitStats;

/// What came of handling one exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Emulated (or nothing to do): the guest continues.
    Emulated,
    /// Refused with an error code in the guest's registers (SMCCC `NOT_SUPPORTED`); logged.
    Refused,
    /// Refused with an exception injected into the guest (UNDEFINED, external abort); logged.
    Injected,
    /// Emulated, and the vCPU gives up its physical CPU: it waits in `WFI`, yielded, powered
    /// off, or its VM ended.
    Yield,
}

impl Outcome {
    /// The run loop leaves the guest (puts the vCPU) after this exit.
    pub fn yields(self) -> bool {
        self == Outcome::Yield
    }
}

/// Everything an exit handler works on: the vCPU, its VM, and the exit.
pub struct ExitCtx<'a, H> {
    /// The vCPU's registers and EL2 controls.
    pub vcpu: &'a mut VcpuContext,
    /// The vCPU's generic timers (the emulated physical timer's registers, the forwarded
    /// virtual timer).
    pub timer: &'a mut VcpuTimer,
    /// Exits per reason of the current run-loop invocation (merged into the vCPU's counters
    /// when it is put).
    pub stats: &'a mut ExitStats,
    /// The world switch: where the guest's EL1 registers live, FP/SIMD switching.
    pub sw: &'a dyn WorldSwitch,
    /// The VM and the services of the hypervisor around this vCPU.
    pub vm: &'a mut H,
    /// Why the guest left (IRQ, FIQ, SError or a synchronous exception).
    pub kind: ExitKind,
    /// The syndrome registers (`ESR_EL2`, `FAR_EL2`, `HPFAR_EL2`). A handler decodes the
    /// fields of its own class (`ExitInfo::iss`, `DataAbort::from_info`...), as each class
    /// has a handler of its own; [`ExitCtx::exit`] decodes the whole syndrome.
    pub info: ExitInfo,
}

impl<'a, H: ExitHost> ExitCtx<'a, H> {
    /// The context of exit `raw` of vCPU `vcpu` (decodes the syndrome of a synchronous
    /// exit).
    pub fn new(
        raw: RawExit,
        vcpu: &'a mut VcpuContext,
        timer: &'a mut VcpuTimer,
        stats: &'a mut ExitStats,
        sw: &'a dyn WorldSwitch,
        vm: &'a mut H,
    ) -> Self {
        ExitCtx {
            vcpu,
            timer,
            stats,
            sw,
            vm,
            kind: raw.kind,
            info: ExitInfo {
                esr: raw.esr,
                far: raw.far,
                hpfar: raw.hpfar,
            },
        }
    }

    /// The whole syndrome decoded (`ESR_EL2` with `FAR_EL2`/`HPFAR_EL2`).
    pub fn exit(&self) -> Exit {
        decode(&self.info)
    }

    /// Steps the guest PC over the trapped instruction (`ESR_EL2.IL` gives its length).
    fn skip(&mut self) {
        inject::skip_instruction(self.vcpu, self.info.esr);
    }

    /// Logs `why` and injects an UNDEFINED exception at the guest's PC.
    fn undefined(&mut self, why: core::fmt::Arguments<'_>) -> Outcome {
        let pc = self.vcpu.regs.pc;
        self.vm
            .warn(format_args!("{why} at pc {pc:#x}; injecting UNDEFINED"));
        inject::inject_undefined(self.sw, self.vcpu);
        Outcome::Injected
    }
}

/// Handles one exit: a synchronous exception through the table of handlers by
/// `ESR_EL2.EC`, a physical interrupt or an SError through `irq.rs`.
pub fn handle<H: ExitHost>(ctx: &mut ExitCtx<'_, H>) -> Outcome {
    match ctx.kind {
        ExitKind::Sync => {
            // Arm 834220: an abort's HPFAR_EL2 may be wrong; when the guest's stage 1 does
            // not map FAR the guest is re-entered unchanged to take its own fault.
            let i = &mut ctx.info;
            if !el2_core::switch::errata::fix_abort_hpfar(i.esr, i.far, &mut i.hpfar) {
                return Outcome::Emulated;
            }
            table::handler::<H>(ctx.info.ec())(ctx)
        }
        ExitKind::Irq | ExitKind::Fiq => irq::host_irq(ctx),
        ExitKind::SError => irq::serror(ctx),
    }
}

/// `PSTATE` fields the handlers look at (as saved in `SPSR_EL2`).
mod pstate {
    /// `M[4]` (nRW): the guest was executing in AArch32 state.
    pub const NRW: u64 = 1 << 4;
    /// `M[0]` (SPSel) in AArch64 state: the stack pointer is `SP_ELx`, not `SP_EL0`.
    pub const SPSEL: u64 = 1 << 0;
    /// `M[3:2]`: the exception level, in AArch64 state.
    pub const EL_SHIFT: u32 = 2;
    /// Mask of the exception level after shifting.
    pub const EL_MASK: u64 = 0b11;
    /// `T`: T32 instruction set, in AArch32 state.
    pub const T32: u64 = 1 << 5;

    /// The guest was executing in AArch32 state.
    pub fn is_aarch32(pstate: u64) -> bool {
        pstate & NRW != 0
    }

    /// An AArch64 guest at EL1 using `SP_EL1` (`EL1h`): its stack pointer is `SP_EL1`.
    pub fn uses_sp_el1(pstate: u64) -> bool {
        !is_aarch32(pstate) && pstate & SPSEL != 0 && (pstate >> EL_SHIFT) & EL_MASK == 1
    }
}
