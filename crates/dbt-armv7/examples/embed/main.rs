//! A minimal host embedding `dbt-armv7`: guest RAM is a host `Vec` and a tiny PL011 UART
//! sits at its QEMU `virt` address, both behind the crate's `Bus` trait (`board.rs`). The
//! host loads a hand-assembled A32 program (`program.rs`) that prints "hi\n" and powers off
//! with PSCI `SYSTEM_OFF` over `HVC`, runs it on the interpreter in small time slices the
//! way a hypervisor's run loop does, answers the `HVC`, and checks the UART output and the
//! final registers. A failed check panics with what was expected.
//!
//! `cargo run -p dbt-armv7 --example embed`

mod board;
mod program;

use dbt_armv7::{Cpu, Exit, Mode};

use board::{Board, RAM_BASE, UART_BASE};
use program::{
    EXPECTED_INSTRUCTIONS, HVC_OFFSET, MESSAGE, MSG_OFFSET, PROGRAM, PSCI_NOT_SUPPORTED,
    PSCI_SYSTEM_OFF,
};

/// Instructions per `Cpu::run` call: the host gets control back at least this often (to poll
/// devices and the interrupt controller).
const SLICE: u64 = 16;
/// Slices after which the host gives up on the guest.
const MAX_SLICES: u32 = 100;
/// Where the program is loaded and starts.
const ENTRY: u64 = RAM_BASE;

/// How the guest's run ended.
#[derive(Debug)]
struct Outcome {
    /// `Cpu::run` calls made.
    slices: u32,
    /// `HVC` calls answered.
    hypercalls: u32,
}

fn main() {
    let mut board = Board::new();
    board.load_words(ENTRY, PROGRAM);
    let mut cpu = Cpu::new(); // reset state: SVC mode, A32, IRQ/FIQ masked, MMU off
    cpu.set_pc(ENTRY as u32);
    println!(
        "embed: {} words of A32 at {ENTRY:#010x}, UART at {UART_BASE:#010x}, slices of {SLICE} instructions",
        PROGRAM.len()
    );

    let outcome = run(&mut cpu, &mut board);

    let output = board.uart().output();
    println!("embed: UART output {:?}", String::from_utf8_lossy(output));
    assert_eq!(output, MESSAGE, "the guest printed something else");
    assert!(board.faults().is_empty(), "the guest hit bus faults");
    assert_eq!(
        board.uart().busy_reads(),
        2,
        "the guest did not wait out UARTFR.TXFF after 'h' and 'i'"
    );
    check_registers(&cpu);
    println!(
        "embed: powered off after {} instructions in {} slices, {} HVC; r0={:#010x} r1={:#010x} \
         r2={:#010x} r3={} pc={:#010x} mode {:?}",
        cpu.icount,
        outcome.slices,
        outcome.hypercalls,
        cpu.reg(0),
        cpu.reg(1),
        cpu.reg(2),
        cpu.reg(3),
        cpu.reg(15),
        cpu.mode()
    );
    println!("embed: all checks passed");
}

/// The host's run loop: runs the guest slice by slice until it powers off.
fn run(cpu: &mut Cpu, board: &mut Board) -> Outcome {
    let mut outcome = Outcome {
        slices: 0,
        hypercalls: 0,
    };
    loop {
        assert!(
            outcome.slices < MAX_SLICES,
            "the guest did not power off within {MAX_SLICES} slices (pc {:#010x})",
            cpu.reg(15)
        );
        outcome.slices += 1;
        match cpu.run(board, SLICE) {
            // A real host polls its devices here and sets `cpu.irq_line` from its GIC model.
            Exit::Budget => {}
            Exit::Hvc(imm) => {
                outcome.hypercalls += 1;
                let function = cpu.reg(0);
                println!(
                    "    [host] HVC #{imm} at {:#010x}, r0 = {function:#010x}",
                    cpu.reg(15) - 4
                );
                if function == PSCI_SYSTEM_OFF {
                    return outcome;
                }
                cpu.set_reg(0, PSCI_NOT_SUPPORTED);
            }
            // No interrupt source on this board: a guest waiting for one would wait forever.
            Exit::Wfi => panic!("the guest executed WFI at {:#010x}", cpu.reg(15) - 4),
            other => panic!("unexpected exit {other:?} at {:#010x}", cpu.reg(15)),
        }
    }
}

/// Checks the registers the program leaves behind.
fn check_registers(cpu: &Cpu) {
    let base = ENTRY as u32;
    let expected = [
        ("r0 (PSCI function)", 0, PSCI_SYSTEM_OFF),
        ("r1 (UART base)", 1, UART_BASE as u32),
        (
            "r2 (past the NUL)",
            2,
            base + MSG_OFFSET + MESSAGE.len() as u32 + 1,
        ),
        ("r3 (bytes sent)", 3, MESSAGE.len() as u32),
        ("pc (after HVC)", 15, base + HVC_OFFSET + 4),
    ];
    for (name, reg, value) in expected {
        assert_eq!(cpu.reg(reg), value, "{name}: r{reg} is {:#x}", cpu.reg(reg));
    }
    assert_eq!(cpu.mode(), Mode::Svc, "the guest left SVC mode");
    assert_eq!(
        cpu.icount, EXPECTED_INSTRUCTIONS,
        "retired instruction count"
    );
}

#[cfg(test)]
mod tests {
    /// `cargo test --examples` runs the guest and its checks.
    #[test]
    fn embed_example_passes() {
        super::main();
    }
}
