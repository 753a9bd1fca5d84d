//! Hardware layer (AArch64 only): real stage-2 TLB maintenance at EL2 and reading the ID
//! registers. Everything else in the crate is plain Rust tested on the host.
//!
//! # Targeting a VMID
//!
//! `TLBI IPAS2E1IS`, `TLBI VMALLE1IS` and `TLBI VMALLS12E1IS` act on the *current* VMID, the
//! one in `VTTBR_EL2.VMID`. [`HwTlb`] therefore saves `VTTBR_EL2`, loads the `VTTBR_EL2` value
//! of the VM being maintained (its VMID *and* its own root, so a speculative stage-2 walk in
//! between can only cache that VM's real entries), runs the `TLBI`s, and restores the saved
//! value, with an `ISB` after each `VTTBR_EL2` write. Interrupts (`DAIF`) are masked
//! meanwhile so nothing runs with the borrowed context.
//!
//! Under VHE (`HCR_EL2.{E2H,TGE}` = {1,1}) EL1&0 `TLBI`s would target the EL2&0 regime, so
//! `HCR_EL2.TGE` is cleared for the same window (as Linux's `__tlb_switch_to_guest` does).
//!
//! On CPUs with Arm erratum 1319367 (Cortex-A57/A72, non-VHE) a speculative `AT` must not
//! walk the loaded EL1 context with the borrowed VMID: after [`block_el1_walks_for_tlbi`]
//! the window also sets `TCR_EL1.EPD0`/`EPD1` and `SCTLR_EL1.M` first and puts both back
//! after `VTTBR_EL2` is restored (`SCTLR_EL1` before `TCR_EL1`, an `ISB` between).
//!
//! The level hint of [`TlbMaintenance::invalidate_ipa`] is not encoded (`TTL` needs
//! FEAT_TTL); the invalidation then covers all levels, which is always correct.

use core::arch::asm;

use aarch64_cpu::asm::barrier::{dsb, isb, ISH, ISHST, SY};
use core::sync::atomic::{AtomicBool, Ordering};

use aarch64_cpu::registers::{
    DAIF, HCR_EL2, ID_AA64MMFR0_EL1, ID_AA64MMFR1_EL1, SCTLR_EL1, TCR_EL1, VTTBR_EL2,
};
use tock_registers::interfaces::{Readable, Writeable};

/// Arm 1319367: block EL1 walks while a VTTBR_EL2 is borrowed (see the module text).
static BLOCK_EL1_WALKS: AtomicBool = AtomicBool::new(false);

/// Turns on the Arm 1319367 handling of the borrowed-VTTBR window (once, at boot, on a
/// non-VHE CPU the erratum affects).
pub fn block_el1_walks_for_tlbi() {
    BLOCK_EL1_WALKS.store(true, Ordering::Relaxed);
}

/// `TCR_EL1.EPD0` | `TCR_EL1.EPD1`.
const TCR_EPD_BOTH: u64 = 1 << 7 | 1 << 23;

use crate::config::Stage2Config;
use crate::traits::TlbMaintenance;
use crate::Result;

/// Stage-2 TLB maintenance with the real `TLBI` instructions, broadcast to the inner
/// shareable domain. Must be used at EL2.
#[derive(Debug, Clone, Copy, Default)]
pub struct HwTlb;

/// Runs `f` with `VTTBR_EL2` = `vttbr` (and `HCR_EL2.TGE` = 0 under VHE), interrupts masked.
fn with_guest_vttbr(vttbr: u64, f: impl FnOnce()) {
    let daif = DAIF.get();
    // SAFETY: masking D, A, I and F at EL2 only delays exceptions; `daif` is restored below.
    unsafe {
        asm!(
            "msr daifset, #0xf",
            options(nomem, nostack, preserves_flags)
        )
    };
    let saved_vttbr = VTTBR_EL2.get();
    let hcr = HCR_EL2.get();
    let vhe_host = HCR_EL2::E2H.is_set(hcr) && HCR_EL2::TGE.is_set(hcr);
    let block = BLOCK_EL1_WALKS.load(Ordering::Relaxed) && !HCR_EL2::E2H.is_set(hcr);
    let el1 = block.then(|| (SCTLR_EL1.get(), TCR_EL1.get()));
    if let Some((sctlr, tcr)) = el1 {
        TCR_EL1.set(tcr | TCR_EPD_BOTH);
        isb(SY);
        SCTLR_EL1.set(sctlr | 1);
        isb(SY);
    }
    VTTBR_EL2.set(vttbr);
    if vhe_host {
        HCR_EL2.set(HCR_EL2::TGE::CLEAR.modify(hcr));
    }
    isb(SY);
    f();
    if vhe_host {
        HCR_EL2.set(hcr);
    }
    VTTBR_EL2.set(saved_vttbr);
    isb(SY);
    if let Some((sctlr, tcr)) = el1 {
        SCTLR_EL1.set(sctlr);
        isb(SY);
        TCR_EL1.set(tcr);
        isb(SY);
    }
    DAIF.set(daif);
}

impl TlbMaintenance for HwTlb {
    fn publish(&self) {
        dsb(ISHST);
    }

    fn invalidate_ipa(&self, vttbr: u64, ipa: u64, _level: u32) {
        // TLBI IPAS2E1IS operand: IPA[47:12] in bits [35:0].
        let operand = (ipa >> 12) & ((1 << 36) - 1);
        with_guest_vttbr(vttbr, || {
            // The invalid descriptor must be visible to walkers before the invalidation.
            dsb(ISHST);
            // SAFETY: TLB invalidation for the current VMID at EL2 only drops cached
            // translations; it cannot break memory safety of the hypervisor.
            unsafe {
                asm!("tlbi ipas2e1is, {0}", in(reg) operand, options(nostack, preserves_flags))
            };
        });
    }

    fn sync_after_ipa_invalidation(&self, vttbr: u64) {
        with_guest_vttbr(vttbr, || {
            // Complete the stage-2 invalidations before removing combined stage-1+2 entries,
            // so no walk refills them from the old stage-2 entry.
            dsb(ISH);
            // SAFETY: as in `invalidate_ipa`: only drops cached translations of the VMID.
            unsafe { asm!("tlbi vmalle1is", options(nostack, preserves_flags)) };
            dsb(ISH);
            isb(SY);
        });
    }

    fn invalidate_vmid(&self, vttbr: u64) {
        with_guest_vttbr(vttbr, || {
            dsb(ISHST);
            // SAFETY: as in `invalidate_ipa`: only drops cached translations of the VMID.
            unsafe { asm!("tlbi vmalls12e1is", options(nostack, preserves_flags)) };
            dsb(ISH);
            isb(SY);
        });
    }

    fn invalidate_all(&self) {
        dsb(ISHST);
        // SAFETY: drops all cached EL1&0 translations of every VMID; never EL2's own.
        unsafe { asm!("tlbi alle1is", options(nostack, preserves_flags)) };
        dsb(ISH);
        isb(SY);
    }
}

/// Reads `ID_AA64MMFR0_EL1.PARange` and `ID_AA64MMFR1_EL1.VMIDBits` of this CPU and computes
/// the configuration for an IPA limit of `ipa_limit_bits`.
pub fn config_from_cpu(ipa_limit_bits: u32) -> Result<Stage2Config> {
    Stage2Config::from_id_regs(
        ID_AA64MMFR0_EL1.get(),
        ID_AA64MMFR1_EL1.get(),
        ipa_limit_bits,
    )
}
