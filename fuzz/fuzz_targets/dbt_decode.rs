//! The ARMv7-A decoders of `dbt-armv7`: any A32 word and any pair of Thumb halfwords
//! decode to an instruction (or UNDEFINED) without panicking.
#![no_main]

use dbt_armv7::{decode_a32, decode_thumb};
use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    while !input.is_empty() {
        let word = input.u32();
        let _ = format!("{:?}", decode_a32(word));
        let _ = format!("{:?}", decode_thumb(word as u16, (word >> 16) as u16));
    }
});
