//! The toy VMM: the run loop and its exit handlers, written as a hypervisor embedding
//! el2-core would write them, with a line of output for everything it does.

use std::collections::BTreeMap;

use el2_core::exit::{self, regs, DataAbort, Exit, ExitInfo, SysRegAccess};
use el2_core::inject;
use el2_core::mmio::{MmioAccess, MmioBus, MmioCaller, MmioOutcome, NoEvents};
use el2_core::psci::{self, AffinityState, PsciReturn};
use el2_core::smccc::{self, CallOutcome, SmcccCall};
use el2_core::switch::{ExitKind, WorldSwitch};
use el2_core::vcpu::VcpuContext;

use crate::vm::Vm;

/// `ID_AA64PFR0_EL1.EL0` = 1: EL0 is AArch64 only.
const PFR0_EL0_AARCH64: u64 = 1 << 0;
/// `ID_AA64PFR0_EL1.EL1` = 1: EL1 is AArch64 only.
const PFR0_EL1_AARCH64: u64 = 1 << 4;
/// The `ID_AA64PFR0_EL1` the guest reads (trapped by `HCR_EL2.TID3`): AArch64-only EL0 and
/// EL1, EL2 and EL3 hidden (0), FP and Advanced SIMD implemented (0), no SVE, no GIC
/// system registers.
pub const GUEST_ID_AA64PFR0: u64 = PFR0_EL0_AARCH64 | PFR0_EL1_AARCH64;

/// SMCCC arguments: `X1..X6`.
const SMCCC_ARGS: usize = 6;
/// SMCCC results: `X0..X3`.
const SMCCC_RESULTS: usize = 4;

/// Every PSCI return code, to name a returned `X0`.
const PSCI_RETURNS: [PsciReturn; 10] = [
    PsciReturn::Success,
    PsciReturn::NotSupported,
    PsciReturn::InvalidParameters,
    PsciReturn::Denied,
    PsciReturn::AlreadyOn,
    PsciReturn::OnPending,
    PsciReturn::InternalFailure,
    PsciReturn::NotPresent,
    PsciReturn::Disabled,
    PsciReturn::InvalidAddress,
];

/// Whether the run loop goes on after an exit.
enum Flow {
    /// Re-enter the guest.
    Resume,
    /// The VM is off: leave the run loop.
    Stop,
}

/// The toy hypervisor's state for one VM.
pub struct Vmm {
    /// The VM's emulated devices.
    pub bus: MmioBus,
    /// The VM's vCPUs, as PSCI sees them.
    pub vm: Vm,
    /// Exits so far, by reason (`Exit::reason`, or the interrupt kind).
    pub exits: BTreeMap<&'static str, usize>,
    /// Exceptions injected into the guest so far.
    pub injected: usize,
}

impl Vmm {
    /// A VMM for `vm` with the devices on `bus`.
    pub fn new(bus: MmioBus, vm: Vm) -> Self {
        Self {
            bus,
            vm,
            exits: BTreeMap::new(),
            injected: 0,
        }
    }

    /// Runs `vcpu` on backend `sw` until the VM powers off.
    pub fn run_vcpu(&mut self, sw: &dyn WorldSwitch, vcpu: &mut VcpuContext) {
        // SAFETY: the toy backend touches no hardware; with a real backend this runs at
        // EL2 on the CPU that owns `vcpu`, with no other vCPU loaded.
        unsafe { sw.vcpu_load(vcpu) };
        loop {
            // SAFETY: `vcpu` is the vCPU loaded above.
            let raw = unsafe { sw.run(vcpu) };
            if raw.kind != ExitKind::Sync {
                *self.exits.entry("irq").or_default() += 1;
                println!(
                    "[vmm]     {:?}: the host's interrupt handler runs, guest re-entered",
                    raw.kind
                );
                continue;
            }
            let info = ExitInfo {
                esr: raw.esr,
                far: raw.far,
                hpfar: raw.hpfar,
            };
            let exit = exit::decode(&info);
            *self.exits.entry(exit.reason()).or_default() += 1;
            if let Flow::Stop = self.handle(sw, vcpu, &info, exit) {
                break;
            }
        }
        // SAFETY: `vcpu` is the loaded vCPU.
        unsafe { sw.vcpu_put(vcpu) };
    }

    /// Handles one decoded synchronous exit.
    fn handle(
        &mut self,
        sw: &dyn WorldSwitch,
        vcpu: &mut VcpuContext,
        info: &ExitInfo,
        exit: Exit,
    ) -> Flow {
        match exit {
            Exit::Hvc { .. } => return self.smccc(vcpu),
            Exit::DataAbort(abort) => self.mmio(sw, vcpu, info, &abort),
            Exit::SysReg(access) => self.sysreg(sw, vcpu, info, &access),
            // SAFETY: `vcpu` is the loaded vCPU.
            Exit::FpSimdAccess => unsafe { sw.fp_trap(vcpu) },
            other => {
                println!(
                    "[vmm]     {}: not emulated -> UNDEFINED injected",
                    other.reason()
                );
                inject::inject_undefined(sw, vcpu);
                self.injected += 1;
            }
        }
        Flow::Resume
    }

    /// An `HVC`: an SMCCC call, PSCI included.
    fn smccc(&mut self, vcpu: &mut VcpuContext) -> Flow {
        let mut args = [0; SMCCC_ARGS];
        args.copy_from_slice(&vcpu.regs.x[1..=SMCCC_ARGS]);
        let call = SmcccCall::new(vcpu.regs.x[0], args);
        let name = function_name(call.function_id);
        match smccc::dispatch(&call, &mut self.vm) {
            CallOutcome::Return(results) => {
                vcpu.regs.x[..SMCCC_RESULTS].copy_from_slice(&results);
                println!(
                    "[vmm]     hvc: {name} -> x0 = {}",
                    describe_x0(call.function_id, results[0])
                );
                Flow::Resume
            }
            CallOutcome::SystemOff | CallOutcome::SystemReset => {
                println!("[vmm]     hvc: {name} -> the VM stops");
                Flow::Stop
            }
            CallOutcome::CpuOff => {
                println!("[vmm]     hvc: {name} -> the only running vCPU is off, the VM stops");
                Flow::Stop
            }
            CallOutcome::CpuSuspend { .. } => {
                // Allowed by PSCI for every state: behave as WFI and return SUCCESS.
                vcpu.regs.x[0] = PsciReturn::Success.to_reg();
                println!("[vmm]     hvc: {name} -> treated as standby, x0 = SUCCESS");
                Flow::Resume
            }
        }
    }

    /// A data abort: an access to an emulated device, or to nothing at all.
    fn mmio(
        &mut self,
        sw: &dyn WorldSwitch,
        vcpu: &mut VcpuContext,
        info: &ExitInfo,
        abort: &DataAbort,
    ) {
        let Some(access) = MmioAccess::from_abort(abort) else {
            println!(
                "[vmm]     dabt at IPA {:#x} without a valid syndrome -> external abort injected",
                abort.ipa
            );
            self.inject_abort(sw, vcpu, abort);
            return;
        };
        let device = self.bus.region_name(access.ipa).unwrap_or("-");
        let bytes = access.size.bytes();
        // One vCPU, and the toy UART has no interrupt line: no events to forward.
        let mut caller = MmioCaller {
            vcpu: 0,
            events: &mut NoEvents,
        };
        match self
            .bus
            .dispatch(&access, vcpu.regs.read(access.rt), &mut caller)
        {
            MmioOutcome::Read(value) => {
                vcpu.regs.write(access.rt, value);
                inject::skip_instruction(vcpu, info.esr);
                println!(
                    "[vmm]     dabt: {bytes}-byte read of {device} @ {:#x} -> x{} = {value:#x}",
                    access.ipa, access.rt
                );
            }
            MmioOutcome::WriteDone => {
                inject::skip_instruction(vcpu, info.esr);
                let value = access.store_value(vcpu.regs.read(access.rt));
                println!(
                    "[vmm]     dabt: {bytes}-byte write of {value:#x} to {device} @ {:#x}",
                    access.ipa
                );
            }
            MmioOutcome::Unbacked => {
                let ipa = access.ipa;
                println!(
                    "[vmm]     dabt: {bytes}-byte access to {ipa:#x}: unbacked -> abort injected"
                );
                self.inject_abort(sw, vcpu, abort);
            }
            MmioOutcome::DeviceError { device, error } => {
                println!("[vmm]     dabt: {device} refused the access ({error}) -> abort injected");
                self.inject_abort(sw, vcpu, abort);
            }
        }
    }

    /// A trapped `MSR`/`MRS`: only the ID register the guest may read is emulated.
    fn sysreg(
        &mut self,
        sw: &dyn WorldSwitch,
        vcpu: &mut VcpuContext,
        info: &ExitInfo,
        access: &SysRegAccess,
    ) {
        let name = access.name().map_or_else(
            || {
                format!(
                    "S{}_{}_C{}_C{}_{}",
                    access.op0, access.op1, access.crn, access.crm, access.op2
                )
            },
            String::from,
        );
        let op = if access.is_read { "mrs" } else { "msr" };
        if access.is_read && access.encoding() == regs::ID_AA64PFR0_EL1 {
            vcpu.regs.write(access.rt, GUEST_ID_AA64PFR0);
            inject::skip_instruction(vcpu, info.esr);
            println!(
                "[vmm]     sysreg: {op} {name} -> x{} = {GUEST_ID_AA64PFR0:#x} (sanitized)",
                access.rt
            );
        } else {
            println!("[vmm]     sysreg: {op} {name}: not emulated -> UNDEFINED injected");
            inject::inject_undefined(sw, vcpu);
            self.injected += 1;
        }
    }

    /// Answers a refused data access with a synchronous external abort, as real hardware
    /// would for an address nothing decodes.
    fn inject_abort(&mut self, sw: &dyn WorldSwitch, vcpu: &mut VcpuContext, abort: &DataAbort) {
        inject::inject_data_abort(sw, vcpu, abort.far, abort.wnr);
        self.injected += 1;
    }
}

/// The name of an SMCCC function ID the toy guest may call.
fn function_name(id: u32) -> &'static str {
    match id {
        psci::PSCI_VERSION => "PSCI_VERSION",
        psci::CPU_ON | psci::CPU_ON_64 => "CPU_ON",
        psci::CPU_OFF => "CPU_OFF",
        psci::CPU_SUSPEND | psci::CPU_SUSPEND_64 => "CPU_SUSPEND",
        psci::AFFINITY_INFO | psci::AFFINITY_INFO_64 => "AFFINITY_INFO",
        psci::SYSTEM_OFF => "SYSTEM_OFF",
        psci::SYSTEM_RESET => "SYSTEM_RESET",
        psci::PSCI_FEATURES => "PSCI_FEATURES",
        smccc::SMCCC_VERSION => "SMCCC_VERSION",
        _ => "unknown function",
    }
}

/// `X0` after a call, in words: the version for `PSCI_VERSION`, the state for
/// `AFFINITY_INFO`, the return code otherwise.
fn describe_x0(id: u32, x0: u64) -> String {
    /// PSCI versions are `major << 16 | minor`.
    const VERSION_MAJOR_SHIFT: u32 = 16;
    /// The minor version's bits.
    const VERSION_MINOR_MASK: u64 = 0xffff;
    match id {
        psci::PSCI_VERSION => format!(
            "{x0:#x} (PSCI {}.{})",
            x0 >> VERSION_MAJOR_SHIFT,
            x0 & VERSION_MINOR_MASK
        ),
        psci::AFFINITY_INFO | psci::AFFINITY_INFO_64 if (x0 as i64) >= 0 => {
            let states = [
                AffinityState::On,
                AffinityState::Off,
                AffinityState::OnPending,
            ];
            match states.into_iter().find(|s| *s as u64 == x0) {
                Some(state) => format!("{x0} ({state:?})"),
                None => format!("{x0:#x}"),
            }
        }
        _ => match PSCI_RETURNS.into_iter().find(|r| r.to_reg() == x0) {
            Some(code) => format!("{} ({code:?})", x0 as i64),
            None => format!("{x0:#x}"),
        },
    }
}
