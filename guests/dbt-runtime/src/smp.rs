//! More than one vCPU (issue 17 item 4): every vCPU of the VM runs this runtime with its
//! own stack (`_start`, by the index in `x4`), its own engine, guest core and share of the
//! code cache; they share the guest's RAM, the runtime's stage 1 and its heap.
//!
//! Self-modifying code across vCPUs. A guest page that any vCPU translated code from is
//! read-only in the shared stage 1 while any vCPU holds translations from it; this module
//! records which vCPUs hold each page. A store to such a page:
//!
//! - by a vCPU whose engine holds the page: its engine drops its own translations and
//!   calls [`release`]; the other holders are told, and the page stays read-only until
//!   every holder has dropped its translations, so each of them keeps catching its own
//!   stores;
//! - by a vCPU whose engine does not hold it (the store faults in the guest bus,
//!   `bus.rs`): [`write_held`] tells every holder and makes the store through this
//!   runtime's write alias of guest RAM ([`crate::mmu::RAM_ALIAS`]).
//!
//! A vCPU told to drop a page does so at its next look at its mailbox ([`drain`]): before
//! each slice of guest instructions and after every exit from the engine (a `WFI`, a call,
//! an interrupt taken at a slice boundary). An interrupt from the writer (an IPI, as Linux
//! sends after patching code) is therefore taken with the stale translations already gone;
//! without one, a vCPU may run the old code for at most one slice — the window the
//! architecture leaves a PE until its next context synchronization event.
//!
//! TLB maintenance across vCPUs ([`broadcast_tlb`]). The guest's TLB maintenance on one
//! vCPU (Linux uses the Inner Shareable forms: `TLBIMVAIS`, `TLBIASIDIS`, `TLBIALLIS`...)
//! must be complete on every PE when the issuer's `DSB` completes (ARM ARM B3.10.5: "TLB
//! maintenance operations and the memory order model"). The issuer applies it to every
//! vCPU's shadow tables itself (`mmu::shadow::maintenance`: data accesses are exact from
//! then on), posts it to the other vCPUs' TLB mailboxes, and waits, before its `MCR`
//! retires, until each other vCPU has taken it (its engine polls the mailbox before every
//! dispatch, `Dbt::run` through `CodeMemory::remote_tlb_maintenance`, and drops the
//! named translations before it runs more guest code) or is not running guest code
//! ([`set_running`] false: in `WFI`, in a call to the hypervisor, powered off, or itself
//! waiting here — a vCPU that becomes running again polls before its first block). So
//! the issuer's `DSB`, and anything it then tells the other vCPUs, comes after every
//! vCPU stopped using the old translations.

use aarch64_cpu::registers::*;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use dbt_armv7::mmu::TlbMaintenance;
use dbt_armv7::translate::{CodeGen, Dbt};
use spin::Once;

use crate::code::Code;

/// The runtime's spin-wait hint: `YIELD`, which says that this PE only waits for another
/// one (ARM ARM C6.2 "YIELD"). `core::hint::spin_loop` is an `ISB` on AArch64, which says
/// nothing of the kind: under QEMU's single-threaded round-robin TCG (`-icount`) a vCPU
/// spinning on a lock that the other vCPU holds then ran until QEMU's 100 ms kick before
/// the holder could go on (2-vCPU Linux under the DBT crawled: one vCPU spun in the
/// shadow-fill vector on its shadow lock while the other emptied that shadow, one
/// `TLBI ASIDE1IS` per round); QEMU ends a vCPU's turn at a `YIELD`.
pub struct Yield;

impl spin::RelaxStrategy for Yield {
    fn relax() {
        // SAFETY: a hint; no memory, stack or flags are touched.
        unsafe { core::arch::asm!("yield", options(nomem, nostack, preserves_flags)) };
    }
}

/// The runtime's spin lock: its waiters [`Yield`].
pub type Mutex<T> = spin::mutex::Mutex<T, Yield>;

/// Most vCPUs of a VM (`link.ld` `MAX_VCPUS`, the hypervisor's `dbt_runtime::MAX_VCPUS`).
pub const MAX_VCPUS: usize = 8;

/// This vCPU's index (`TPIDR_EL1`, set by `_start` from `x4`).
pub fn me() -> usize {
    TPIDR_EL1.get() as usize % MAX_VCPUS
}

/// What the boot vCPU learned from the guest's device tree, for every vCPU.
pub struct Machine {
    /// Guest RAM `[start, end)` (IPAs).
    pub ram: core::ops::Range<u64>,
    /// The guest has a GICv3 (system-register CPU interface).
    pub gicv3: bool,
    /// The code cache: its base and each vCPU's share of it.
    pub code_base: u64,
    /// Bytes of the code cache per vCPU.
    pub code_share: u64,
}

static MACHINE: Once<Machine> = Once::new();

/// Records the machine (the boot vCPU, before it starts the guest).
pub fn set_machine(m: Machine) {
    MACHINE.call_once(|| m);
}

/// The machine the boot vCPU recorded; `None` before it did.
pub fn machine() -> Option<&'static Machine> {
    MACHINE.get()
}

/// This vCPU's code cache (its share of the runtime's).
pub fn code_memory(m: &Machine) -> Code {
    Code::new(m.code_base + me() as u64 * m.code_share, m.code_share)
}

/// Which vCPUs (bit per index) hold translations made from each guest page (IPA >> 12).
static HOLDERS: Mutex<BTreeMap<u32, u8>> = Mutex::new(BTreeMap::new());

/// Pages each vCPU must drop because another vCPU wrote them.
static MAILBOX: [Mutex<Vec<u32>>; MAX_VCPUS] = [const { Mutex::new(Vec::new()) }; MAX_VCPUS];
/// Fast check of a non-empty [`MAILBOX`].
static MAIL: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];

fn post(holders: u8, page: u32, except: usize) {
    for v in (0..MAX_VCPUS).filter(|&v| v != except && holders & (1 << v) != 0) {
        let mut m = MAILBOX[v].lock();
        if !m.contains(&page) {
            m.push(page);
        }
        MAIL[v].store(true, Ordering::Release);
    }
}

/// This vCPU translated code from guest page `page`: the page becomes (or stays)
/// read-only. False when the page cannot be protected (outside the guest's RAM range).
pub fn hold(page: u32) -> bool {
    let mut h = HOLDERS.lock();
    let bits = h.get(&page).copied().unwrap_or(0);
    if bits == 0 && !crate::mmu::protect(page, true) {
        return false;
    }
    h.insert(page, bits | 1 << me());
    true
}

/// This vCPU's engine dropped its translations of guest page `page` because of a store to
/// it; the other holders are told to drop theirs, and the page becomes writable once none
/// holds it.
pub fn release(page: u32) {
    let me = me();
    let mut h = HOLDERS.lock();
    let Some(bits) = h.get(&page).copied() else {
        return;
    };
    let rest = bits & !(1 << me);
    post(rest, page, me);
    if rest == 0 {
        h.remove(&page);
        crate::mmu::protect(page, false);
    } else {
        h.insert(page, rest);
    }
}

/// A store of `size` bytes of `value` at guest physical `pa` by a vCPU whose engine does
/// not hold the page faulted: when another vCPU holds it, every holder is told and the
/// store is made through the write alias; false when no vCPU holds the page (the fault is
/// the guest's).
pub fn write_held(pa: u64, size: u8, value: u64) -> bool {
    let me = me();
    let first = (pa >> 12) as u32;
    let last = ((pa + u64::from(size) - 1) >> 12) as u32;
    {
        let h = HOLDERS.lock();
        let held: Vec<(u32, u8)> = [first, last]
            .into_iter()
            .filter_map(|p| Some((p, *h.get(&p)?)))
            .collect();
        if held.is_empty() {
            return false;
        }
        for (page, bits) in held {
            post(bits, page, me);
        }
    }
    crate::mmu::write_alias(pa, size, value)
}

/// Drops the translations other vCPUs' stores made stale on this vCPU (see the module
/// comment for when).
pub fn drain<G: CodeGen>(dbt: &mut Dbt<G>, code: &mut Code) {
    let me = me();
    if !MAIL[me].swap(false, Ordering::AcqRel) {
        return;
    }
    let pages = core::mem::take(&mut *MAILBOX[me].lock());
    for page in pages {
        dbt.page_written_elsewhere(code, page);
        forget(page, me);
    }
}

/// vCPU `me` no longer holds `page` (without a store to it: nobody else is told); the
/// page becomes writable once no vCPU holds it.
fn forget(page: u32, me: usize) {
    let mut h = HOLDERS.lock();
    let Some(bits) = h.get(&page).copied() else {
        return;
    };
    let rest = bits & !(1 << me);
    if rest == 0 {
        h.remove(&page);
        crate::mmu::protect(page, false);
    } else {
        h.insert(page, rest);
    }
}

/// This vCPU stops (PSCI `CPU_OFF`): it holds no page any more and its mailbox is empty.
pub fn leave() {
    let me = me();
    let pages: Vec<u32> = HOLDERS
        .lock()
        .iter()
        .filter(|(_, &b)| b & (1 << me) != 0)
        .map(|(&p, _)| p)
        .collect();
    for page in pages {
        forget(page, me);
    }
    MAILBOX[me].lock().clear();
    MAIL[me].store(false, Ordering::Release);
}

/// TLB maintenance posted to each vCPU's engine by the others, in order (one "all" when
/// more than [`TLB_BOX_LEN`] wait: kept apart, page operations drop only their pages).
static TLB_BOX: [Mutex<Vec<TlbMaintenance>>; MAX_VCPUS] =
    [const { Mutex::new(Vec::new()) }; MAX_VCPUS];
/// Most operations a TLB mailbox holds apart.
const TLB_BOX_LEN: usize = 64;
/// Fast check of a non-empty [`TLB_BOX`].
static TLB_MAIL: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];
/// Operations posted to each vCPU so far (a ticket per post, under its box's lock).
static TLB_POSTED: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];
/// The last ticket each vCPU took from its box.
static TLB_TAKEN: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];
/// Whether each vCPU is inside its engine (may run guest code without polling first).
static RUNNING: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];

/// Broadcasts ([`broadcast_tlb`]) that had to wait for another vCPU, and the polls they
/// spent waiting (a measure of the cost).
static TLB_WAITS: AtomicU64 = AtomicU64::new(0);
static TLB_SPINS: AtomicU64 = AtomicU64::new(0);
/// Waits that passed [`LONG_WAIT`] polls (reported on the console, the first few).
static TLB_LONG_WAITS: AtomicU64 = AtomicU64::new(0);
/// Polls after which a wait is reported.
const LONG_WAIT: u64 = 50_000_000;

/// This vCPU enters its engine (`true`: it polls its TLB mailbox before running guest
/// code) or leaves it (`false`).
pub fn set_running(on: bool) {
    RUNNING[me()].store(on, Ordering::SeqCst);
}

/// Posts TLB maintenance `op`, which this vCPU performed, to every other vCPU's engine,
/// and returns when each has taken it or is not running guest code (see the module
/// comment).
pub fn broadcast_tlb(op: TlbMaintenance) {
    let me = me();
    let n = crate::mmu::shadow::vcpus();
    let mut ticket = [0u64; MAX_VCPUS];
    for v in (0..n).filter(|&v| v != me) {
        let mut b = TLB_BOX[v].lock();
        if b.len() >= TLB_BOX_LEN || op == TlbMaintenance::All {
            b.clear();
            b.push(TlbMaintenance::All);
        } else if b.first() != Some(&TlbMaintenance::All) && !b.contains(&op) {
            b.push(op);
        }
        ticket[v] = TLB_POSTED[v].fetch_add(1, Ordering::SeqCst) + 1;
        TLB_MAIL[v].store(true, Ordering::SeqCst);
    }
    // While it waits this vCPU runs no guest code: another vCPU's broadcast need not wait
    // for it (it polls before its next block).
    set_running(false);
    let mut waited = false;
    for v in (0..n).filter(|&v| v != me) {
        let mut polls = 0u64;
        while RUNNING[v].load(Ordering::SeqCst) && TLB_TAKEN[v].load(Ordering::SeqCst) < ticket[v] {
            waited = true;
            polls += 1;
            if polls == LONG_WAIT && TLB_LONG_WAITS.fetch_add(1, Ordering::Relaxed) < 4 {
                // A diagnosis aid (the first few only): the other vCPU stays in
                // translated code without reaching a dispatch.
                crate::console::line(format_args!(
                    "vCPU {me}: TLB maintenance {op:?} still waits for vCPU {v} after {polls} polls"
                ));
            }
            <Yield as spin::RelaxStrategy>::relax();
        }
        TLB_SPINS.fetch_add(polls, Ordering::Relaxed);
    }
    if waited {
        TLB_WAITS.fetch_add(1, Ordering::Relaxed);
    }
    set_running(true);
}

/// Moves the TLB maintenance other vCPUs posted to this one since the last call into
/// `taken` (in order), now taken: the caller drops the translations each names before it
/// runs guest code.
pub fn take_tlb(taken: &mut Vec<TlbMaintenance>) {
    let me = me();
    if !TLB_MAIL[me].load(Ordering::SeqCst) {
        return;
    }
    TLB_MAIL[me].store(false, Ordering::SeqCst);
    let seen = {
        let mut b = TLB_BOX[me].lock();
        taken.append(&mut b);
        TLB_POSTED[me].load(Ordering::SeqCst)
    };
    TLB_TAKEN[me].store(seen, Ordering::SeqCst);
}

/// Whether other vCPUs posted TLB maintenance to this one that its engine has not taken
/// yet.
pub fn tlb_mail_waiting() -> bool {
    TLB_MAIL[me()].load(Ordering::SeqCst)
}

/// Broadcasts so far that waited for another vCPU, and the polls they spent waiting.
pub fn tlb_wait_stats() -> (u64, u64) {
    (
        TLB_WAITS.load(Ordering::Relaxed),
        TLB_SPINS.load(Ordering::Relaxed),
    )
}
