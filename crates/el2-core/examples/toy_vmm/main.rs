//! A toy VMM embedding el2-core on the host.
//!
//! The "guest" is a script of trapping instructions played by a `WorldSwitch` test double
//! (`guest.rs`), which reports the exits real hardware would (`syndrome.rs`). The VMM
//! (`vmm.rs`) runs the same loop a hypervisor runs on AArch64 — decode the exit, dispatch
//! SMCCC/PSCI calls to the VM (`vm.rs`), route data aborts through an `MmioBus` to a UART
//! (`uart.rs`), emulate a trapped ID register, inject UNDEFINED and external aborts for what
//! it refuses — and the guest checks every result it gets back.
//!
//! Run with `cargo run -p el2-core --example toy_vmm`.

mod guest;
mod script;
mod syndrome;
mod uart;
mod vm;
mod vmm;

use el2_core::mmio::MmioBus;
use el2_core::vcpu::VcpuContext;

use guest::{Expect, ScriptedGuest, CODE_BASE, VBAR};

/// vCPUs of the toy VM: the boot vCPU and one secondary.
const VCPUS: usize = 2;
/// Guest-physical address of the device tree handed over in `X0` (the arm64 boot protocol).
const DTB_IPA: u64 = 0x4800_0000;

fn main() {
    let console = uart::Console::default();
    let mut bus = MmioBus::new();
    bus.add(
        uart::BASE,
        uart::SIZE,
        "uart",
        Box::new(uart::ToyUart::new(console.clone())),
    )
    .expect("the UART is the only device");
    let mut vmm = vmm::Vmm::new(bus, vm::Vm::new(VCPUS));

    let steps = script::steps();
    let script_len = steps.len();
    let expected_injections = steps
        .iter()
        .filter(|s| matches!(s.expect, Expect::Exception { .. }))
        .count();
    let guest = ScriptedGuest::new(steps);

    let mut vcpu0 = VcpuContext::new_at(CODE_BASE, DTB_IPA, vm::controls(0));
    vcpu0.el1.vbar_el1 = VBAR;
    println!(
        "toy VMM: vCPU 0 enters at {CODE_BASE:#x}, the UART is at {:#x}",
        uart::BASE
    );
    vmm.run_vcpu(&guest, &mut vcpu0);

    // Every step passed the guest's own check, and the VMM stopped exactly at SYSTEM_OFF.
    let checked = guest.finish();
    assert_eq!(
        checked, script_len,
        "not every guest instruction was checked"
    );

    let printed = console.lock().expect("console lock").clone();
    assert_eq!(printed, script::CONSOLE_TEXT, "the guest's console output");

    let secondary = vmm.vm.secondaries[(script::SECONDARY_MPIDR - 1) as usize]
        .as_ref()
        .expect("CPU_ON started vCPU 1");
    assert_eq!(
        secondary.regs.pc,
        script::SECONDARY_ENTRY,
        "vCPU 1 entry point"
    );
    assert_eq!(
        secondary.regs.x[0],
        script::SECONDARY_CONTEXT,
        "vCPU 1 context id in X0"
    );
    assert_eq!(
        secondary.controls.vmpidr_el2,
        script::SECONDARY_MPIDR,
        "vCPU 1 MPIDR"
    );

    assert_eq!(
        vmm.injected, expected_injections,
        "exceptions injected into the guest"
    );
    let exits: usize = vmm.exits.values().sum();
    assert_eq!(exits, script_len, "one exit per guest instruction");

    println!();
    println!("console: {:?}", String::from_utf8_lossy(&printed));
    println!(
        "vCPU 1: started at {:#x} with x0 = {:#x}",
        secondary.regs.pc, secondary.regs.x[0]
    );
    let by_reason: Vec<String> = vmm.exits.iter().map(|(r, n)| format!("{r} {n}")).collect();
    println!(
        "exits: {exits} ({}), {} exceptions injected",
        by_reason.join(", "),
        vmm.injected
    );
    println!("all {checked} guest checks passed");
}
