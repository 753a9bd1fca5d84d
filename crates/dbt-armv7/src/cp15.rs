//! CP15 system registers (CP14 is `cp14.rs`), as a Cortex-A15-like core
//! without Security/Virtualization state visible to the guest.

/// CP15 register values.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub struct Cp15 {
    pub midr: u32,
    pub mpidr: u32,
    pub sctlr: u32,
    pub actlr: u32,
    pub cpacr: u32,
    pub ttbr0: u64,
    pub ttbr1: u64,
    pub ttbcr: u32,
    pub dacr: u32,
    pub dfsr: u32,
    pub ifsr: u32,
    pub adfsr: u32,
    pub aifsr: u32,
    pub dfar: u32,
    pub ifar: u32,
    pub par: u64,
    pub prrr: u32,
    pub nmrr: u32,
    pub vbar: u32,
    pub contextidr: u32,
    pub tpidrurw: u32,
    pub tpidruro: u32,
    pub tpidrprw: u32,
    pub csselr: u32,
    pub cntfrq: u32,
    pub cntkctl: u32,
    pub cntp_ctl: u32,
    pub cntp_cval: u64,
    pub cntv_ctl: u32,
    pub cntv_cval: u64,
    /// The guest's TLB maintenance since a translator last took it
    /// ([`Cp15::take_tlb_maintenance`]); several operations merge.
    pub tlb_maintenance: Option<crate::mmu::TlbMaintenance>,
}

/// Result of a CP15 access decided by [`Cp15`] alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cp15Effect {
    /// Plain register access.
    None,
    /// Translation state changed or a TLB maintenance operation: flush the TLB.
    FlushTlb,
    /// Instruction cache invalidation: flush decoded-instruction caches.
    FlushICache,
    /// Address translation operation (`ATS1C*`) for `(va, write, user)`.
    Translate(u32, bool, bool),
    /// Timer register: handled by the CPU with the counter.
    Timer,
}

/// SCTLR reset value (Cortex-A15: RES1 bits 23, 22, 18, 16, 11 (Z), 4:3).
pub const SCTLR_RESET: u32 = 0x00c5_0078;

/// `ID_PFR0`: `State0` = 1 (A32), `State1` = 3 (T32 with Thumb-2), `State2` = 1 (trivial
/// Jazelle: `JIDR`/`JOSCR`/`JMCR` in `cp14.rs`), `State3` = 0: no ThumbEE. A Cortex-A15 has
/// ThumbEE, but the model has neither ThumbEE state nor `TEECR`/`TEEHBR` (`MRC p14, 6`
/// is UNDEFINED, as in hardware AArch32 on ARMv8, whose `ID_PFR0` is the same); Linux reads
/// `TEEHBR` on every context switch when `State3` says ThumbEE and oopses on the UNDEFINED.
pub const ID_PFR0: u32 = 0x0000_0131;
/// `ID_ISAR3`: a Cortex-A15's (`0x1111_2131`) with `ThumbEE_extn` [31:28] = 0 to match
/// `ID_PFR0.State3`.
pub const ID_ISAR3: u32 = 0x0111_2131;

impl Default for Cp15 {
    fn default() -> Self {
        Cp15::new()
    }
}

impl Cp15 {
    /// Reset values.
    pub fn new() -> Cp15 {
        Cp15 {
            midr: 0x412f_c0f1,
            mpidr: 0x8000_0000,
            sctlr: SCTLR_RESET,
            actlr: 0,
            cpacr: 0,
            ttbr0: 0,
            ttbr1: 0,
            ttbcr: 0,
            dacr: 0,
            dfsr: 0,
            ifsr: 0,
            adfsr: 0,
            aifsr: 0,
            dfar: 0,
            ifar: 0,
            par: 0,
            prrr: 0x00098aa4,
            nmrr: 0x44e048e0,
            vbar: 0,
            contextidr: 0,
            tpidrurw: 0,
            tpidruro: 0,
            tpidrprw: 0,
            csselr: 0,
            cntfrq: 62_500_000,
            cntkctl: 0,
            cntp_ctl: 0,
            cntp_cval: 0,
            cntv_ctl: 0,
            cntv_cval: 0,
            tlb_maintenance: None,
        }
    }

    /// The guest's TLB maintenance since the last call, if any: a translator that caches
    /// translations drops what it names.
    pub fn take_tlb_maintenance(&mut self) -> Option<crate::mmu::TlbMaintenance> {
        self.tlb_maintenance.take()
    }

    /// LPAE long-descriptor format in use (`TTBCR.EAE`).
    pub fn lpae(&self) -> bool {
        self.ttbcr & (1 << 31) != 0
    }

    /// Whether `MRC/MCR p15` with these operands is allowed from User mode.
    pub fn user_accessible(&self, opc1: u8, crn: u8, crm: u8, opc2: u8, write: bool) -> bool {
        match (crn, opc1, crm, opc2) {
            (13, 0, 0, 2) => true,
            (13, 0, 0, 3) => !write,
            (7, 0, 5, 4) | (7, 0, 10, 4) | (7, 0, 10, 5) => true,
            (14, 0, 0, 0) => !write && self.cntkctl & 3 != 0,
            _ => false,
        }
    }

    /// 32-bit read (`MRC p15, opc1, Rt, crn, crm, opc2`); `None` is UNDEFINED.
    pub fn read(&self, opc1: u8, crn: u8, crm: u8, opc2: u8) -> Option<(u32, Cp15Effect)> {
        let v = match (crn, opc1, crm, opc2) {
            (0, 0, 0, 0) | (0, 0, 0, 4) | (0, 0, 0, 7) => self.midr,
            (0, 0, 0, 1) => 0x8444_c004,
            (0, 0, 0, 2) => 0,
            (0, 0, 0, 3) => 0,
            (0, 0, 0, 5) => self.mpidr,
            (0, 0, 0, 6) => 0,
            (0, 0, 1, n) => [
                ID_PFR0,
                0x0001_1011,
                0x0201_0555,
                0,
                0x1020_1105,
                0x4000_0000,
                0x0124_0000,
                0x0210_2211,
            ][n as usize],
            (0, 0, 2, n) => [
                0x0210_1110,
                0x1311_2111,
                0x2123_2041,
                ID_ISAR3,
                0x1001_1142,
                0,
                0,
                0,
            ][n as usize],
            (0, 1, 0, 0) => {
                if self.csselr & 1 == 0 {
                    0x701f_e00a
                } else {
                    0x201f_e00a
                }
            }
            (0, 1, 0, 1) => 0x0a20_0023,
            (0, 1, 0, 7) => 0,
            (0, 2, 0, 0) => self.csselr,
            (1, 0, 0, 0) => self.sctlr,
            (1, 0, 0, 1) => self.actlr,
            (1, 0, 0, 2) => self.cpacr,
            (2, 0, 0, 0) => self.ttbr0 as u32,
            (2, 0, 0, 1) => self.ttbr1 as u32,
            (2, 0, 0, 2) => self.ttbcr,
            (3, 0, 0, 0) => self.dacr,
            (5, 0, 0, 0) => self.dfsr,
            (5, 0, 0, 1) => self.ifsr,
            (5, 0, 1, 0) => self.adfsr,
            (5, 0, 1, 1) => self.aifsr,
            (6, 0, 0, 0) => self.dfar,
            (6, 0, 0, 2) => self.ifar,
            (7, 0, 4, 0) => self.par as u32,
            (9, _, _, _) => 0,
            (10, 0, 2, 0) => self.prrr,
            (10, 0, 2, 1) => self.nmrr,
            (10, 0, 3, _) => 0,
            (12, 0, 0, 0) => self.vbar,
            (12, 0, 1, 0) => 0,
            (13, 0, 0, 0) => 0,
            (13, 0, 0, 1) => self.contextidr,
            (13, 0, 0, 2) => self.tpidrurw,
            (13, 0, 0, 3) => self.tpidruro,
            (13, 0, 0, 4) => self.tpidrprw,
            (14, 0, _, _) => return Some((0, Cp15Effect::Timer)),
            (15, _, _, _) => 0,
            _ => return None,
        };
        Some((v, Cp15Effect::None))
    }

    /// 32-bit write (`MCR p15`); `None` is UNDEFINED.
    pub fn write(&mut self, opc1: u8, crn: u8, crm: u8, opc2: u8, v: u32) -> Option<Cp15Effect> {
        use Cp15Effect::*;
        let e = match (crn, opc1, crm, opc2) {
            (0, 2, 0, 0) => {
                self.csselr = v & 0xf;
                None
            }
            (1, 0, 0, 0) => {
                self.sctlr = (v & 0x7fff_ffff) | SCTLR_RESET;
                FlushTlb
            }
            (1, 0, 0, 1) => {
                self.actlr = v;
                None
            }
            (1, 0, 0, 2) => {
                // cp10/cp11 access, ASEDIS and D32DIS; the other coprocessors are RAZ/WI.
                self.cpacr = v & crate::cpu::fp::CPACR_WRITABLE;
                None
            }
            (2, 0, 0, 0) => {
                self.ttbr0 = (self.ttbr0 & !0xffff_ffff) | v as u64;
                FlushTlb
            }
            (2, 0, 0, 1) => {
                self.ttbr1 = (self.ttbr1 & !0xffff_ffff) | v as u64;
                FlushTlb
            }
            (2, 0, 0, 2) => {
                self.ttbcr = v & 0xb0f7_7fbf;
                FlushTlb
            }
            (3, 0, 0, 0) => {
                self.dacr = v;
                FlushTlb
            }
            (5, 0, 0, 0) => {
                self.dfsr = v;
                None
            }
            (5, 0, 0, 1) => {
                self.ifsr = v;
                None
            }
            (5, 0, 1, 0) => {
                self.adfsr = v;
                None
            }
            (5, 0, 1, 1) => {
                self.aifsr = v;
                None
            }
            (6, 0, 0, 0) => {
                self.dfar = v;
                None
            }
            (6, 0, 0, 2) => {
                self.ifar = v;
                None
            }
            (7, 0, 4, 0) => {
                self.par = v as u64;
                None
            }
            (7, 0, 8, n) if n < 4 => Translate(v, n & 1 != 0, n >= 2),
            // ICIALLUIS, ICIALLU, ICIMVAU, BPIALL*, BPIMVA
            (7, 0, 1, 0)
            | (7, 0, 5, 0)
            | (7, 0, 5, 1)
            | (7, 0, 1, 6)
            | (7, 0, 5, 6)
            | (7, 0, 5, 7) => FlushICache,
            // data cache maintenance and CP15 barriers
            (7, 0, 5, 4)
            | (7, 0, 6, 1)
            | (7, 0, 6, 2)
            | (7, 0, 10, _)
            | (7, 0, 11, 1)
            | (7, 0, 14, _) => None,
            (8, 0, _, _) => {
                let op = crate::mmu::TlbMaintenance::decode(crm, opc2, v);
                self.tlb_maintenance = Some(match self.tlb_maintenance {
                    Some(before) => before.merge(op),
                    Option::None => op,
                });
                FlushTlb
            }
            (9, _, _, _) => None,
            (10, 0, 2, 0) => {
                self.prrr = v;
                FlushTlb
            }
            (10, 0, 2, 1) => {
                self.nmrr = v;
                FlushTlb
            }
            (10, 0, 3, _) => None,
            (12, 0, 0, 0) => {
                self.vbar = v & !0x1f;
                None
            }
            (13, 0, 0, 0) => None,
            (13, 0, 0, 1) => {
                self.contextidr = v;
                FlushTlb
            }
            (13, 0, 0, 2) => {
                self.tpidrurw = v;
                None
            }
            (13, 0, 0, 3) => {
                self.tpidruro = v;
                None
            }
            (13, 0, 0, 4) => {
                self.tpidrprw = v;
                None
            }
            (14, 0, _, _) => Timer,
            (15, _, _, _) => None,
            _ => return Option::None,
        };
        Some(e)
    }

    /// 64-bit read (`MRRC p15, opc1, Rt, Rt2, crm`).
    pub fn read64(&self, opc1: u8, crm: u8) -> Option<(u64, Cp15Effect)> {
        Some(match (crm, opc1) {
            (2, 0) => (self.ttbr0, Cp15Effect::None),
            (2, 1) => (self.ttbr1, Cp15Effect::None),
            (7, 0) => (self.par, Cp15Effect::None),
            (14, 0..=3) => (0, Cp15Effect::Timer),
            _ => return None,
        })
    }

    /// 64-bit write (`MCRR p15`).
    pub fn write64(&mut self, opc1: u8, crm: u8, v: u64) -> Option<Cp15Effect> {
        Some(match (crm, opc1) {
            (2, 0) => {
                self.ttbr0 = v & 0x00ff_00ff_ffff_ffff;
                Cp15Effect::FlushTlb
            }
            (2, 1) => {
                self.ttbr1 = v & 0x00ff_00ff_ffff_ffff;
                Cp15Effect::FlushTlb
            }
            (7, 0) => {
                self.par = v;
                Cp15Effect::None
            }
            (14, 0..=3) => Cp15Effect::Timer,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cp14::Cp14;

    /// The ID registers advertise no ThumbEE, and its registers are indeed absent: Linux
    /// armv7 (`thumbee_notifier`) reads `TEEHBR` on every context switch when `ID_PFR0`
    /// says ThumbEE.
    #[test]
    fn no_thumbee_advertised_and_none_there() {
        let cp15 = Cp15::new();
        let (pfr0, _) = cp15.read(0, 0, 1, 0).unwrap();
        let (isar3, _) = cp15.read(0, 0, 2, 3).unwrap();
        assert_eq!(pfr0 >> 12 & 0xf, 0, "ID_PFR0.State3 {pfr0:#x}");
        assert_eq!(isar3 >> 28, 0, "ID_ISAR3.ThumbEE_extn {isar3:#x}");
        // A32, Thumb-2 and trivial Jazelle stay advertised.
        assert_eq!(pfr0 & 0xfff, 0x131);
        let cp14 = Cp14::new();
        // TEECR (c0) and TEEHBR (c1), opc1 = 6: UNDEFINED.
        assert_eq!(cp14.read(6, 0, 0, 0, false), None);
        assert_eq!(cp14.read(6, 1, 0, 0, false), None);
        // The trivial Jazelle ID register ID_PFR0.State2 promises is there.
        assert_eq!(cp14.read(7, 0, 0, 0, false), Some(0));
    }
}
