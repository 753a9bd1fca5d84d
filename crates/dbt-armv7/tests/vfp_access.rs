//! Directed tests of VFP/Advanced SIMD access control: `CPACR.cp10/cp11` denying access
//! (at reset, and PL0 with PL1-only access), `FPEXC.EN` clear, `CPACR.ASEDIS` and
//! `CPACR.D32DIS`, and the PL1-only system registers (FPEXC, FPSID, MVFR0/1): each gives
//! the Undefined Instruction exception, and the same instruction runs once access is
//! granted. The instructions are executed, not just decoded.

use dbt_armv7::cpu::Exception;
use dbt_armv7::{Cpu, Exit, FlatRam, Mode};

const CODE: u32 = 0x1000;

/// Runs one A32 instruction; `Ok(())` if it completed, `Err(e)` for its exception.
fn exec(cpu: &mut Cpu, ram: &mut FlatRam, w: u32) -> Result<(), Exception> {
    ram.load(CODE as u64, &w.to_le_bytes());
    cpu.flush_caches();
    cpu.set_pc(CODE);
    match cpu.run(ram, 1) {
        Exit::Budget => Ok(()),
        Exit::Exception(e) => Err(e),
        e => panic!("unexpected exit {e:?}"),
    }
}

const VADD_S0: u32 = 0xee30_0a00; // vadd.f32 s0, s0, s0
const VADD_D16: u32 = 0xee70_0b00; // vadd.f64 d16, d0, d0
const VADD_D1: u32 = 0xee30_1b00; // vadd.f64 d1, d0, d0
const VMRS_R0_FPEXC: u32 = 0xeef8_0a10;
const VMSR_FPEXC_R1: u32 = 0xeee8_1a10;
const VMRS_R2_FPSID: u32 = 0xeef0_2a10;
const VMRS_R3_MVFR0: u32 = 0xeef7_3a10;
const VMRS_R4_FPSCR: u32 = 0xeef1_4a10;
const MCR_CPACR_R5: u32 = 0xee01_5f50; // mcr p15, 0, r5, c1, c0, 2
const MRC_R6_CPACR: u32 = 0xee11_6f50; // mrc p15, 0, r6, c1, c0, 2
const VDUP_32_D0_R0: u32 = 0xee80_0b10;
const VMOV_S0_R0: u32 = 0xee00_0a10;
const VMOV_32_D0_R0: u32 = 0xee00_0b10; // vmov.32 d0[0], r0 (VFP)
const VMOV_8_D0_R0: u32 = 0xee40_0b10; // vmov.8 d0[0], r0 (Advanced SIMD)
const VEOR_D0: u32 = 0xf300_0110; // veor d0, d0, d0

fn setup() -> (Cpu, FlatRam) {
    let mut cpu = Cpu::new(); // SVC mode, CPACR = 0, FPEXC.EN = 0
    cpu.set_exit_on_exception(true);
    (cpu, FlatRam::new(0, 0x2000))
}

fn set_cpacr(cpu: &mut Cpu, ram: &mut FlatRam, v: u32) {
    cpu.set_reg(5, v);
    exec(cpu, ram, MCR_CPACR_R5).unwrap();
}

#[test]
fn reset_state_denies_everything() {
    let (mut cpu, mut ram) = setup();
    for w in [VADD_S0, VMRS_R0_FPEXC, VMRS_R4_FPSCR, VMOV_S0_R0, VEOR_D0] {
        assert_eq!(
            exec(&mut cpu, &mut ram, w),
            Err(Exception::Undefined),
            "{w:08x}"
        );
    }
}

#[test]
fn cpacr_then_fpexc_enable() {
    let (mut cpu, mut ram) = setup();
    set_cpacr(&mut cpu, &mut ram, 0xffff_ffff);
    exec(&mut cpu, &mut ram, MRC_R6_CPACR).unwrap();
    assert_eq!(
        cpu.reg(6),
        0xc0f0_0000,
        "cp10/cp11, ASEDIS, D32DIS are writable"
    );
    set_cpacr(&mut cpu, &mut ram, 0x00f0_0000);
    // CPACR grants access, FPEXC.EN is clear: data processing is UNDEFINED, FPEXC and
    // the ID registers are readable at PL1.
    assert_eq!(exec(&mut cpu, &mut ram, VADD_S0), Err(Exception::Undefined));
    assert_eq!(
        exec(&mut cpu, &mut ram, VMRS_R4_FPSCR),
        Err(Exception::Undefined)
    );
    exec(&mut cpu, &mut ram, VMRS_R0_FPEXC).unwrap();
    assert_eq!(cpu.reg(0), 0);
    exec(&mut cpu, &mut ram, VMRS_R2_FPSID).unwrap();
    assert_eq!(cpu.reg(2), 0x4104_30f0);
    exec(&mut cpu, &mut ram, VMRS_R3_MVFR0).unwrap();
    assert_eq!(cpu.reg(3), 0x1011_0222);
    cpu.set_reg(1, 0xffff_ffff);
    exec(&mut cpu, &mut ram, VMSR_FPEXC_R1).unwrap();
    exec(&mut cpu, &mut ram, VMRS_R0_FPEXC).unwrap();
    assert_eq!(cpu.reg(0), 0x4000_0000, "only FPEXC.EN is implemented");
    // Enabled: 1.5 + 1.5 = 3.0.
    cpu.fp_mut().set_s(0, 1.5f32.to_bits());
    exec(&mut cpu, &mut ram, VADD_S0).unwrap();
    assert_eq!(cpu.fp().s(0), 3.0f32.to_bits());
    // FPEXC.EN cleared again: UNDEFINED again.
    cpu.set_reg(1, 0);
    exec(&mut cpu, &mut ram, VMSR_FPEXC_R1).unwrap();
    assert_eq!(exec(&mut cpu, &mut ram, VADD_S0), Err(Exception::Undefined));
}

#[test]
fn pl1_only_access_and_pl0() {
    let (mut cpu, mut ram) = setup();
    set_cpacr(&mut cpu, &mut ram, 0x0050_0000); // cp10/cp11 = 0b01: PL1 only
    cpu.fp_mut().fpexc = 0x4000_0000;
    exec(&mut cpu, &mut ram, VADD_S0).unwrap();
    cpu.switch_mode(Mode::Usr);
    assert_eq!(exec(&mut cpu, &mut ram, VADD_S0), Err(Exception::Undefined));
    assert_eq!(
        exec(&mut cpu, &mut ram, VMRS_R4_FPSCR),
        Err(Exception::Undefined)
    );
    cpu.switch_mode(Mode::Svc);
    set_cpacr(&mut cpu, &mut ram, 0x00f0_0000); // full access
    cpu.switch_mode(Mode::Usr);
    exec(&mut cpu, &mut ram, VADD_S0).unwrap();
    exec(&mut cpu, &mut ram, VMRS_R4_FPSCR).unwrap();
    // FPEXC, FPSID and MVFR are PL1 only.
    for w in [VMRS_R0_FPEXC, VMSR_FPEXC_R1, VMRS_R2_FPSID, VMRS_R3_MVFR0] {
        assert_eq!(
            exec(&mut cpu, &mut ram, w),
            Err(Exception::Undefined),
            "{w:08x}"
        );
    }
}

#[test]
fn asedis_and_d32dis() {
    let (mut cpu, mut ram) = setup();
    cpu.fp_mut().fpexc = 0x4000_0000;
    set_cpacr(&mut cpu, &mut ram, 0x80f0_0000); // ASEDIS
    exec(&mut cpu, &mut ram, VMOV_S0_R0).unwrap();
    exec(&mut cpu, &mut ram, VMOV_32_D0_R0).unwrap();
    exec(&mut cpu, &mut ram, VADD_S0).unwrap();
    for w in [VDUP_32_D0_R0, VMOV_8_D0_R0, VEOR_D0] {
        assert_eq!(
            exec(&mut cpu, &mut ram, w),
            Err(Exception::Undefined),
            "{w:08x}"
        );
    }
    set_cpacr(&mut cpu, &mut ram, 0x40f0_0000); // D32DIS
    exec(&mut cpu, &mut ram, VADD_D1).unwrap();
    assert_eq!(
        exec(&mut cpu, &mut ram, VADD_D16),
        Err(Exception::Undefined)
    );
}
