//! CPU errata the world switch works around, switched on once at boot by the embedder (which
//! matches `MIDR_EL1` against its errata table) and read on the paths they change:
//!
//! - [`ICACHE_AFTER_VTTBR`] — Cavium ThunderX 27456: a broadcast `TLBI` may leave stale lines
//!   in the instruction cache, so after every `VTTBR_EL2` switch in `vcpu_load` the local
//!   instruction cache is invalidated (`IC IALLU; DSB NSH; ISB`, Linux's
//!   `post_ttbr_update_workaround` for `ARM64_WORKAROUND_CAVIUM_27456`).
//! - [`AT_FOR_HPFAR`] — Arm Cortex-A57 834220: a stage-2 abort may be reported for what is a
//!   stage-1 fault, with an `HPFAR_EL2` that does not hold the faulting IPA. On an instruction
//!   or data abort from the guest that is a translation, access-flag or permission fault and
//!   not on a stage-1 walk (`ESR_EL2.ISS.S1PTW` = 0), the IPA is taken from `AT S1E1R` +
//!   `PAR_EL1` instead ([`fix_abort_hpfar`], called by the embedder's abort handlers only);
//!   when that walk fails the guest's own stage 1 does not map the address, and the guest
//!   is re-entered to take its stage-1 fault (as KVM's `__get_fault_info` /
//!   `__translate_far_to_hpfar`).
//! - [`SPECULATIVE_AT`] — Arm Cortex-A57 1319367: a speculative `AT` at EL2 while the EL1
//!   translation registers and `VTTBR_EL2` belong to different contexts can leave a
//!   corrupted TLB entry. The non-VHE `vcpu_load` therefore first blocks EL1 walks
//!   (`TCR_EL1.EPD0`/`EPD1` = 1, then `SCTLR_EL1.M` = 1), restores the guest's EL1 registers
//!   with walks still blocked, switches stage 2, and only then writes the guest's
//!   `SCTLR_EL1` and, last, `TCR_EL1` (KVM's nVHE `__activate_traps` /
//!   `__sysreg_restore_el1_state`). The stage-2 TLB code does the same around its temporary
//!   `VTTBR_EL2` (stage2's `hw` module, KVM's `__tlb_switch_to_guest`).

use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

#[cfg(target_arch = "aarch64")]
use aarch64_cpu::asm::barrier;
#[cfg(target_arch = "aarch64")]
use aarch64_cpu::registers::{PAR_EL1, SCTLR_EL1, TCR_EL1};
#[cfg(target_arch = "aarch64")]
use tock_registers::interfaces::{Readable, Writeable};

/// Cavium 27456: invalidate the instruction cache after each `VTTBR_EL2` switch.
pub const ICACHE_AFTER_VTTBR: u8 = 1 << 0;
/// Arm 834220: resolve the IPA of a guest abort with `AT S1E1R`.
pub const AT_FOR_HPFAR: u8 = 1 << 1;
/// Arm 1319367: keep EL1 walks blocked while the EL1 context and `VTTBR_EL2` disagree.
pub const SPECULATIVE_AT: u8 = 1 << 2;

static ENABLED: AtomicU8 = AtomicU8::new(0);
static AT_RESOLVED: AtomicU64 = AtomicU64::new(0);
static AT_RETRIED: AtomicU64 = AtomicU64::new(0);

/// Switches on the workarounds in `bits` (an OR of the constants above) for every CPU.
/// Called at boot before any vCPU is loaded.
pub fn enable(bits: u8) {
    ENABLED.fetch_or(bits, Ordering::Relaxed);
}

/// Whether the workaround `bit` is on.
#[inline(always)]
pub fn enabled(bit: u8) -> bool {
    ENABLED.load(Ordering::Relaxed) & bit != 0
}

/// Guest aborts whose IPA came from `AT S1E1R` (834220), and of those how many re-entered
/// the guest because its stage 1 did not map the address.
pub fn at_counts() -> (u64, u64) {
    (
        AT_RESOLVED.load(Ordering::Relaxed),
        AT_RETRIED.load(Ordering::Relaxed),
    )
}

#[cfg(target_arch = "aarch64")]
/// `IC IALLU; DSB NSH; ISB`: after a `VTTBR_EL2` write on a CPU with Cavium 27456.
#[inline(always)]
pub(super) fn invalidate_icache_local() {
    // SAFETY: invalidating this CPU's instruction cache to the point of unification only
    // drops cached copies of memory; the barriers order it before the guest's next fetch.
    unsafe { core::arch::asm!("ic iallu", "dsb nsh", "isb", options(nostack)) };
}

/// `TCR_EL1.EPD0` and `TCR_EL1.EPD1`: no walks through `TTBR0_EL1`/`TTBR1_EL1`.
pub const TCR_EPD_BOTH: u64 = 1 << 7 | 1 << 23;
/// `SCTLR_EL1.M`.
pub const SCTLR_M: u64 = 1;

#[cfg(target_arch = "aarch64")]
/// Blocks EL1&0 stage-1 walks in the current EL1 context: `TCR_EL1.EPDx` first, then
/// `SCTLR_EL1.M` (so no flat "MMU off" translation is cached either), each followed by an
/// `ISB` (the order of KVM's nVHE `__deactivate_traps` for 1319367). Returns the value
/// `SCTLR_EL1` now holds. Only for the non-VHE regime, where these names reach EL1.
pub fn block_el1_walks() -> u64 {
    TCR_EL1.set(TCR_EL1.get() | TCR_EPD_BOTH);
    barrier::isb(barrier::SY);
    let sctlr = SCTLR_EL1.get() | SCTLR_M;
    SCTLR_EL1.set(sctlr);
    barrier::isb(barrier::SY);
    sctlr
}

#[cfg(target_arch = "aarch64")]
/// Lets EL1 walks run again with the context's own values, `SCTLR_EL1` first and `TCR_EL1`
/// last, an `ISB` before each (after stage 2 was switched).
pub fn unblock_el1_walks(sctlr: u64, tcr: u64) {
    barrier::isb(barrier::SY);
    SCTLR_EL1.set(sctlr);
    barrier::isb(barrier::SY);
    TCR_EL1.set(tcr);
}

/// Exception classes of an abort from a lower EL: instruction (0x20) and data (0x24).
const EC_ABORT_LOW_MASKED: u64 = 0x20;
/// `ISS.S1PTW` (bit 7) of an abort syndrome.
const ISS_S1PTW: u64 = 1 << 7;

/// Whether the syndrome is an abort from the guest that 834220 can misreport: an
/// instruction or data abort from a lower EL, not on a stage-1 walk, with a translation
/// (`0b0001LL`), access-flag (`0b0010LL`) or permission (`0b0011LL`) fault status code.
#[inline(always)]
pub fn abort_needs_at(esr: u64) -> bool {
    let ec = (esr >> 26) & 0x3f;
    let fsc = esr & 0x3f;
    ec & !0x4 == EC_ABORT_LOW_MASKED && esr & ISS_S1PTW == 0 && (0x04..=0x0f).contains(&fsc)
}

/// `PAR_EL1` (64-bit format) to `HPFAR_EL2`: `PAR_EL1.PA[47:12]` into `HPFAR_EL2.FIPA`
/// (bits 39:4). `None` when `PAR_EL1.F` says the translation failed.
pub const fn par_to_hpfar(par: u64) -> Option<u64> {
    if par & 1 != 0 {
        return None;
    }
    Some((par & 0x0000_ffff_ffff_f000) >> 8)
}

/// Arm 834220, for the exit handlers of a guest abort with syndrome `esr` and `FAR_EL2` =
/// `far` whose `HPFAR_EL2` value is `*hpfar`: on a CPU with the erratum and an abort it can
/// misreport, replaces `*hpfar` with the IPA `AT S1E1R far` finds (`PAR_EL1` is the guest's
/// and is kept). Returns `false` when that walk fails: the guest's own stage 1 does not map
/// `far`, and the guest must be re-entered unchanged to take its stage-1 fault. Only the
/// abort paths call this, so other exits pay nothing.
#[inline(always)]
pub fn fix_abort_hpfar(esr: u64, far: u64, hpfar: &mut u64) -> bool {
    if !enabled(AT_FOR_HPFAR) || !abort_needs_at(esr) {
        return true;
    }
    match translate_far(far) {
        Some(h) => {
            *hpfar = h;
            true
        }
        None => false,
    }
}

/// `AT S1E1R far` in the loaded guest's EL1&0 regime, as an `HPFAR_EL2` value.
#[cfg(target_arch = "aarch64")]
#[inline(never)]
fn translate_far(far: u64) -> Option<u64> {
    let saved = PAR_EL1.get();
    // SAFETY: AT S1E1R only translates `far` in the guest's EL1&0 regime (loaded by
    // vcpu_load) and writes PAR_EL1, which is restored below; executed at EL2 a stage-2
    // fault on the stage-1 walk is reported in PAR_EL1, not taken.
    unsafe { core::arch::asm!("at s1e1r, {}", "isb", in(reg) far, options(nostack)) };
    let par = PAR_EL1.get();
    PAR_EL1.set(saved);
    AT_RESOLVED.fetch_add(1, Ordering::Relaxed);
    let hpfar = par_to_hpfar(par);
    if hpfar.is_none() {
        AT_RETRIED.fetch_add(1, Ordering::Relaxed);
    }
    hpfar
}

/// Without AArch64 (host tests of the exit handlers) there is no guest stage 1 to walk:
/// the reported value stands.
#[cfg(not(target_arch = "aarch64"))]
fn translate_far(_far: u64) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data abort from a lower EL: EC 0x24, IL, with `fsc` and extra ISS bits.
    fn dabt(fsc: u64, extra: u64) -> u64 {
        0x24 << 26 | 1 << 25 | extra | fsc
    }

    #[test]
    fn only_guest_translation_access_and_permission_faults_need_at() {
        // Translation level 0-3, access flag level 1-3, permission level 1-3.
        for fsc in [0x04, 0x05, 0x06, 0x07, 0x09, 0x0a, 0x0b, 0x0d, 0x0e, 0x0f] {
            assert!(abort_needs_at(dabt(fsc, 0)), "dabt fsc {fsc:#x}");
            assert!(
                abort_needs_at(0x20 << 26 | 1 << 25 | fsc),
                "iabt fsc {fsc:#x}"
            );
        }
        // Address size faults, external aborts, alignment, TLB conflict: HPFAR is not used.
        for fsc in [0x00, 0x03, 0x10, 0x14, 0x21, 0x30] {
            assert!(!abort_needs_at(dabt(fsc, 0)), "fsc {fsc:#x}");
        }
        // A stage-2 fault on a stage-1 walk: HPFAR_EL2 is valid (S1PTW).
        assert!(!abort_needs_at(dabt(0x07, ISS_S1PTW)));
        // Aborts taken at EL2 itself (EC 0x21/0x25), HVC, SYS64.
        for ec in [0x21, 0x25, 0x16, 0x18] {
            assert!(!abort_needs_at(ec << 26 | 1 << 25 | 0x07), "ec {ec:#x}");
        }
    }

    #[test]
    fn par_becomes_hpfar_fipa() {
        // PA 0x8_1234_5000 (with attribute bits 63:56 and NS/SH set) -> FIPA = PA >> 12 << 4.
        let par = 0xff00_0000_0000_0000 | 0x8_1234_5000 | 0x380;
        assert_eq!(par_to_hpfar(par), Some(0x0081_2345 << 4));
        // The IPA the exit decoder rebuilds from it is the PA page.
        let hpfar = par_to_hpfar(par).unwrap();
        assert_eq!((hpfar & 0x0000_ffff_ffff_fff0) << 8, 0x8_1234_5000);
        // F = 1: the guest's stage 1 does not map the address.
        assert_eq!(par_to_hpfar(0x800 | 1), None);
    }

    #[test]
    fn flags_accumulate() {
        enable(ICACHE_AFTER_VTTBR);
        assert!(enabled(ICACHE_AFTER_VTTBR));
        enable(SPECULATIVE_AT);
        assert!(enabled(ICACHE_AFTER_VTTBR) && enabled(SPECULATIVE_AT));
    }
}
