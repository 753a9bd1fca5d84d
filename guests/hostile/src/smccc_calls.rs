//! SMCCC calls over HVC that must be refused: unknown function identifiers (NOT_SUPPORTED,
//! -1 in all of x0) and PSCI calls with bad arguments (INVALID_PARAMETERS, -2).

use aarch64_cpu::registers::{Readable, MPIDR_EL1};
use guest_rt::fault;
use guest_rt::psci::{self, return_name};
use guest_rt::report::Report;
use guest_rt::smccc::{self, Conduit};

/// Unknown function identifiers and why they are unknown.
const UNKNOWN_FIDS: [(u32, &str); 4] = [
    (0x8200_ffff, "SiP service, fast SMC32, unassigned"),
    (0xc400_ffff, "standard service, fast SMC64, unassigned"),
    (0x84ff_0000, "fast SMC32 with reserved bits 23:16 set"),
    (0xbf00_0001, "reserved owner 63"),
];

/// An MPIDR no CPU has.
const NO_SUCH_MPIDR: u64 = 0xff00;
/// A PSCI function identifier no PSCI version defines.
const UNKNOWN_PSCI_FID: u32 = 0x8400_00ff;

/// Runs the SMCCC/PSCI checks.
pub fn run(report: &mut Report) {
    for (fid, why) in UNKNOWN_FIDS {
        let name = format_args!("SMCCC unknown {fid:#010x}");
        let (ret, f) =
            fault::catch(|| smccc::call(Conduit::Hvc, [u64::from(fid), 0, 0, 0, 0, 0, 0, 0]));
        match f {
            Some(f) => report.check(name, false, format_args!("HVC raised an exception: {f}")),
            None => report.check(
                name,
                ret[0] == u64::MAX,
                format_args!("{why}: x0={:#x}, NOT_SUPPORTED is {:#x}", ret[0], u64::MAX),
            ),
        }
    }

    psci_expect(
        report,
        "PSCI CPU_ON(0xff00)",
        || psci::cpu_on(NO_SUCH_MPIDR, park_address(), 0),
        psci::INVALID_PARAMETERS,
    );
    psci_expect(
        report,
        "PSCI AFFINITY_INFO(0xff00)",
        || psci::affinity_info(NO_SUCH_MPIDR, 0),
        psci::INVALID_PARAMETERS,
    );
    psci_expect(
        report,
        "PSCI_FEATURES(0x840000ff)",
        || psci::features(UNKNOWN_PSCI_FID),
        psci::NOT_SUPPORTED,
    );
    let me = MPIDR_EL1.get() & 0xff_00ff_ffff;
    psci_expect(
        report,
        "PSCI CPU_ON(self)",
        || psci::cpu_on(me, park_address(), 0),
        psci::ALREADY_ON,
    );
}

fn psci_expect(report: &mut Report, name: &str, call: impl FnOnce() -> i64, want: i64) {
    let (ret, f) = fault::catch(call);
    match f {
        Some(f) => report.check(name, false, format_args!("HVC raised an exception: {f}")),
        None => report.check(
            name,
            ret == want,
            format_args!(
                "{} ({}), expected {} ({})",
                ret,
                return_name(ret),
                want,
                return_name(want)
            ),
        ),
    }
}

core::arch::global_asm!(
    r#"
    .section .text.hostile_park, "ax"
    .global hostile_park
hostile_park:
    wfe
    b       hostile_park
"#
);

/// Entry point passed to CPU_ON: a loop that needs neither stack nor MMU, should a CPU
/// wrongly be started there.
fn park_address() -> u64 {
    // SAFETY: `hostile_park` is defined by the `global_asm!` above; it is never called from
    // Rust, only its address is taken.
    unsafe extern "C" {
        fn hostile_park() -> !;
    }
    hostile_park as *const () as u64
}
