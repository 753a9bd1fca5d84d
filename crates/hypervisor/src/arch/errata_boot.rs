//! At boot: the errata table's entries for this CPU into the log, the ones the hypervisor
//! applies switched on, and the firmware asked about the SMCCC Spectre workarounds
//! (`PSCI_FEATURES(SMCCC_VERSION)`, `SMCCC_VERSION`, `SMCCC_ARCH_FEATURES`), whose answers
//! guests then get (el2-core's `set_host_workarounds`).

use aarch64_cpu::registers::{Readable, ID_AA64MMFR1_EL1, ID_AA64PFR0_EL1, ID_AA64PFR1_EL1};
use el2_core::smccc::{
    self, ArchWorkaround, WorkaroundState, SMCCC_ARCH_FEATURES, SMCCC_ARCH_WORKAROUND_1,
    SMCCC_ARCH_WORKAROUND_2, SMCCC_ARCH_WORKAROUND_3, SMCCC_VERSION,
};

use super::gic;
use crate::errata::{self, FirmwareAnswer, Handling, Id};
use crate::platform::PsciConduit;

/// `PSCI_VERSION`.
const PSCI_VERSION: u32 = 0x8400_0000;
/// `PSCI_FEATURES`.
const PSCI_FEATURES: u32 = 0x8400_000a;

/// The conduit, for the workaround calls passed on from guests.
static CONDUIT: spin::Once<PsciConduit> = spin::Once::new();

fn firmware_call(conduit: PsciConduit, function_id: u32, arg: u64) -> i64 {
    let mut x0 = u64::from(function_id);
    match conduit {
        // SAFETY: an SMCCC fast call to the firmware; it preserves x4-x17 (SMCCC 1.1) and
        // the call's registers are declared clobbered.
        PsciConduit::Smc => unsafe {
            core::arch::asm!("smc #0", inout("x0") x0, inout("x1") arg => _,
                out("x2") _, out("x3") _, options(nostack))
        },
        // SAFETY: as above, through HVC (the firmware is an EL2 above us only in nesting).
        PsciConduit::Hvc => unsafe {
            core::arch::asm!("hvc #0", inout("x0") x0, inout("x1") arg => _,
                out("x2") _, out("x3") _, options(nostack))
        },
    }
    x0 as i64
}

/// A guest's workaround call, passed to the firmware.
fn forward(function_id: u32) {
    if let Some(&c) = CONDUIT.get() {
        firmware_call(c, function_id, 0);
    }
}

/// What the firmware answers to `SMCCC_ARCH_FEATURES` for each workaround, if it has SMCCC
/// 1.1 (asked only after `PSCI_FEATURES(SMCCC_VERSION)` says the call exists: on a machine
/// without it an SMC of an unknown function may be UNDEFINED).
fn ask_firmware(conduit: Option<PsciConduit>) -> ([FirmwareAnswer; 3], &'static str) {
    let none = [FirmwareAnswer::NotAsked; 3];
    let Some(c) = conduit else {
        return (none, "no PSCI conduit");
    };
    if firmware_call(c, PSCI_VERSION, 0) < 0x1_0000 {
        return (none, "PSCI < 1.0 (no PSCI_FEATURES)");
    }
    if firmware_call(c, PSCI_FEATURES, u64::from(SMCCC_VERSION)) != 0 {
        return (
            none,
            "PSCI_FEATURES(SMCCC_VERSION) not supported: no SMCCC 1.1",
        );
    }
    if firmware_call(c, SMCCC_VERSION, 0) < 0x1_0001 {
        return (none, "SMCCC 1.0");
    }
    let ask = |wa: u32| FirmwareAnswer::Said(firmware_call(c, SMCCC_ARCH_FEATURES, u64::from(wa)));
    (
        [
            ask(SMCCC_ARCH_WORKAROUND_1),
            ask(SMCCC_ARCH_WORKAROUND_2),
            ask(SMCCC_ARCH_WORKAROUND_3),
        ],
        "SMCCC 1.1",
    )
}

/// Switches on what the hypervisor does for erratum `id` (a no-op for errata it only logs
/// or passes to guests).
fn switch_on(id: Id) {
    use el2_core::switch::errata as sw;
    match id {
        Id::Cavium23154 => gic::v3::set_cavium_23154(),
        Id::Cavium27456 => sw::enable(sw::ICACHE_AFTER_VTTBR),
        Id::Cavium30115 => super::cpuif_trap::enable(),
        Id::Arm834220 => sw::enable(sw::AT_FOR_HPFAR),
        Id::Arm1319367 => {
            // Both checks are made where it matters: only the non-VHE regime is affected.
            sw::enable(sw::SPECULATIVE_AT);
            stage2::hw::block_el1_walks_for_tlbi();
        }
        _ => {}
    }
}

/// Logs and applies the errata of the CPU with `midr`; asks the firmware about the Spectre
/// workarounds and tells el2-core what to answer guests.
pub fn apply(midr: u64, conduit: Option<PsciConduit>) {
    let mut count = 0;
    for e in errata::matching(midr) {
        count += 1;
        match e.handling {
            Handling::Applied(how) => crate::hv_log!("errata: {}: applied: {how}", e.name),
            Handling::Guests(how) => crate::hv_log!("errata: {}: {how}", e.name),
            Handling::NotApplicable(why) => {
                crate::hv_log!("errata: {}: not applicable: {why}", e.name)
            }
            // A log line, not a warning: it is a fact of this build on this CPU, and
            // warnings are rate-limited for what guests do.
            Handling::Missing(what) => {
                crate::hv_log!("errata: {}: NOT worked around (needs {what})", e.name)
            }
        }
        switch_on(e.id);
    }
    if count == 0 {
        crate::hv_log!("errata: none known for MIDR_EL1 {midr:#x}");
    }
    // CSV2 (ID_AA64PFR0_EL1[59:56]) >= 1: branch targets cannot leak across contexts;
    // >= 3 (CSV2_3) or ECBHB (ID_AA64MMFR1_EL1[63:60]): no branch-history attack;
    // SSBS (ID_AA64PFR1_EL1[7:4]): the CPU offers speculative store bypass safe.
    let csv2 = (ID_AA64PFR0_EL1.get() >> 56) & 0xf;
    let ecbhb = (ID_AA64MMFR1_EL1.get() >> 60) & 0xf;
    let ssbs = (ID_AA64PFR1_EL1.get() >> 4) & 0xf;
    let (answers, how) = ask_firmware(conduit);
    let was = [
        ArchWorkaround::Wa1,
        ArchWorkaround::Wa2,
        ArchWorkaround::Wa3,
    ];
    let safe = [csv2 >= 1, ssbs >= 1, csv2 >= 3 || ecbhb >= 1];
    let states: [WorkaroundState; 3] =
        core::array::from_fn(|i| errata::workaround_state(was[i], answers[i], midr, safe[i]));
    if let Some(c) = conduit {
        CONDUIT.call_once(|| c);
    }
    smccc::set_host_workarounds(states, forward);
    let said = |a: FirmwareAnswer| match a {
        FirmwareAnswer::NotAsked => alloc::string::String::from("not asked"),
        FirmwareAnswer::Said(v) => alloc::format!("{v}"),
    };
    crate::hv_log!(
        "SMCCC workarounds for guests ({how}): WORKAROUND_1 {:?} (firmware: {}), WORKAROUND_2 {:?} (firmware: {}), WORKAROUND_3 {:?} (firmware: {})",
        states[0],
        said(answers[0]),
        states[1],
        said(answers[1]),
        states[2],
        said(answers[2])
    );
}

/// At the end of the run: what the world-switch workarounds did (only on CPUs that have
/// them), so a log shows they ran.
pub fn report() {
    use el2_core::switch::errata as sw;
    if super::cpuif_trap::enabled() {
        crate::hv_log!(
            "errata: 30115: {} guest GICv3 CPU-interface access(es) trapped and emulated",
            super::cpuif_trap::emulated()
        );
    }
    if sw::enabled(sw::AT_FOR_HPFAR) {
        let (resolved, retried) = sw::at_counts();
        crate::hv_log!(
            "errata: 834220: {resolved} guest abort(s) took their IPA from AT S1E1R, {retried} re-entered the guest (its stage 1 did not map FAR)"
        );
    }
}
