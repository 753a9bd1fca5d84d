//! Register families indexed by a number, as one type with a const parameter: the
//! breakpoint and watchpoint registers `DBGBVR<n>_EL1`... (n < 16), and the ID register
//! space `op0 = 3, op1 = 0, CRn = 0` by `CRm`/`op2`, for answering trapped ID reads with
//! the hardware's values. The index becomes part of the register name at compile time.

use tock_registers::interfaces::{Readable, Writeable};

/// Defines `$name<N>`, the debug register `$asm<N>_EL1`, readable and writable.
macro_rules! debug_regs {
    ($( $(#[$doc:meta])* $name:ident: $asm:literal; )*) => {
        $(
            $(#[$doc])*
            #[allow(non_camel_case_types)]
            #[derive(Debug, Clone, Copy)]
            pub struct $name<const N: u8>;

            impl<const N: u8> Readable for $name<N> {
                type T = u64;
                type R = ();

                #[inline]
                fn get(&self) -> u64 {
                    const { assert!(N < 16, "the architecture has at most 16") };
                    let v;
                    // SAFETY: an MRS of a debug register that exists at EL2 (the caller
                    // checks `N` against `ID_AA64DFR0_EL1`); no memory effects.
                    unsafe {
                        core::arch::asm!(concat!("mrs {v}, ", $asm, "{n}_el1"), v = out(reg) v,
                            n = const N, options(nomem, nostack, preserves_flags))
                    };
                    v
                }
            }

            impl<const N: u8> Writeable for $name<N> {
                type T = u64;
                type R = ();

                #[inline]
                fn set(&self, value: u64) {
                    const { assert!(N < 16, "the architecture has at most 16") };
                    // SAFETY: as for `get`; the register arms debug events for EL1/EL0 only
                    // (enabled by the loaded vCPU's `MDSCR_EL1`), no Rust-visible memory.
                    unsafe {
                        core::arch::asm!(concat!("msr ", $asm, "{n}_el1, {v}"), v = in(reg) value,
                            n = const N, options(nomem, nostack, preserves_flags))
                    };
                }
            }
        )*
    };
}

debug_regs! {
    /// `DBGBVR<N>_EL1`: breakpoint value.
    DBGBVRn_EL1: "dbgbvr";
    /// `DBGBCR<N>_EL1`: breakpoint control.
    DBGBCRn_EL1: "dbgbcr";
    /// `DBGWVR<N>_EL1`: watchpoint value.
    DBGWVRn_EL1: "dbgwvr";
    /// `DBGWCR<N>_EL1`: watchpoint control.
    DBGWCRn_EL1: "dbgwcr";
}

/// The ID register `op0 = 3, op1 = 0, CRn = 0, CRm, op2` (`ID_AA64PFR0_EL1` is `<4, 0>`),
/// read only. `CRm` is 1..=7: the space where unallocated encodings read as zero.
#[derive(Debug, Clone, Copy)]
pub struct IdReg<const CRM: u8, const OP2: u8>;

impl<const CRM: u8, const OP2: u8> Readable for IdReg<CRM, OP2> {
    type T = u64;
    type R = ();

    #[inline]
    fn get(&self) -> u64 {
        const {
            assert!(
                CRM >= 1 && CRM <= 7 && OP2 <= 7,
                "not in the ID register space"
            )
        };
        let v;
        // SAFETY: an MRS in the ID register space, readable at EL2 (unallocated encodings
        // read as zero); no memory effects.
        unsafe {
            core::arch::asm!("mrs {v}, s3_0_c0_c{crm}_{op2}", v = out(reg) v, crm = const CRM,
                op2 = const OP2, options(nomem, nostack, preserves_flags))
        };
        v
    }
}
