//! Shadow stage 1 (issue 17 stage C): the guest's short-descriptor or LPAE tables mirrored
//! into AArch64 stage-1 tables, so that translated code reaches guest virtual address `va`
//! with one host access at host VA `va`.
//!
//! - One shadow per (guest ASID, guest privilege, `DACR` with short descriptors): its
//!   permissions are exactly the guest's for that privilege and domain access (PL0 code
//!   runs on the PL0 shadow, so `LDREX`/`STREX`/`LDM` of user code need no unprivileged
//!   host forms; A64 cannot express "PL1 read/write, PL0 read-only" in one descriptor,
//!   two shadows can). Each has its own host ASID (`TTBR0_EL1.ASID`, 8 bits, `TCR_EL1.A1`
//!   = 0): an address-space switch, a mode change or a `DACR` write (Linux's software PAN)
//!   is a `TTBR0_EL1` write, not a flush.
//! - Filled lazily: a translation, access-flag or permission fault of translated code at
//!   a guest address walks the guest's tables (`dbt_armv7::mmu::walk`, reading guest
//!   memory through the physical window) in the EL1 vector, installs a 4 KiB page (or a
//!   2 MiB block where the guest maps the whole 2 MiB uniformly: [`block_fill`]) and
//!   retries the access, without leaving translated code. A walk that faults or an
//!   access the guest does not permit is not filled: the engine then runs the
//!   instruction in the interpreter, which raises the guest's exact abort.
//! - Invalidated on the guest's TLB maintenance (`TLBIALL`: every shadow; `TLBIASID`: that
//!   ASID's; `TLBIMVA*`: that page in every shadow that can hold it ([`regions`]: one with
//!   entries in the page's 2 MiB region, and of that ASID or with global entries there),
//!   and every page filled from a guest section, supersection, large page or LPAE block
//!   holding it), on `TTBCR` writes and on
//!   `SCTLR` changes that change permissions (`AFE`, `WXN`). `TTBR`/`CONTEXTIDR` writes
//!   select another shadow and drop nothing: as the guest's own TLB, the shadow keeps an
//!   ASID's translations until the guest invalidates them. Translated code switches to a
//!   shadow this vCPU already has without leaving the code cache ([`switch_in_code`]).
//! - Code pages (by guest physical page) are read-only in every shadow that maps them
//!   (a reverse map finds the aliases), so self-modifying code is still detected.
//! - Guest virtual addresses are 32-bit: only level-1 entries 0-3 of a shadow hold guest
//!   mappings; the runtime's region and the physical window are the fixed entries every
//!   root carries (the flat map's level-1 entries above 4 GiB). The guest cannot map
//!   them.
//! - SMP: every vCPU has its own set of shadows (its own [`State`], own lock) and its own
//!   range of host ASIDs ([`set_vcpus`]), because the guest's TLB state is per PE (its
//!   `TTBR`s, `TTBCR`, `CONTEXTIDR`, `DACR`, mode) and a fill is the hot path: it takes
//!   only its own vCPU's lock, uncontended unless another vCPU is invalidating. The guest's
//!   TLB maintenance from any vCPU is applied to every vCPU's shadows at once by the vCPU
//!   that performs it ([`maintenance`]: a non-current shadow is dropped, the running one of
//!   another vCPU is emptied in place, break-before-make with `TLBI ... IS`), so it is
//!   complete for data accesses before the guest's `MCR` retires; the other vCPUs'
//!   engines are told through [`crate::smp::broadcast_tlb`]. Lock order: a vCPU's state
//!   lock, then [`PROTECTED`]; [`protect`] takes `PROTECTED` alone, then each state lock
//!   in turn; nothing holds two state locks.

use crate::smp::Mutex;
use aarch64_cpu::registers::{Readable, TTBR0_EL1};
use alloc::boxed::Box;
use alloc::collections::btree_map::Entry;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use dbt_armv7::mmu::{self, perm, TlbMaintenance};
use dbt_armv7::translate::host::GuestMmu;

use crate::smp::{me, MAX_VCPUS};

mod block_fill;
mod granules;
mod regions;
use granules::Granules;
use regions::{bits, region, Regions};

use super::Table;

/// Most shadows of one vCPU at once (host ASID 0 is the flat map's; a vCPU's shadows use
/// [`per_vcpu`] host ASIDs of the 255 others, 8-bit ASIDs).
const MAX_SHADOWS: usize = 64;
/// Most translation tables the shadows of all vCPUs hold together (4 KiB each, shared out
/// equally) before a vCPU drops all of its own.
const MAX_TABLES: usize = 4096;
/// `SCTLR` bits that change the permissions or memory types a walk gives (`AFE`, `TRE`,
/// `WXN`).
const SCTLR_SHAPE: u32 = (1 << 29) | (1 << 28) | (1 << 19);

/// Software bit (descriptor bit 55, ignored by hardware): the guest permits writes, the
/// page is read-only only while it holds translated code.
const SW_GUEST_WRITE: u64 = 1 << 55;

/// Counters of the shadow's work.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Pages filled on a fault of translated code.
    pub fills: u64,
    /// Faults not filled (the guest's own fault, a write to a code page, a device).
    pub declined: u64,
    /// Shadows created (or re-created after being dropped).
    pub created: u64,
    /// Switches of `TTBR0_EL1` between shadows.
    pub switches: u64,
    /// Shadows dropped by TLB maintenance, recycling or a table change.
    pub dropped: u64,
    /// Faults repeated right after their fill (left to the interpreter).
    pub refills: u64,
    /// Fills (of `fills`) that installed a 2 MiB block.
    pub block_fills: u64,
}

/// What a shadow mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Space {
    asid: u8,
    privileged: bool,
    /// `DACR` (short descriptors; 0 with LPAE).
    dacr: u32,
}

struct Shadow {
    space: Space,
    root: *mut Table,
    /// Host ASID.
    asid: u16,
    /// Changes whenever the shadow is dropped (reverse-map entries of older generations
    /// are stale).
    generation: u32,
    last_use: u64,
}

/// A shadow entry that maps a guest physical page: (shadow index, its generation, VA).
type Alias = (u8, u32, u32);

struct State {
    /// The guest's translation state for the current shadow (`None`: MMU off, flat map).
    ctx: Option<GuestMmu>,
    /// The same as a `Cp15`, for walks.
    cp15: dbt_armv7::cp15::Cp15,
    /// Shadow `i` has host ASID `asid_base + i`; `None` when free.
    shadows: Vec<Option<Shadow>>,
    /// This vCPU's first host ASID.
    asid_base: u16,
    current: Option<usize>,
    free: Vec<*mut Table>,
    tables: usize,
    /// Most tables this vCPU's shadows may hold.
    max_tables: usize,
    aliases: BTreeMap<u32, Vec<Alias>>,
    /// The same for the 2 MiB blocks, by guest physical 2 MiB frame (IPA >> 21).
    block_aliases: BTreeMap<u32, Vec<Alias>>,
    clock: u64,
    generation: u32,
    /// The last `(TTBCR, SCTLR & SCTLR_SHAPE)` shadows were filled under.
    shape: (u32, u32),
    /// The last fault filled: `(FAR, write)`.
    last_fill: Option<(u64, bool)>,
    /// Guest mappings larger than a page (sections, supersections, large pages, LPAE
    /// blocks) that pages were filled from, by [`mapping_key`] of `(virtual base, log2
    /// of the size)` -> the pages filled. The guest's TLB maintenance by one address in
    /// such a mapping invalidates all of it, so every page filled from it goes.
    blocks: BTreeMap<u64, Vec<u32>>,
    /// The sizes (bit `log2`) in `blocks`.
    block_sizes: u32,
    /// The guest virtual addresses the mappings in `blocks` cover (looked at first).
    block_granules: Granules,
    /// Which shadows can hold a translation of an address (for page-form TLB operations).
    regions: Regions,
    stats: Stats,
}

// SAFETY: the raw table pointers are the runtime's own heap memory, reached only under
// the state's lock.
unsafe impl Send for State {}

/// Each vCPU's shadows (indexed by `smp::me`).
static STATES: [Mutex<Option<State>>; MAX_VCPUS] = [const { Mutex::new(None) }; MAX_VCPUS];

/// Each vCPU's guest `Cpu` (its address; 0 before the first entry into the code cache),
/// set at each entry ([`set_guest_cpu`]): translated code writes `TTBR0`/`TTBR1` of the
/// current ASID itself (`dbt_armv7`'s `a64::ttbr_inline`), so a fill walks with the
/// table bases found there.
static GUEST_CPU: [AtomicUsize; MAX_VCPUS] = [const { AtomicUsize::new(0) }; MAX_VCPUS];

/// Advanced whenever a shadow is dropped (its root and host ASID freed): translated code
/// loads a shadow into `TTBR0_EL1` itself only from switch-cache entries of the current
/// value (`CodeMemory::switch_epoch`; issue 17, helper S).
static SWITCH_EPOCH: AtomicU32 = AtomicU32::new(0);

/// Guest physical pages that hold translated code (read-only in every shadow of every
/// vCPU, and in those filled later).
static PROTECTED: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// vCPUs of the VM (from the device tree), for the share of host ASIDs and tables.
static VCPUS: AtomicUsize = AtomicUsize::new(1);

/// Shadows (host ASIDs) per vCPU: vCPU `v` owns host ASIDs `1 + v * n ..= (v + 1) * n`.
fn per_vcpu() -> usize {
    MAX_SHADOWS.min(255 / VCPUS.load(Ordering::Relaxed).max(1))
}

fn new_state(v: usize) -> State {
    let n = per_vcpu();
    State {
        ctx: None,
        cp15: dbt_armv7::cp15::Cp15::new(),
        shadows: (0..n).map(|_| None).collect(),
        asid_base: (1 + v * n) as u16,
        current: None,
        free: Vec::new(),
        tables: 0,
        max_tables: MAX_TABLES / VCPUS.load(Ordering::Relaxed).max(1),
        aliases: BTreeMap::new(),
        block_aliases: BTreeMap::new(),
        clock: 0,
        generation: 1,
        shape: (0, 0),
        last_fill: None,
        blocks: BTreeMap::new(),
        block_sizes: 0,
        block_granules: Granules::new(),
        regions: Regions::new(),
        stats: Stats::default(),
    }
}

/// Runs `f` on vCPU `v`'s shadows.
fn with_vcpu<T>(v: usize, f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATES[v].lock();
    f(g.get_or_insert_with(|| new_state(v)))
}

/// Runs `f` on this vCPU's shadows.
fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    with_vcpu(me(), f)
}

/// Whether translated code runs with the guest's MMU on through shadows.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns shadowing on (`on`) or off, before the guest runs.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The VM has `n` vCPUs (before any runs): each gets its own host ASIDs and table budget.
pub fn set_vcpus(n: usize) {
    VCPUS.store(n.clamp(1, MAX_VCPUS), Ordering::Relaxed);
}

/// The VM's vCPUs (1 to [`MAX_VCPUS`]).
pub fn vcpus() -> usize {
    VCPUS.load(Ordering::Relaxed)
}

/// Whether shadowing is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Counters so far, summed over the vCPUs.
pub fn stats() -> Stats {
    let mut t = Stats::default();
    for state in &STATES {
        if let Some(s) = state.lock().as_ref() {
            let s = s.stats;
            t.fills += s.fills;
            t.declined += s.declined;
            t.created += s.created;
            t.switches += s.switches;
            t.dropped += s.dropped;
            t.refills += s.refills;
            t.block_fills += s.block_fills;
        }
    }
    t
}

fn tlbi_asid(asid: u16) {
    // SAFETY: drops this regime's translations of one host ASID; barriers complete it.
    unsafe {
        core::arch::asm!("dsb ishst", "tlbi aside1is, {}", "dsb ish", "isb", in(reg) (asid as u64) << 48)
    };
}

fn tlbi_va_asid(va: u32, asid: u16) {
    // SAFETY: drops one page's translation of one host ASID.
    unsafe {
        core::arch::asm!("dsb ishst", "tlbi vae1is, {}", "dsb ish", "isb",
            in(reg) (asid as u64) << 48 | (va as u64) >> 12)
    };
}

fn tlbi_va_all(va: u32) {
    // SAFETY: drops one page's translations in every ASID.
    unsafe {
        core::arch::asm!("dsb ishst", "tlbi vaae1is, {}", "dsb ish", "isb", in(reg) (va as u64) >> 12)
    };
}

impl State {
    fn alloc_table(&mut self) -> Option<*mut Table> {
        if let Some(t) = self.free.pop() {
            // SAFETY: a table of ours, no longer reachable from any root.
            unsafe { (*t).0.fill(0) };
            return Some(t);
        }
        if self.tables >= self.max_tables {
            return None;
        }
        self.tables += 1;
        Some(Box::leak(Box::new(Table([0; 512]))) as *mut Table)
    }

    /// Frees shadow `i`'s tables and its host TLB entries.
    fn drop_shadow(&mut self, i: usize) {
        let Some(sh) = self.shadows[i].take() else {
            return;
        };
        if self.current == Some(i) {
            // Its root is in TTBR0_EL1 (the runtime runs on it too): off it before the
            // tables are freed and reused.
            super::load_flat();
            self.current = None;
        }
        // SAFETY: the root and the tables below it are ours; entries 0-3 are the only
        // guest ones.
        unsafe {
            for l1 in 0..4 {
                let e1 = (*sh.root).0[l1];
                if e1 & 3 != 3 {
                    continue;
                }
                let l2 = (e1 & super::OA_MASK) as *mut Table;
                for (j, e2) in (*l2).0.into_iter().enumerate() {
                    if e2 & 1 != 0 {
                        self.regions.forget_entries(i, l1 * 512 + j);
                    }
                    if e2 & 3 == 3 {
                        self.free.push((e2 & super::OA_MASK) as *mut Table);
                    }
                }
                self.free.push(l2);
            }
        }
        self.regions.forget_shadow(i, sh.space.asid);
        self.free.push(sh.root);
        SWITCH_EPOCH.fetch_add(1, Ordering::Relaxed);
        tlbi_asid(sh.asid);
        self.stats.dropped += 1;
    }

    fn drop_all(&mut self) {
        for i in 0..self.shadows.len() {
            self.drop_shadow(i);
        }
        self.aliases.clear();
        self.block_aliases.clear();
    }

    /// Takes the table bases that translated code of vCPU `v` may have written since the
    /// dispatcher last told this state (`TTBR0`/`TTBR1`, with LPAE too: an ASID they
    /// change came with the switch of the shadow, see [`sync_current`](Self::sync_current)
    /// and [`GUEST_CPU`]).
    fn sync_table_bases(&mut self, v: usize) {
        let cpu = GUEST_CPU[v].load(Ordering::Relaxed) as *const dbt_armv7::Cpu;
        if cpu.is_null() || self.ctx.is_none() {
            return;
        }
        // SAFETY: this vCPU's guest `Cpu`, alive while its translated code runs (a fill
        // comes from a fault of translated code), which does not change it under us.
        let c = unsafe { &(*cpu).cp15 };
        if c.lpae() != self.cp15.lpae() {
            return;
        }
        let (ttbr0, ttbr1, contextidr) = (c.ttbr0, c.ttbr1, c.contextidr);
        self.cp15.ttbr0 = ttbr0;
        self.cp15.ttbr1 = ttbr1;
        // And CONTEXTIDR, which translated code writes with the shadow (`sync_current`).
        self.cp15.contextidr = contextidr;
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.ttbr0 = ttbr0;
            ctx.ttbr1 = ttbr1;
            ctx.contextidr = contextidr;
        }
    }

    /// Makes the shadow in `TTBR0_EL1` the current one, with its privilege: translated
    /// code loads this vCPU's shadows itself from the engine's switch cache
    /// (`CodeMemory::loaded_space`), and `ctx`'s registers follow in
    /// [`sync_table_bases`](Self::sync_table_bases). Called before `current` is used.
    fn sync_current(&mut self) {
        let asid = (TTBR0_EL1.get() >> 48) as u16;
        let Some(i) = asid.checked_sub(self.asid_base).map(usize::from) else {
            return;
        };
        if self.current == Some(i) || self.ctx.is_none() {
            return;
        }
        let Some(privileged) = self
            .shadows
            .get(i)
            .and_then(Option::as_ref)
            .map(|sh| sh.space.privileged)
        else {
            return;
        };
        self.current = Some(i);
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.privileged = privileged;
        }
    }

    /// Takes `PRRR`/`NMRR` (`MAIR0`/`MAIR1` with LPAE) from vCPU `v`'s guest `Cpu`
    /// ([`GUEST_CPU`]), for the memory types of fills: the guest changes them with TLB
    /// maintenance to follow, which clears what was filled under the old values.
    fn sync_memory_attrs(&mut self, v: usize) {
        let cpu = GUEST_CPU[v].load(Ordering::Relaxed) as *const dbt_armv7::Cpu;
        if cpu.is_null() {
            return;
        }
        // SAFETY: as in `sync_table_bases`: this vCPU's guest `Cpu`, alive while its
        // translated code runs, which does not change it under us.
        let c = unsafe { &(*cpu).cp15 };
        self.cp15.prrr = c.prrr;
        self.cp15.nmrr = c.nmrr;
    }

    /// Makes the shadow of `ctx` current, creating it if needed, and loads it.
    fn activate(&mut self, ctx: GuestMmu) {
        if self.activate_existing(&ctx) {
            return;
        }
        self.ctx = Some(ctx);
        ctx.store_into(&mut self.cp15);
        let shape = (ctx.ttbcr, ctx.sctlr & SCTLR_SHAPE);
        if shape != self.shape {
            self.drop_all();
            self.shape = shape;
        }
        let space = self.space(&ctx);
        let i = self.create(space);
        self.load(i);
    }

    /// What the shadow of `ctx` mirrors (`self.cp15` holds `ctx`'s registers).
    fn space(&self, ctx: &GuestMmu) -> Space {
        Space {
            asid: mmu::asid(&self.cp15),
            privileged: ctx.privileged,
            dacr: if self.cp15.lpae() { 0 } else { ctx.dacr },
        }
    }

    /// Makes the shadow of `ctx` current and loads it if this vCPU has it already and the
    /// shadows were filled under `ctx`'s `TTBCR` and `SCTLR` shape; else changes nothing
    /// and returns false.
    fn activate_existing(&mut self, ctx: &GuestMmu) -> bool {
        self.sync_current();
        if (ctx.ttbcr, ctx.sctlr & SCTLR_SHAPE) != self.shape {
            return false;
        }
        // Only the translation registers of `cp15` ever change (it starts as
        // `Cp15::new()`): the same as `ctx.cp15()`, without building a whole `Cp15`.
        ctx.store_into(&mut self.cp15);
        let space = self.space(ctx);
        self.clock += 1;
        if let Some(sh) = self
            .current
            .and_then(|i| self.shadows[i].as_mut())
            .filter(|sh| sh.space == space)
        {
            // Loaded already (e.g. the `TTBR0` write after `CONTEXTIDR` in Linux's
            // `cpu_v7_switch_mm`: a new table base under the same ASID, which the guest's
            // TLB maintenance keeps exact): no search, no `TTBR0_EL1` write.
            sh.last_use = self.clock;
            set_ctx(&mut self.ctx, *ctx);
            return true;
        }
        let Some(i) = self
            .shadows
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.space == space))
        else {
            // Back to the registers of the current shadow.
            if let Some(old) = self.ctx {
                old.store_into(&mut self.cp15);
            }
            return false;
        };
        set_ctx(&mut self.ctx, *ctx);
        self.load(i);
        true
    }

    /// Makes shadow `i` current and loads it into `TTBR0_EL1`.
    fn load(&mut self, i: usize) {
        let sh = self.shadows[i].as_mut().expect("live shadow");
        sh.last_use = self.clock;
        let (root, asid) = (sh.root as u64, sh.asid);
        self.current = Some(i);
        self.stats.switches += 1;
        super::load_root(root, asid);
    }

    fn create(&mut self, space: Space) -> usize {
        let i = match self.shadows.iter().position(|s| s.is_none()) {
            Some(i) => i,
            None => {
                // Recycle the least recently used.
                let lru = (0..self.shadows.len())
                    .min_by_key(|&i| self.shadows[i].as_ref().map_or(0, |s| s.last_use))
                    .expect("shadows");
                self.drop_shadow(lru);
                lru
            }
        };
        let root = match self.alloc_table() {
            Some(t) => t,
            None => {
                self.drop_all();
                self.alloc_table().expect("tables free after dropping all")
            }
        };
        // SAFETY: a fresh table of ours.
        unsafe { super::shared_entries(&mut (*root).0) };
        self.generation = self.generation.wrapping_add(1);
        self.shadows[i] = Some(Shadow {
            space,
            root,
            asid: self.asid_base + i as u16,
            generation: self.generation,
            last_use: self.clock,
        });
        self.regions.note_shadow(i, space.asid);
        self.stats.created += 1;
        i
    }

    /// The level-3 entry for `va` in shadow `i`, allocating tables if `make` (a 2 MiB
    /// block there is unmapped first).
    fn entry(&mut self, i: usize, va: u32, make: bool) -> Option<*mut u64> {
        let (root, asid) = self.shadows[i].as_ref().map(|s| (s.root, s.asid))?;
        let mut table = root;
        for shift in [30u32, 21] {
            // SAFETY: `table` is one of our tables; the index is below 512.
            let e = unsafe { &mut (*table).0[((va >> shift) & 511) as usize] };
            if *e & 3 != 3 {
                if !make {
                    return None;
                }
                if *e & 1 != 0 {
                    // A block: break-before-make.
                    // SAFETY: a level-2 entry of one of our tables.
                    unsafe { core::ptr::write_volatile(e, 0) };
                    tlbi_va_asid(va, asid);
                }
                let t = self.alloc_table()?;
                *e = t as u64 | 3;
            }
            table = (*e & super::OA_MASK) as *mut Table;
        }
        // SAFETY: a level-3 table of ours.
        Some(unsafe { &mut (*table).0[((va >> 12) & 511) as usize] as *mut u64 })
    }

    /// Fills the current shadow for an access of translated code to `va` that faulted;
    /// false when the access is not one the guest's stage 1 permits as the shadow could
    /// map it (the engine then runs it in the interpreter).
    fn fill(&mut self, va: u64, write: bool) -> bool {
        let (Some(i), Some(ctx)) = (self.current, self.ctx) else {
            return false;
        };
        let Ok(va) = u32::try_from(va) else {
            return false;
        };
        let mut bus = crate::bus::GuestBus { ram: 0..0 };
        let Ok(w) = mmu::walk(&self.cp15, &mut bus, va) else {
            return false;
        };
        let (r, wr) = if ctx.privileged {
            (perm::PR, perm::PW)
        } else {
            (perm::UR, perm::UW)
        };
        let Ok(pa) = u32::try_from(w.pa_page) else {
            return false;
        };
        let page = pa >> 12;
        let guest_write = w.perms & wr != 0;
        if w.perms & r == 0 || (write && !guest_write) {
            return false;
        }
        // A block is filled only if no page of it holds translated code (`page` neither).
        if self.fill_block(i, va, &w, guest_write) {
            return true;
        }
        let writable = guest_write && !PROTECTED.lock().contains(&page);
        if write && !writable {
            return false;
        }
        let desc = super::guest_page(pa as u64, writable, w.mem)
            | if guest_write { SW_GUEST_WRITE } else { 0 };
        let Some(e) = self.entry(i, va, true).or_else(|| {
            // Out of tables: start again with this shadow alone.
            let ctx = self.ctx?;
            self.drop_all();
            self.activate(ctx);
            self.entry(self.current?, va, true)
        }) else {
            return false;
        };
        let i = self.current.expect("current shadow");
        self.regions.note_entry(i, region(va), w.global);
        // SAFETY: a level-3 entry of one of our tables.
        let old = unsafe { core::ptr::read_volatile(e) };
        if old == desc {
            return false; // nothing to fill: not a fault this shadow can fix
        }
        // SAFETY: as above.
        unsafe { core::ptr::write_volatile(e, desc) };
        let sh = self.shadows[i].as_ref().expect("live shadow");
        if old & 1 != 0 {
            tlbi_va_asid(va, sh.asid);
        } else {
            // SAFETY: barrier: the new entry is visible to the walker before the retry.
            unsafe { core::arch::asm!("dsb ishst", "isb") };
        }
        let alias = (i as u8, sh.generation, va & !0xfff);
        let list = self.aliases.entry(page).or_default();
        // The same entry filled again (after TLB maintenance dropped it): one alias.
        if list.last() != Some(&alias) {
            list.push(alias);
        }
        if w.size_log2 > 12 && w.size_log2 < 32 {
            self.record_in_mapping(va, w.size_log2, va & !0xfff);
        }
        self.stats.fills += 1;
        true
    }

    /// Records in `blocks` that the shadow entry of `filled` (a page, or a 2 MiB block)
    /// was filled from the guest mapping of `2^size_log2` bytes (`size_log2` < 32) that
    /// holds `va`, so that TLB maintenance of any address of that mapping reaches it.
    pub(super) fn record_in_mapping(&mut self, va: u32, size_log2: u8, filled: u32) {
        let base = va & !((1u32 << size_log2) - 1);
        let filled_list = match self.blocks.entry(mapping_key(base, size_log2)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                // A new mapping: its granules (set until `blocks` is cleared with them).
                self.block_granules.note(base, size_log2);
                self.block_sizes |= 1 << size_log2;
                e.insert(Vec::new())
            }
        };
        if filled_list.last() != Some(&filled) {
            filled_list.push(filled);
        }
    }

    /// The host ASID of shadow `i` if it is still the one of generation `generation`
    /// (an [`Alias`] of an older generation is stale).
    pub(super) fn live_asid(&self, i: u8, generation: u32) -> Option<u16> {
        self.shadows[i as usize]
            .as_ref()
            .filter(|s| s.generation == generation)
            .map(|s| s.asid)
    }

    /// Sets the write permission of every live alias of guest physical page `page`: off
    /// (`protect`), or back to what the guest permits.
    fn set_aliases(&mut self, page: u32, protect: bool) {
        if protect {
            self.unmap_blocks_of(page);
        }
        let Some(list) = self.aliases.remove(&page) else {
            return;
        };
        let mut keep = Vec::with_capacity(list.len());
        for (i, generation, va) in list {
            let Some(asid) = self.live_asid(i, generation) else {
                continue;
            };
            let Some(e) = self.entry(i as usize, va, false) else {
                continue;
            };
            // SAFETY: a level-3 entry of one of our tables.
            let old = unsafe { core::ptr::read_volatile(e) };
            if old & 1 == 0 || (old & super::OA_MASK) >> 12 != page as u64 {
                continue; // stale: the entry was cleared or maps another page now
            }
            keep.push((i, generation, va));
            let new = if protect {
                old | super::AP_RO
            } else if old & SW_GUEST_WRITE != 0 {
                old & !super::AP_RO
            } else {
                old
            };
            if new != old {
                // SAFETY: as above.
                unsafe { core::ptr::write_volatile(e, new) };
                tlbi_va_asid(va, asid);
            }
        }
        self.aliases.insert(page, keep);
    }

    /// Empties shadow `i` in place (it keeps its root and host ASID: it may be the one
    /// another vCPU runs on): the guest's level-1 entries go, then the host ASID's TLB
    /// entries (Inner Shareable, complete at the `DSB`), then the tables below are freed.
    fn empty_shadow(&mut self, i: usize) {
        let Some(sh) = self.shadows[i].as_ref() else {
            return;
        };
        let (root, asid) = (sh.root, sh.asid);
        let mut below = Vec::new();
        // SAFETY: the root and the tables below it are ours; entries 0-3 are the only
        // guest ones.
        unsafe {
            for l1 in 0..4 {
                let e1 = core::ptr::read_volatile(&(*root).0[l1]);
                if e1 & 3 != 3 {
                    continue;
                }
                core::ptr::write_volatile(&mut (*root).0[l1], 0);
                let l2 = (e1 & super::OA_MASK) as *mut Table;
                for (j, e2) in (*l2).0.into_iter().enumerate() {
                    if e2 & 1 != 0 {
                        self.regions.forget_entries(i, l1 * 512 + j);
                    }
                    if e2 & 3 == 3 {
                        below.push((e2 & super::OA_MASK) as *mut Table);
                    }
                }
                below.push(l2);
            }
        }
        tlbi_asid(asid);
        // No walk can use them any more: reusable.
        self.free.extend(below);
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        let sh = self.shadows[i].as_mut().expect("live shadow");
        sh.generation = generation;
        self.stats.dropped += 1;
    }

    /// Clears the entry of guest virtual page `va` in every shadow that can hold one the
    /// page-form TLB operation of `asid` (`None`: every ASID) removes.
    fn clear_page(&mut self, va: u32, asid: Option<u8>) {
        for i in bits(self.regions.holders(va, asid)) {
            if let Some(e) = self.leaf(i, va) {
                // SAFETY: a level-3 entry or level-2 block of one of our tables.
                unsafe { core::ptr::write_volatile(e, 0) };
            }
        }
    }

    /// Clears the entries of the guest virtual pages `pages` (those filled from one guest
    /// block mapping) as [`clear_page`](Self::clear_page) does, and their host TLB
    /// entries.
    fn clear_pages(&mut self, pages: &[u32], asid: Option<u8>) {
        for &va in pages {
            self.clear_page(va, asid);
        }
        for &va in pages {
            tlbi_va_all(va);
        }
    }

    /// Applies TLB maintenance `op` to these shadows (performed by this vCPU, `mine`, or
    /// by another). Shadows of other vCPUs, and this vCPU's current one, are emptied in
    /// place; the page forms clear the page's entry in every shadow that can hold it
    /// (global pages are copied into each), and every page filled from a guest block
    /// mapping that holds the address (with their host TLB entries); the caller
    /// invalidates the host TLB for the page.
    fn maintenance(&mut self, op: TlbMaintenance, mine: bool) {
        match op {
            TlbMaintenance::All => {
                for i in 0..self.shadows.len() {
                    if mine && self.current != Some(i) {
                        self.drop_shadow(i);
                    } else {
                        self.empty_shadow(i);
                    }
                }
                if mine {
                    self.aliases.clear();
                    self.block_aliases.clear();
                }
                self.blocks.clear();
                self.block_sizes = 0;
                self.block_granules.clear();
            }
            TlbMaintenance::Asid(a) => {
                for i in 0..self.shadows.len() {
                    if self.shadows[i].as_ref().is_some_and(|s| s.space.asid == a) {
                        if mine && self.current != Some(i) {
                            self.drop_shadow(i);
                        } else {
                            self.empty_shadow(i);
                        }
                    }
                }
            }
            TlbMaintenance::Page { va, .. } | TlbMaintenance::PageAllAsids(va) => {
                let asid = match op {
                    TlbMaintenance::Page { asid, .. } => Some(asid),
                    _ => None,
                };
                self.clear_page(va, asid);
                let mut sizes = if self.block_granules.holds(va) {
                    self.block_sizes
                } else {
                    0
                };
                while sizes != 0 {
                    let log2 = sizes.trailing_zeros() as u8;
                    sizes &= sizes - 1;
                    let key = mapping_key(va & !((1u32 << log2) - 1), log2);
                    // Emptied, not removed: the mapping's next fills reuse the list.
                    let Some(list) = self.blocks.get_mut(&key).filter(|l| !l.is_empty()) else {
                        continue;
                    };
                    let mut pages = core::mem::take(list);
                    self.clear_pages(&pages, asid);
                    pages.clear();
                    if let Some(list) = self.blocks.get_mut(&key) {
                        *list = pages;
                    }
                }
            }
        }
    }
}

/// The key of the guest mapping of `2^log2` bytes at `base` in `State::blocks` (one
/// integer: a tuple key's comparisons cost about twice as much in the search, which TLB
/// maintenance by address runs once per mapping size).
fn mapping_key(base: u32, log2: u8) -> u64 {
    u64::from(base) << 8 | u64::from(log2)
}

/// `*slot = Some(ctx)`, field by field when it holds one (the runtime's opt-level "s"
/// makes a whole-struct copy a byte-wise `memcpy` call, a sixth of an address-space
/// switch).
fn set_ctx(slot: &mut Option<GuestMmu>, ctx: GuestMmu) {
    match slot {
        Some(c) => {
            c.ttbr0 = ctx.ttbr0;
            c.ttbr1 = ctx.ttbr1;
            c.ttbcr = ctx.ttbcr;
            c.dacr = ctx.dacr;
            c.sctlr = ctx.sctlr;
            c.contextidr = ctx.contextidr;
            c.privileged = ctx.privileged;
        }
        None => *slot = Some(ctx),
    }
}

/// Translated code is about to run in `ctx`: loads its shadow (the flat map with the
/// guest's MMU off).
pub fn switch(ctx: &GuestMmu) {
    with(|s| {
        if !ctx.on() {
            s.ctx = None;
            s.current = None;
            super::load_flat();
            return;
        }
        s.activate(*ctx);
    })
}

/// Translated code switches address space to `ctx` without leaving the code cache
/// (`CodeMemory::in_code_switch`): loads its shadow if this vCPU has it already and no
/// other vCPU's TLB maintenance waits for this one's engine (which drops translations
/// only at a dispatch); else changes nothing and returns false ([`switch`] follows, at
/// the dispatcher).
pub fn switch_in_code(ctx: &GuestMmu) -> bool {
    ctx.on() && !crate::smp::tlb_mail_waiting() && with(|s| s.activate_existing(ctx))
}

/// The counter advanced whenever a shadow is dropped (`CodeMemory::switch_epoch`).
pub fn switch_epoch() -> &'static AtomicU32 {
    &SWITCH_EPOCH
}

/// This vCPU's translated code is entered with guest `Cpu` `cpu` (its address, as in
/// `GuestState::cpu`): fills read the table bases from it ([`GUEST_CPU`]).
pub fn set_guest_cpu(cpu: u64) {
    GUEST_CPU[me()].store(cpu as usize, Ordering::Relaxed);
}

/// Applies the guest's TLB maintenance `op`, performed by this vCPU, to the shadows of
/// every vCPU (the operation may be an Inner Shareable one; a local one invalidates more
/// than it must, which the architecture allows), then tells the other vCPUs' engines and
/// waits until each has dropped its translations or is not running guest code
/// ([`crate::smp::broadcast_tlb`]): when this returns, no vCPU can use a translation
/// that `op` removed.
pub fn maintenance(op: TlbMaintenance) {
    let me = me();
    for (v, state) in STATES.iter().enumerate().take(vcpus()) {
        let mut g = state.lock();
        if let Some(s) = g.as_mut() {
            if v == me {
                s.sync_current();
            }
            s.maintenance(op, v == me);
        }
    }
    if let TlbMaintenance::Page { va, .. } | TlbMaintenance::PageAllAsids(va) = op {
        tlbi_va_all(va);
    }
    if vcpus() > 1 {
        crate::smp::broadcast_tlb(op);
    }
}

/// [`maintenance`] from inside translated code (`CodeMemory::in_code_tlb_maintenance`):
/// returns whether it may go on, i.e. no other vCPU's broadcast maintenance waits for this
/// one's engine (while [`maintenance`] waited for the others this vCPU counted as not
/// running guest code, so another vCPU's broadcast may have returned without waiting for
/// it: its engine takes that mail at its next dispatch, before more guest code runs).
pub fn maintenance_in_code(op: TlbMaintenance) -> bool {
    maintenance(op);
    !crate::smp::tlb_mail_waiting()
}

/// Write-protects guest physical page `page` (code was translated from it) in every shadow
/// that maps it, and in those filled later, or makes it writable again.
pub fn protect(page: u32, on: bool) {
    {
        let mut p = PROTECTED.lock();
        if on {
            p.insert(page);
        } else {
            p.remove(&page);
        }
    }
    // A fill racing with this one either saw the page protected, or recorded its alias
    // under its vCPU's lock before this takes it.
    for state in STATES.iter().take(vcpus()) {
        if let Some(s) = state.lock().as_mut() {
            s.set_aliases(page, on);
        }
    }
}

/// From the EL1 vector: fills the current shadow for translated code's access to `far`
/// (`write`: a store) that took a translation, access-flag or permission fault. True: the
/// access can be retried.
///
/// Never inlined: the walk's locals would otherwise grow `dbt_rt_exception`'s frame (and
/// the callee-saved registers it saves) on every exception, not only on shadow misses.
#[inline(never)]
pub fn fill(far: u64, write: bool) -> bool {
    let v = me();
    with_vcpu(v, |s| {
        s.sync_current();
        s.sync_table_bases(v);
        s.sync_memory_attrs(v);
        // The same fault again right after a fill while the filled entry is still there:
        // it did not make the access possible (a bug, or something the shadow cannot
        // express): not filled again, so the interpreter runs the access. (Another
        // vCPU's TLB maintenance may have cleared the entry in between: filled again.)
        let filled_entry_there = s
            .current
            .and_then(|i| s.leaf(i, far as u32))
            .is_some_and(|e| {
                // SAFETY: a level-3 entry of one of our tables.
                let d = unsafe { core::ptr::read_volatile(e) };
                d & 1 != 0
            });
        let again = s.last_fill == Some((far, write)) && filled_entry_there;
        let ok = !again && s.fill(far, write);
        s.last_fill = ok.then_some((far, write));
        if again {
            s.stats.refills += 1;
            if s.stats.refills <= 4 {
                crate::console::line(format_args!(
                    "shadow: fault at {far:#x} (write {write}) again after its fill: {:#x}",
                    s.current
                        .and_then(|i| s.leaf(i, far as u32))
                        .map_or(0, |e| {
                            // SAFETY: a level-3 entry of one of our tables.
                            unsafe { core::ptr::read_volatile(e) }
                        })
                ));
            }
        }
        if !ok {
            s.stats.declined += 1;
        }
        ok
    })
}
