//! GICv3 virtual CPU interface backend over the `ICH_*_EL2` system registers.
//!
//! Only built for AArch64. Requires `ICC_SRE_EL2.SRE` = 1 (system-register access at EL2),
//! which the hypervisor sets up at boot. Each physical CPU has its own registers, so the
//! backend is a zero-sized handle plus the implemented sizes read from `ICH_VTR_EL2`.

use aarch64_cpu::registers::*;
use tock_registers::interfaces::{ReadWriteable, Readable, Writeable};

use crate::lr::{v3, ListRegisters, LrEntry, VcpuIfState, MAX_LRS};

/// `ICH_ELRSR_EL2` and `ICH_EISR_EL2`, missing from `aarch64-cpu`, in its style.
mod extra {
    use tock_registers::interfaces::Readable;

    /// `ICH_ELRSR_EL2` (S3_4_C12_C11_5): empty list registers.
    pub struct Elrsr;
    impl Readable for Elrsr {
        type T = u64;
        type R = ();
        #[inline]
        fn get(&self) -> u64 {
            let v;
            // SAFETY: reading ICH_ELRSR_EL2 at EL2 has no side effects; the register exists
            // whenever the GICv3 system-register interface is enabled, a precondition of
            // building an `IchBackend`.
            unsafe {
                core::arch::asm!("mrs {}, S3_4_C12_C11_5", out(reg) v, options(nomem, nostack));
            }
            v
        }
    }
    /// `ICH_EISR_EL2` (S3_4_C12_C11_3): list registers with an EOI maintenance condition.
    pub struct Eisr;
    impl Readable for Eisr {
        type T = u64;
        type R = ();
        #[inline]
        fn get(&self) -> u64 {
            let v;
            // SAFETY: as for ICH_ELRSR_EL2, a side-effect-free read of an EL2 register.
            unsafe {
                core::arch::asm!("mrs {}, S3_4_C12_C11_3", out(reg) v, options(nomem, nostack));
            }
            v
        }
    }
    pub const ICH_ELRSR_EL2: Elrsr = Elrsr;
    pub const ICH_EISR_EL2: Eisr = Eisr;
}

/// Runs `$body` with `$r` bound to the `ICH_LR<$i>_EL2` register: system-register names are
/// compile-time, so the index becomes one match arm per register.
macro_rules! with_lr {
    ($i:expr, $r:ident => $body:expr, $default:expr) => {
        match $i {
            0 => {
                let $r = ICH_LR0_EL2;
                $body
            }
            1 => {
                let $r = ICH_LR1_EL2;
                $body
            }
            2 => {
                let $r = ICH_LR2_EL2;
                $body
            }
            3 => {
                let $r = ICH_LR3_EL2;
                $body
            }
            4 => {
                let $r = ICH_LR4_EL2;
                $body
            }
            5 => {
                let $r = ICH_LR5_EL2;
                $body
            }
            6 => {
                let $r = ICH_LR6_EL2;
                $body
            }
            7 => {
                let $r = ICH_LR7_EL2;
                $body
            }
            8 => {
                let $r = ICH_LR8_EL2;
                $body
            }
            9 => {
                let $r = ICH_LR9_EL2;
                $body
            }
            10 => {
                let $r = ICH_LR10_EL2;
                $body
            }
            11 => {
                let $r = ICH_LR11_EL2;
                $body
            }
            12 => {
                let $r = ICH_LR12_EL2;
                $body
            }
            13 => {
                let $r = ICH_LR13_EL2;
                $body
            }
            14 => {
                let $r = ICH_LR14_EL2;
                $body
            }
            15 => {
                let $r = ICH_LR15_EL2;
                $body
            }
            _ => $default,
        }
    };
}

/// Same for the active-priority registers.
macro_rules! with_apr {
    ($i:expr, $r0:ident, $r1:ident => $body:expr) => {
        match $i {
            0 => {
                let ($r0, $r1) = (ICH_AP0R0_EL2, ICH_AP1R0_EL2);
                $body
            }
            1 => {
                let ($r0, $r1) = (ICH_AP0R1_EL2, ICH_AP1R1_EL2);
                $body
            }
            2 => {
                let ($r0, $r1) = (ICH_AP0R2_EL2, ICH_AP1R2_EL2);
                $body
            }
            3 => {
                let ($r0, $r1) = (ICH_AP0R3_EL2, ICH_AP1R3_EL2);
                $body
            }
            _ => {}
        }
    };
}

/// The GICv3 `ICH_*_EL2` backend of the current physical CPU.
pub struct IchBackend {
    nr_lrs: usize,
    nr_aprs: usize,
}

impl IchBackend {
    /// Reads `ICH_VTR_EL2` to learn the number of list registers and active-priority
    /// registers.
    ///
    /// # Safety
    /// Must run at EL2 with the GICv3 system-register interface enabled
    /// (`ICC_SRE_EL2.SRE` = 1); otherwise the `ICH_*` accesses are undefined instructions.
    pub unsafe fn new() -> Self {
        let nr_lrs = (ICH_VTR_EL2.read(ICH_VTR_EL2::ListRegs) as usize + 1).min(MAX_LRS);
        let pre = ICH_VTR_EL2.read(ICH_VTR_EL2::PREbits) as usize + 1;
        let nr_aprs = match pre {
            7 => 4,
            6 => 2,
            _ => 1,
        };
        Self { nr_lrs, nr_aprs }
    }

    /// Empties every list register and active-priority register and disables the interface
    /// and maintenance interrupts (once per CPU at boot).
    pub fn reset(&mut self) {
        ICH_HCR_EL2.set(0);
        for i in 0..self.nr_lrs {
            with_lr!(i, r => r.set(0), ());
        }
        for i in 0..self.nr_aprs {
            with_apr!(i, a0, a1 => { a0.set(0); a1.set(0); });
        }
    }
}

impl ListRegisters for IchBackend {
    fn num_lrs(&self) -> usize {
        self.nr_lrs
    }
    fn read_lr(&self, i: usize) -> LrEntry {
        with_lr!(i, r => v3::decode(r.get()), LrEntry::EMPTY)
    }
    fn write_lr(&mut self, i: usize, e: LrEntry) {
        let raw = v3::encode(&e);
        with_lr!(i, r => r.set(raw), ())
    }
    fn empty_mask(&self) -> u64 {
        extra::ICH_ELRSR_EL2.get()
    }
    fn eoi_mask(&self) -> u64 {
        extra::ICH_EISR_EL2.get()
    }
    fn set_maintenance(&mut self, underflow: bool, no_pending: bool) {
        ICH_HCR_EL2.modify(
            ICH_HCR_EL2::UIE.val(underflow.into()) + ICH_HCR_EL2::NPIE.val(no_pending.into()),
        );
    }
    fn misr(&self) -> u32 {
        ICH_MISR_EL2.get() as u32
    }
    fn set_enabled(&mut self, en: bool) {
        ICH_HCR_EL2.modify(ICH_HCR_EL2::En.val(en.into()));
    }
    fn read_vmcr(&self) -> u64 {
        ICH_VMCR_EL2.get()
    }
    fn save(&mut self, st: &mut VcpuIfState) {
        st.vmcr = ICH_VMCR_EL2.get();
        for i in 0..self.nr_aprs {
            with_apr!(i, a0, a1 => {
                st.ap0r[i] = a0.get() as u32;
                st.apr[i] = a1.get() as u32;
            });
        }
        for i in 0..st.used_lrs.min(self.nr_lrs) {
            st.lrs[i] = with_lr!(i, r => r.get(), 0);
        }
    }
    fn restore(&mut self, st: &VcpuIfState) {
        ICH_VMCR_EL2.set(st.vmcr);
        for i in 0..self.nr_aprs {
            with_apr!(i, a0, a1 => {
                a0.set(u64::from(st.ap0r[i]));
                a1.set(u64::from(st.apr[i]));
            });
        }
        for i in 0..st.used_lrs.min(self.nr_lrs) {
            with_lr!(i, r => r.set(st.lrs[i]), ());
        }
    }
}
