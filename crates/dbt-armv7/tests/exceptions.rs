//! Host tests of the system model that the system-test program cannot reach without an
//! interrupt controller: IRQ/FIQ entry and return, reset, hivecs, and the generic timer.

use dbt_armv7::cpu::{Exception, Mode};
use dbt_armv7::{Cpu, FlatRam};

fn ram_with(words: &[(u32, u32)]) -> FlatRam {
    let mut ram = FlatRam::new(0, 0x10000);
    for &(a, w) in words {
        ram.load(a as u64, &w.to_le_bytes());
    }
    ram
}

fn program() -> FlatRam {
    ram_with(&[
        (0x18, 0xea00_0038),   // b 0x100
        (0x1c, 0xea00_0077),   // b 0x200
        (0x100, 0xe285_5001),  // add r5, r5, #1
        (0x104, 0xe25e_f004),  // subs pc, lr, #4
        (0x200, 0xe286_6001),  // add r6, r6, #1
        (0x204, 0xe25e_f004),  // subs pc, lr, #4
        (0x1000, 0xf108_00c0), // cpsie if
        (0x1004, 0xe280_0001), // add r0, r0, #1
        (0x1008, 0xe280_0001), // add r0, r0, #1
        (0x100c, 0xeaff_fffe), // b .
    ])
}

#[test]
fn irq_entry_and_return() {
    let mut ram = program();
    let mut cpu = Cpu::new();
    cpu.set_pc(0x1000);
    assert!(cpu.step(&mut ram).is_none()); // cpsie if
    assert_eq!(cpu.cpsr() & 0xc0, 0);
    cpu.irq_line = true;
    cpu.step(&mut ram);
    assert_eq!(cpu.mode(), Mode::Irq);
    assert_eq!(cpu.reg(15), 0x18);
    assert_eq!(cpu.reg(14), 0x1008);
    assert_eq!(cpu.spsr().unwrap() & 0x1f, Mode::Svc as u32);
    assert_ne!(cpu.cpsr() & 0x80, 0, "I masked on entry");
    cpu.irq_line = false;
    for _ in 0..3 {
        cpu.step(&mut ram);
    }
    assert_eq!(cpu.mode(), Mode::Svc);
    assert_eq!(cpu.reg(15), 0x1004);
    assert_eq!(cpu.reg(5), 1);
    assert_eq!(cpu.cpsr() & 0xc0, 0, "SPSR restored");
}

#[test]
fn fiq_entry_banks_r8_and_returns() {
    let mut ram = program();
    let mut cpu = Cpu::new();
    cpu.set_pc(0x1000);
    cpu.set_reg(8, 0x88);
    cpu.step(&mut ram);
    cpu.fiq_line = true;
    cpu.irq_line = true; // FIQ has priority
    cpu.step(&mut ram);
    assert_eq!(cpu.mode(), Mode::Fiq);
    assert_eq!(cpu.reg(15), 0x1c);
    assert_eq!(cpu.reg(8), 0, "r8_fiq is banked");
    assert_eq!(cpu.cpsr() & 0xc0, 0xc0, "I and F masked");
    cpu.fiq_line = false;
    cpu.irq_line = false;
    for _ in 0..3 {
        cpu.step(&mut ram);
    }
    assert_eq!(cpu.mode(), Mode::Svc);
    assert_eq!(cpu.reg(8), 0x88);
    assert_eq!(cpu.reg(6), 1);
}

#[test]
fn reset_hivecs_and_data_abort_registers() {
    let mut cpu = Cpu::new();
    cpu.set_pc(0x1234);
    cpu.take_exception(Exception::Reset, 4);
    assert_eq!((cpu.mode(), cpu.reg(15)), (Mode::Svc, 0));
    cpu.cp15.sctlr |= 1 << 13; // hivecs
    cpu.set_pc(0x2000);
    cpu.take_exception(
        Exception::DataAbort {
            fsr: 0x80f,
            far: 0xdead,
        },
        4,
    );
    assert_eq!(
        (cpu.mode(), cpu.reg(15), cpu.reg(14)),
        (Mode::Abt, 0xffff_0010, 0x2008)
    );
    assert_eq!((cpu.cp15.dfsr, cpu.cp15.dfar), (0x80f, 0xdead));
    cpu.set_pc(0x3000);
    cpu.take_exception(
        Exception::PrefetchAbort {
            fsr: 0xd,
            far: 0x3000,
        },
        4,
    );
    assert_eq!((cpu.reg(15), cpu.reg(14)), (0xffff_000c, 0x3004));
    cpu.cp15.sctlr |= 1 << 30; // TE: exceptions in Thumb
    cpu.take_exception(Exception::Undefined, 4);
    assert!(cpu.thumb());
    assert_eq!(cpu.mode(), Mode::Und);
}

#[test]
fn generic_timer_fires() {
    // mrrc p15, 1, r0, r1, c14 (CNTVCT); mcr p15, 0, r2, c14, c3, 0 (CNTV_TVAL);
    // mcr p15, 0, r3, c14, c3, 1 (CNTV_CTL); b .
    let mut ram = ram_with(&[
        (0, 0xec51_0f1e),
        (4, 0xee0e_2f13),
        (8, 0xee0e_3f33),
        (12, 0xeaff_fffe),
    ]);
    let mut cpu = Cpu::new();
    cpu.set_reg(2, 10);
    cpu.set_reg(3, 1);
    cpu.run(&mut ram, 3);
    assert_eq!(cpu.reg(0), 0, "counter defaults to the instruction count");
    assert_eq!(cpu.timer_irq(), (false, false));
    cpu.run(&mut ram, 20);
    assert_eq!(cpu.timer_irq(), (false, true));
}
