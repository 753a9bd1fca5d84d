//! The CPU identity the guest sees: CurrentEL, MIDR_EL1, MPIDR_EL1.

use crate::dtb::DtbFacts;
use crate::{fail, say};
use aarch64_cpu::registers::{CurrentEL, Readable, MIDR_EL1, MPIDR_EL1};

/// `MPIDR_EL1` affinity fields Aff3 (39:32) and Aff2..Aff0 (23:0), as used in DT `reg`.
const MPIDR_AFFINITY_MASK: u64 = 0xff_00ff_ffff;

/// Prints CurrentEL, MIDR_EL1, MPIDR_EL1; checks EL1 and that this CPU is in `/cpus`.
pub fn report(facts: &DtbFacts) {
    let el = CurrentEL.read(CurrentEL::EL);
    say!("CurrentEL: EL{}", el);
    if el != 1 {
        fail(format_args!("CurrentEL is EL{el}, expected EL1"));
    }

    let midr = MIDR_EL1.get();
    say!(
        "MIDR_EL1: {:#010x} (implementer {:#04x}, part {:#05x}, variant {}, revision {})",
        midr,
        MIDR_EL1.read(MIDR_EL1::Implementer),
        MIDR_EL1.read(MIDR_EL1::PartNum),
        MIDR_EL1.read(MIDR_EL1::Variant),
        MIDR_EL1.read(MIDR_EL1::Revision)
    );

    let mpidr = MPIDR_EL1.get();
    let affinity = mpidr & MPIDR_AFFINITY_MASK;
    say!("MPIDR_EL1: {:#x} (affinity {:#x})", mpidr, affinity);
    let listed = facts
        .cpu_ids
        .iter()
        .flatten()
        .any(|&id| id as u64 == affinity);
    if !listed {
        fail(format_args!(
            "MPIDR_EL1 affinity {affinity:#x} is not a /cpus reg"
        ));
    }
}
