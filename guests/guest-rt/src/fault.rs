//! Expected synchronous faults: the guest announces that the next instruction may fault,
//! runs it, and reads back what the exception reported.
//!
//! While a fault is expected, the EL1 synchronous-exception handler records `ESR_EL1`,
//! `FAR_EL1` and `ELR_EL1`, clears the expectation and resumes at `ELR_EL1 + 4`, skipping the
//! faulting instruction. So the code run under [`catch`] must be a single `asm!` whose one
//! faulting instruction may be skipped (give its outputs a sentinel value first).

use crate::volatile_cell::VolatileCell;
use aarch64_cpu::registers::ESR_EL1;
use core::sync::atomic::{compiler_fence, Ordering};
use tock_registers::interfaces::Readable;
use tock_registers::register_bitfields;
use tock_registers::registers::InMemoryRegister;

register_bitfields! [u64,
    /// ISS of a Data Abort (`ESR_EL1.EC` = 0x24/0x25), the fields the guests report.
    ISS_DATA_ABORT [
        /// Instruction Syndrome Valid.
        ISV OFFSET(24) NUMBITS(1) [],
        /// External abort type.
        EA OFFSET(9) NUMBITS(1) [],
        /// Write not Read.
        WNR OFFSET(6) NUMBITS(1) [],
        /// Data Fault Status Code.
        DFSC OFFSET(0) NUMBITS(6) [
            /// Address size fault, level 0.
            AddressSizeL0 = 0b00_0000,
            /// Translation fault, level 0.
            TranslationL0 = 0b00_0100,
            /// Synchronous External abort, not on a translation table walk.
            SyncExternalAbort = 0b01_0000,
            /// Alignment fault.
            Alignment = 0b10_0001
        ]
    ]
];

/// `ESR_EL1.EC` value: Unknown reason (UNDEFINED instruction).
pub const EC_UNKNOWN: u64 = 0x00;
/// `ESR_EL1.EC` value: Data Abort taken without a change in Exception level.
pub const EC_DATA_ABORT_CURRENT_EL: u64 = 0x25;
/// Data Abort `DFSC`: Synchronous External abort, not on translation table walk.
pub const DFSC_SYNC_EXTERNAL_ABORT: u64 = 0b01_0000;

/// A synchronous exception recorded while it was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// `ESR_EL1` (syndrome).
    pub esr: u64,
    /// `FAR_EL1` (faulting address; meaningful for aborts).
    pub far: u64,
    /// `ELR_EL1` (address of the faulting instruction).
    pub elr: u64,
}

impl Fault {
    /// `ESR_EL1.EC`, the exception class.
    pub fn ec(&self) -> u64 {
        InMemoryRegister::<u64, ESR_EL1::Register>::new(self.esr).read(ESR_EL1::EC)
    }

    /// `ESR_EL1.ISS`, the instruction specific syndrome.
    pub fn iss(&self) -> u64 {
        InMemoryRegister::<u64, ESR_EL1::Register>::new(self.esr).read(ESR_EL1::ISS)
    }

    /// Data/Instruction Abort fault status code, `ISS.DFSC` (bits 5:0).
    pub fn dfsc(&self) -> u64 {
        InMemoryRegister::<u64, ISS_DATA_ABORT::Register>::new(self.iss())
            .read(ISS_DATA_ABORT::DFSC)
    }

    /// `ISS.WnR` of a Data Abort: the access was a write.
    pub fn is_write(&self) -> bool {
        InMemoryRegister::<u64, ISS_DATA_ABORT::Register>::new(self.iss())
            .is_set(ISS_DATA_ABORT::WNR)
    }

    /// True for an Instruction or Data Abort (`ESR_EL1.EC` 0x20, 0x21, 0x24, 0x25), whose ISS
    /// holds a fault status code and for which `FAR_EL1` is valid.
    pub fn is_abort(&self) -> bool {
        matches!(self.ec(), 0x20 | 0x21 | 0x24 | 0x25)
    }

    /// True for a Data Abort at the current EL with DFSC = Synchronous External abort.
    pub fn is_sync_external_abort(&self) -> bool {
        self.ec() == EC_DATA_ABORT_CURRENT_EL && self.dfsc() == DFSC_SYNC_EXTERNAL_ABORT
    }

    /// True for an exception with `ESR_EL1.EC` = Unknown reason (an UNDEFINED instruction).
    pub fn is_undefined(&self) -> bool {
        self.ec() == EC_UNKNOWN
    }
}

impl core::fmt::Display for Fault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "ESR_EL1={:#x} EC={:#04x} ISS={:#x}",
            self.esr,
            self.ec(),
            self.iss()
        )?;
        if self.is_abort() {
            write!(f, " DFSC={:#04x} FAR_EL1={:#x}", self.dfsc(), self.far)?;
        }
        write!(f, " ELR_EL1={:#x}", self.elr)
    }
}

static EXPECTED: VolatileCell = VolatileCell::new(0);
static RECORDED: VolatileCell = VolatileCell::new(0);
static ESR: VolatileCell = VolatileCell::new(0);
static FAR: VolatileCell = VolatileCell::new(0);
static ELR: VolatileCell = VolatileCell::new(0);

/// Announces that the next instruction may fault; clears any earlier record.
pub fn expect_fault() {
    RECORDED.set(0);
    EXPECTED.set(1);
    compiler_fence(Ordering::SeqCst);
}

/// Ends the expectation and returns the fault recorded since [`expect_fault`], if any.
pub fn take_fault() -> Option<Fault> {
    compiler_fence(Ordering::SeqCst);
    EXPECTED.set(0);
    (RECORDED.get() != 0).then(|| Fault {
        esr: ESR.get(),
        far: FAR.get(),
        elr: ELR.get(),
    })
}

/// Runs `f` (one `asm!` with one possibly faulting instruction) with a fault expected and
/// returns its result and the fault, if one was taken.
pub fn catch<R>(f: impl FnOnce() -> R) -> (R, Option<Fault>) {
    expect_fault();
    let r = f();
    (r, take_fault())
}

/// Called by the synchronous-exception handler: records the exception if one was expected
/// (and clears the expectation). Returns whether it did; the caller then skips the instruction.
pub(crate) fn record_if_expected(esr: u64, far: u64, elr: u64) -> bool {
    if EXPECTED.get() == 0 {
        return false;
    }
    EXPECTED.set(0);
    ESR.set(esr);
    FAR.set(far);
    ELR.set(elr);
    RECORDED.set(1);
    true
}
