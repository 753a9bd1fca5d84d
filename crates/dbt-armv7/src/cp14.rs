//! CP14: the debug, debug-ID and trivial Jazelle registers an ARMv7-A guest reaches with
//! `MRC`/`MCR`/`MRRC`/`MCRR p14`, answered as a Cortex-A15 guest of this hypervisor sees
//! them in hardware AArch32 (the debug registers trapped by `MDCR_EL2.TDA`/`TDRA` and
//! handed to the vCPU on first use): every encoding below completes, everything else is
//! UNDEFINED. The registers hold what the guest writes (breakpoints and watchpoints are
//! not armed: the model takes no debug exceptions, as a debugger-less core with
//! `DBGDSCR.MDBGen` clear behaves).
//!
//! PL1 (`opc1` = 0 unless named):
//! - `c0`: `DBGDIDR` (c0, 0), `DBGDSCRint` (c1, 0), `DBGDCCINT` (c2, 0), `DBGDSCRext`
//!   (c2, 2), `DBGVCR` (c7, 0), `DBGBVRn`/`DBGBCRn` (cn, 4/5; 6 breakpoints),
//!   `DBGWVRn`/`DBGWCRn` (cn, 6/7; 4 watchpoints);
//! - `c1`: `DBGDRAR` (c0, 0), `DBGOSLAR` (c0, 4, write-only), `DBGOSLSR` (c1, 4, read-only),
//!   `DBGOSDLR` (c3, 4); `c2`: `DBGDSAR` (c0, 0); `MRRC` `DBGDRAR` (c1), `DBGDSAR` (c2);
//! - `c7`: `DBGDEVID2`/`DBGDEVID1`/`DBGDEVID` (c0/c1/c2, 7), read-only;
//! - `opc1` = 7 (trivial Jazelle, `CRm` = 0, `opc2` = 0): `JIDR` (c0) read-only, `JOSCR`
//!   (c1), `JMCR` (c2).
//!
//! PL0: reads of `DBGDIDR`, `DBGDRAR` and `DBGDSAR` (32- and 64-bit); nothing else.
//!
//! Not there (UNDEFINED, as in hardware AArch32 under QEMU 7.2's Cortex-A57 with the same
//! hypervisor): `DBGDTRRXint`/`DBGDTRTXint` (c0, c5, 0), `DBGPRCR` (c1, c4, 4), the claim
//! tags and `DBGAUTHSTATUS`. (QEMU 7.2 places `DBGDEVID*` at c7, c0, 0..2; the model uses
//! the architectural encodings.)

/// Breakpoints and watchpoints (`DBGDIDR.BRPs`/`WRPs` + 1).
const BREAKPOINTS: usize = 6;
const WATCHPOINTS: usize = 4;

/// `DBGDIDR`: WRPs = 3 (4), BRPs = 5 (6), CTX_CMPs = 1 (2), Version = 0b0101 (v7.1
/// debug), DEVID_imp, nSUHD_imp, PCSR_imp, SE_imp, variant 2, revision 1 (r2p1, as the
/// model's `MIDR`).
pub const DBGDIDR: u32 = 3 << 28 | 5 << 24 | 1 << 20 | 5 << 16 | 0xf << 12 | 2 << 4 | 1;
/// `DBGDEVID`: `PCsample` = 0b0011 (PCSR and CIDSR), `WPAddrMask`/`BPAddrMask` = 1.
const DBGDEVID: u32 = 0x0000_0013;
/// `DBGDSCRext` bits the guest can write: `MDBGen` (15), `HDBGen` (14), `UDCCdis` (12),
/// `ExtDCCmode` (21:20).
const DSCR_WRITABLE: u32 = 0x0030_d000;
/// `DBGOSLSR`: `OSLM` = 0b10 (v7.1 OS lock), `OSLK` at bit 1.
const OSLSR_OSLM: u32 = 1 << 3;

/// The CP14 registers of one core.
#[derive(Clone, Debug)]
pub struct Cp14 {
    bvr: [u32; BREAKPOINTS],
    bcr: [u32; BREAKPOINTS],
    wvr: [u32; WATCHPOINTS],
    wcr: [u32; WATCHPOINTS],
    dscr: u32,
    dccint: u32,
    vcr: u32,
    os_lock: bool,
    os_double_lock: bool,
    joscr: u32,
    jmcr: u32,
}

impl Default for Cp14 {
    fn default() -> Self {
        Self::new()
    }
}

impl Cp14 {
    /// The registers at reset (the OS lock set, as after a cold reset).
    pub fn new() -> Cp14 {
        Cp14 {
            bvr: [0; BREAKPOINTS],
            bcr: [0; BREAKPOINTS],
            wvr: [0; WATCHPOINTS],
            wcr: [0; WATCHPOINTS],
            dscr: 0,
            dccint: 0,
            vcr: 0,
            os_lock: true,
            os_double_lock: false,
            joscr: 0,
            jmcr: 0,
        }
    }

    /// `MRC p14, opc1, <Rt>, crn, crm, opc2` at PL0 (`user`) or PL1: the value, or `None`
    /// for UNDEFINED.
    pub fn read(&self, opc1: u8, crn: u8, crm: u8, opc2: u8, user: bool) -> Option<u32> {
        let (crm_i, bp, wp) = (
            crm as usize,
            (crm as usize) < BREAKPOINTS,
            (crm as usize) < WATCHPOINTS,
        );
        let v = match (opc1, crn, crm, opc2) {
            (0, 0, 0, 0) => DBGDIDR,
            (0, 1, 0, 0) | (0, 2, 0, 0) => 0,
            _ if user => return None,
            (0, 0, 1, 0) | (0, 0, 2, 2) => self.dscr,
            (0, 0, 2, 0) => self.dccint,
            (0, 0, 7, 0) => self.vcr,
            (0, 0, _, 4) if bp => self.bvr[crm_i],
            (0, 0, _, 5) if bp => self.bcr[crm_i],
            (0, 0, _, 6) if wp => self.wvr[crm_i],
            (0, 0, _, 7) if wp => self.wcr[crm_i],
            (0, 1, 1, 4) => OSLSR_OSLM | (self.os_lock as u32) << 1,
            (0, 1, 3, 4) => self.os_double_lock as u32,
            (0, 7, 0, 7) | (0, 7, 1, 7) => 0,
            (0, 7, 2, 7) => DBGDEVID,
            // JIDR: trivial Jazelle (no Jazelle state).
            (7, 0, 0, 0) => 0,
            (7, 1, 0, 0) => self.joscr,
            (7, 2, 0, 0) => self.jmcr,
            _ => return None,
        };
        Some(v)
    }

    /// `MCR p14, opc1, <Rt>, crn, crm, opc2` of `v` at PL0 (`user`) or PL1: false for
    /// UNDEFINED.
    pub fn write(&mut self, opc1: u8, crn: u8, crm: u8, opc2: u8, v: u32, user: bool) -> bool {
        if user {
            return false;
        }
        let (i, bp, wp) = (
            crm as usize,
            (crm as usize) < BREAKPOINTS,
            (crm as usize) < WATCHPOINTS,
        );
        match (opc1, crn, crm, opc2) {
            (0, 0, 2, 2) => self.dscr = v & DSCR_WRITABLE,
            (0, 0, 2, 0) => self.dccint = v & 0x6000_0000,
            (0, 0, 7, 0) => self.vcr = v & 0xdede_00de,
            (0, 0, _, 4) if bp => self.bvr[i] = v & !3,
            (0, 0, _, 5) if bp => self.bcr[i] = v & 0x00ff_e1e7,
            (0, 0, _, 6) if wp => self.wvr[i] = v & !3,
            (0, 0, _, 7) if wp => self.wcr[i] = v & 0x1f1f_dfff,
            // DBGOSLAR: the key 0xC5ACCE55 sets the OS lock, anything else clears it.
            (0, 1, 0, 4) => self.os_lock = v == 0xc5ac_ce55,
            (0, 1, 3, 4) => self.os_double_lock = v & 1 != 0,
            (7, 1, 0, 0) => self.joscr = v & 3,
            (7, 2, 0, 0) => self.jmcr = v & 1,
            _ => return false,
        }
        true
    }

    /// `MRRC p14, opc1, <Rt>, <Rt2>, crm`: `DBGDRAR` (c1) and `DBGDSAR` (c2), 64-bit, at
    /// PL0 and PL1 (no memory-mapped debug: both report "not valid").
    pub fn read64(&self, opc1: u8, crm: u8) -> Option<u64> {
        matches!((opc1, crm), (0, 1) | (0, 2)).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cortex_a15s_debug_registers_and_nothing_else() {
        let mut c = Cp14::new();
        // PL1: the ID, status and OS lock registers; PL0 only the three "ROM" registers.
        assert_eq!(c.read(0, 0, 0, 0, true), Some(DBGDIDR));
        assert_eq!(c.read(0, 1, 0, 0, true), Some(0));
        assert_eq!(c.read(0, 0, 1, 0, true), None);
        assert_eq!(c.read(0, 1, 1, 4, false), Some(0b1010));
        assert!(c.write(0, 1, 0, 4, 0, false));
        assert_eq!(c.read(0, 1, 1, 4, false), Some(0b1000));
        // Six breakpoints, four watchpoints; their values read back.
        assert!(c.write(0, 0, 5, 4, 0x4000_1003, false));
        assert_eq!(c.read(0, 0, 5, 4, false), Some(0x4000_1000));
        assert!(!c.write(0, 0, 6, 4, 0, false));
        assert!(c.write(0, 0, 3, 7, 0x1f, false));
        assert_eq!(c.read(0, 0, 4, 7, false), None);
        // Write-only, read-only, absent, PL0 writes.
        assert_eq!(c.read(0, 1, 0, 4, false), None);
        assert!(!c.write(0, 1, 1, 4, 0, false));
        assert_eq!(c.read(0, 0, 5, 0, false), None);
        assert_eq!(c.read(0, 1, 4, 4, false), None);
        assert!(!c.write(0, 0, 2, 2, 0, true));
        assert_eq!(c.read(7, 0, 0, 0, false), Some(0));
        assert_eq!(c.read(7, 0, 0, 0, true), None);
        assert_eq!(c.read64(0, 1), Some(0));
        assert_eq!(c.read64(1, 1), None);
        // DBGDIDR: 4 watchpoints, 6 breakpoints, 2 context comparators, v7.1, r2p1.
        assert_eq!(DBGDIDR, 0x3515_f021);
    }
}
