//! The guest FP state around a run of translated code: the engine copies D0-D31 into
//! [`GuestState::fp`](crate::translate::state::GuestState::fp) and back, sets the host
//! FPCR from FPSCR (RMode, FZ, DN, AHP sit at the same bits, 26:22) with FPSR cleared, and
//! afterwards adds the host FPSR's cumulative flags (IOC, DZC, OFC, UFC, IXC, IDC, QC;
//! same bits as FPSCR's) to FPSCR and gives the host its FPCR back. It also decides when
//! VFP/Advanced SIMD instructions may be translated at all.

use crate::cpu::fp::fpscr;
use crate::cpu::Cpu;
use crate::decode::Op;
use crate::translate::backend::{CodeGen, HostBlock, Runtime};
use crate::translate::frontend::GuestBlock;
use crate::translate::state::GuestState;

/// FPSCR bits that are FPCR controls in AArch64 (AHP, DN, FZ, RMode).
const FPCR_BITS: u32 = 0x07c0_0000;
/// FPSCR/FPSR cumulative flags (QC, IDC, IXC, UFC, OFC, DZC, IOC).
const FLAG_BITS: u32 = fpscr::QC | 0x9f;

/// Whether translated code may execute this CPU's VFP/Advanced SIMD instructions: the
/// unit is enabled for the current privilege (CPACR, FPEXC.EN), Advanced SIMD and D16-D31
/// are not disabled, and FPSCR asks for no short vectors. Otherwise these instructions
/// stay in the interpreter, which raises UNDEFINED where the architecture says so.
pub fn fp_translatable(cpu: &Cpu) -> bool {
    cpu.check_fp_enabled(true).is_ok()
        && cpu.check_dreg(31).is_ok()
        && cpu.fp.fpscr & fpscr::LEN_STRIDE == 0
}

/// A code generator that translates no VFP/Advanced SIMD instruction (used while
/// [`fp_translatable`] is false).
pub struct NoFp<'a>(pub &'a dyn CodeGen);

impl CodeGen for NoFp<'_> {
    fn supports(&self, insn: &crate::decode::Insn) -> bool {
        !matches!(insn.op, Op::Vfp { .. }) && self.0.supports(insn)
    }
    fn runtime(&self) -> (alloc::vec::Vec<u8>, Runtime) {
        self.0.runtime()
    }
    fn translate(&self, block: &GuestBlock, at: usize, rt: &Runtime) -> HostBlock {
        self.0.translate(block, at, rt)
    }
    fn branch(&self, site: usize, target: usize) -> [u8; 4] {
        self.0.branch(site, target)
    }
}

/// Before entering translated code: the guest's D registers into the state, its FPSCR
/// controls into the host FPCR. Returns the host FPCR to give back.
pub fn enter(cpu: &Cpu, state: &mut GuestState) -> u64 {
    crate::translate::copy::copy_u64s(&mut state.fp, &cpu.fp.d);
    state.fpscr = cpu.fp.fpscr;
    set_host_fp(cpu.fp.fpscr & FPCR_BITS)
}

/// After translated code returned: the D registers back into the CPU, the host FPSR's
/// flags into FPSCR, the host FPCR restored.
pub fn leave(cpu: &mut Cpu, state: &GuestState, saved: u64) {
    crate::translate::copy::copy_u64s(&mut cpu.fp.d, &state.fp);
    cpu.fp.fpscr = state.fpscr | (restore_host_fp(saved) & FLAG_BITS);
}

#[cfg(target_arch = "aarch64")]
fn set_host_fp(fpcr: u32) -> u64 {
    let old: u64;
    // SAFETY: FPCR/FPSR are the calling thread's FP controls and flags; the caller
    // restores FPCR with `restore_host_fp` before Rust code depends on it again.
    unsafe {
        core::arch::asm!(
            "mrs {old}, fpcr",
            "msr fpcr, {new}",
            "msr fpsr, xzr",
            old = out(reg) old,
            new = in(reg) fpcr as u64,
            options(nomem, nostack)
        );
    }
    old
}

#[cfg(target_arch = "aarch64")]
fn restore_host_fp(saved: u64) -> u32 {
    let flags: u64;
    // SAFETY: as in `set_host_fp`.
    unsafe {
        core::arch::asm!(
            "mrs {flags}, fpsr",
            "msr fpcr, {saved}",
            "msr fpsr, xzr",
            flags = out(reg) flags,
            saved = in(reg) saved,
            options(nomem, nostack)
        );
    }
    flags as u32
}

// Translated code runs only on AArch64 hosts; elsewhere (translation-only tests) there is
// no host FP state to switch.
#[cfg(not(target_arch = "aarch64"))]
fn set_host_fp(_fpcr: u32) -> u64 {
    0
}

#[cfg(not(target_arch = "aarch64"))]
fn restore_host_fp(_saved: u64) -> u32 {
    0
}
