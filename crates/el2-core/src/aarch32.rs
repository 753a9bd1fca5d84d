//! AArch32 EL1 guests (`HCR_EL2.RW` = 0): the architecture facts EL2 needs about a vCPU
//! whose kernel runs in AArch32 state — processor modes and the `CPSR` as `SPSR_EL2` holds
//! it, where each mode's banked `R8..R14` live among `X0..X30` (Arm ARM "Mapping of the
//! general-purpose registers between the Execution states"), the T32 `IT` state, the
//! exception entry an injected UNDEFINED or abort takes (Arm ARM `AArch32.EnterMode`), and
//! the Linux ARM boot protocol (`Documentation/arch/arm/booting.rst`).
//!
//! Pure functions on values; the world switch (`switch/aarch32.rs`) saves and restores the
//! AArch32-only registers (`SPSR_abt/und/irq/fiq`, `DACR32_EL2`, `IFSR32_EL2`,
//! `FPEXC32_EL2`).

/// `CPSR.M[4:0]` (`SPSR_EL2.M`): the processor mode.
pub const MODE_MASK: u64 = 0x1f;
/// `M[4]` (nRW): AArch32 state.
pub const MODE_AARCH32: u64 = 1 << 4;
/// User mode.
pub const MODE_USR: u64 = 0x10;
/// FIQ mode.
pub const MODE_FIQ: u64 = 0x11;
/// IRQ mode.
pub const MODE_IRQ: u64 = 0x12;
/// Supervisor mode: where an OS kernel is entered.
pub const MODE_SVC: u64 = 0x13;
/// Monitor mode (EL3; never a guest's).
pub const MODE_MON: u64 = 0x16;
/// Abort mode.
pub const MODE_ABT: u64 = 0x17;
/// Hyp mode (EL2; never a guest's).
pub const MODE_HYP: u64 = 0x1a;
/// Undefined mode.
pub const MODE_UND: u64 = 0x1b;
/// System mode.
pub const MODE_SYS: u64 = 0x1f;

/// `CPSR.T`: T32 (Thumb) instruction set.
pub const CPSR_T: u64 = 1 << 5;
/// `CPSR.F`: FIQ masked.
pub const CPSR_F: u64 = 1 << 6;
/// `CPSR.I`: IRQ masked.
pub const CPSR_I: u64 = 1 << 7;
/// `CPSR.A`: asynchronous aborts masked.
pub const CPSR_A: u64 = 1 << 8;
/// `CPSR.E`: big-endian data.
pub const CPSR_E: u64 = 1 << 9;
/// `CPSR.IT[7:2]`, bits \[15:10\].
const CPSR_IT_HIGH_SHIFT: u32 = 10;
/// `CPSR.IT[1:0]`, bits \[26:25\].
const CPSR_IT_LOW_SHIFT: u32 = 25;
/// The six bits of `IT[7:2]`.
const IT_HIGH_MASK: u64 = 0x3f;
/// The two bits of `IT[1:0]`.
const IT_LOW_MASK: u64 = 0b11;
/// `CPSR.IT` in place: bits \[26:25\] and \[15:10\].
const CPSR_IT_MASK: u64 = (IT_HIGH_MASK << CPSR_IT_HIGH_SHIFT) | (IT_LOW_MASK << CPSR_IT_LOW_SHIFT);
/// `CPSR.J` (Jazelle; RES0 in ARMv8 but cleared on entry as in ARMv7).
const CPSR_J: u64 = 1 << 24;

/// `SCTLR.V`: high exception vectors at `0xFFFF_0000`.
pub const SCTLR_V: u64 = 1 << 13;
/// `SCTLR.EE`: exceptions are taken big-endian.
pub const SCTLR_EE: u64 = 1 << 25;
/// `SCTLR.TE`: exceptions are taken in T32 state.
pub const SCTLR_TE: u64 = 1 << 30;
/// `SCTLR.SPAN` (FEAT_PAN): 0 means "set `CPSR.PAN` on exception entry to a PL1 mode".
/// RES1 where the CPU has no FEAT_PAN, so a clear bit implies the extension.
pub const SCTLR_SPAN: u64 = 1 << 23;
/// `CPSR.PAN` (FEAT_PAN): privileged accesses to memory PL0 can access fault.
pub const CPSR_PAN: u64 = 1 << 22;
/// Base of the high exception vectors (`SCTLR.V` = 1).
const HIGH_VECTORS: u64 = 0xffff_0000;
/// `VBAR` bits \[4:0\] are RES0: the vector table is 32-byte aligned.
const VBAR_ALIGN_MASK: u64 = 0x1f;

/// `SCTLR` (the low half of `SCTLR_EL1`) an AArch32 kernel is entered with: MMU, caches and
/// alignment checking off; `CP15BEN`, `nTWI`, `nTWE`, `SPAN` and the RES1 bits set, the
/// Cortex-A15's reset value.
pub const SCTLR_RESET: u64 = 0x00c5_0078;

/// `CPSR` of an AArch32 kernel at entry: Supervisor mode, A32, asynchronous aborts, IRQs and
/// FIQs masked (the Linux ARM boot protocol: "CPU mode: SVC, IRQs and FIQs disabled").
pub const CPSR_SVC_MASKED: u64 = MODE_SVC | CPSR_A | CPSR_I | CPSR_F;

/// `R1` at entry: the machine type. All ones: "no machine type, use the device tree".
pub const MACH_TYPE_DT: u64 = 0xffff_ffff;

/// `PC` bit 0 of an entry point: the code at `PC & !1` is T32 (PSCI `CPU_ON`, interworking
/// branches).
pub const ENTRY_THUMB: u64 = 1;

/// The mode field of an AArch32 `CPSR`.
pub fn mode(cpsr: u64) -> u64 {
    cpsr & MODE_MASK
}

/// Where AArch32 register `Rn` (`n` = 0..=14) of a context in `mode` lives among the AArch64
/// general-purpose registers `X0..X30`, which the world switch saves on every exit:
/// `R8..R12` of FIQ mode in `X24..X28`, each mode's banked `SP` and `LR` in `X13..X30`.
/// `None` for `R15` (the PC) or any larger number, and for the modes a guest cannot be in
/// (Hyp, Monitor, reserved encodings) for the banked registers.
pub fn gpr_index(mode: u64, n: u8) -> Option<usize> {
    let n = usize::from(n);
    match n {
        0..=7 => Some(n),
        8..=12 if mode == MODE_FIQ => Some(n + 16),
        8..=12 => Some(n),
        13 | 14 => {
            // (SP, LR) of each mode.
            let (sp, lr) = match mode {
                MODE_USR | MODE_SYS => (13, 14),
                MODE_IRQ => (17, 16),
                MODE_SVC => (19, 18),
                MODE_ABT => (21, 20),
                MODE_UND => (23, 22),
                MODE_FIQ => (29, 30),
                _ => return None,
            };
            Some(if n == 13 { sp } else { lr })
        }
        _ => None,
    }
}

/// The T32 `IT` state (`ITSTATE[7:0]`) of `cpsr`: 0 outside an IT block.
pub fn itstate(cpsr: u64) -> u64 {
    (((cpsr >> CPSR_IT_HIGH_SHIFT) & IT_HIGH_MASK) << 2)
        | ((cpsr >> CPSR_IT_LOW_SHIFT) & IT_LOW_MASK)
}

/// `cpsr` with `IT` state `it`.
fn with_itstate(cpsr: u64, it: u64) -> u64 {
    (cpsr & !CPSR_IT_MASK)
        | (((it >> 2) & IT_HIGH_MASK) << CPSR_IT_HIGH_SHIFT)
        | ((it & IT_LOW_MASK) << CPSR_IT_LOW_SHIFT)
}

/// Arm ARM `ITAdvance()`: the `IT` state after one instruction of an IT block has executed
/// (or been skipped): the block ends after its last instruction, else the mask shifts left.
pub fn advance_it(cpsr: u64) -> u64 {
    let it = itstate(cpsr);
    if it == 0 {
        return cpsr;
    }
    /// `ITSTATE[2:0]`: when zero the block ends with this instruction.
    const IT_LAST: u64 = 0b111;
    /// `ITSTATE[4:0]`: the condition's low bit and the mask, shifted together.
    const IT_MASK_BITS: u64 = 0x1f;
    /// `ITSTATE[7:5]`: the base condition, kept.
    const IT_COND_BASE: u64 = 0xe0;
    let next = if it & IT_LAST == 0 {
        0
    } else {
        (it & IT_COND_BASE) | ((it << 1) & IT_MASK_BITS)
    };
    with_itstate(cpsr, next)
}

/// An exception EL2 makes an AArch32 EL1 guest take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exception {
    /// Undefined Instruction: Undefined mode, vector 0x04.
    Undefined,
    /// Prefetch Abort (instruction fetch): Abort mode, vector 0x0C.
    PrefetchAbort,
    /// Data Abort: Abort mode, vector 0x10.
    DataAbort,
}

impl Exception {
    /// The mode the exception is taken to.
    pub fn target_mode(self) -> u64 {
        match self {
            Exception::Undefined => MODE_UND,
            Exception::PrefetchAbort | Exception::DataAbort => MODE_ABT,
        }
    }

    /// Offset of its entry in the vector table.
    fn vector_offset(self) -> u64 {
        match self {
            Exception::Undefined => 0x04,
            Exception::PrefetchAbort => 0x0c,
            Exception::DataAbort => 0x10,
        }
    }

    /// `LR` of the target mode minus the address of the instruction that took it
    /// (Arm ARM `AArch32.TakeUndefInstrException` etc.): the next instruction for an
    /// UNDEFINED one (2 in T32), +4 for a prefetch abort, +8 for a data abort.
    fn lr_offset(self, thumb: bool) -> u64 {
        match self {
            Exception::Undefined if thumb => 2,
            Exception::Undefined => 4,
            Exception::PrefetchAbort => 4,
            Exception::DataAbort => 8,
        }
    }
}

/// Where an exception taken by the guest goes and what it leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The new `PC` (in the vector table).
    pub pc: u64,
    /// The new `CPSR`.
    pub cpsr: u64,
    /// The target mode's `LR` (the return address plus the exception's offset).
    pub lr: u64,
    /// The `X` register that holds the target mode's `LR`.
    pub lr_index: usize,
}

/// Arm ARM `AArch32.EnterMode` for `exc` taken at `pc` from a context with `cpsr`, given
/// the guest's `SCTLR` and `VBAR`. The target mode's `SPSR` is the old `cpsr`.
/// `CPSR.PAN` is set when `SCTLR.SPAN` is 0 (FEAT_PAN), else kept (the rule
/// `inject::exception_entry` follows for AArch64 EL1).
pub fn exception_entry(exc: Exception, cpsr: u64, pc: u64, sctlr: u64, vbar: u64) -> Entry {
    let mode = exc.target_mode();
    let base = if sctlr & SCTLR_V != 0 {
        HIGH_VECTORS
    } else {
        vbar & u64::from(u32::MAX) & !VBAR_ALIGN_MASK
    };
    let mut new = (cpsr & !(MODE_MASK | CPSR_IT_MASK | CPSR_J | CPSR_T | CPSR_E)) | mode | CPSR_I;
    if exc != Exception::Undefined {
        new |= CPSR_A;
    }
    if sctlr & SCTLR_TE != 0 {
        new |= CPSR_T;
    }
    if sctlr & SCTLR_EE != 0 {
        new |= CPSR_E;
    }
    if sctlr & SCTLR_SPAN == 0 {
        new |= CPSR_PAN;
    }
    let thumb = cpsr & CPSR_T != 0;
    Entry {
        pc: base + exc.vector_offset(),
        cpsr: new,
        lr: pc.wrapping_add(exc.lr_offset(thumb)) & u64::from(u32::MAX),
        lr_index: gpr_index(mode, 14).unwrap_or(0),
    }
}

/// Short-descriptor fault status (`DFSR`/`IFSR` `FS` = 0b01000): synchronous external
/// abort, not on a translation table walk.
pub const FSR_SHORT_EXTERNAL: u64 = 0x08;
/// Long-descriptor (`TTBCR.EAE` = 1) fault status `STATUS` = 0b010000: synchronous external
/// abort, not on a translation table walk.
pub const FSR_LONG_EXTERNAL: u64 = 0x10;
/// `DFSR`/`IFSR.LPAE`: the long-descriptor format is in use.
pub const FSR_LPAE: u64 = 1 << 9;
/// `DFSR.WnR`: the abort was on a write.
pub const DFSR_WNR: u64 = 1 << 11;
/// `TTBCR.EAE` (bit 31 of `TCR_EL1`): long-descriptor translation tables.
pub const TTBCR_EAE: u64 = 1 << 31;

/// `DFSR`/`IFSR` for a synchronous external abort, in the format `TTBCR` selects.
pub fn fsr_external(ttbcr: u64, is_write: bool) -> u64 {
    let fs = if ttbcr & TTBCR_EAE != 0 {
        FSR_LPAE | FSR_LONG_EXTERNAL
    } else {
        FSR_SHORT_EXTERNAL
    };
    fs | if is_write { DFSR_WNR } else { 0 }
}

/// Bits of `FAR_EL1` that hold `IFAR` (the high word); `DFAR` is the low word.
pub const IFAR_SHIFT: u32 = 32;

/// The registers an AArch32 vCPU is (re)started with at `entry` (bit 0: T32) with `R0` =
/// `r0`: `(pc, cpsr)`, for PSCI `CPU_ON` and for boot.
pub fn start_state(entry: u64) -> (u64, u64) {
    let thumb = if entry & ENTRY_THUMB != 0 { CPSR_T } else { 0 };
    (
        entry & !ENTRY_THUMB & u64::from(u32::MAX),
        CPSR_SVC_MASKED | thumb,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banked_registers() {
        assert_eq!(gpr_index(MODE_SVC, 0), Some(0));
        assert_eq!(gpr_index(MODE_SVC, 13), Some(19));
        assert_eq!(gpr_index(MODE_SVC, 14), Some(18));
        assert_eq!(gpr_index(MODE_USR, 13), Some(13));
        assert_eq!(gpr_index(MODE_SYS, 14), Some(14));
        assert_eq!(gpr_index(MODE_IRQ, 13), Some(17));
        assert_eq!(gpr_index(MODE_ABT, 14), Some(20));
        assert_eq!(gpr_index(MODE_UND, 13), Some(23));
        assert_eq!(gpr_index(MODE_FIQ, 8), Some(24));
        assert_eq!(gpr_index(MODE_FIQ, 12), Some(28));
        assert_eq!(gpr_index(MODE_FIQ, 14), Some(30));
        assert_eq!(gpr_index(MODE_IRQ, 8), Some(8));
        assert_eq!(gpr_index(MODE_SVC, 15), None);
        assert_eq!(gpr_index(MODE_HYP, 13), None);
        assert_eq!(gpr_index(MODE_SVC, 200), None);
    }

    #[test]
    fn it_advance() {
        // ITTE EQ: IT = 0b0000_0110 (cond EQ, mask 0b0110)... use a 4-instruction block.
        let cpsr = with_itstate(MODE_SVC | CPSR_T, 0b0000_0101);
        assert_eq!(itstate(cpsr), 0b0000_0101);
        let c1 = advance_it(cpsr);
        assert_eq!(itstate(c1), 0b0000_1010);
        // The last instruction (IT[2:0] = 0) ends the block.
        let last = with_itstate(MODE_SVC | CPSR_T, 0b0000_1000);
        assert_eq!(itstate(advance_it(last)), 0);
        assert_eq!(advance_it(MODE_SVC), MODE_SVC);
        // Other CPSR bits are kept.
        assert_eq!(advance_it(cpsr) & !CPSR_IT_MASK, MODE_SVC | CPSR_T);
    }

    #[test]
    fn undefined_entry() {
        let e = exception_entry(Exception::Undefined, MODE_SVC, 0x8000, SCTLR_RESET, 0x1000);
        assert_eq!(e.pc, 0x1004);
        assert_eq!(e.lr, 0x8004);
        assert_eq!(e.lr_index, 22);
        assert_eq!(e.cpsr, MODE_UND | CPSR_I);
        // T32, high vectors, exceptions taken in T32.
        let sctlr = SCTLR_RESET | SCTLR_V | SCTLR_TE;
        let e = exception_entry(Exception::Undefined, MODE_USR | CPSR_T, 0x8000, sctlr, 0);
        assert_eq!((e.pc, e.lr), (0xffff_0004, 0x8002));
        assert_eq!(e.cpsr, MODE_UND | CPSR_I | CPSR_T);
    }

    #[test]
    fn abort_entry() {
        let span = SCTLR_SPAN;
        let e = exception_entry(
            Exception::DataAbort,
            MODE_SVC | CPSR_T,
            0x8000,
            span,
            0x1000,
        );
        assert_eq!((e.pc, e.lr, e.lr_index), (0x1010, 0x8008, 20));
        assert_eq!(e.cpsr, MODE_ABT | CPSR_I | CPSR_A);
        let e = exception_entry(Exception::PrefetchAbort, MODE_SVC, 0x8000, span, 0x1000);
        assert_eq!((e.pc, e.lr), (0x100c, 0x8004));
        assert_eq!(fsr_external(0, true), 0x808);
        assert_eq!(fsr_external(TTBCR_EAE, false), 0x210);
    }

    #[test]
    fn pan_on_entry_follows_span() {
        // SCTLR.SPAN = 0 (FEAT_PAN): CPSR.PAN set on entry, whatever it was.
        let sctlr = SCTLR_RESET & !SCTLR_SPAN;
        let e = exception_entry(Exception::Undefined, MODE_SVC, 0x8000, sctlr, 0);
        assert_eq!(e.cpsr, MODE_UND | CPSR_I | CPSR_PAN);
        let e = exception_entry(Exception::DataAbort, MODE_USR, 0x8000, sctlr, 0);
        assert_eq!(e.cpsr, MODE_ABT | CPSR_I | CPSR_A | CPSR_PAN);
        // SCTLR.SPAN = 1: CPSR.PAN kept as it was.
        let e = exception_entry(Exception::Undefined, MODE_SVC | CPSR_PAN, 0, SCTLR_RESET, 0);
        assert_eq!(e.cpsr, MODE_UND | CPSR_I | CPSR_PAN);
        let e = exception_entry(Exception::Undefined, MODE_SVC, 0, SCTLR_RESET, 0);
        assert_eq!(e.cpsr, MODE_UND | CPSR_I);
    }

    #[test]
    fn start() {
        assert_eq!(start_state(0x4000_8000), (0x4000_8000, 0x1d3));
        assert_eq!(start_state(0x4000_8001), (0x4000_8000, 0x1f3));
    }
}
