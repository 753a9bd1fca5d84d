//! SMC Calling Convention (Arm DEN0028, SMCCC 1.1) dispatch for guest `HVC`/`SMC` calls.
//!
//! A function ID (`W0`) is laid out as:
//!
//! ```text
//!   31     30      29:24   23:16  15:0
//! Fast  SMC64  Owner (OEN)  0    Function number
//! ```
//!
//! This module answers the Arm architecture calls (owner 0: `SMCCC_VERSION`,
//! `SMCCC_ARCH_FEATURES`, the `SMCCC_ARCH_WORKAROUND_n` queries) and hands the standard secure
//! service range used by PSCI (owner 4, functions 0x00..=0x1F) to [`crate::psci`]. Everything
//! else returns `NOT_SUPPORTED` (-1) in `X0`.
//!
//! The dispatcher is pure: the caller copies `X0..X6` of the vCPU into a [`SmcccCall`], runs
//! [`dispatch`], and applies the [`CallOutcome`] (for `SMC`, it also advances the PC: see
//! [`crate::exit::Exit::Smc`]).

use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use crate::psci::{self, PsciHost};

/// `SMCCC_VERSION` (SMC32).
pub const SMCCC_VERSION: u32 = 0x8000_0000;
/// `SMCCC_ARCH_FEATURES` (SMC32).
pub const SMCCC_ARCH_FEATURES: u32 = 0x8000_0001;
/// `SMCCC_ARCH_SOC_ID` (SMC32, SMCCC 1.2; not implemented here).
pub const SMCCC_ARCH_SOC_ID: u32 = 0x8000_0002;
/// `SMCCC_ARCH_WORKAROUND_1` (CVE-2017-5715, Spectre v2).
pub const SMCCC_ARCH_WORKAROUND_1: u32 = 0x8000_8000;
/// `SMCCC_ARCH_WORKAROUND_2` (CVE-2018-3639, Spectre v4 / SSBD).
pub const SMCCC_ARCH_WORKAROUND_2: u32 = 0x8000_7FFF;
/// `SMCCC_ARCH_WORKAROUND_3` (CVE-2022-23960, Spectre-BHB; also covers WORKAROUND_1).
pub const SMCCC_ARCH_WORKAROUND_3: u32 = 0x8000_3FFF;

/// The version we implement, 1.1: `major << 16 | minor`.
pub const SMCCC_VERSION_1_1: u64 = 0x1_0001;

/// `SUCCESS`.
pub const SMCCC_RET_SUCCESS: i64 = 0;
/// `NOT_SUPPORTED`: unknown function ID, or a feature not implemented.
pub const SMCCC_RET_NOT_SUPPORTED: i64 = -1;
/// `NOT_REQUIRED`: a workaround is not needed on this system (`SMCCC_ARCH_WORKAROUND_2`).
pub const SMCCC_RET_NOT_REQUIRED: i64 = -2;
/// `INVALID_PARAMETER`.
pub const SMCCC_RET_INVALID_PARAMETER: i64 = -3;
/// The positive answer to `SMCCC_ARCH_FEATURES(SMCCC_ARCH_WORKAROUND_1 / _3)` meaning "this
/// CPU is not affected, do not call the workaround" (what Linux KVM returns to its guests on
/// unaffected CPUs; Linux names it `SMCCC_ARCH_WORKAROUND_RET_UNAFFECTED`).
pub const SMCCC_ARCH_WORKAROUND_RET_UNAFFECTED: i64 = 1;

/// Function ID bit 31: fast call.
pub const FAST_CALL: u32 = 1 << 31;
/// Function ID bit 30: SMC64/HVC64 calling convention.
pub const SMC64: u32 = 1 << 30;

/// One guest call: the registers at the `HVC`/`SMC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmcccCall {
    /// The function ID, from `W0` (the upper half of `X0` is ignored).
    pub function_id: u32,
    /// `X1..X6`, as the guest left them.
    pub args: [u64; 6],
}

impl SmcccCall {
    /// Build a call from the guest's `X0` (truncated to `W0`) and `X1..X6`.
    pub const fn new(x0: u64, args: [u64; 6]) -> SmcccCall {
        SmcccCall {
            function_id: x0 as u32,
            args,
        }
    }

    /// True for the SMC64/HVC64 convention (bit 30).
    pub const fn is_smc64(&self) -> bool {
        self.function_id & SMC64 != 0
    }

    /// True for a fast call (bit 31). Yielding calls are not supported here.
    pub const fn is_fast(&self) -> bool {
        self.function_id & FAST_CALL != 0
    }

    /// The owning entity number (bits \[29:24\]): 0 Arm architecture, 4 standard secure
    /// service (PSCI), 5 standard hypervisor service, 6 vendor hypervisor...
    pub const fn owner(&self) -> u8 {
        ((self.function_id >> 24) & 0x3f) as u8
    }

    /// Argument `n` (1-based, `X1..X6`), as the callee must read it: for an SMC32 call the
    /// arguments are `W` registers, so the upper 32 bits are ignored. `n` outside 1..=6
    /// yields 0.
    pub const fn arg(&self, n: usize) -> u64 {
        if n == 0 || n > 6 {
            return 0;
        }
        let value = self.args[n - 1];
        if self.is_smc64() {
            value
        } else {
            value & 0xffff_ffff
        }
    }
}

/// What the caller does after a call was dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// Write `X0..X3` and resume the guest.
    Return([u64; 4]),
    /// PSCI `CPU_OFF`: stop this vCPU (it can be restarted by `CPU_ON`). `CPU_OFF` does not
    /// return on success.
    CpuOff,
    /// PSCI `SYSTEM_OFF`: shut the VM down.
    SystemOff,
    /// PSCI `SYSTEM_RESET`: reset the VM.
    SystemReset,
    /// PSCI `CPU_SUSPEND`. For `standby`, behave as `WFI` and then return `SUCCESS` (0) in
    /// `X0`. For a power-down state, the caller may either do the same (PSCI allows an
    /// implementation to return `SUCCESS` instead of powering down), or restart the vCPU at
    /// `entry` with `X0 = context_id` as after `CPU_ON`, after the wake-up event.
    CpuSuspend {
        /// `power_state.StateType` was 0 (standby/retention).
        standby: bool,
        /// Resume address for a power-down state.
        entry: u64,
        /// Value for `X0` at `entry`.
        context_id: u64,
    },
}

impl CallOutcome {
    /// A return with `X0 = value` (sign-extended from `i64`) and `X1..X3 = 0`.
    pub const fn ret(value: i64) -> CallOutcome {
        CallOutcome::Return([value as u64, 0, 0, 0])
    }
}

/// A Spectre-class mitigation that `SMCCC_ARCH_FEATURES` can be asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchWorkaround {
    /// `SMCCC_ARCH_WORKAROUND_1` (branch predictor invalidation).
    Wa1,
    /// `SMCCC_ARCH_WORKAROUND_2` (speculative store bypass).
    Wa2,
    /// `SMCCC_ARCH_WORKAROUND_3` (branch history).
    Wa3,
}

/// How the system stands regarding one [`ArchWorkaround`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum WorkaroundState {
    /// The CPUs are not affected: the guest must not call the workaround.
    NotRequired = 0,
    /// The CPUs are affected and the hypervisor implements the workaround call (its exception
    /// entry applies the mitigation; the call itself then returns immediately).
    Mitigated = 1,
    /// Affected and not mitigated: report `NOT_SUPPORTED`.
    Unknown = 2,
}

/// The machine's answers for WORKAROUND_1/2/3 (as `WorkaroundState as u8`), set once at
/// boot from what the firmware said (`set_host_workarounds`); "not required" until then.
static HOST_WORKAROUNDS: [AtomicU8; 3] = [AtomicU8::new(0), AtomicU8::new(0), AtomicU8::new(0)];
/// `fn(function_id)` that makes the workaround call to the firmware (0: none registered).
static FIRMWARE_CALL: AtomicUsize = AtomicUsize::new(0);

fn index(wa: ArchWorkaround) -> usize {
    match wa {
        ArchWorkaround::Wa1 => 0,
        ArchWorkaround::Wa2 => 1,
        ArchWorkaround::Wa3 => 2,
    }
}

/// Records, once at boot, how the machine stands on each workaround (from the firmware's
/// `SMCCC_ARCH_FEATURES` answers and the CPU errata table) and the function that makes a
/// workaround call to the firmware; [`PsciHost::arch_workaround`] answers guests from
/// these, and a guest's call of a `Mitigated` workaround is passed to `firmware_call`.
pub fn set_host_workarounds(states: [WorkaroundState; 3], firmware_call: fn(u32)) {
    for (slot, s) in HOST_WORKAROUNDS.iter().zip(states) {
        slot.store(s as u8, Ordering::Relaxed);
    }
    FIRMWARE_CALL.store(firmware_call as usize, Ordering::Release);
}

/// How the machine stands on `wa` (see [`set_host_workarounds`]).
pub fn host_workaround(wa: ArchWorkaround) -> WorkaroundState {
    match HOST_WORKAROUNDS[index(wa)].load(Ordering::Relaxed) {
        1 => WorkaroundState::Mitigated,
        2 => WorkaroundState::Unknown,
        _ => WorkaroundState::NotRequired,
    }
}

fn call_firmware(function_id: u32) {
    let f = FIRMWARE_CALL.load(Ordering::Acquire);
    if f != 0 {
        // SAFETY: only `set_host_workarounds` stores here, always a `fn(u32)`.
        let f: fn(u32) = unsafe { core::mem::transmute::<usize, fn(u32)>(f) };
        f(function_id);
    }
}

/// Dispatch one SMCCC call from the guest. Never panics, whatever the registers hold.
///
/// * `SMCCC_VERSION` -> 1.1 (`0x10001`).
/// * `SMCCC_ARCH_FEATURES(id)`: `SMCCC_VERSION`/`SMCCC_ARCH_FEATURES` -> 0; the workarounds as
///   Linux KVM answers them, following [`PsciHost::arch_workaround`] (default: not affected,
///   so WORKAROUND_1/3 -> 1 "unaffected", WORKAROUND_2 -> -2 `NOT_REQUIRED`); anything else
///   -> -1.
/// * `SMCCC_ARCH_WORKAROUND_n` calls -> nothing to do (X0 = 0) when mitigated, else -1.
/// * PSCI ids -> [`psci::dispatch`].
/// * Anything else -> `NOT_SUPPORTED` (-1).
pub fn dispatch(call: &SmcccCall, host: &mut dyn PsciHost) -> CallOutcome {
    match call.function_id {
        SMCCC_VERSION => CallOutcome::Return([SMCCC_VERSION_1_1, 0, 0, 0]),
        SMCCC_ARCH_FEATURES => CallOutcome::ret(arch_features(call.arg(1) as u32, host)),
        SMCCC_ARCH_WORKAROUND_1 | SMCCC_ARCH_WORKAROUND_2 | SMCCC_ARCH_WORKAROUND_3 => {
            let wa = workaround(call.function_id).unwrap_or(ArchWorkaround::Wa1);
            match host.arch_workaround(wa) {
                // SMCCC: the workaround calls return nothing; KVM leaves X0 = 0. The
                // mitigation is the firmware's: the call is passed on to it.
                WorkaroundState::Mitigated => {
                    call_firmware(call.function_id);
                    CallOutcome::ret(SMCCC_RET_SUCCESS)
                }
                _ => CallOutcome::ret(SMCCC_RET_NOT_SUPPORTED),
            }
        }
        id if psci::is_psci_id(id) => psci::dispatch(call, host),
        _ => CallOutcome::ret(SMCCC_RET_NOT_SUPPORTED),
    }
}

fn workaround(id: u32) -> Option<ArchWorkaround> {
    match id {
        SMCCC_ARCH_WORKAROUND_1 => Some(ArchWorkaround::Wa1),
        SMCCC_ARCH_WORKAROUND_2 => Some(ArchWorkaround::Wa2),
        SMCCC_ARCH_WORKAROUND_3 => Some(ArchWorkaround::Wa3),
        _ => None,
    }
}

/// `SMCCC_ARCH_FEATURES(queried)`.
fn arch_features(queried: u32, host: &dyn PsciHost) -> i64 {
    match queried {
        SMCCC_VERSION | SMCCC_ARCH_FEATURES => SMCCC_RET_SUCCESS,
        _ => match workaround(queried) {
            Some(wa) => match (wa, host.arch_workaround(wa)) {
                (_, WorkaroundState::Unknown) => SMCCC_RET_NOT_SUPPORTED,
                (_, WorkaroundState::Mitigated) => SMCCC_RET_SUCCESS,
                (ArchWorkaround::Wa2, WorkaroundState::NotRequired) => SMCCC_RET_NOT_REQUIRED,
                (_, WorkaroundState::NotRequired) => SMCCC_ARCH_WORKAROUND_RET_UNAFFECTED,
            },
            None => SMCCC_RET_NOT_SUPPORTED,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::psci::test_host::FakeHost;

    fn call(x0: u64, x1: u64) -> SmcccCall {
        SmcccCall::new(x0, [x1, 0, 0, 0, 0, 0])
    }

    fn x0(outcome: CallOutcome) -> i64 {
        match outcome {
            CallOutcome::Return(regs) => regs[0] as i64,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn version() {
        let mut host = FakeHost::new();
        assert_eq!(
            dispatch(&call(0x8000_0000, 0), &mut host),
            CallOutcome::Return([0x1_0001, 0, 0, 0])
        );
        // Upper half of X0 is ignored (W0).
        assert_eq!(
            x0(dispatch(&call(0xdead_beef_8000_0000, 0), &mut host)),
            0x1_0001
        );
    }

    #[test]
    fn arch_features_answers() {
        let mut host = FakeHost::new();
        let q = |host: &mut FakeHost, id: u64| x0(dispatch(&call(0x8000_0001, id), host));
        assert_eq!(q(&mut host, 0x8000_0000), 0);
        assert_eq!(q(&mut host, 0x8000_0001), 0);
        // Not affected (default): as KVM on an unaffected CPU.
        assert_eq!(q(&mut host, 0x8000_8000), 1);
        assert_eq!(q(&mut host, 0x8000_7FFF), -2);
        assert_eq!(q(&mut host, 0x8000_3FFF), 1);
        // Argument is a W register: upper bits ignored.
        assert_eq!(q(&mut host, 0xffff_ffff_8000_8000), 1);
        // Unknown ones.
        assert_eq!(q(&mut host, 0x8000_0002), -1);
        assert_eq!(q(&mut host, 0x1234), -1);
        assert_eq!(q(&mut host, 0x8400_0000), -1);
        // A mitigated or vulnerable system.
        host.workaround = WorkaroundState::Mitigated;
        assert_eq!(q(&mut host, 0x8000_8000), 0);
        assert_eq!(x0(dispatch(&call(0x8000_8000, 0), &mut host)), 0);
        host.workaround = WorkaroundState::Unknown;
        assert_eq!(q(&mut host, 0x8000_7FFF), -1);
        assert_eq!(x0(dispatch(&call(0x8000_8000, 0), &mut host)), -1);
    }

    /// A host that keeps the default `arch_workaround`: the machine's states.
    struct DefaultHost;
    impl PsciHost for DefaultHost {
        fn cpu_on(&mut self, _: u64, _: u64, _: u64) -> psci::PsciReturn {
            psci::PsciReturn::Denied
        }
        fn affinity_info(&self, _: u64) -> Result<psci::AffinityState, psci::PsciReturn> {
            Err(psci::PsciReturn::InvalidParameters)
        }
    }

    static FORWARDED: AtomicUsize = AtomicUsize::new(0);
    fn record(id: u32) {
        FORWARDED.store(id as usize, Ordering::SeqCst);
    }

    #[test]
    fn machine_states_reach_guests_and_mitigated_calls_reach_the_firmware() {
        set_host_workarounds(
            [
                WorkaroundState::Mitigated,
                WorkaroundState::Unknown,
                WorkaroundState::NotRequired,
            ],
            record,
        );
        let mut host = DefaultHost;
        let q = |host: &mut DefaultHost, id: u64| x0(dispatch(&call(0x8000_0001, id), host));
        assert_eq!(q(&mut host, 0x8000_8000), 0);
        assert_eq!(q(&mut host, 0x8000_7FFF), -1);
        assert_eq!(q(&mut host, 0x8000_3FFF), 1);
        assert_eq!(x0(dispatch(&call(0x8000_8000, 0), &mut host)), 0);
        assert_eq!(FORWARDED.load(Ordering::SeqCst), 0x8000_8000);
        // An unmitigated workaround is refused and not forwarded.
        FORWARDED.store(0, Ordering::SeqCst);
        assert_eq!(x0(dispatch(&call(0x8000_7FFF, 0), &mut host)), -1);
        assert_eq!(FORWARDED.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn unknown_ids() {
        let mut host = FakeHost::new();
        for id in [
            0u64,
            0x8000_0002,
            0x8000_FFFF,
            0xC000_0000,
            0x8600_0000,
            0xC600_0001,
            0x8400_0020,
            0x8400_FF00,
            0x0400_0000,
            0xffff_ffff,
        ] {
            assert_eq!(x0(dispatch(&call(id, 0), &mut host)), -1, "{id:#x}");
        }
    }

    #[test]
    fn smc32_args_truncated() {
        let c = SmcccCall::new(0x8400_0003, [0xffff_ffff_0000_0001, 2, 3, 4, 5, 6]);
        assert_eq!(c.arg(1), 1);
        assert_eq!(c.arg(0), 0);
        assert_eq!(c.arg(7), 0);
        let c = SmcccCall::new(0xC400_0003, [0xffff_ffff_0000_0001, 2, 3, 4, 5, 6]);
        assert_eq!(c.arg(1), 0xffff_ffff_0000_0001);
        assert_eq!(c.arg(6), 6);
        assert_eq!(c.owner(), 4);
        assert!(c.is_fast() && c.is_smc64());
    }
}
