//! Hardware breakpoint and watchpoint registers (`DBGBCR/BVR<n>_EL1`, `DBGWCR/WVR<n>_EL1`),
//! switched lazily per vCPU, as KVM does: guest accesses to debug registers trap
//! (`MDCR_EL2.TDA`) until a vCPU first touches one; from then on that vCPU's registers are
//! loaded in `vcpu_load` (its accesses no longer trap) and saved in `vcpu_put`, where the
//! breakpoints and watchpoints are also disabled, so what one VM arms never fires in, nor
//! is read by, another. `MDSCR_EL1` is part of the EL1 context the world switch saves.

use aarch64_cpu::asm::barrier;
use aarch64_cpu::registers::{Readable, Writeable, ID_AA64DFR0_EL1, MDCR_EL2};
use el2_core::exit::SysRegAccess;
use el2_core::sysreg::{DBGBCRn_EL1, DBGBVRn_EL1, DBGWCRn_EL1, DBGWVRn_EL1};
use spin::Once;

/// Most breakpoints or watchpoints the architecture has (`ID_AA64DFR0_EL1.BRPs/WRPs` + 1).
const MAX: usize = 16;

/// One vCPU's breakpoint/watchpoint registers.
#[derive(Debug, Clone, Default)]
pub struct DebugRegs {
    /// The vCPU has used debug registers: they are switched on load/put, accesses do not trap.
    pub active: bool,
    bcr: [u64; MAX],
    bvr: [u64; MAX],
    wcr: [u64; MAX],
    wvr: [u64; MAX],
}

/// Number of (breakpoints, watchpoints) of this CPU, from `ID_AA64DFR0_EL1`.
fn counts() -> (usize, usize) {
    static COUNTS: Once<(usize, usize)> = Once::new();
    *COUNTS.call_once(|| {
        let dfr0 = ID_AA64DFR0_EL1.extract();
        let brps = dfr0.read(ID_AA64DFR0_EL1::BRPs) as usize + 1;
        let wrps = dfr0.read(ID_AA64DFR0_EL1::WRPs) as usize + 1;
        (brps.min(MAX), wrps.min(MAX))
    })
}

/// Calls `$m!(n)` for every register index 0..16 (the index is part of the register name,
/// so a compile-time constant).
macro_rules! each_index {
    ($m:ident) => {
        $m!(0);
        $m!(1);
        $m!(2);
        $m!(3);
        $m!(4);
        $m!(5);
        $m!(6);
        $m!(7);
        $m!(8);
        $m!(9);
        $m!(10);
        $m!(11);
        $m!(12);
        $m!(13);
        $m!(14);
        $m!(15);
    };
}

/// Whether an access trapped by `MDCR_EL2.TDA` is to the debug register space (`op0` = 2:
/// breakpoints, watchpoints, `MDSCR_EL1`, `MDCCINT_EL1`, claim tags, ...).
pub fn is_debug_access(acc: &SysRegAccess) -> bool {
    acc.op0 == 2
}

impl DebugRegs {
    /// Writes this vCPU's registers to the hardware.
    pub fn load(&self) {
        let (b, w) = counts();
        macro_rules! put {
            ($n:literal) => {
                if $n < b {
                    DBGBVRn_EL1::<$n>.set(self.bvr[$n]);
                    DBGBCRn_EL1::<$n>.set(self.bcr[$n]);
                }
                if $n < w {
                    DBGWVRn_EL1::<$n>.set(self.wvr[$n]);
                    DBGWCRn_EL1::<$n>.set(self.wcr[$n]);
                }
            };
        }
        each_index!(put);
    }

    /// Reads the hardware registers into this vCPU's copy, then disables every breakpoint
    /// and watchpoint and clears their values in the hardware.
    pub fn save_and_clear(&mut self) {
        let (b, w) = counts();
        macro_rules! take {
            ($n:literal) => {
                if $n < b {
                    self.bvr[$n] = DBGBVRn_EL1::<$n>.get();
                    self.bcr[$n] = DBGBCRn_EL1::<$n>.get();
                    DBGBCRn_EL1::<$n>.set(0);
                    DBGBVRn_EL1::<$n>.set(0);
                }
                if $n < w {
                    self.wvr[$n] = DBGWVRn_EL1::<$n>.get();
                    self.wcr[$n] = DBGWCRn_EL1::<$n>.get();
                    DBGWCRn_EL1::<$n>.set(0);
                    DBGWVRn_EL1::<$n>.set(0);
                }
            };
        }
        each_index!(take);
    }
}

/// Sets or clears `MDCR_EL2.TDA` (trap EL1/EL0 debug register accesses to EL2) on this CPU.
pub fn set_trap(trap: bool) {
    let mdcr = MDCR_EL2.get();
    let tda = if trap {
        MDCR_EL2::TDA::SET
    } else {
        MDCR_EL2::TDA::CLEAR
    };
    let want = tda.modify(mdcr);
    if want != mdcr {
        MDCR_EL2.set(want);
        // The new trap setting applies before the guest runs.
        barrier::isb(barrier::SY);
    }
}
