//! The block of guest state that translated code and the dispatcher share.

pub use super::contexts::switch_cache::{SwitchEntry, SWITCH_ENTRIES};

/// Guest state as translated code sees it between blocks. Translated code keeps r0-r14
/// and NZCV in host registers while it runs and stores them here when it leaves the code
/// cache; the dispatcher copies them to and from the [`Cpu`](crate::Cpu).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GuestState {
    /// r0-r15; on exit, r15 is the guest PC to continue at.
    pub r: [u32; 16],
    /// NZCV in bits 31:28 (the same place in the CPSR and in A64's NZCV).
    pub nzcv: u32,
    /// On [`EXIT_FAULT`]: bits 63:32 of the faulting host address (non-zero when a
    /// host address computed in 64 bits passed 4 GiB, where a guest address wraps).
    pub addr_hi: u32,
    /// Instructions left before the code must return, minus [`MAX_BLOCK_INSNS`]: chained
    /// blocks continue only while it is not negative. An asynchronous event is requested by
    /// making it negative (in the interrupted context's register, see the crate README).
    pub budget: i64,
    /// Host address of the branch that may be linked to the next block, or
    /// [`NO_LINK`].
    pub link_site: u64,
    /// Why the code returned: one of the `EXIT_*` constants.
    pub exit: u32,
    /// Nonzero when translated code may write `TTBR0`/`TTBR1` itself (`a64::ttbr_inline`):
    /// the host does not mirror the guest's stage 1, or its walks read the table bases
    /// from the guest `Cpu` (set by the engine at each entry).
    pub inline_ttbr: u32,
    /// Host address of the shadow return stack: [`RAS_ENTRIES`] pairs of (guest return
    /// address, host address to continue at), a ring aligned to twice its size and
    /// followed by one spare entry.
    pub ras_base: u64,
    /// Host address of the indirect branch target cache: [`IBTC_ENTRIES`] pairs of
    /// (guest target, host address of its block), indexed by target bits 11:2.
    pub ibtc_base: u64,
    /// Byte offset of the return stack's top entry in the ring.
    pub ras_top: u64,
    /// Host address of the guest [`Cpu`](crate::Cpu) while translated code runs (set by
    /// the dispatcher at each entry): inline CP15 accesses and exception entries and
    /// returns read and write its fields (see [`a64::cpu_fields`](super::a64::cpu_fields)).
    pub cpu: u64,
    /// The guest's D0-D31 (S and Q registers alias them), which translated VFP/Advanced
    /// SIMD code reads and writes here (see [`a64::vfp`](super::a64::vfp)).
    pub fp: [u64; 32],
    /// The host's `d8`-`d15` while translated code runs (it keeps guest D0-D7 there).
    pub host_d: [u64; 8],
    /// FPSCR while translated code runs, but for its cumulative flags, which are the
    /// host FPSR's until the engine merges them (translated VCMP writes NZCV here).
    pub fpscr: u32,
    /// The host's `DAIF` for translated code (`MSR DAIF` in the prologue, `DAIFSet` of I
    /// and F in the epilogue), or 0: the prologue and epilogue leave `DAIF` alone (a host
    /// at EL0, where `DAIF` is not writable). A host that takes interrupts while
    /// translated code runs sets it before each entry and makes the code leave from its
    /// interrupt handler with [`PREEMPT`] (`a64::preempt`).
    pub daif: u32,
    /// [`MODE_INFO`]: what inline exception entries and returns look the current and the
    /// new mode up in (translated code indexes it by `CPSR.M`).
    pub mode_info: [u8; 32],
    /// Host address of the engine's [`FaultSites`](super::fault_sites::FaultSites), which
    /// a host fault handler looks a faulting host address up in to deliver a guest Data
    /// Abort itself ([`a64::deliver_guest_abort`](super::a64::deliver_guest_abort)); 0:
    /// none.
    pub fault_sites: u64,
    /// Host address of the engine's [`FetchAborts`](super::fetch_aborts::FetchAborts),
    /// whose entries the target cache's miss path reads to raise a remembered Prefetch
    /// Abort from translated code (`a64::fetch_abort_call`); 0: none.
    pub fetch_aborts: u64,
    /// The [`switch key`](super::contexts::switch_cache::key) of the translation context
    /// whose return stack and target cache translated code holds (set with
    /// `ras_base`/`ibtc_base`, by the engine and by translated code's own switches).
    pub cur_key: u64,
    /// Host address of a `u32` that the host advances whenever a host `TTBR0_EL1` value
    /// it handed out stops naming a live shadow (a static 0 for a host without shadows):
    /// [`switch_cache`](GuestState::switch_cache) entries of an older value are not used.
    pub switch_epoch: u64,
    /// The contexts translated code switches to by itself (an address-space switch, a
    /// change of privilege): see [`contexts::switch_cache`](super::contexts::switch_cache).
    pub switch_cache: [SwitchEntry; SWITCH_ENTRIES],
}

impl Default for GuestState {
    fn default() -> GuestState {
        GuestState {
            r: [0; 16],
            nzcv: 0,
            addr_hi: 0,
            budget: 0,
            link_site: 0,
            exit: 0,
            inline_ttbr: 0,
            ras_base: 0,
            ibtc_base: 0,
            ras_top: 0,
            cpu: 0,
            fp: [0; 32],
            host_d: [0; 8],
            fpscr: 0,
            daif: 0,
            mode_info: MODE_INFO,
            fault_sites: 0,
            fetch_aborts: 0,
            cur_key: 0,
            switch_epoch: 0,
            switch_cache: [SwitchEntry::EMPTY; SWITCH_ENTRIES],
        }
    }
}

/// [`MODE_INFO`] bits 2:0: the mode's index in the core's banked SP/LR and SPSR arrays
/// ([`Mode::bank`](crate::cpu::Mode::bank)).
pub const MODE_BANK: u8 = 7;
/// [`MODE_INFO`] bit: no inline exception entry from this mode (FIQ: banked R8-R12; not
/// a mode).
pub const MODE_NO_ENTRY_BIT: u8 = 5;
/// [`MODE_INFO`] bit: no inline exception return from this mode (User and System have no
/// SPSR; FIQ; not a mode).
pub const MODE_NO_RETURN_BIT: u8 = 6;
/// [`MODE_INFO`] bit: an inline exception return may not enter this mode (User changes
/// the privilege; FIQ; not a mode: the interpreter keeps the current one).
pub const MODE_NOT_TARGET_BIT: u8 = 7;

/// Per `CPSR.M` value (0-31): the bank index and the `MODE_*_BIT` flags.
pub const MODE_INFO: [u8; 32] = {
    const NO_ENTRY: u8 = 1 << MODE_NO_ENTRY_BIT;
    const NO_RETURN: u8 = 1 << MODE_NO_RETURN_BIT;
    const NOT_TARGET: u8 = 1 << MODE_NOT_TARGET_BIT;
    let mut t = [NO_ENTRY | NO_RETURN | NOT_TARGET; 32];
    t[0x10] = NO_RETURN | NOT_TARGET; // User: bank 0
    t[0x11] = 1 | NO_ENTRY | NO_RETURN | NOT_TARGET; // FIQ
    t[0x12] = 2; // IRQ
    t[0x13] = 3; // Supervisor
    t[0x17] = 4; // Abort
    t[0x1b] = 5; // Undefined
    t[0x1f] = NO_RETURN; // System: bank 0
    t
};

/// Entries of the shadow return stack (a 4 KiB ring).
pub const RAS_ENTRIES: usize = 256;
/// Entries of the indirect branch target cache.
pub const IBTC_ENTRIES: usize = 1024;
/// A guest address that no entry matches (guest addresses are below 2^32).
pub const NO_ENTRY: u64 = u64::MAX;

/// The most guest instructions one block holds.
pub const MAX_BLOCK_INSNS: usize = 64;

/// What an interrupt handler subtracts from the interrupted translated code's budget
/// register (once: `a64::preempt`) so that the next budget check (every linkable exit,
/// back-edge and indirect branch) leaves; the engine adds it back to the budget the code
/// returns with, so the instructions run are counted exactly. Budgets stay far below it.
pub const PREEMPT: i64 = 1 << 62;

/// `link_site` when the exit is not a linkable direct branch.
pub const NO_LINK: u64 = u64::MAX;

/// A direct branch or fall-through to `r[15]` (same instruction set).
pub const EXIT_BRANCH: u32 = 0;
/// The instruction at `r[15]` needs the interpreter.
pub const EXIT_FALLBACK: u32 = 1;
/// An interworking branch (`BX`/`BLX` register): `r[15]` holds the target with the
/// instruction-set bit.
pub const EXIT_BX: u32 = 2;

/// Translated code faulted on a host access: `r[15]` holds the low 32 bits of the
/// faulting data address and `link_site` the host address of the faulting instruction (the host's fault handler redirected it to the epilogue, see
/// [`a64::redirect_fault`](super::a64::redirect_fault)); `r[0..15]` and NZCV are the guest
/// state the faulting guest instruction started from.
pub const EXIT_FAULT: u32 = 3;
/// A side exit: as [`EXIT_FAULT`] (the instruction runs in the interpreter), but no host
/// access faulted.
pub const EXIT_SIDE: u32 = 4;

/// Byte offset of `r[n]` in [`GuestState`].
pub const fn off_r(n: u8) -> u32 {
    4 * n as u32
}
/// Byte offset of [`GuestState::nzcv`].
pub const OFF_NZCV: u32 = 64;
/// Byte offset of [`GuestState::addr_hi`].
pub const OFF_ADDR_HI: u32 = 68;
/// Byte offset of [`GuestState::budget`].
pub const OFF_BUDGET: u32 = 72;
/// Byte offset of [`GuestState::link_site`].
pub const OFF_LINK_SITE: u32 = 80;
/// Byte offset of [`GuestState::exit`].
pub const OFF_EXIT: u32 = 88;
/// Byte offset of [`GuestState::inline_ttbr`].
pub const OFF_INLINE_TTBR: u32 = 92;
/// Byte offset of [`GuestState::ras_base`].
pub const OFF_RAS_BASE: u32 = 96;
/// Byte offset of [`GuestState::ibtc_base`].
pub const OFF_IBTC_BASE: u32 = 104;
/// Byte offset of [`GuestState::ras_top`].
pub const OFF_RAS_TOP: u32 = 112;

/// Byte offset of [`GuestState::cpu`].
pub const OFF_CPU: u32 = 120;
/// Byte offset of [`GuestState::fp`].
pub const OFF_FP: u32 = 128;
/// Byte offset of [`GuestState::host_d`].
pub const OFF_HOST_D: u32 = 384;
/// Byte offset of [`GuestState::fpscr`].
pub const OFF_FPSCR: u32 = 448;
/// Byte offset of [`GuestState::daif`].
pub const OFF_DAIF: u32 = 452;
/// Byte offset of [`GuestState::mode_info`].
pub const OFF_MODE_INFO: u32 = 456;

/// Byte offset of [`GuestState::fetch_aborts`].
pub const OFF_FETCH_ABORTS: u32 = core::mem::offset_of!(GuestState, fetch_aborts) as u32;
/// Byte offset of [`GuestState::cur_key`].
pub const OFF_CUR_KEY: u32 = core::mem::offset_of!(GuestState, cur_key) as u32;
/// Byte offset of [`GuestState::switch_epoch`].
pub const OFF_SWITCH_EPOCH: u32 = core::mem::offset_of!(GuestState, switch_epoch) as u32;
/// Byte offset of [`GuestState::switch_cache`].
pub const OFF_SWITCH_CACHE: u32 = core::mem::offset_of!(GuestState, switch_cache) as u32;

const _: () = {
    assert!(core::mem::offset_of!(GuestState, fp) == OFF_FP as usize);
    assert!(core::mem::offset_of!(GuestState, host_d) == OFF_HOST_D as usize);
    assert!(core::mem::offset_of!(GuestState, fpscr) == OFF_FPSCR as usize);
    assert!(core::mem::offset_of!(GuestState, daif) == OFF_DAIF as usize);
    assert!(core::mem::offset_of!(GuestState, mode_info) == OFF_MODE_INFO as usize);
    assert!(core::mem::offset_of!(GuestState, nzcv) == OFF_NZCV as usize);
    assert!(core::mem::offset_of!(GuestState, addr_hi) == OFF_ADDR_HI as usize);
    assert!(core::mem::offset_of!(GuestState, budget) == OFF_BUDGET as usize);
    assert!(core::mem::offset_of!(GuestState, link_site) == OFF_LINK_SITE as usize);
    assert!(core::mem::offset_of!(GuestState, exit) == OFF_EXIT as usize);
    assert!(core::mem::offset_of!(GuestState, inline_ttbr) == OFF_INLINE_TTBR as usize);
    assert!(core::mem::offset_of!(GuestState, ras_base) == OFF_RAS_BASE as usize);
    assert!(core::mem::offset_of!(GuestState, ibtc_base) == OFF_IBTC_BASE as usize);
    assert!(core::mem::offset_of!(GuestState, ras_top) == OFF_RAS_TOP as usize);
    assert!(core::mem::offset_of!(GuestState, cpu) == OFF_CPU as usize);
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::Mode;

    #[test]
    fn mode_info_banks_are_the_cores() {
        for m in [
            Mode::Usr,
            Mode::Fiq,
            Mode::Irq,
            Mode::Svc,
            Mode::Abt,
            Mode::Und,
            Mode::Sys,
        ] {
            assert_eq!(
                (MODE_INFO[m as usize] & MODE_BANK) as usize,
                m.bank(),
                "{m:?}"
            );
        }
        for (m, info) in MODE_INFO.iter().enumerate() {
            if Mode::from_bits(m as u32).is_none() || m < 0x10 {
                assert_eq!(info >> 5, 7, "{m:#x} is not a mode");
            }
        }
    }
}
