//! Hardware breakpoint and watchpoint registers (`DBGBCR/BVR<n>_EL1`, `DBGWCR/WVR<n>_EL1`),
//! switched lazily per vCPU, as KVM does: guest accesses to debug registers trap
//! (`MDCR_EL2.TDA`) until a vCPU first touches one; from then on that vCPU's registers are
//! loaded in `vcpu_load` (its accesses no longer trap) and saved in `vcpu_put`, where the
//! breakpoints and watchpoints are also disabled, so what one VM arms never fires in, nor
//! is read by, another. `MDSCR_EL1` is part of the EL1 context the world switch saves.

use el2_core::exit::SysRegAccess;
use el2_core::{read_sysreg, write_sysreg};
use spin::Once;

/// Most breakpoints or watchpoints the architecture has (`ID_AA64DFR0_EL1.BRPs/WRPs` + 1).
const MAX: usize = 16;

/// `MDCR_EL2.TDA`: trap EL1/EL0 debug register accesses to EL2.
const MDCR_TDA: u64 = 1 << 9;

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
        let dfr0 = read_sysreg!("id_aa64dfr0_el1");
        let brps = ((dfr0 >> 12) & 0xf) as usize + 1;
        let wrps = ((dfr0 >> 20) & 0xf) as usize + 1;
        (brps.min(MAX), wrps.min(MAX))
    })
}

/// Reads debug register `$reg<$n>_el1` (names built at compile time).
macro_rules! dbg_read {
    ($reg:literal, $n:literal) => {{
        let v: u64;
        // SAFETY: reading a breakpoint/watchpoint register at EL2 has no memory effects;
        // `$n` is below the count the CPU implements (checked by the caller).
        unsafe {
            core::arch::asm!(concat!("mrs {}, ", $reg, $n, "_el1"), out(reg) v,
                options(nomem, nostack, preserves_flags))
        };
        v
    }};
}

/// Writes debug register `$reg<$n>_el1`.
macro_rules! dbg_write {
    ($reg:literal, $n:literal, $v:expr) => {{
        let v: u64 = $v;
        // SAFETY: as in `dbg_read`; the registers only arm debug events for EL1/EL0 of the
        // loaded vCPU (`MDSCR_EL1` of that vCPU enables them).
        unsafe {
            core::arch::asm!(concat!("msr ", $reg, $n, "_el1, {}"), in(reg) v,
                options(nomem, nostack, preserves_flags))
        };
    }};
}

/// Calls `$m!(n)` for every register index 0..16 (system register names need literals).
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
                    dbg_write!("dbgbvr", $n, self.bvr[$n]);
                    dbg_write!("dbgbcr", $n, self.bcr[$n]);
                }
                if $n < w {
                    dbg_write!("dbgwvr", $n, self.wvr[$n]);
                    dbg_write!("dbgwcr", $n, self.wcr[$n]);
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
                    self.bvr[$n] = dbg_read!("dbgbvr", $n);
                    self.bcr[$n] = dbg_read!("dbgbcr", $n);
                    dbg_write!("dbgbcr", $n, 0);
                    dbg_write!("dbgbvr", $n, 0);
                }
                if $n < w {
                    self.wvr[$n] = dbg_read!("dbgwvr", $n);
                    self.wcr[$n] = dbg_read!("dbgwcr", $n);
                    dbg_write!("dbgwcr", $n, 0);
                    dbg_write!("dbgwvr", $n, 0);
                }
            };
        }
        each_index!(take);
    }
}

/// Sets or clears `MDCR_EL2.TDA` on this CPU.
pub fn set_trap(trap: bool) {
    let mdcr = read_sysreg!("mdcr_el2");
    let want = if trap {
        mdcr | MDCR_TDA
    } else {
        mdcr & !MDCR_TDA
    };
    if want != mdcr {
        write_sysreg!("mdcr_el2", want);
        // SAFETY: ISB makes the new trap setting apply before the guest runs; no memory
        // effects.
        unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    }
}
