//! A toy VMM embedding `vgic` with the in-memory list-register backend:
//! `cargo run -p vgic --example toy_vmm`.
//!
//! A GICv2 VM with two vCPUs, each pinned to a physical CPU whose virtual CPU interface is a
//! `MemLrs` ([`vmm`]). The guest driver on vCPU 0 programs the distributor through trapped
//! MMIO (enable an SPI, set its priority and target); a UART model ([`device`]) raises the
//! SPI; the VMM flushes it into vCPU 1's list registers; the guest ([`guest`]) acknowledges
//! and EOIs it by changing the list registers as the hardware would; the VMM syncs that back.
//! Then vCPU 0 sends vCPU 1 an SGI through `GICD_SGIR`. Every step checks its result and
//! panics with a message if it is wrong.

mod device;
mod guest;
mod vmm;

use vgic::{lr, ListRegisters, LrEntry, LrState, SPI_BASE};

use device::ToyUart;
use guest::*;
use vmm::{ExternalAbort, ToyVmm, GICD_BASE, NR_SPIS};

/// vCPUs (and pCPUs) of the toy machine.
const VCPUS: usize = 2;
/// List registers per pCPU.
const LRS_PER_CPU: usize = 4;
/// The vCPU the guest's GIC driver runs on.
const BOOT_VCPU: usize = 0;
/// The vCPU the UART interrupt is routed to.
const IRQ_VCPU: usize = 1;
/// The UART's interrupt: SPI 8, INTID 40.
const UART_INTID: u32 = SPI_BASE + 8;
/// Priority the guest writes for the UART...
const UART_PRIORITY_WRITTEN: u64 = 0xa5;
/// ...and what the distributor keeps: 5 implemented priority bits.
const UART_PRIORITY: u8 = 0xa0;
/// The SGI vCPU 0 sends to vCPU 1.
const IPI_INTID: u32 = 3;
/// Bit of a CPU in a GICv2 target list (`GICD_ITARGETSR`, `GICD_SGIR.CPUTargetList`).
const fn cpu_bit(cpu: usize) -> u64 {
    1 << cpu
}

fn main() {
    let mut vmm = ToyVmm::new(VCPUS, LRS_PER_CPU).expect("creating the vgic");
    println!(
        "machine: GICv2 VM, {VCPUS} vCPUs pinned to {VCPUS} pCPUs, {LRS_PER_CPU} list registers each, GICD at {GICD_BASE:#x}"
    );
    program_distributor(&mut vmm);
    device_interrupt(&mut vmm);
    ipi(&mut vmm);
    idle(&mut vmm);
    vmm.shutdown();
    let (c, s) = (vmm.counts, vmm.vgic.stats());
    println!(
        "summary: {} GICD exits ({} aborted, {} RAZ/WI), {} kicks; {} flushes ({} fast), {} syncs ({} fast), {} LR writes",
        c.mmio_exits, c.aborts, c.raz_wi, c.kicks, s.flushes, s.flush_fast, s.syncs, s.sync_fast, s.lr_writes
    );
    println!("toy_vmm: all checks passed");
}

/// The guest's GIC driver on vCPU 0, through trapped distributor accesses.
fn program_distributor(vmm: &mut ToyVmm) {
    let v = BOOT_VCPU;
    let typer = vmm
        .mmio_read(v, GICD_BASE + GICD_TYPER, WORD)
        .expect("GICD_TYPER");
    let intids = ((typer & GICD_TYPER_ITLINES_MASK) + 1) * u64::from(INTIDS_PER_WORD);
    let cpus = ((typer >> GICD_TYPER_CPUS_SHIFT) & GICD_TYPER_CPUS_MASK) + 1;
    assert_eq!(
        intids,
        u64::from(SPI_BASE + NR_SPIS),
        "GICD_TYPER.ITLinesNumber"
    );
    assert_eq!(cpus, VCPUS as u64, "GICD_TYPER.CPUNumber");
    println!("guest:   GICD_TYPER = {typer:#x}: {intids} INTIDs, {cpus} CPUs");

    let write = |vmm: &mut ToyVmm, offset, size, value| {
        vmm.mmio_write(v, GICD_BASE + offset, size, value)
            .unwrap_or_else(|e| panic!("guest write at GICD+{offset:#x}: {e:?}"))
    };
    write(vmm, GICD_CTLR, WORD, GICD_CTLR_ENABLE_GRP0);
    let (enable_reg, enable_bit) = bit_reg(GICD_ISENABLER, UART_INTID);
    write(vmm, enable_reg, WORD, enable_bit);
    let prio_reg = GICD_IPRIORITYR + u64::from(UART_INTID);
    write(vmm, prio_reg, BYTE, UART_PRIORITY_WRITTEN);
    let target_reg = GICD_ITARGETSR + u64::from(UART_INTID);
    write(vmm, target_reg, BYTE, cpu_bit(IRQ_VCPU));

    let read = |vmm: &mut ToyVmm, offset, size| vmm.mmio_read(v, GICD_BASE + offset, size);
    assert_eq!(read(vmm, enable_reg, WORD), Ok(enable_bit), "SPI enabled");
    assert_eq!(
        read(vmm, prio_reg, BYTE),
        Ok(u64::from(UART_PRIORITY)),
        "priority keeps its 5 implemented bits"
    );
    assert_eq!(read(vmm, target_reg, BYTE), Ok(cpu_bit(IRQ_VCPU)), "target");
    println!(
        "guest:   enabled INTID {UART_INTID} (GICD_ISENABLER{} bit {}), priority {UART_PRIORITY_WRITTEN:#x} -> reads {UART_PRIORITY:#x}, target CPU {IRQ_VCPU}",
        (enable_reg - GICD_ISENABLER) / u64::from(WORD),
        enable_bit.trailing_zeros()
    );

    // Hostile accesses get the architectural answer, not a crash.
    let bad = vmm.mmio_write(v, GICD_BASE + enable_reg, HALFWORD, 0);
    assert!(
        matches!(bad, Err(ExternalAbort(e)) if e.is_abort()),
        "a 16-bit GICD_ISENABLER write must abort: {bad:?}"
    );
    println!("guest:   16-bit write to GICD_ISENABLER -> external abort injected");
    assert_eq!(
        read(vmm, GICD_RESERVED, WORD),
        Ok(0),
        "reserved offsets are RAZ"
    );
    assert!(vmm.send_kicks(Some(v)).is_empty(), "nothing is pending yet");
}

/// The UART raises its SPI; vCPU 1 takes it.
fn device_interrupt(vmm: &mut ToyVmm) {
    let v = IRQ_VCPU;
    let mut uart = ToyUart::new(UART_INTID);
    uart.receive(b'x', &mut vmm.vgic).expect("raise SPI");
    assert_eq!(vmm.send_kicks(None), [v], "the SPI's target must be kicked");
    println!("device:  UART raises INTID {UART_INTID} (level): kick vCPU {v}");

    let other = vmm.enter(BOOT_VCPU).valid().count();
    assert_eq!(other, 0, "vCPU {BOOT_VCPU} is not a target");
    vmm.exit(BOOT_VCPU);

    let lrs = vmm.enter(v);
    let entry = *lrs.valid().next().expect("flush loads the SPI");
    let expect = LrEntry {
        vintid: UART_INTID,
        priority: UART_PRIORITY,
        state: LrState::Pending,
        // Level-sensitive: the EOI is reported so the line is sampled again.
        eoi_maint: true,
        ..LrEntry::EMPTY
    };
    assert_eq!(entry, expect, "list register after flush");
    println!(
        "vcpu {v}:  flush -> GICH_LR0 = {:#010x} (INTID {}, {:?}, priority {:#x}, EOI maintenance)",
        lr::v2::encode(&entry),
        entry.vintid,
        entry.state,
        entry.priority
    );

    let acked = acknowledge(lrs).expect("the guest sees the interrupt");
    assert_eq!(acked.intid, UART_INTID, "GICV_IAR");
    // The handler reads the UART's data register: a trapped MMIO access, i.e. an exit.
    vmm.exit(v);
    assert!(
        vmm.vgic.is_active(v, UART_INTID),
        "active after the acknowledge"
    );
    let byte = uart.read_data(&mut vmm.vgic).expect("lower SPI");
    assert_eq!(byte, Some(b'x'));
    vmm.send_kicks(Some(v));
    println!(
        "vcpu {v}:  guest acks INTID {}, exits to read the UART ({:?}), line drops",
        acked.intid,
        char::from(b'x')
    );

    let lrs = vmm.enter(v);
    assert_eq!(
        lrs.valid().next().map(|e| e.state),
        Some(LrState::Active),
        "the active interrupt stays loaded across the exit"
    );
    assert!(end_of_interrupt(lrs, acked), "GICV_EOIR");
    assert_ne!(
        lrs.eoi_mask(),
        0,
        "EOI of a level interrupt raises maintenance"
    );
    vmm.exit(v);
    assert!(
        !vmm.vgic.is_active(v, UART_INTID) && !vmm.vgic.is_pending(v, UART_INTID),
        "INTID {UART_INTID} must be inactive after EOI with the line low"
    );
    // The EOI'd list register still reports its maintenance condition (EISR); the next
    // entry clears it.
    vmm.enter(v);
    vmm.exit(v);
    assert_eq!(
        vmm.lrs(v).eoi_mask(),
        0,
        "the next entry clears the EISR bit"
    );
    assert_eq!(vmm.vgic.used_lrs(v), 0, "list registers free again");
    println!(
        "vcpu {v}:  guest EOIs -> maintenance (EISR), sync: INTID {UART_INTID} inactive; next entry frees the LR"
    );
}

/// vCPU 0 sends SGI 3 to vCPU 1 through `GICD_SGIR`.
fn ipi(vmm: &mut ToyVmm) {
    let (from, to) = (BOOT_VCPU, IRQ_VCPU);
    let sgir = (GICD_SGIR_FILTER_LIST << GICD_SGIR_FILTER_SHIFT)
        | (cpu_bit(to) << GICD_SGIR_TARGET_LIST_SHIFT)
        | u64::from(IPI_INTID);
    vmm.mmio_write(from, GICD_BASE + GICD_SGIR, WORD, sgir)
        .expect("GICD_SGIR write");
    assert_eq!(
        vmm.send_kicks(Some(from)),
        [to],
        "the SGI's target must be kicked"
    );
    println!("vcpu {from}:  GICD_SGIR = {sgir:#x}: SGI {IPI_INTID} to CPU {to}, kick vCPU {to}");

    let lrs = vmm.enter(to);
    let entry = *lrs.valid().next().expect("flush loads the SGI");
    assert_eq!(
        (entry.vintid, entry.source_cpu, entry.state),
        (IPI_INTID, from as u8, LrState::Pending),
        "SGI list register"
    );
    let acked = acknowledge(lrs).expect("the guest sees the SGI");
    assert_eq!(
        (acked.intid, usize::from(acked.source)),
        (IPI_INTID, from),
        "GICV_IAR"
    );
    assert!(end_of_interrupt(lrs, acked), "GICV_EOIR");
    vmm.exit(to);
    assert!(
        !vmm.vgic.is_pending(to, IPI_INTID) && !vmm.vgic.is_active(to, IPI_INTID),
        "SGI {IPI_INTID} must be done on vCPU {to}"
    );
    assert!(
        !vmm.vgic.is_pending(from, IPI_INTID),
        "the sender got no SGI"
    );
    println!(
        "vcpu {to}:  GICH_LR0 = {:#010x}: SGI {IPI_INTID} from CPU {from}; acked, EOIed, synced",
        lr::v2::encode(&entry)
    );
}

/// With nothing in flight, entries and exits touch no list-register state at all.
fn idle(vmm: &mut ToyVmm) {
    const ROUNDS: usize = 3;
    let before = vmm.vgic.stats();
    let accesses = |vmm: &ToyVmm| (0..VCPUS).map(|v| vmm.lrs(v).accesses()).sum::<u64>();
    let start = accesses(vmm);
    for _ in 0..ROUNDS {
        for v in 0..VCPUS {
            vmm.enter(v);
            vmm.exit(v);
        }
    }
    let fast = vmm.vgic.stats().flush_fast - before.flush_fast;
    assert_eq!(
        fast,
        (ROUNDS * VCPUS) as u64,
        "every idle flush takes the fast path"
    );
    assert_eq!(accesses(vmm), start, "idle entries touch no register");
    println!(
        "idle:    {} entries/exits with nothing pending: 0 register accesses",
        ROUNDS * VCPUS
    );
}
