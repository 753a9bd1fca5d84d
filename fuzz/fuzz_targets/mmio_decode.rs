//! The ISV=0 load/store decoder (`el2_core::mmio_decode`): any 32-bit instruction word is
//! decoded or refused; a decoded access resolves against any registers and fault address
//! without panicking, and stays inside one 4 KiB page when it resolves.
#![no_main]

use el2_core::mmio_decode::{decode, GuestRegisters};
use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

/// Page of the resolved accesses.
const PAGE_MASK: u64 = !0xfff;

struct Regs {
    x: [u64; 31],
    sp: u64,
}

impl GuestRegisters for Regs {
    fn x(&self, n: u8) -> u64 {
        self.x[usize::from(n)]
    }
    fn sp(&self) -> u64 {
        self.sp
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let insn = input.u32();
    let Ok(access) = decode(insn) else {
        return;
    };
    let mut regs = Regs {
        x: [0; 31],
        sp: input.u64(),
    };
    for x in regs.x.iter_mut() {
        // Small values most of the time, so that more accesses stay within one page.
        *x = if input.bool() {
            input.u64()
        } else {
            u64::from(input.u8())
        };
    }
    let fault_ipa = input.u64();
    let far = input.bool().then(|| input.u64());
    let _ = access.total_bytes();
    let _ = access.address(&regs);
    if let Ok(resolved) = access.resolve(&regs, fault_ipa, far) {
        for e in resolved.elements() {
            assert_eq!(e.ipa & PAGE_MASK, fault_ipa & PAGE_MASK, "{insn:#010x}");
        }
    }
});
