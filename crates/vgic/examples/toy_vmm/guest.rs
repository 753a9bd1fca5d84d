//! The guest's side: the GICv2 distributor registers its driver programs, and its virtual
//! CPU interface.
//!
//! On hardware the guest reads `GICV_IAR` and writes `GICV_EOIR`, and the GIC updates the list
//! registers of the CPU it runs on by itself. Here the "guest" performs those updates on the
//! in-memory list registers directly. (`MemLrs::guest_ack` and `MemLrs::guest_eoi` do the
//! same; this file spells the state changes out.)

use vgic::backends::mem::MemLrs;
use vgic::{ListRegisters, LrState};

/// `GICD_CTLR`: distributor control.
pub const GICD_CTLR: u64 = 0x000;
/// `GICD_CTLR.EnableGrp0`: forward group-0 interrupts.
pub const GICD_CTLR_ENABLE_GRP0: u64 = 1 << 0;
/// `GICD_TYPER`: interrupt controller type.
pub const GICD_TYPER: u64 = 0x004;
/// `GICD_TYPER.ITLinesNumber`, bits `[4:0]`: 32 * (N + 1) INTIDs.
pub const GICD_TYPER_ITLINES_MASK: u64 = 0x1f;
/// `GICD_TYPER.CPUNumber`, bits `[7:5]`: N + 1 CPU interfaces.
pub const GICD_TYPER_CPUS_SHIFT: u32 = 5;
/// `GICD_TYPER.CPUNumber` field width mask (after shifting).
pub const GICD_TYPER_CPUS_MASK: u64 = 0b111;
/// A reserved offset in the distributor frame.
pub const GICD_RESERVED: u64 = 0x00c;
/// `GICD_ISENABLER<n>`: set-enable, one bit per INTID, 32 INTIDs per register.
pub const GICD_ISENABLER: u64 = 0x100;
/// `GICD_IPRIORITYR<n>`: one priority byte per INTID.
pub const GICD_IPRIORITYR: u64 = 0x400;
/// `GICD_ITARGETSR<n>`: one CPU-target byte per INTID.
pub const GICD_ITARGETSR: u64 = 0x800;
/// `GICD_SGIR`: software-generated interrupt register.
pub const GICD_SGIR: u64 = 0xf00;
/// `GICD_SGIR.CPUTargetList`, bits `[23:16]`.
pub const GICD_SGIR_TARGET_LIST_SHIFT: u32 = 16;
/// `GICD_SGIR.TargetListFilter`, bits `[25:24]`: 0 = the CPUs in CPUTargetList.
pub const GICD_SGIR_FILTER_SHIFT: u32 = 24;
/// `GICD_SGIR.TargetListFilter` value "send to CPUTargetList".
pub const GICD_SGIR_FILTER_LIST: u64 = 0;

/// Bytes of a 32-bit register access.
pub const WORD: u8 = 4;
/// Bytes of a 16-bit access (not allowed on any GICv2 distributor register).
pub const HALFWORD: u8 = 2;
/// Bytes of a byte access.
pub const BYTE: u8 = 1;
/// INTIDs covered by one 32-bit bit-per-INTID register.
pub const INTIDS_PER_WORD: u32 = 32;

/// Offset and bit of `intid` in a bit-per-INTID register bank starting at `base`.
pub fn bit_reg(base: u64, intid: u32) -> (u64, u64) {
    let word = u64::from(intid / INTIDS_PER_WORD) * u64::from(WORD);
    (base + word, 1 << (intid % INTIDS_PER_WORD))
}

/// An acknowledged interrupt, as `GICV_IAR` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked {
    /// The INTID (`GICV_IAR.InterruptID`).
    pub intid: u32,
    /// The requesting CPU of an SGI (`GICV_IAR.CPUID`), 0 otherwise.
    pub source: u8,
}

/// The guest reads `GICV_IAR`: the highest-priority pending list register whose priority
/// beats the running priority (the best active one) becomes active.
pub fn acknowledge(lrs: &mut MemLrs) -> Option<Acked> {
    let n = lrs.num_lrs();
    let running = lrs.lrs[..n]
        .iter()
        .filter(|e| e.state.is_active())
        .map(|e| u16::from(e.priority))
        .min()
        .unwrap_or(u16::MAX);
    let lr = lrs.lrs[..n]
        .iter_mut()
        .filter(|e| e.state == LrState::Pending && u16::from(e.priority) < running)
        .min_by_key(|e| e.priority)?;
    lr.state = LrState::Active;
    Some(Acked {
        intid: lr.vintid,
        source: lr.source_cpu,
    })
}

/// The guest writes `GICV_EOIR` (priority drop and deactivation, `GICV_CTLR.EOImode` = 0):
/// the active list register holding `acked` loses its active state. Returns false if none
/// holds it.
pub fn end_of_interrupt(lrs: &mut MemLrs, acked: Acked) -> bool {
    let n = lrs.num_lrs();
    let Some(lr) = lrs.lrs[..n]
        .iter_mut()
        .find(|e| e.vintid == acked.intid && e.source_cpu == acked.source && e.state.is_active())
    else {
        return false;
    };
    lr.state = LrState::from_bits(lr.state.is_pending(), false);
    true
}
