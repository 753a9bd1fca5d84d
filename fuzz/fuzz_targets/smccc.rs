//! SMCCC/PSCI dispatch (`el2_core::smccc::dispatch`): any function ID and arguments, with a
//! VM whose vCPUs' power states come from the input. Never panics; `CPU_ON` and
//! `AFFINITY_INFO` only reach the host with a valid affinity.
#![no_main]

use el2_core::psci::{AffinityState, PsciHost, PsciReturn, MPIDR_AFFINITY_MASK};
use el2_core::smccc::{dispatch, SmcccCall};
use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

/// vCPUs of the fuzzed VM.
const VCPUS: usize = 4;

struct Vm {
    on: [bool; VCPUS],
}

impl PsciHost for Vm {
    fn cpu_on(&mut self, target: u64, _entry: u64, _context_id: u64) -> PsciReturn {
        assert_eq!(target & !MPIDR_AFFINITY_MASK, 0, "{target:#x}");
        match usize::try_from(target)
            .ok()
            .and_then(|t| self.on.get_mut(t))
        {
            None => PsciReturn::InvalidParameters,
            Some(true) => PsciReturn::AlreadyOn,
            Some(on) => {
                *on = true;
                PsciReturn::Success
            }
        }
    }
    fn affinity_info(&self, target: u64) -> Result<AffinityState, PsciReturn> {
        assert_eq!(target & !MPIDR_AFFINITY_MASK, 0, "{target:#x}");
        match usize::try_from(target).ok().and_then(|t| self.on.get(t)) {
            None => Err(PsciReturn::InvalidParameters),
            Some(true) => Ok(AffinityState::On),
            Some(false) => Ok(AffinityState::Off),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut vm = Vm {
        on: [true, input.bool(), input.bool(), input.bool()],
    };
    while !input.is_empty() {
        let x0 = input.u64();
        let args = [0; 6].map(|_: u64| {
            if input.bool() {
                input.u64()
            } else {
                u64::from(input.u8())
            }
        });
        let out = dispatch(&SmcccCall::new(x0, args), &mut vm);
        let _ = format!("{out:?}");
    }
});
