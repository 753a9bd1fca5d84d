//! The ARMv7-A translator's front end and A64 back end (`dbt-armv7::translate`): guest code
//! from the input at any address, A32 or Thumb, privileged or not, is discovered into a
//! block and translated without panicking, with a side table entry per instruction and
//! every exit stub inside the block.
#![no_main]

use dbt_armv7::translate::frontend::{discover, Key};
use dbt_armv7::translate::{A64Gen, CodeGen};
use dbt_armv7::FlatRam;
use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

/// Guest RAM the code sits in.
const RAM_SIZE: u32 = 0x1000;
/// Host address the block is placed at.
const HOST_AT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let thumb = input.bool();
    let privileged = input.bool();
    let offset = (u32::from(input.u16()) % RAM_SIZE) & if thumb { !1 } else { !3 };
    let mut ram = FlatRam::new(0, RAM_SIZE as usize);
    let code = input.rest();
    ram.load(0, &code[..code.len().min(RAM_SIZE as usize)]);
    let gen = A64Gen::new();
    let (_, rt) = gen.runtime();
    let key = Key {
        pc: offset,
        thumb,
        privileged,
        asid: 0,
    };
    let b = discover(key, &mut ram, &gen);
    let hb = gen.translate(&b, HOST_AT, &rt);
    assert_eq!(hb.insn_starts.len(), b.insns.len(), "{key:?}");
    assert!(hb.insn_starts.windows(2).all(|w| w[0] <= w[1]));
    assert!(hb.code.len() % 4 == 0 && !hb.code.is_empty());
    for e in &hb.exits {
        assert!(e.site >= HOST_AT && e.stub > e.site && e.stub < HOST_AT + hb.code.len());
    }
});
