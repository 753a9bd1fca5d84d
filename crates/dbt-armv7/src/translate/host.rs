//! What the host provides to run translated code: executable memory for the code cache,
//! and, for a host that translates guest virtual addresses in hardware, the guest's
//! stage-1 state to mirror.

use super::state::GuestState;
use crate::cpu::{Cpu, Mode};
use crate::mmu::TlbMaintenance;

/// `SCTLR.M`: the guest's MMU is on.
const SCTLR_M: u32 = 1;

/// What a host that mirrors the guest's stage 1 ([`CodeMemory::mirrors_guest_mmu`])
/// needs to know to map guest virtual addresses for translated code: the translation
/// registers and the privilege the code runs at. With the MMU off it is [`GuestMmu::OFF`]
/// (guest virtual = guest physical), whatever the other registers hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuestMmu {
    /// `TTBR0` (64-bit: the LPAE form).
    pub ttbr0: u64,
    /// `TTBR1`.
    pub ttbr1: u64,
    /// `TTBCR`.
    pub ttbcr: u32,
    /// `DACR` (short descriptors: domain access).
    pub dacr: u32,
    /// `SCTLR` (`M`, `AFE`, `WXN`... shape the translation).
    pub sctlr: u32,
    /// `CONTEXTIDR` (short descriptors: the ASID in bits 7:0).
    pub contextidr: u32,
    /// Translated code runs at PL1 (its accesses are checked with PL1 permissions), not
    /// PL0.
    pub privileged: bool,
}

impl GuestMmu {
    /// The guest's MMU is off: virtual = physical for every privilege.
    pub const OFF: GuestMmu = GuestMmu {
        ttbr0: 0,
        ttbr1: 0,
        ttbcr: 0,
        dacr: 0,
        sctlr: 0,
        contextidr: 0,
        privileged: true,
    };

    /// The state `cpu` runs translated code in.
    pub fn of(cpu: &Cpu) -> GuestMmu {
        let c = &cpu.cp15;
        if c.sctlr & SCTLR_M == 0 {
            return GuestMmu::OFF;
        }
        GuestMmu {
            ttbr0: c.ttbr0,
            ttbr1: c.ttbr1,
            ttbcr: c.ttbcr,
            dacr: c.dacr,
            sctlr: c.sctlr,
            contextidr: c.contextidr,
            privileged: cpu.mode != Mode::Usr,
        }
    }

    /// Whether the guest's MMU is on.
    pub fn on(&self) -> bool {
        self.sctlr & SCTLR_M != 0
    }

    /// The registers as a [`Cp15`](crate::cp15::Cp15) (the others at reset), for
    /// [`mmu::walk`](crate::mmu::walk).
    pub fn cp15(&self) -> crate::cp15::Cp15 {
        let mut c = crate::cp15::Cp15::new();
        self.store_into(&mut c);
        c
    }

    /// Writes the registers into `c`'s fields (the others untouched): a host that keeps
    /// one [`GuestMmu::cp15`] for walks updates it per address-space switch without
    /// building a whole `Cp15` again.
    pub fn store_into(&self, c: &mut crate::cp15::Cp15) {
        c.ttbr0 = self.ttbr0;
        c.ttbr1 = self.ttbr1;
        c.ttbcr = self.ttbcr;
        c.dacr = self.dacr;
        c.sctlr = self.sctlr;
        c.contextidr = self.contextidr;
    }
}

/// The code cache's memory, provided by the host: writable, and executable at the same
/// addresses.
pub trait CodeMemory {
    /// The whole code cache.
    fn bytes(&mut self) -> &mut [u8];
    /// Makes `bytes()[start..start + len]`, just written, visible to instruction fetch
    /// (on AArch64: `DC CVAU`, `DSB ISH`, `IC IVAU`, `DSB ISH`, `ISB`).
    fn sync(&mut self, start: usize, len: usize);
    /// Calls the prologue at cache offset `prologue` as `extern "C" fn(state, entry)`, where
    /// `entry` is the address of cache offset `entry`; it returns when the translated code
    /// leaves the cache. [`call_prologue`] does this on an AArch64 host.
    ///
    /// # Safety
    ///
    /// The cache holds code that this crate's engine generated for this host, and `state`
    /// is valid for reads and writes.
    unsafe fn enter(&mut self, prologue: usize, state: *mut GuestState, entry: usize);

    /// Write-protects the guest page `page` (guest physical address >> 12) because code
    /// was translated from it, so that a translated store to it faults (and reaches the
    /// engine through the fault path with the written address) — through every guest
    /// virtual address that maps it, if the host mirrors the guest's stage 1. Returns
    /// whether the host did; by default it does not, and the host must call
    /// `Dbt::invalidate` itself when guest code changes.
    fn protect_guest_page(&mut self, page: u32) -> bool {
        let _ = page;
        false
    }

    /// Makes the guest page `page` writable again (its translations are being dropped).
    fn unprotect_guest_page(&mut self, page: u32) {
        let _ = page;
    }

    /// Whether the host translates guest virtual addresses for translated code as the
    /// guest's stage 1 does (shadow tables filled from the guest's tables, see
    /// [`CodeMemory::guest_mmu`]). Only then does the engine translate code that runs
    /// with the guest's MMU on; otherwise such code is interpreted. By default: no.
    fn mirrors_guest_mmu(&self) -> bool {
        false
    }

    /// Translated code is about to run in `mmu` (called when it differs from the last
    /// call's, and only if [`CodeMemory::mirrors_guest_mmu`]): from now on a translated
    /// access to guest virtual address `va` must either reach the guest physical address
    /// the guest's stage 1 gives with `mmu.privileged`'s permissions, or fault into the
    /// engine (which then runs the instruction in the interpreter: the guest's exact
    /// abort). A host must keep translations of other ASIDs it caches (an address-space
    /// switch is not a TLB flush); it drops what [`CodeMemory::guest_tlb_maintenance`]
    /// names.
    fn guest_mmu(&mut self, mmu: &GuestMmu) {
        let _ = mmu;
    }

    /// A routine that translated code calls, without leaving the code cache, when the
    /// guest switches address space (a `TTBR0`/`TTBR1`/`CONTEXTIDR` write at PL1) in a
    /// block that runs under every address space: `switch(mmu)` either does what
    /// [`CodeMemory::guest_mmu`] would with a mirror of `mmu` the host already holds (no
    /// allocation, nothing dropped) and returns true, or changes nothing and returns false
    /// (translated code then leaves and the dispatcher calls `guest_mmu`). A plain
    /// function: the code memory itself is borrowed while translated code runs. Asked only
    /// if [`CodeMemory::mirrors_guest_mmu`]; by default there is none.
    ///
    /// A host that has one also lets translated code write the table base of the current
    /// ASID itself (`TTBR0`/`TTBR1` with short descriptors, LPAE `TTBR1` with the ASID in
    /// `TTBR0`, no call: `a64::ttbr_inline`): its walks while translated code runs read
    /// `TTBR0`/`TTBR1` (and `CONTEXTIDR`) from the guest `Cpu`
    /// ([`GuestState::cpu`](super::state::GuestState::cpu)), and `guest_mmu` is told the
    /// new registers at the next entry.
    fn in_code_switch(&self) -> Option<fn(&GuestMmu) -> bool> {
        None
    }

    /// With [`CodeMemory::in_code_switch`]: a routine that returns the host's
    /// `TTBR0_EL1` value of the shadow it has loaded (for the guest's MMU on), which
    /// translated code may write into `TTBR0_EL1` itself (an `MSR` and an `ISB`, at the
    /// host's EL1) to come back to that shadow later without a call, as long as the
    /// counter [`CodeMemory::switch_epoch`] gives has not changed (the engine's switch
    /// cache, `contexts::switch_cache`). A host that has one finds its current shadow
    /// from `TTBR0_EL1` whenever it next uses it (a fill, [`CodeMemory::guest_mmu`],
    /// TLB maintenance). By default there is none.
    fn loaded_space(&self) -> Option<fn() -> u64> {
        None
    }

    /// With [`CodeMemory::loaded_space`]: the counter that the host advances whenever a
    /// `TTBR0_EL1` value it gave stops naming a live shadow (the shadow and its tables are
    /// dropped or recycled). Read by translated code, so `'static`.
    fn switch_epoch(&self) -> Option<&'static core::sync::atomic::AtomicU32> {
        None
    }

    /// The guest performed TLB maintenance `op`: cached translations of guest virtual
    /// addresses that it names must go (called only if
    /// [`CodeMemory::mirrors_guest_mmu`]).
    fn guest_tlb_maintenance(&mut self, op: TlbMaintenance) {
        let _ = op;
    }

    /// A routine that applies the guest's TLB maintenance `op` as
    /// [`CodeMemory::guest_tlb_maintenance`] does, called from inside translated code
    /// (a plain function: the code memory itself is borrowed while translated code runs)
    /// when the operation names no translated code. It returns whether translated code
    /// may go on (false: the engine must dispatch first, e.g. to take other vCPUs'
    /// broadcast maintenance; the operation is applied either way). Asked only if
    /// [`CodeMemory::mirrors_guest_mmu`]; by default there is none (translated code
    /// leaves at every operation).
    fn in_code_tlb_maintenance(&self) -> Option<fn(TlbMaintenance) -> bool> {
        None
    }

    /// TLB maintenance that another vCPU of the guest broadcast (an Inner Shareable
    /// operation) and that this engine's translations must honour before it runs more
    /// guest code: polled before every dispatch, until `None` (only if
    /// [`CodeMemory::mirrors_guest_mmu`]). By default: none.
    fn remote_tlb_maintenance(&mut self) -> Option<TlbMaintenance> {
        None
    }
}

/// [`CodeMemory::enter`] for an AArch64 host: calls the prologue in the cache at `base`.
///
/// # Safety
///
/// As for [`CodeMemory::enter`]; `base` is the address of the executable cache.
#[cfg(target_arch = "aarch64")]
pub unsafe fn call_prologue(
    base: *const u8,
    prologue: usize,
    state: *mut GuestState,
    entry: usize,
) {
    type Prologue = unsafe extern "C" fn(*mut GuestState, usize);
    // SAFETY: the prologue generated by `A64Gen::runtime` follows the AAPCS64 (it saves and
    // restores x19-x30 and the stack pointer) and takes these two arguments.
    unsafe {
        let f: Prologue = core::mem::transmute(base.add(prologue));
        f(state, base as usize + entry)
    }
}

/// [`CodeMemory::sync`] for an AArch64 host: cleans the data cache to the point of
/// unification and invalidates the instruction cache over `[addr, addr + len)`, line by
/// line as `CTR_EL0.DminLine`/`IminLine` give them, then `DSB ISH` + `ISB`, so freshly
/// written code is what executes.
#[cfg(target_arch = "aarch64")]
pub fn sync_code(addr: usize, len: usize) {
    let ctr: u64;
    // SAFETY: reads CTR_EL0 (readable at EL0 under Linux and at EL1).
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr) };
    let dline = 4usize << ((ctr >> 16) & 15);
    let iline = 4usize << (ctr & 15);
    let hi = addr + len;
    let mut a = addr & !(dline - 1);
    while a < hi {
        // SAFETY: cleans a data-cache line of the caller's code cache to the PoU.
        unsafe { core::arch::asm!("dc cvau, {}", in(reg) a) };
        a += dline;
    }
    // SAFETY: barrier.
    unsafe { core::arch::asm!("dsb ish") };
    let mut a = addr & !(iline - 1);
    while a < hi {
        // SAFETY: invalidates an instruction-cache line of the caller's code cache.
        unsafe { core::arch::asm!("ic ivau, {}", in(reg) a) };
        a += iline;
    }
    // SAFETY: barriers.
    unsafe { core::arch::asm!("dsb ish", "isb") };
}
