//! SMCCC and PSCI over HVC: versions and a few PSCI_FEATURES answers.

use crate::{fail, say};
use guest_rt::psci::{self, return_name};
use guest_rt::smccc::{self, Conduit};

/// PSCI functions whose PSCI_FEATURES answer is reported, and whether PSCI 1.0 requires them.
const FEATURES: [(&str, u32, bool); 7] = [
    ("PSCI_VERSION", psci::PSCI_VERSION, true),
    ("CPU_ON", psci::CPU_ON, true),
    ("CPU_OFF", psci::CPU_OFF, true),
    ("AFFINITY_INFO", psci::AFFINITY_INFO, true),
    ("SYSTEM_OFF", psci::SYSTEM_OFF, true),
    ("SYSTEM_RESET", psci::SYSTEM_RESET, true),
    ("SMCCC_VERSION", smccc::SMCCC_VERSION, false),
];

/// Queries and prints SMCCC_VERSION, PSCI_VERSION and PSCI_FEATURES; checks they are sane.
pub fn report() {
    let psci_version = psci::version();
    let (major, minor) = smccc::version_parts(psci_version);
    say!("PSCI_VERSION: {}.{} ({:#x})", major, minor, psci_version);
    if psci_version >> 31 != 0 || (major, minor) < (0, 2) {
        fail(format_args!(
            "PSCI_VERSION {psci_version:#x}: need PSCI 0.2 or later"
        ));
    }

    let mut smccc_version_listed = false;
    if major >= 1 {
        for (name, fid, required) in FEATURES {
            let ret = psci::features(fid);
            say!("PSCI_FEATURES({}): {} ({})", name, ret, return_name(ret));
            if required && ret < 0 {
                fail(format_args!(
                    "PSCI_FEATURES({name}) = {ret}: PSCI 1.0 requires it"
                ));
            }
            smccc_version_listed |= fid == smccc::SMCCC_VERSION && ret >= 0;
        }
    } else {
        say!("PSCI_FEATURES: not in PSCI {}.{}", major, minor);
    }

    let raw = smccc::call3(Conduit::Hvc, smccc::SMCCC_VERSION, 0, 0, 0);
    let version = smccc::result_of(smccc::SMCCC_VERSION, raw);
    if version < 0 {
        say!(
            "SMCCC_VERSION: {} ({}): SMCCC 1.0",
            version,
            return_name(version)
        );
        if smccc_version_listed {
            fail(format_args!(
                "SMCCC_VERSION listed by PSCI_FEATURES but returns {version}"
            ));
        }
    } else {
        let (major, minor) = smccc::version_parts(version as u64);
        say!("SMCCC_VERSION: {}.{} ({:#x})", major, minor, version);
        if (major, minor) < (1, 1) {
            fail(format_args!(
                "SMCCC_VERSION {version:#x}: an implementation must be >= 1.1"
            ));
        }
        // What the machine says about the Spectre workarounds (0: call it, 1 / -2: not
        // needed, -1: not supported), as Linux asks at boot.
        for (name, fid) in WORKAROUNDS {
            let raw = smccc::call3(
                Conduit::Hvc,
                smccc::SMCCC_ARCH_FEATURES,
                u64::from(fid),
                0,
                0,
            );
            let ret = smccc::result_of(smccc::SMCCC_ARCH_FEATURES, raw);
            say!("SMCCC_ARCH_FEATURES({}): {}", name, ret);
            if !(-2..=1).contains(&ret) {
                fail(format_args!(
                    "SMCCC_ARCH_FEATURES({name}) = {ret}: not an SMCCC answer"
                ));
            }
        }
    }
}

/// The workaround calls whose `SMCCC_ARCH_FEATURES` answer is reported.
const WORKAROUNDS: [(&str, u32); 3] = [
    ("WORKAROUND_1", 0x8000_8000),
    ("WORKAROUND_2", 0x8000_7fff),
    ("WORKAROUND_3", 0x8000_3fff),
];
