//! A store-exclusive to a page the MMU does not let it write takes the permission fault
//! even when the local exclusive monitor would make it fail (no `LDREX` before it). The
//! ARM ARM leaves the order of the two checks IMPLEMENTATION DEFINED (`ExclusiveMonitors
//! Pass`); the model checks the MMU first. Under the translator it must: the `LDREX` of a
//! guest's `LDREX`/`STREX` loop may run as host code (the host's monitor, not the model's),
//! and when the `STREX` then faults in the host and is handed to the model, a STREX that
//! only failed would make the loop retry forever on a copy-on-write page (busybox's
//! atomics after `fork` under Linux armhf) instead of letting the kernel copy the page.

use dbt_armv7::cpu::Exception;
use dbt_armv7::{Cpu, Exit, FlatRam};

/// Level-1 table (short descriptors) at 0x4000.
const TTB: u32 = 0x4000;
/// Section descriptor: bits[1:0] = 0b10, domain 0, AP[1:0] = 0b11 (full access).
const SECTION_RW: u32 = 0b10 | 0b11 << 10;
/// Section descriptor, APX = 1 and AP[1:0] = 0b01: PL1 read-only, no PL0 access.
const SECTION_PL1_RO: u32 = 0b10 | 1 << 15 | 0b01 << 10;

fn run(code: &[u32]) -> (Exit, Cpu) {
    let mut ram = FlatRam::new(0, 0x20_0000);
    let words: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    ram.load(0x1000, &words);
    // VA 0-1 MiB: identity, read-write (code, tables); 1-2 MiB: identity, read-only.
    ram.load(TTB as u64, &SECTION_RW.to_le_bytes());
    ram.load(TTB as u64 + 4, &(0x10_0000 | SECTION_PL1_RO).to_le_bytes());
    let mut cpu = Cpu::new();
    cpu.cp15.ttbr0 = TTB as u64;
    cpu.cp15.dacr = 0b01; // domain 0: client
    cpu.cp15.sctlr |= 1; // MMU on
    cpu.set_pc(0x1000);
    cpu.set_exit_on_svc(true);
    cpu.set_exit_on_exception(true);
    let exit = cpu.run(&mut ram, 100);
    (exit, cpu)
}

#[test]
fn strex_to_a_read_only_page_aborts_with_the_monitor_open() {
    let (exit, cpu) = run(&[
        0xe3a0_1601, // mov r1, #0x100000    the read-only section
        0xe3a0_2005, // mov r2, #5
        0xe181_0f92, // strex r0, r2, [r1]   no LDREX before it
        0xef00_0000, // svc #0
    ]);
    match exit {
        Exit::Exception(Exception::DataAbort { fsr, far }) => {
            assert_eq!(far, 0x10_0000, "DFAR");
            // Short-descriptor permission fault on a section (0b01101), write (WnR).
            assert_eq!(fsr & 0x40f, 0b1101, "DFSR.FS {fsr:#x}");
            assert_ne!(fsr & 1 << 11, 0, "DFSR.WnR {fsr:#x}");
        }
        e => panic!("expected a data abort, got {e:?} (r0 = {})", cpu.reg(0)),
    }
}

#[test]
fn strex_to_a_writable_page_without_ldrex_only_fails() {
    let (exit, cpu) = run(&[
        0xe3a0_1a02, // mov r1, #0x2000      read-write
        0xe3a0_2005, // mov r2, #5
        0xe181_0f92, // strex r0, r2, [r1]
        0xef00_0000, // svc #0
    ]);
    assert_eq!(exit, Exit::Svc(0));
    assert_eq!(cpu.reg(0), 1, "STREX status: failed");
}
