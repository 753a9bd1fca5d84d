//! The emulation against an in-memory virtual CPU interface: every register read back, the
//! acknowledge / priority-drop / deactivate cycle, masking, preemption, groups, EOImode.

use super::*;
use alloc::vec::Vec;
use Group::{G0, G1};

/// An `ICH_*_EL2` register file in memory.
struct Ich {
    vtr: u64,
    vmcr: u64,
    lrs: [LrEntry; 4],
    ap: [[u32; 4]; 2],
    eoicount: u32,
    deactivated: Vec<u32>,
}

/// QEMU's GICv3 virtual interface: 4 list registers, 5 priority and preemption bits, 16-bit
/// INTIDs, A3V.
const VTR: u64 = 3 | 4 << 26 | 4 << 29 | 1 << 21;

impl Ich {
    fn new() -> Self {
        Ich {
            vtr: VTR,
            vmcr: vmcr::ENG1 | 0xf8 << vmcr::PMR_SHIFT,
            lrs: [LrEntry::EMPTY; 4],
            ap: [[0; 4]; 2],
            eoicount: 0,
            deactivated: Vec::new(),
        }
    }

    fn pend(&mut self, i: usize, vintid: u32, priority: u8, group1: bool) {
        self.lrs[i] = LrEntry {
            vintid,
            priority,
            group1,
            state: LrState::Pending,
            ..LrEntry::EMPTY
        };
    }

    fn read(&mut self, reg: IccReg) -> u64 {
        access(self, reg, true, 0).unwrap().unwrap()
    }

    fn write(&mut self, reg: IccReg, value: u64) {
        assert_eq!(access(self, reg, false, value), Ok(None));
    }
}

impl VirtualCpuInterface for Ich {
    fn vtr(&self) -> u64 {
        self.vtr
    }
    fn vmcr(&self) -> u64 {
        self.vmcr
    }
    fn set_vmcr(&mut self, value: u64) {
        self.vmcr = value;
    }
    fn lr(&self, i: usize) -> LrEntry {
        self.lrs[i]
    }
    fn set_lr(&mut self, i: usize, e: LrEntry) {
        self.lrs[i] = e;
    }
    fn apr(&self, group: Group, n: usize) -> u32 {
        self.ap[(group == G1) as usize][n]
    }
    fn set_apr(&mut self, group: Group, n: usize, value: u32) {
        self.ap[(group == G1) as usize][n] = value;
    }
    fn bump_eoicount(&mut self) {
        self.eoicount += 1;
    }
    fn deactivate_physical(&mut self, pintid: u32) {
        self.deactivated.push(pintid);
    }
}

#[test]
fn encodings() {
    let e = |crn, crm, op2| IccReg::from_encoding(3, 0, crn, crm, op2);
    assert_eq!(e(12, 12, 0), Some(IccReg::Iar(G1)));
    assert_eq!(e(12, 12, 1), Some(IccReg::Eoir(G1)));
    assert_eq!(e(12, 12, 2), Some(IccReg::Hppir(G1)));
    assert_eq!(e(12, 12, 3), Some(IccReg::Bpr(G1)));
    assert_eq!(e(12, 12, 4), Some(IccReg::Ctlr));
    assert_eq!(e(12, 12, 6), Some(IccReg::Igrpen(G0)));
    assert_eq!(e(12, 12, 7), Some(IccReg::Igrpen(G1)));
    assert_eq!(e(12, 8, 0), Some(IccReg::Iar(G0)));
    assert_eq!(e(12, 8, 7), Some(IccReg::Apr(G0, 3)));
    assert_eq!(e(12, 9, 2), Some(IccReg::Apr(G1, 2)));
    assert_eq!(e(12, 11, 1), Some(IccReg::Dir));
    assert_eq!(e(12, 11, 3), Some(IccReg::Rpr));
    assert_eq!(e(4, 6, 0), Some(IccReg::Pmr));
    // SGI generation registers, ICC_SRE_EL1 and other spaces are not emulated here.
    for op2 in 5..=7 {
        assert_eq!(e(12, 11, op2), None);
    }
    assert_eq!(e(12, 12, 5), None);
    assert_eq!(IccReg::from_encoding(3, 4, 12, 12, 0), None);
    assert_eq!(IccReg::from_encoding(3, 0, 12, 9, 4), None);
}

#[test]
fn acknowledge_then_eoi() {
    let mut c = Ich::new();
    c.pend(1, 27, 0xa0, true);
    assert_eq!(c.read(IccReg::Hppir(G1)), 27);
    assert_eq!(c.read(IccReg::Rpr), 0xff);
    assert_eq!(c.read(IccReg::Iar(G1)), 27);
    assert_eq!(c.lrs[1].state, LrState::Active);
    // 0xa0 with 5 preemption bits is active-priority bit 0xa0 >> 3 = 20.
    assert_eq!(c.read(IccReg::Apr(G1, 0)), 1 << 20);
    assert_eq!(c.read(IccReg::Rpr), 0xa0);
    assert_eq!(c.read(IccReg::Hppir(G1)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Iar(G1)), u64::from(SPURIOUS));
    c.write(IccReg::Eoir(G1), 27);
    assert_eq!(c.lrs[1].state, LrState::Invalid);
    assert_eq!(c.read(IccReg::Apr(G1, 0)), 0);
    assert_eq!(c.read(IccReg::Rpr), 0xff);
    assert_eq!(c.eoicount, 0);
}

#[test]
fn priority_order_and_preemption() {
    let mut c = Ich::new();
    c.pend(0, 40, 0x90, true);
    c.pend(1, 41, 0x80, true);
    c.pend(2, 42, 0xc0, true);
    assert_eq!(c.read(IccReg::Iar(G1)), 41);
    // 0x90 does not preempt the running 0x80.
    assert_eq!(c.read(IccReg::Iar(G1)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Hppir(G1)), 40);
    c.pend(3, 43, 0x40, true);
    assert_eq!(c.read(IccReg::Iar(G1)), 43);
    assert_eq!(c.read(IccReg::Rpr), 0x40);
    c.write(IccReg::Eoir(G1), 43);
    assert_eq!(c.read(IccReg::Rpr), 0x80);
    c.write(IccReg::Eoir(G1), 41);
    assert_eq!(c.read(IccReg::Iar(G1)), 40);
    c.write(IccReg::Eoir(G1), 40);
    assert_eq!(c.read(IccReg::Iar(G1)), 42);
    c.write(IccReg::Eoir(G1), 42);
    assert!(c.lrs.iter().all(|e| e.state == LrState::Invalid));
}

#[test]
fn priority_mask_and_group_enables() {
    let mut c = Ich::new();
    c.write(IccReg::Pmr, 0x80);
    assert_eq!(c.read(IccReg::Pmr), 0x80);
    c.pend(0, 50, 0xa0, true);
    // Masked: not acknowledged, but still the highest pending.
    assert_eq!(c.read(IccReg::Iar(G1)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Hppir(G1)), 50);
    assert_eq!(c.lrs[0].state, LrState::Pending);
    c.write(IccReg::Pmr, 0xff);
    // Group 1 disabled: nothing is pending for the interface.
    c.write(IccReg::Igrpen(G1), 0);
    assert_eq!(c.read(IccReg::Igrpen(G1)), 0);
    assert_eq!(c.read(IccReg::Hppir(G1)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Iar(G1)), u64::from(SPURIOUS));
    c.write(IccReg::Igrpen(G1), 1);
    assert_eq!(c.read(IccReg::Igrpen(G1)), 1);
    // A group-1 interrupt is not acknowledged through ICC_IAR0_EL1.
    c.write(IccReg::Igrpen(G0), 1);
    assert_eq!(c.read(IccReg::Igrpen(G0)), 1);
    assert_eq!(c.read(IccReg::Iar(G0)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Hppir(G0)), u64::from(SPURIOUS));
    assert_eq!(c.read(IccReg::Iar(G1)), 50);
    // Group 0 has its own active-priority registers.
    c.pend(1, 51, 0x20, false);
    assert_eq!(c.read(IccReg::Iar(G0)), 51);
    assert_eq!(c.read(IccReg::Apr(G0, 0)), 1 << 4);
    assert_eq!(c.read(IccReg::Rpr), 0x20);
}

#[test]
fn split_eoi_and_hardware_deactivation() {
    let mut c = Ich::new();
    c.write(IccReg::Ctlr, ctlr::EOIMODE);
    assert_eq!(c.read(IccReg::Ctlr) & ctlr::EOIMODE, ctlr::EOIMODE);
    c.lrs[2] = LrEntry {
        vintid: 27,
        pintid: Some(27),
        priority: 0xa0,
        group1: true,
        state: LrState::Pending,
        ..LrEntry::EMPTY
    };
    assert_eq!(c.read(IccReg::Iar(G1)), 27);
    // EOImode 1: EOIR only drops the priority.
    c.write(IccReg::Eoir(G1), 27);
    assert_eq!(c.read(IccReg::Rpr), 0xff);
    assert_eq!(c.lrs[2].state, LrState::Active);
    assert!(c.deactivated.is_empty());
    // DIR deactivates, and the physical interrupt behind the HW list register too.
    c.write(IccReg::Dir, 27);
    assert_eq!(c.lrs[2].state, LrState::Invalid);
    assert_eq!(c.deactivated, [27]);
    // A DIR of an interrupt in no list register counts in EOIcount; an LPI does not.
    c.write(IccReg::Dir, 99);
    assert_eq!(c.eoicount, 1);
    c.write(IccReg::Dir, MIN_LPI as u64);
    assert_eq!(c.eoicount, 1);
    // EOImode 0: DIR does nothing, EOIR of an unknown INTID counts.
    c.write(IccReg::Ctlr, 0);
    c.write(IccReg::Dir, 99);
    assert_eq!(c.eoicount, 1);
    c.write(IccReg::Eoir(G1), 99);
    assert_eq!(c.eoicount, 2);
}

#[test]
fn eoi_with_the_wrong_group_only_drops_priority() {
    let mut c = Ich::new();
    c.pend(0, 30, 0x60, true);
    assert_eq!(c.read(IccReg::Iar(G1)), 30);
    c.write(IccReg::Eoir(G0), 30);
    assert_eq!(c.read(IccReg::Rpr), 0xff);
    assert_eq!(c.lrs[0].state, LrState::Active);
}

#[test]
fn binary_points() {
    let mut c = Ich::new();
    // 5 preemption bits: BPR1 >= 3, BPR0 >= 2.
    c.write(IccReg::Bpr(G1), 0);
    assert_eq!(c.read(IccReg::Bpr(G1)), 3);
    c.write(IccReg::Bpr(G1), 5);
    assert_eq!(c.read(IccReg::Bpr(G1)), 5);
    c.write(IccReg::Bpr(G0), 0);
    assert_eq!(c.read(IccReg::Bpr(G0)), 2);
    // CBPR: BPR1 reads BPR0 + 1 and ignores writes.
    c.write(IccReg::Ctlr, ctlr::CBPR);
    assert_eq!(c.read(IccReg::Ctlr) & ctlr::CBPR, ctlr::CBPR);
    assert_eq!(c.read(IccReg::Bpr(G1)), 3);
    c.write(IccReg::Bpr(G1), 6);
    assert_eq!(c.read(IccReg::Bpr(G1)), 3);
    c.write(IccReg::Ctlr, 0);
    assert_eq!(c.read(IccReg::Bpr(G1)), 5);
    // With BPR1 = 5 only bits 7:6 are group priority: 0x90 does not preempt 0x80.
    c.pend(0, 60, 0x80, true);
    c.pend(1, 61, 0x90, true);
    assert_eq!(c.read(IccReg::Iar(G1)), 60);
    assert_eq!(c.read(IccReg::Iar(G1)), u64::from(SPURIOUS));
}

#[test]
fn control_and_active_priority_registers_read_back() {
    let mut c = Ich::new();
    let ctlr = c.read(IccReg::Ctlr);
    assert_eq!((ctlr >> ctlr::PRIBITS_SHIFT) & 7, 4);
    assert_eq!((ctlr >> ctlr::IDBITS_SHIFT) & 7, 0);
    assert_eq!(ctlr & ctlr::A3V, ctlr::A3V);
    c.write(IccReg::Apr(G1, 0), 0x8000_0001);
    assert_eq!(c.read(IccReg::Apr(G1, 0)), 0x8000_0001);
    // Only one register per group with 5 preemption bits: the others stay zero.
    c.write(IccReg::Apr(G1, 2), 0xffff);
    assert_eq!(c.read(IccReg::Apr(G1, 2)), 0);
    assert_eq!(c.read(IccReg::Rpr), 0);
}

#[test]
fn wrong_direction_is_refused() {
    let mut c = Ich::new();
    for (reg, is_read) in [
        (IccReg::Iar(G1), false),
        (IccReg::Hppir(G0), false),
        (IccReg::Rpr, false),
        (IccReg::Eoir(G1), true),
        (IccReg::Dir, true),
    ] {
        assert_eq!(
            access(&mut c, reg, is_read, 0),
            Err(Refused::WrongDirection)
        );
    }
}
