//! The vCPU run loop and exit handlers:
//! `vcpu_load; loop { exit = run(); handle(exit) }; vcpu_put`. Every guest-caused event is
//! answered architecturally (emulation, an injected UNDEFINED or external abort, an SMCCC
//! error code) and logged; nothing a guest does ends the hypervisor.

use el2_core::exit::{self, Exit, ExitInfo};
use el2_core::inject;
use el2_core::mmio::{MmioAccess, MmioOutcome};
use el2_core::psci::{AffinityState, PsciHost, PsciReturn};
use el2_core::smccc::{self, CallOutcome, SmcccCall};
use el2_core::switch::{ExitKind, WorldSwitch};

use super::stats::ExitReason;
use super::sysregs;
use super::vm::{Vcpu, Vm};

/// How a VM ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmEnd {
    /// PSCI `SYSTEM_OFF` (or every vCPU called `CPU_OFF`).
    PowerOff,
    /// PSCI `SYSTEM_RESET`.
    Reset,
    /// The VM cannot continue (e.g. an SError); the reason was logged.
    Crashed,
}

enum Next {
    Continue,
    End(VmEnd),
}

/// PSCI view of a VM for the dispatcher: which vCPUs exist and are on.
struct VmPsci<'a> {
    me: u64,
    vcpus: &'a [u64],
}

impl PsciHost for VmPsci<'_> {
    fn cpu_on(&mut self, target: u64, _entry: u64, _ctx: u64) -> PsciReturn {
        if target == self.me {
            PsciReturn::AlreadyOn
        } else {
            // Secondary vCPUs arrive with SMP support; until then only vCPU 0 exists.
            PsciReturn::InvalidParameters
        }
    }

    fn affinity_info(&self, target: u64) -> Result<AffinityState, PsciReturn> {
        if self.vcpus.contains(&target) {
            Ok(AffinityState::On)
        } else {
            Err(PsciReturn::InvalidParameters)
        }
    }
}

/// Runs vCPU 0 of `vm` until the VM ends.
pub fn run_vm(vm: &mut Vm, sw: &dyn WorldSwitch) -> VmEnd {
    let Vm {
        vcpus,
        bus,
        stats,
        name,
        ..
    } = vm;
    let mpidrs: alloc::vec::Vec<u64> = vcpus.iter().map(|v| v.mpidr).collect();
    let vcpu = &mut vcpus[0];
    // SAFETY: we are at EL2 on the CPU that runs this vCPU; no other vCPU is loaded.
    unsafe { sw.vcpu_load(&mut vcpu.ctx) };
    let end = loop {
        // SAFETY: the vCPU was loaded above on this CPU.
        let raw = unsafe { sw.run(&mut vcpu.ctx) };
        let next = match raw.kind {
            ExitKind::Irq | ExitKind::Fiq => {
                stats.count(ExitReason::Irq);
                Next::Continue
            }
            ExitKind::SError => {
                crate::hv_warn!(
                    "{name}: SError from guest (ESR_EL2={:#x}); stopping the VM",
                    raw.esr
                );
                Next::End(VmEnd::Crashed)
            }
            ExitKind::Sync => {
                let info = ExitInfo {
                    esr: raw.esr,
                    far: raw.far,
                    hpfar: raw.hpfar,
                };
                handle_sync(&info, vcpu, &mpidrs, bus, stats, name, sw)
            }
        };
        if let Next::End(e) = next {
            break e;
        }
    };
    // SAFETY: the vCPU is the one loaded on this CPU.
    unsafe { sw.vcpu_put(&mut vcpu.ctx) };
    end
}

fn handle_sync(
    info: &ExitInfo,
    vcpu: &mut Vcpu,
    mpidrs: &[u64],
    bus: &mut el2_core::mmio::MmioBus,
    stats: &mut super::stats::ExitStats,
    name: &str,
    sw: &dyn WorldSwitch,
) -> Next {
    let ctx = &mut vcpu.ctx;
    match exit::decode(info) {
        Exit::Hvc { imm } => {
            stats.count(ExitReason::Hvc);
            if imm != 0 {
                crate::hv_warn!(
                    "{name}: HVC #{imm:#x} is not an SMCCC call; returning NOT_SUPPORTED"
                );
                ctx.regs.x[0] = u64::MAX;
                return Next::Continue;
            }
            smccc_call(vcpu, mpidrs, name)
        }
        Exit::Smc { .. } => {
            stats.count(ExitReason::Smc);
            // ELR_EL2 points at the trapped SMC.
            inject::skip_instruction(ctx, info.esr);
            smccc_call(vcpu, mpidrs, name)
        }
        Exit::SysReg(acc) => {
            stats.count(ExitReason::SysReg);
            match sysregs::emulate(&acc, ctx) {
                Ok(()) => inject::skip_instruction(ctx, info.esr),
                Err(why) => {
                    crate::hv_warn!(
                        "{name}: {} of {} at pc {:#x}: {why}; injecting UNDEFINED",
                        if acc.is_read { "read" } else { "write" },
                        sysregs::Name(&acc),
                        ctx.regs.pc
                    );
                    inject::inject_undefined(sw, ctx);
                }
            }
            Next::Continue
        }
        Exit::DataAbort(da) => {
            let far = if da.fnv { 0 } else { da.far };
            match MmioAccess::from_abort(&da) {
                Some(acc) => {
                    let value = ctx.regs.read(acc.rt);
                    match bus.dispatch(&acc, value) {
                        MmioOutcome::Read(v) => {
                            stats.count(ExitReason::Mmio);
                            ctx.regs.write(acc.rt, v);
                            inject::skip_instruction(ctx, info.esr);
                        }
                        MmioOutcome::WriteDone => {
                            stats.count(ExitReason::Mmio);
                            inject::skip_instruction(ctx, info.esr);
                        }
                        MmioOutcome::Unbacked => {
                            stats.count(ExitReason::DataAbortInjected);
                            crate::hv_warn!(
                                "{name}: {}-byte {} at unbacked IPA {:#x} (pc {:#x}); injecting external abort",
                                acc.size.bytes(),
                                if acc.is_write { "write" } else { "read" },
                                acc.ipa,
                                ctx.regs.pc
                            );
                            inject::inject_data_abort(sw, ctx, far, acc.is_write);
                        }
                        MmioOutcome::DeviceError { device, error } => {
                            stats.count(ExitReason::DataAbortInjected);
                            crate::hv_warn!(
                                "{name}: {device} refused access at IPA {:#x}: {error}; injecting external abort",
                                acc.ipa
                            );
                            inject::inject_data_abort(sw, ctx, far, acc.is_write);
                        }
                    }
                }
                None => {
                    stats.count(ExitReason::DataAbortInjected);
                    crate::hv_warn!(
                        "{name}: data abort at IPA {:#x} (pc {:#x}, ISV={}, S1PTW={}, DFSC={:#x}) cannot be emulated; injecting external abort",
                        da.ipa,
                        ctx.regs.pc,
                        da.isv as u8,
                        da.s1ptw as u8,
                        da.dfsc
                    );
                    inject::inject_data_abort(sw, ctx, far, da.wnr);
                }
            }
            Next::Continue
        }
        Exit::InstructionAbort(ia) => {
            stats.count(ExitReason::InstructionAbort);
            crate::hv_warn!(
                "{name}: instruction fetch from IPA {:#x} (pc {:#x}) outside guest RAM; injecting external abort",
                ia.ipa,
                ctx.regs.pc
            );
            let far = if ia.fnv { 0 } else { ia.far };
            inject::inject_instruction_abort(sw, ctx, far);
            Next::Continue
        }
        Exit::FpSimdAccess => {
            stats.count(ExitReason::FpTrap);
            // SAFETY: this vCPU is loaded on this CPU (we are inside its run loop).
            unsafe { sw.fp_trap(ctx) };
            Next::Continue
        }
        Exit::Wfi | Exit::Wfe | Exit::WfxTimeout { .. } => {
            // Nothing can become pending yet (virtual interrupts arrive with the vGIC), so
            // WFI completes at once, which the architecture allows.
            stats.count(ExitReason::Wfx);
            inject::skip_instruction(ctx, info.esr);
            Next::Continue
        }
        other => {
            stats.count(ExitReason::Other);
            crate::hv_warn!(
                "{name}: unhandled exit {:?} (ESR_EL2={:#x}) at pc {:#x}; injecting UNDEFINED",
                other,
                info.esr,
                ctx.regs.pc
            );
            inject::inject_undefined(sw, ctx);
            Next::Continue
        }
    }
}

fn smccc_call(vcpu: &mut Vcpu, mpidrs: &[u64], name: &str) -> Next {
    let ctx = &mut vcpu.ctx;
    let x = &ctx.regs.x;
    let call = SmcccCall::new(x[0], [x[1], x[2], x[3], x[4], x[5], x[6]]);
    let mut host = VmPsci {
        me: vcpu.mpidr,
        vcpus: mpidrs,
    };
    match smccc::dispatch(&call, &mut host) {
        CallOutcome::Return(r) => {
            // PSCI_FEATURES and SMCCC_ARCH_FEATURES answer NOT_SUPPORTED about *another*
            // function; only log calls that are themselves unknown.
            let is_query = matches!(call.function_id, 0x8400_000a | 0x8000_0001);
            if r[0] == u64::MAX && !is_query {
                crate::hv_warn!(
                    "{name}: SMCCC function {:#x} not supported; returned NOT_SUPPORTED",
                    call.function_id
                );
            }
            ctx.regs.x[..4].copy_from_slice(&r);
            Next::Continue
        }
        CallOutcome::SystemOff => {
            crate::hv_log!("{name}: PSCI SYSTEM_OFF");
            Next::End(VmEnd::PowerOff)
        }
        CallOutcome::SystemReset => {
            crate::hv_log!("{name}: PSCI SYSTEM_RESET");
            Next::End(VmEnd::Reset)
        }
        CallOutcome::CpuOff => {
            crate::hv_log!("{name}: PSCI CPU_OFF on its last running vCPU");
            Next::End(VmEnd::PowerOff)
        }
        CallOutcome::CpuSuspend { .. } => {
            // Treated as a standby that wakes at once (PSCI permits returning SUCCESS).
            ctx.regs.x[0] = 0;
            Next::Continue
        }
    }
}
