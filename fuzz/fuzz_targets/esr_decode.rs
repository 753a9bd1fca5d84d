//! `ESR_EL2` decoding (`el2_core::exit`): the whole-syndrome decoder and each class's own
//! field decoders, on any syndrome, `FAR_EL2` and `HPFAR_EL2`. None may panic.
#![no_main]

use el2_core::exit::{decode, Cp32Access, DataAbort, ExitInfo, InstructionAbort, SysRegAccess};
use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let info = ExitInfo {
        esr: input.u64(),
        far: input.u64(),
        hpfar: input.u64(),
    };
    let exit = decode(&info);
    let _ = format!("{exit:?}");
    let _ = (info.ec(), info.iss(), info.iss2(), info.imm16(), info.il());
    let _ = info.instruction_len();
    let access = SysRegAccess::from_iss(info.iss());
    let _ = (access.encoding(), access.name());
    let _ = format!("{:?}", DataAbort::from_info(&info));
    let _ = DataAbort::from_info(&info).access_bytes();
    let _ = format!("{:?}", InstructionAbort::from_info(&info));
    let _ = Cp32Access::from_esr(info.ec(), info.iss());
});
