//! Exits of an AArch32 EL1 guest (`HCR_EL2.RW` = 0, an ARMv7-A kernel in Supervisor mode):
//! CP15 registers, banked registers as transfer registers, HVC32 PSCI, conditional traps,
//! 16-bit T32 instructions in IT blocks, and injected exceptions taken in AArch32 modes.

use el2_core::aarch32::{CPSR_SVC_MASKED, CPSR_T, MODE_ABT, MODE_FIQ, MODE_SVC, MODE_UND};
use el2_core::exit::ec;
use el2_core::mmio::{AccessSize, MmioAccess};
use el2_core::vcpu::VcpuControls;
use vgic::SgiReg;

use super::mock::{Rig, DEV_BASE, PC};
use super::{dabt, esr, IL};
use crate::exits::{Devices, Outcome, VmEnd};

/// The AArch32 guest's vectors (`VBAR`).
const VBAR32: u64 = 0xc000_8000;

/// A rig whose vCPU is an AArch32 kernel in SVC mode at [`PC`].
fn rig() -> Rig {
    let mut r = Rig::new();
    r.vcpu.controls = VcpuControls {
        el1_aarch32: true,
        ..Default::default()
    };
    r.vcpu.el1.vbar_el1 = VBAR32;
    r.vcpu.el1.sctlr_el1 = el2_core::aarch32::SCTLR_RESET;
    r.vcpu.regs.pstate = CPSR_SVC_MASKED;
    r
}

/// ISS of `MRC`/`MCR p15, opc1, Rt, CRn, CRm, opc2`, condition AL.
fn mcr_iss(opc1: u32, crn: u32, crm: u32, opc2: u32, rt: u32, read: bool) -> u32 {
    (1 << 24)
        | (0xe << 20)
        | (opc2 << 17)
        | (opc1 << 14)
        | (crn << 10)
        | (rt << 5)
        | (crm << 1)
        | u32::from(read)
}

/// ISS of `MRRC`/`MCRR p15, opc1, Rt, Rt2, CRm`, condition AL.
fn mcrr_iss(opc1: u32, crm: u32, rt: u32, rt2: u32, read: bool) -> u32 {
    (1 << 24) | (0xe << 20) | (opc1 << 16) | (rt2 << 10) | (rt << 5) | (crm << 1) | u32::from(read)
}

#[test]
fn id_registers_and_actlr() {
    let mut r = rig();
    // ID_PFR1 with Virtualization [15:12] = 1 and GIC [31:28] = 1: virtualization hidden.
    r.vm.id_regs.insert((1, 1), 0x1000_1011);
    // MRC p15, 0, r13, c0, c1, 1: ISS.Rt gives the AArch64 view, X19 for SVC mode's r13.
    let out = r.sync(esr(ec::CP15_32, mcr_iss(0, 0, 1, 1, 19, true)), 0, 0);
    assert_eq!(out, Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[19], 0x1000_0011);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // ACTLR reads its value at creation; writes are ignored.
    r.vcpu.el1.actlr_el1 = 0x40;
    r.sync(esr(ec::CP15_32, mcr_iss(0, 1, 0, 1, 2, true)), 0, 0);
    assert_eq!(r.vcpu.regs.x[2], 0x40);
    r.vcpu.regs.x[2] = 0;
    assert_eq!(
        r.sync(esr(ec::CP15_32, mcr_iss(0, 1, 0, 1, 2, false)), 0, 0),
        Outcome::Emulated
    );
    assert_eq!(r.vcpu.el1.actlr_el1, 0x40);
    // VMRS r3, MVFR0 (reg 7).
    r.vm.id_regs.insert((3, 0), 0x1022_2222);
    r.sync(esr(ec::CP10_ID, mcr_iss(7, 7, 0, 0, 3, true)), 0, 0);
    assert_eq!(r.vcpu.regs.x[3], 0x1022_2222);
    assert!(r.vm.warnings.is_empty(), "{:?}", r.vm.warnings);
}

#[test]
fn unknown_cp15_is_undefined_in_undefined_mode() {
    let mut r = rig();
    // MRC p15, 0, r0, c15, c0, 0 (IMPLEMENTATION DEFINED, TIDCP).
    let out = r.sync(esr(ec::CP15_32, mcr_iss(0, 15, 0, 0, 0, true)), 0, 0);
    assert_eq!(out, Outcome::Injected);
    assert_eq!(r.vcpu.regs.pc, VBAR32 + 4);
    assert_eq!(r.vcpu.regs.pstate & 0x1f, MODE_UND);
    assert_eq!(
        r.vcpu.regs.x[22],
        PC + 4,
        "LR_und: the next A32 instruction"
    );
    assert_eq!(r.vcpu.el1.spsr_und, CPSR_SVC_MASKED);
    assert!(r.vm.warnings[0].contains("MRC p15, 0, c15, c0, 0"));
    // A write to an ID register is UNDEFINED as well.
    let mut r = rig();
    let out = r.sync(esr(ec::CP15_32, mcr_iss(0, 0, 1, 0, 0, false)), 0, 0);
    assert_eq!(out, Outcome::Injected);
}

#[test]
fn sgi_and_physical_timer() {
    let mut r = rig();
    // MCRR p15, 0, r0, r1, c12: ICC_SGI1R = r1:r0.
    r.vcpu.regs.x[0] = 0x0001_0001;
    r.vcpu.regs.x[1] = 0x0000_0001;
    let out = r.sync(esr(ec::CP15_64, mcrr_iss(0, 12, 0, 1, false)), 0, 0);
    assert_eq!(out, Outcome::Emulated);
    assert_eq!(r.vm.sgis, [(SgiReg::Sgi1r, 0x1_0001_0001)]);
    // MCRR p15, 2, r2, r3, c14: CNTP_CVAL; MRRC reads it back into r4, r5.
    r.vcpu.regs.x[2] = 0x89ab_cdef;
    r.vcpu.regs.x[3] = 0x0123_4567;
    r.sync(esr(ec::CP15_64, mcrr_iss(2, 14, 2, 3, false)), 0, 0);
    r.sync(esr(ec::CP15_64, mcrr_iss(2, 14, 4, 5, true)), 0, 0);
    assert_eq!(
        (r.vcpu.regs.x[4], r.vcpu.regs.x[5]),
        (0x89ab_cdef, 0x0123_4567)
    );
    // MCR p15, 0, r6, c14, c2, 1: CNTP_CTL enable.
    r.vcpu.regs.x[6] = 1;
    r.sync(esr(ec::CP15_32, mcr_iss(0, 14, 2, 1, 6, false)), 0, 0);
    r.sync(esr(ec::CP15_32, mcr_iss(0, 14, 2, 1, 7, true)), 0, 0);
    assert_eq!(r.vcpu.regs.x[7] & 1, 1);
    assert!(r.vm.warnings.is_empty(), "{:?}", r.vm.warnings);
}

#[test]
fn debug_registers_are_claimed_on_first_use() {
    let mut r = rig();
    // MRC p14, 0, r0, c0, c0, 0 (DBGDIDR): claimed, the guest re-executes it.
    let out = r.sync(esr(ec::CP14_32, mcr_iss(0, 0, 0, 0, 0, true)), 0, 0);
    assert_eq!(out, Outcome::Emulated);
    assert!(r.vm.debug_active);
    assert_eq!(r.vcpu.regs.pc, PC);
}

#[test]
fn hvc32_psci() {
    let mut r = rig();
    // PSCI_VERSION (32-bit ID).
    r.vcpu.regs.x[0] = 0x8400_0000;
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x1_0000);
    // CPU_ON of vCPU 1 at a T32 entry point.
    r.vcpu.regs.x[..4].copy_from_slice(&[0x8400_0003, 1, 0x4000_8001, 7]);
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0);
    // A 64-bit function ID from AArch32 is NOT_SUPPORTED (as a 32-bit -1).
    r.vcpu.regs.x[0] = 0xc400_0003;
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Refused);
    assert_eq!(r.vcpu.regs.x[0] as u32, u32::MAX);
    // SYSTEM_OFF.
    r.vcpu.regs.x[0] = 0x8400_0008;
    assert_eq!(r.sync(esr(ec::HVC32, 0), 0, 0), Outcome::Yield);
    assert_eq!(r.vm.end, Some(VmEnd::PowerOff));
}

#[test]
fn conditional_wfi_and_thumb_it_blocks() {
    // WFI with condition EQ (CV = 1), Z clear: not executed, stepped over.
    let mut r = rig();
    let out = r.sync(esr(ec::WFX, 1 << 24), 0, 0); // COND = 0b0000 (EQ)
    assert_eq!(out, Outcome::Emulated);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // A trapped T32 instruction reported with IL = 0 (16 bits) first in an ITE EQ block,
    // Z set: executed; the PC moves by 2 and the IT state advances.
    let mut r = rig();
    r.vm.id_regs.insert((1, 0), 0x131);
    let it: u64 = 0b0000_1100; // ITE EQ: firstcond 0b0000, mask 0b1100
    let it_bits = ((it >> 2) << 10) | ((it & 3) << 25);
    r.vcpu.regs.pstate = CPSR_SVC_MASKED | CPSR_T | it_bits | (1 << 30);
    let iss = mcr_iss(0, 0, 1, 0, 0, true) & !(1 << 24); // CV = 0: the IT state decides
    let out = r.sync(esr(ec::CP15_32, iss) & !IL, 0, 0);
    assert_eq!(out, Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0x131);
    assert_eq!(r.vcpu.regs.pc, PC + 2);
    assert_eq!(el2_core::aarch32::itstate(r.vcpu.regs.pstate), 0b0001_1000);
    // The second instruction (the "else", NE) fails with Z set: skipped, the block ends.
    r.vcpu.regs.x[0] = 0;
    let out = r.sync(esr(ec::CP15_32, iss) & !IL, 0, 0);
    assert_eq!(out, Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[0], 0);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    assert_eq!(el2_core::aarch32::itstate(r.vcpu.regs.pstate), 0);
}

#[test]
fn mmio_with_banked_transfer_registers() {
    // STR r13 (SVC: X19; ISS.SRT gives the AArch64 view) to the device, then LDR into r8 of
    // FIQ mode (X24).
    let mut r = rig();
    r.vcpu.regs.x[19] = 0x1234_5678;
    let (e, far, hp) = dabt(DEV_BASE, 2, 19, false, true);
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated);
    let acc = MmioAccess {
        ipa: DEV_BASE,
        size: AccessSize::Word,
        is_write: false,
        rt: 0,
        sign_extend: false,
        sf: false,
        acquire_release: false,
    };
    assert_eq!(
        r.vm.mmio(&acc, 0),
        el2_core::mmio::MmioOutcome::Read(0x1234_5678)
    );
    r.vcpu.regs.pstate = (CPSR_SVC_MASKED & !0x1f) | MODE_FIQ;
    let (e, far, hp) = dabt(DEV_BASE, 2, 24, false, false);
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated);
    assert_eq!(r.vcpu.regs.x[24], 0x1234_5678);
    assert_eq!(r.vcpu.regs.x[8], 0);
}

#[test]
fn unbacked_mmio_is_a_data_abort_in_abort_mode() {
    let mut r = rig();
    let (e, far, hp) = dabt(0x0f00_0000, 2, 0, false, true);
    assert_eq!(r.sync(e, far, hp), Outcome::Injected);
    assert_eq!(r.vcpu.regs.pc, VBAR32 + 0x10);
    assert_eq!(r.vcpu.regs.pstate & 0x1f, MODE_ABT);
    assert_eq!(r.vcpu.regs.x[20], PC + 8, "LR_abt");
    assert_eq!(r.vcpu.el1.spsr_abt & 0x1f, MODE_SVC);
    // DFSR: short-descriptor synchronous external abort on a write; DFAR the address.
    assert_eq!(r.vcpu.el1.esr_el1, 0x808);
    assert_eq!(r.vcpu.el1.far_el1 & 0xffff_ffff, 0x0f00_0000);
}

/// Puts the 32-bit word `w` at guest address `at` (the mock RAM holds 64-bit words).
fn poke32(r: &mut Rig, at: u64, w: u32) {
    let word = r.vm.ram.entry(at & !7).or_insert(0);
    let shift = (at & 7) * 8;
    *word = (*word & !(0xffff_ffff << shift)) | (u64::from(w) << shift);
}

/// A data abort on `ipa` without a valid syndrome (ISV = 0), translation fault level 3.
fn dabt_no_isv(ipa: u64, write: bool) -> (u64, u64, u64) {
    let iss = (u32::from(write) << 6) | super::DFSC_TRANSLATION_L3;
    (esr(ec::DABT_LOW, iss), ipa, super::hpfar(ipa))
}

#[test]
fn isv0_a32_writeback_ldrd_and_refusal() {
    // STR r1, [r0], #4 (post-indexed: no syndrome), MMU off: stores r1, r0 += 4.
    let mut r = rig();
    poke32(&mut r, PC, 0xe480_1004);
    r.vcpu.regs.x[0] = DEV_BASE;
    r.vcpu.regs.x[1] = 0xcafe_f00d;
    let (e, far, hp) = dabt_no_isv(DEV_BASE, true);
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated, "{:?}", r.vm.warnings);
    assert_eq!(r.vcpu.regs.x[0], DEV_BASE + 4);
    assert_eq!(r.vcpu.regs.pc, PC + 4);
    // LDRD r2, r3, [r0, #-4]: two words back.
    let mut r2 = rig();
    r2.vm.bus = std::mem::take(&mut r.vm.bus);
    poke32(&mut r2, PC, 0xe140_20d4);
    r2.vcpu.regs.x[0] = DEV_BASE + 4;
    let (e, far, hp) = dabt_no_isv(DEV_BASE, false);
    assert_eq!(
        r2.sync(e, far, hp),
        Outcome::Emulated,
        "{:?}",
        r2.vm.warnings
    );
    assert_eq!(r2.vcpu.regs.x[2], 0xcafe_f00d);
    // LDR pc, [r0]: refused with an external abort.
    let mut r3 = rig();
    poke32(&mut r3, PC, 0xe590_f000);
    r3.vcpu.regs.x[0] = DEV_BASE;
    let (e, far, hp) = dabt_no_isv(DEV_BASE, false);
    assert_eq!(r3.sync(e, far, hp), Outcome::Injected);
    assert!(
        r3.vm.warnings[0].contains("not an emulatable load/store"),
        "{:?}",
        r3.vm.warnings
    );
    assert_eq!(r3.vcpu.regs.pstate & 0x1f, MODE_ABT);
}

#[test]
fn isv0_t32_ldm_one_register() {
    // T16 LDM r0!, {r1} (0xc802), then a NOP: the PC moves by 2, r0 += 4.
    let mut r = rig();
    r.vcpu.regs.pstate |= CPSR_T;
    poke32(&mut r, PC, 0xbf00_c802);
    r.vcpu.regs.x[0] = DEV_BASE;
    let (e, far, hp) = dabt_no_isv(DEV_BASE, false);
    assert_eq!(r.sync(e, far, hp), Outcome::Emulated, "{:?}", r.vm.warnings);
    assert_eq!(r.vcpu.regs.x[0], DEV_BASE + 4);
    assert_eq!(r.vcpu.regs.pc, PC + 2);
}
