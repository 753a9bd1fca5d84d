//! `Cpu::set_coproc_host`: host-implemented CP15 registers answer before the model (the DBT
//! runtime's virtual timer and GICv3 `ICC_*`), and registers the host declines stay the
//! model's.

use std::cell::RefCell;
use std::rc::Rc;

use dbt_armv7::cpu::CoprocHost;
use dbt_armv7::{Cpu, Exit, FlatRam};

/// One recorded write: opc1, CRn, CRm, opc2 and the value.
type Write = (u8, u8, u8, u8, u64);

/// Records writes; answers `CNTV_CTL` and `CNTVCT` reads.
struct Host(Rc<RefCell<Vec<Write>>>);

impl CoprocHost for Host {
    fn undefined(&mut self, _cp: u8, _opc1: u8, crn: u8, _crm: u8, _opc2: u8) -> bool {
        crn == 15
    }
    fn read(&mut self, _cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8) -> Option<u32> {
        ((opc1, crn, crm, opc2) == (0, 14, 3, 1)).then_some(0x5)
    }
    fn write(&mut self, _cp: u8, opc1: u8, crn: u8, crm: u8, opc2: u8, value: u32) -> bool {
        let mine = (opc1, crn, crm, opc2) == (0, 14, 3, 1);
        if mine {
            self.0
                .borrow_mut()
                .push((opc1, crn, crm, opc2, value as u64));
        }
        mine
    }
    fn read64(&mut self, _cp: u8, opc1: u8, crm: u8) -> Option<u64> {
        ((opc1, crm) == (1, 14)).then_some(0x1234_5678_9abc_def0)
    }
    fn write64(&mut self, _cp: u8, opc1: u8, crm: u8, value: u64) -> bool {
        let mine = (opc1, crm) == (3, 14);
        if mine {
            self.0.borrow_mut().push((opc1, 0xff, crm, 0xff, value));
        }
        mine
    }
}

fn run(words: &[u32], host: Option<Host>) -> Cpu {
    let mut ram = FlatRam::new(0, 0x1000);
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    ram.load(0, &code);
    let mut cpu = Cpu::new();
    if let Some(h) = host {
        cpu.set_coproc_host(Box::new(h));
    }
    cpu.set_reg(2, 0x1111_2222);
    cpu.set_reg(3, 0x3333_4444);
    cpu.set_reg(4, 3);
    assert_eq!(cpu.run(&mut ram, words.len() as u64), Exit::Budget);
    cpu
}

#[test]
fn host_policy_makes_c15_undefined() {
    // mrc p15, 0, r0, c15, c0, 0: RAZ in the model, UNDEFINED by this host's policy (the
    // core takes the exception: Undefined mode, PC at the vector 0x4).
    let prog = [0xee1f_0f10];
    let model = run(&prog, None);
    assert_eq!(
        model.mode(),
        dbt_armv7::Mode::Svc,
        "the model reads c15 as zero"
    );
    let log = Rc::new(RefCell::new(Vec::new()));
    let cpu = run(&prog, Some(Host(log)));
    assert_eq!(cpu.mode(), dbt_armv7::Mode::Und);
    assert_eq!(cpu.reg(15), 0x4);
}

#[test]
fn host_registers_answer_first_and_the_model_keeps_the_rest() {
    let prog = [
        0xee1e_0f33, // mrc p15, 0, r0, c14, c3, 1   CNTV_CTL (host)
        0xec51_5f1e, // mrrc p15, 1, r5, r1, c14     CNTVCT (host)
        0xee10_6f10, // mrc p15, 0, r6, c0, c0, 0    MIDR (model)
        0xee0e_4f33, // mcr p15, 0, r4, c14, c3, 1   CNTV_CTL write (host)
        0xec43_2f3e, // mcrr p15, 3, r2, r3, c14     CNTV_CVAL write (host)
    ];
    let log = Rc::new(RefCell::new(Vec::new()));
    let cpu = run(&prog, Some(Host(log.clone())));
    assert_eq!(cpu.reg(0), 5);
    assert_eq!((cpu.reg(5), cpu.reg(1)), (0x9abc_def0, 0x1234_5678));
    let model = run(&prog, None);
    assert_eq!(cpu.reg(6), model.reg(6), "MIDR stays the model's");
    assert_ne!(model.reg(0), 5);
    assert_eq!(
        *log.borrow(),
        vec![(0, 14, 3, 1, 3), (3, 0xff, 14, 0xff, 0x3333_4444_1111_2222)]
    );
    // Without a host the model kept the writes itself.
    assert_eq!(model.cp15.cntv_ctl, 3);
    assert_eq!(model.cp15.cntv_cval, 0x3333_4444_1111_2222);
    assert_eq!(
        cpu.cp15.cntv_ctl, 0,
        "the model did not see the host's write"
    );
}

/// Reports the IRQ line from a shared cell, as a VM's runtime reads `ISR_EL1`.
struct Lines(Rc<RefCell<bool>>);

impl CoprocHost for Lines {
    fn read(&mut self, _: u8, _: u8, _: u8, _: u8, _: u8) -> Option<u32> {
        None
    }
    fn write(&mut self, _: u8, _: u8, _: u8, _: u8, _: u8, _: u32) -> bool {
        false
    }
    fn read64(&mut self, _: u8, _: u8, _: u8) -> Option<u64> {
        None
    }
    fn write64(&mut self, _: u8, _: u8, _: u8, _: u64) -> bool {
        false
    }
    fn interrupt_lines(&mut self) -> Option<(bool, bool)> {
        Some((*self.0.borrow(), false))
    }
}

#[test]
fn host_sampled_irq_line_overrides_a_stale_field() {
    // cpsie i; nop; nop: the field says IRQ pending but the host's line is low: no IRQ.
    let mut ram = FlatRam::new(0, 0x1000);
    let code: Vec<u8> = [0xf108_0080u32, 0xe320_f000, 0xe320_f000]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    ram.load(0, &code);
    let line = Rc::new(RefCell::new(false));
    let mut cpu = Cpu::new();
    cpu.set_coproc_host(Box::new(Lines(line.clone())));
    cpu.irq_line = true;
    assert_eq!(cpu.run(&mut ram, 2), Exit::Budget);
    assert_eq!(cpu.mode(), dbt_armv7::Mode::Svc);
    assert_eq!(cpu.reg(15), 8);
    // The host's line rises: the next step takes the IRQ (vector 0x18, IRQ mode).
    *line.borrow_mut() = true;
    assert_eq!(cpu.run(&mut ram, 1), Exit::Budget);
    assert_eq!(cpu.mode(), dbt_armv7::Mode::Irq);
    assert_eq!(cpu.reg(15), 0x18);
}
