//! Power State Coordination Interface (Arm DEN0022, PSCI 1.0) for guests.
//!
//! Implemented: `PSCI_VERSION`, `PSCI_FEATURES`, `CPU_SUSPEND`, `CPU_OFF`, `CPU_ON`,
//! `AFFINITY_INFO`, `MIGRATE_INFO_TYPE`, `SYSTEM_OFF`, `SYSTEM_RESET`, in the SMC32 form and,
//! where PSCI defines one, the SMC64 form. Everything else in the PSCI range answers
//! `NOT_SUPPORTED`.
//!
//! What depends on the VM (which vCPUs exist, their state, which entry addresses are valid
//! guest RAM) is asked of the [`PsciHost`]; what only changes the calling vCPU or the whole VM
//! comes back as a [`CallOutcome`].

use crate::smccc::{ArchWorkaround, CallOutcome, SmcccCall, WorkaroundState, SMCCC_VERSION};

/// `PSCI_VERSION`.
pub const PSCI_VERSION: u32 = 0x8400_0000;
/// `CPU_SUSPEND` (SMC32).
pub const CPU_SUSPEND: u32 = 0x8400_0001;
/// `CPU_SUSPEND` (SMC64).
pub const CPU_SUSPEND_64: u32 = 0xC400_0001;
/// `CPU_OFF`.
pub const CPU_OFF: u32 = 0x8400_0002;
/// `CPU_ON` (SMC32).
pub const CPU_ON: u32 = 0x8400_0003;
/// `CPU_ON` (SMC64).
pub const CPU_ON_64: u32 = 0xC400_0003;
/// `AFFINITY_INFO` (SMC32).
pub const AFFINITY_INFO: u32 = 0x8400_0004;
/// `AFFINITY_INFO` (SMC64).
pub const AFFINITY_INFO_64: u32 = 0xC400_0004;
/// `MIGRATE` (SMC32; not supported).
pub const MIGRATE: u32 = 0x8400_0005;
/// `MIGRATE_INFO_TYPE`.
pub const MIGRATE_INFO_TYPE: u32 = 0x8400_0006;
/// `MIGRATE_INFO_UP_CPU` (SMC32; not supported).
pub const MIGRATE_INFO_UP_CPU: u32 = 0x8400_0007;
/// `SYSTEM_OFF`.
pub const SYSTEM_OFF: u32 = 0x8400_0008;
/// `SYSTEM_RESET`.
pub const SYSTEM_RESET: u32 = 0x8400_0009;
/// `PSCI_FEATURES`.
pub const PSCI_FEATURES: u32 = 0x8400_000A;

/// The version we implement, 1.0: `major << 16 | minor`.
pub const PSCI_VERSION_1_0: u64 = 0x1_0000;

/// `MIGRATE_INFO_TYPE` answer: "Trusted OS is not present or does not require migration".
pub const MIGRATE_INFO_TYPE_NOT_REQUIRED: u64 = 2;

/// MPIDR affinity fields: Aff3 \[39:32\], Aff2 \[23:16\], Aff1 \[15:8\], Aff0 \[7:0\].
/// PSCI requires every other bit of a `target_cpu` argument to be zero.
pub const MPIDR_AFFINITY_MASK: u64 = 0xff_00ff_ffff;

/// PSCI return codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum PsciReturn {
    /// `SUCCESS`.
    Success = 0,
    /// `NOT_SUPPORTED`.
    NotSupported = -1,
    /// `INVALID_PARAMETERS`.
    InvalidParameters = -2,
    /// `DENIED`.
    Denied = -3,
    /// `ALREADY_ON`.
    AlreadyOn = -4,
    /// `ON_PENDING`.
    OnPending = -5,
    /// `INTERNAL_FAILURE`.
    InternalFailure = -6,
    /// `NOT_PRESENT`.
    NotPresent = -7,
    /// `DISABLED`.
    Disabled = -8,
    /// `INVALID_ADDRESS`.
    InvalidAddress = -9,
}

impl PsciReturn {
    /// The value for `X0`: the code sign-extended to 64 bits.
    pub const fn to_reg(self) -> u64 {
        self as i32 as i64 as u64
    }
}

/// `AFFINITY_INFO` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum AffinityState {
    /// At least one core of the affinity instance is on.
    On = 0,
    /// All cores are off.
    Off = 1,
    /// A `CPU_ON` is in progress.
    OnPending = 2,
}

/// What the PSCI dispatcher needs from the VM.
pub trait PsciHost {
    /// Start vCPU `target_mpidr` (affinity bits only, already validated against
    /// [`MPIDR_AFFINITY_MASK`]) at `entry` with `X0 = context_id`, in the state PSCI
    /// prescribes (EL1h, MMU and caches off, interrupts masked).
    ///
    /// Return `Success`, or `InvalidParameters` (no such vCPU), `AlreadyOn`, `OnPending`,
    /// `InvalidAddress` (`entry` is not in guest memory).
    fn cpu_on(&mut self, target_mpidr: u64, entry: u64, context_id: u64) -> PsciReturn;

    /// The state of vCPU `target_mpidr`, or `Err(InvalidParameters)` if there is no such vCPU.
    fn affinity_info(&self, target_mpidr: u64) -> Result<AffinityState, PsciReturn>;

    /// Whether the CPUs need a Spectre workaround offered through SMCCC (see
    /// [`crate::smccc::dispatch`]). The default is what the machine's firmware said at boot
    /// ([`crate::smccc::set_host_workarounds`]; "not required" if nothing was set).
    fn arch_workaround(&self, wa: ArchWorkaround) -> WorkaroundState {
        crate::smccc::host_workaround(wa)
    }
}

/// True for function IDs in the PSCI range: standard secure service (owner 4), fast call,
/// function number 0x00..=0x1F, SMC32 or SMC64.
pub const fn is_psci_id(id: u32) -> bool {
    id & 0xBFFF_FFE0 == 0x8400_0000
}

/// The implemented PSCI functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Function {
    Version,
    CpuSuspend,
    CpuOff,
    CpuOn,
    AffinityInfo,
    MigrateInfoType,
    SystemOff,
    SystemReset,
    Features,
}

impl Function {
    /// Map an implemented function ID (SMC32, or SMC64 where PSCI defines that form).
    const fn from_id(id: u32) -> Option<Function> {
        Some(match id {
            PSCI_VERSION => Function::Version,
            CPU_SUSPEND | CPU_SUSPEND_64 => Function::CpuSuspend,
            CPU_OFF => Function::CpuOff,
            CPU_ON | CPU_ON_64 => Function::CpuOn,
            AFFINITY_INFO | AFFINITY_INFO_64 => Function::AffinityInfo,
            MIGRATE_INFO_TYPE => Function::MigrateInfoType,
            SYSTEM_OFF => Function::SystemOff,
            SYSTEM_RESET => Function::SystemReset,
            PSCI_FEATURES => Function::Features,
            _ => return None,
        })
    }
}

/// `CPU_SUSPEND` `power_state` (original format): StateID [15:0], StateType [16]
/// (0 standby, 1 power-down), PowerLevel [25:24]; the other bits are reserved, must be zero.
const POWER_STATE_RESERVED: u32 = 0xFCFE_0000;
const POWER_STATE_TYPE_POWERDOWN: u32 = 1 << 16;

/// Dispatch a call whose ID is in the PSCI range (see [`is_psci_id`]); any other ID, or an
/// unimplemented PSCI function, answers `NOT_SUPPORTED`. Never panics.
pub fn dispatch(call: &SmcccCall, host: &mut dyn PsciHost) -> CallOutcome {
    let Some(function) = Function::from_id(call.function_id) else {
        return ret(PsciReturn::NotSupported);
    };
    match function {
        Function::Version => CallOutcome::Return([PSCI_VERSION_1_0, 0, 0, 0]),
        Function::Features => CallOutcome::Return([features(call.arg(1) as u32), 0, 0, 0]),
        Function::CpuOff => CallOutcome::CpuOff,
        Function::SystemOff => CallOutcome::SystemOff,
        Function::SystemReset => CallOutcome::SystemReset,
        Function::MigrateInfoType => CallOutcome::Return([MIGRATE_INFO_TYPE_NOT_REQUIRED, 0, 0, 0]),
        Function::CpuOn => {
            let target = call.arg(1);
            if target & !MPIDR_AFFINITY_MASK != 0 {
                return ret(PsciReturn::InvalidParameters);
            }
            ret(host.cpu_on(target, call.arg(2), call.arg(3)))
        }
        Function::AffinityInfo => {
            let target = call.arg(1);
            let level = call.arg(2);
            if level != 0 || target & !MPIDR_AFFINITY_MASK != 0 {
                return ret(PsciReturn::InvalidParameters);
            }
            match host.affinity_info(target) {
                Ok(state) => CallOutcome::Return([state as u64, 0, 0, 0]),
                Err(code) => ret(code),
            }
        }
        Function::CpuSuspend => {
            // power_state is a 32-bit parameter in both forms.
            let power_state = call.arg(1) as u32;
            if power_state & POWER_STATE_RESERVED != 0 {
                return ret(PsciReturn::InvalidParameters);
            }
            CallOutcome::CpuSuspend {
                standby: power_state & POWER_STATE_TYPE_POWERDOWN == 0,
                entry: call.arg(2),
                context_id: call.arg(3),
            }
        }
    }
}

fn ret(code: PsciReturn) -> CallOutcome {
    CallOutcome::Return([code.to_reg(), 0, 0, 0])
}

/// `PSCI_FEATURES(function_id)`: 0 for each implemented function (for `CPU_SUSPEND`, the
/// feature flags: bit 1 = 0 no OS-initiated mode, bit 0 = 0 original `power_state` format),
/// and for `SMCCC_VERSION` (that is how a guest learns SMCCC 1.1 is present);
/// `NOT_SUPPORTED` otherwise.
fn features(queried: u32) -> u64 {
    if queried == SMCCC_VERSION || Function::from_id(queried).is_some() {
        0
    } else {
        PsciReturn::NotSupported.to_reg()
    }
}

/// A fake [`PsciHost`] for host tests: a VM with a fixed set of vCPUs and RAM range.
#[cfg(test)]
pub(crate) mod test_host {
    use super::*;
    use alloc::vec::Vec;

    /// vCPUs by MPIDR, each with its state; RAM is `[0x4000_0000, 0x8000_0000)`.
    pub(crate) struct FakeHost {
        pub cpus: Vec<(u64, AffinityState)>,
        pub started: Vec<(u64, u64, u64)>,
        pub workaround: WorkaroundState,
    }

    impl FakeHost {
        pub fn new() -> FakeHost {
            FakeHost {
                cpus: alloc::vec![
                    (0x0, AffinityState::On),
                    (0x1, AffinityState::Off),
                    (0x100, AffinityState::OnPending),
                    (0x1_0000_0000, AffinityState::Off),
                ],
                started: Vec::new(),
                workaround: WorkaroundState::NotRequired,
            }
        }
    }

    impl PsciHost for FakeHost {
        fn cpu_on(&mut self, target: u64, entry: u64, ctx: u64) -> PsciReturn {
            let Some(cpu) = self.cpus.iter_mut().find(|c| c.0 == target) else {
                return PsciReturn::InvalidParameters;
            };
            match cpu.1 {
                AffinityState::On => PsciReturn::AlreadyOn,
                AffinityState::OnPending => PsciReturn::OnPending,
                AffinityState::Off if !(0x4000_0000..0x8000_0000).contains(&entry) => {
                    PsciReturn::InvalidAddress
                }
                AffinityState::Off => {
                    cpu.1 = AffinityState::OnPending;
                    self.started.push((target, entry, ctx));
                    PsciReturn::Success
                }
            }
        }

        fn affinity_info(&self, target: u64) -> Result<AffinityState, PsciReturn> {
            self.cpus
                .iter()
                .find(|c| c.0 == target)
                .map(|c| c.1)
                .ok_or(PsciReturn::InvalidParameters)
        }

        fn arch_workaround(&self, _wa: ArchWorkaround) -> WorkaroundState {
            self.workaround
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_host::FakeHost;
    use super::*;
    use crate::smccc;

    fn call(id: u32, a1: u64, a2: u64, a3: u64) -> SmcccCall {
        SmcccCall::new(id as u64, [a1, a2, a3, 0, 0, 0])
    }

    /// Through the top-level SMCCC dispatcher, as the run loop calls it.
    fn run(host: &mut FakeHost, id: u32, a1: u64, a2: u64, a3: u64) -> CallOutcome {
        smccc::dispatch(&call(id, a1, a2, a3), host)
    }

    fn x0(outcome: CallOutcome) -> i64 {
        match outcome {
            CallOutcome::Return(regs) => regs[0] as i64,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn version_and_migrate_info() {
        let h = &mut FakeHost::new();
        assert_eq!(x0(run(h, PSCI_VERSION, 0, 0, 0)), 0x1_0000);
        assert_eq!(x0(run(h, MIGRATE_INFO_TYPE, 0, 0, 0)), 2);
        assert_eq!(x0(run(h, MIGRATE, 0, 0, 0)), -1);
        assert_eq!(x0(run(h, MIGRATE_INFO_UP_CPU, 0, 0, 0)), -1);
    }

    #[test]
    fn features() {
        let h = &mut FakeHost::new();
        for id in [
            PSCI_VERSION,
            CPU_SUSPEND,
            CPU_SUSPEND_64,
            CPU_OFF,
            CPU_ON,
            CPU_ON_64,
            AFFINITY_INFO,
            AFFINITY_INFO_64,
            MIGRATE_INFO_TYPE,
            SYSTEM_OFF,
            SYSTEM_RESET,
            PSCI_FEATURES,
            SMCCC_VERSION,
        ] {
            assert_eq!(x0(run(h, PSCI_FEATURES, id as u64, 0, 0)), 0, "{id:#x}");
        }
        // CPU_SUSPEND flags: original format, no OS-initiated mode -> 0 (checked above).
        for id in [
            MIGRATE,
            0xC400_0000, // no SMC64 PSCI_VERSION
            0xC400_0002, // no SMC64 CPU_OFF
            0x8400_000E, // SYSTEM_SUSPEND
            0x8400_0012, // SYSTEM_RESET2 (PSCI 1.1)
            0x8000_0001,
            0,
        ] {
            assert_eq!(x0(run(h, PSCI_FEATURES, id as u64, 0, 0)), -1, "{id:#x}");
        }
        // The queried ID is a W register.
        assert_eq!(
            x0(run(
                h,
                PSCI_FEATURES,
                0xffff_ffff_0000_0000 | CPU_ON as u64,
                0,
                0
            )),
            0
        );
    }

    #[test]
    fn cpu_on() {
        let h = &mut FakeHost::new();
        assert_eq!(x0(run(h, CPU_ON_64, 1, 0x4008_0000, 0xabcd)), 0);
        assert_eq!(h.started, [(1, 0x4008_0000, 0xabcd)]);
        assert_eq!(x0(run(h, CPU_ON_64, 1, 0x4008_0000, 0)), -5); // now ON_PENDING
        assert_eq!(x0(run(h, CPU_ON_64, 0, 0x4008_0000, 0)), -4); // ALREADY_ON
        assert_eq!(x0(run(h, CPU_ON_64, 7, 0x4008_0000, 0)), -2); // no such CPU
        assert_eq!(x0(run(h, CPU_ON_64, 0x1_0000_0000, 0x1000, 0)), -9); // bad entry

        // Non-affinity bits set in the MPIDR (e.g. bit 31 "RES1" or U bit 30) are invalid.
        assert_eq!(x0(run(h, CPU_ON_64, 0x8000_0001, 0x4008_0000, 0)), -2);
        assert_eq!(x0(run(h, CPU_ON_64, 1 << 40, 0x4008_0000, 0)), -2);
    }

    #[test]
    fn cpu_on_smc32_truncates() {
        let h = &mut FakeHost::new();
        // SMC32: all three arguments are W registers.
        assert_eq!(
            x0(run(
                h,
                CPU_ON,
                0xffff_ffff_0000_0001,
                0xdead_0000_4000_1000,
                0x1_0000_0002
            )),
            0
        );
        assert_eq!(h.started, [(1, 0x4000_1000, 2)]);
        // Aff3 (bits [39:32]) cannot be expressed through SMC32: 0x1_0000_0000 becomes 0.
        assert_eq!(x0(run(h, CPU_ON, 0x1_0000_0000, 0x4000_0000, 0)), -4);
        // ...but can through SMC64.
        assert_eq!(x0(run(h, CPU_ON_64, 0x1_0000_0000, 0x4000_0000, 0)), 0);
    }

    #[test]
    fn affinity_info() {
        let h = &mut FakeHost::new();
        assert_eq!(x0(run(h, AFFINITY_INFO_64, 0, 0, 0)), 0);
        assert_eq!(x0(run(h, AFFINITY_INFO_64, 1, 0, 0)), 1);
        assert_eq!(x0(run(h, AFFINITY_INFO_64, 0x100, 0, 0)), 2);
        assert_eq!(x0(run(h, AFFINITY_INFO_64, 0x5, 0, 0)), -2);
        // Only level 0 is supported.
        for level in [1, 2, 3, 4, u64::MAX] {
            assert_eq!(x0(run(h, AFFINITY_INFO_64, 0, level, 0)), -2);
        }
        // SMC32: level 0x1_0000_0000 truncates to 0, target too.
        assert_eq!(
            x0(run(
                h,
                AFFINITY_INFO,
                0xffff_0000_0000_0001,
                0x1_0000_0000,
                0
            )),
            1
        );
        assert_eq!(x0(run(h, AFFINITY_INFO_64, 1 << 31, 0, 0)), -2);
    }

    #[test]
    fn off_reset_and_cpu_off() {
        let h = &mut FakeHost::new();
        assert_eq!(run(h, CPU_OFF, 0, 0, 0), CallOutcome::CpuOff);
        assert_eq!(run(h, SYSTEM_OFF, 0, 0, 0), CallOutcome::SystemOff);
        assert_eq!(run(h, SYSTEM_RESET, 0, 0, 0), CallOutcome::SystemReset);
        // No SMC64 forms of these.
        assert_eq!(x0(run(h, 0xC400_0008, 0, 0, 0)), -1);
        assert_eq!(x0(run(h, 0xC400_0009, 0, 0, 0)), -1);
    }

    #[test]
    fn cpu_suspend() {
        let h = &mut FakeHost::new();
        assert_eq!(
            run(h, CPU_SUSPEND_64, 0, 0x4000_0000, 7),
            CallOutcome::CpuSuspend {
                standby: true,
                entry: 0x4000_0000,
                context_id: 7
            }
        );
        // StateType = 1 (power-down), PowerLevel 1, StateID 3; SMC32 truncates entry/context.
        assert_eq!(
            run(h, CPU_SUSPEND, 0x0101_0003, 0x1_4000_0000, 0x1_0000_0008),
            CallOutcome::CpuSuspend {
                standby: false,
                entry: 0x4000_0000,
                context_id: 8
            }
        );
        // Reserved bits in power_state.
        assert_eq!(x0(run(h, CPU_SUSPEND, 1 << 20, 0, 0)), -2);
        assert_eq!(x0(run(h, CPU_SUSPEND_64, 1 << 31, 0, 0)), -2);
        // power_state is 32-bit even for SMC64: upper bits ignored.
        assert!(matches!(
            run(h, CPU_SUSPEND_64, 0xffff_ffff_0000_0000, 0, 0),
            CallOutcome::CpuSuspend { standby: true, .. }
        ));
    }

    #[test]
    fn unknown_psci_ids() {
        let h = &mut FakeHost::new();
        for id in [
            0x8400_000Bu32,
            0x8400_000E,
            0xC400_000E,
            0x8400_0012,
            0x8400_001F,
            0xC400_0006,
        ] {
            assert!(is_psci_id(id));
            assert_eq!(x0(run(h, id, 0, 0, 0)), -1, "{id:#x}");
        }
        assert!(!is_psci_id(0x8400_0020));
        assert!(!is_psci_id(0x0400_0000));
        assert_eq!(PsciReturn::InvalidAddress.to_reg(), (-9i64) as u64);
    }
}
