//! `smc #0` from EL1: report only. Under plain QEMU (no EL3) it is UNDEFINED; under the
//! hypervisor (`HCR_EL2.TSC`) it traps to EL2 and is answered as an SMCCC call.

use crate::say;
use guest_rt::fault;
use guest_rt::psci::{self, return_name};
use guest_rt::smccc::{self, Conduit};

/// Makes PSCI_VERSION over SMC and prints what happened.
pub fn run() {
    let (ret, f) = fault::catch(|| smccc::call3(Conduit::Smc, psci::PSCI_VERSION, 0, 0, 0));
    match f {
        Some(f) if f.is_undefined() => {
            say!("smc #0 from EL1: UNDEFINED (report only: {f})")
        }
        Some(f) => say!("smc #0 from EL1: exception (report only: {f})"),
        None => {
            let r = smccc::result_of(psci::PSCI_VERSION, ret);
            let (major, minor) = smccc::version_parts(ret);
            say!(
                "smc #0 from EL1: answered PSCI_VERSION x0={ret:#x} ({}.{}, {}) (report only)",
                major,
                minor,
                if r < 0 { return_name(r) } else { "ok" }
            );
        }
    }
}
