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
//!   memory through the physical window) in the EL1 vector, installs a 4 KiB page and
//!   retries the access, without leaving translated code. A walk that faults or an
//!   access the guest does not permit is not filled: the engine then runs the
//!   instruction in the interpreter, which raises the guest's exact abort.
//! - Invalidated on the guest's TLB maintenance (`TLBIALL`: every shadow; `TLBIASID`: that
//!   ASID's; `TLBIMVA*`: that page in every shadow), on `TTBCR` writes and on `SCTLR`
//!   changes that change permissions (`AFE`, `WXN`). `TTBR`/`CONTEXTIDR` writes select
//!   another shadow and drop nothing: as the guest's own TLB, the shadow keeps an ASID's
//!   translations until the guest invalidates them.
//! - Code pages (by guest physical page) are read-only in every shadow that maps them
//!   (a reverse map finds the aliases), so self-modifying code is still detected.
//! - Guest virtual addresses are 32-bit: only level-1 entries 0-3 of a shadow hold guest
//!   mappings; the runtime's region and the physical window are the fixed entries every
//!   root carries (the flat map's level-1 entries above 4 GiB). The guest cannot map
//!   them.

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use dbt_armv7::mmu::{self, perm, TlbMaintenance};
use dbt_armv7::translate::host::GuestMmu;
use spin::Mutex;

use super::Table;

/// Most shadows at once (host ASIDs 1..=MAX_SHADOWS; 0 is the flat map's).
const MAX_SHADOWS: usize = 64;
/// Most translation tables the shadows hold together (4 KiB each) before all are dropped.
const MAX_TABLES: usize = 4096;
/// `SCTLR` bits that change the permissions a walk gives (`AFE`, `WXN`).
const SCTLR_SHAPE: u32 = (1 << 29) | (1 << 19);

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
    /// Shadow `i` has host ASID `i + 1`; `None` when free.
    shadows: Vec<Option<Shadow>>,
    current: Option<usize>,
    free: Vec<*mut Table>,
    tables: usize,
    aliases: BTreeMap<u32, Vec<Alias>>,
    protected: BTreeSet<u32>,
    clock: u64,
    generation: u32,
    /// The last `(TTBCR, SCTLR & SCTLR_SHAPE)` shadows were filled under.
    shape: (u32, u32),
    /// The last fault filled: `(FAR, write)`.
    last_fill: Option<(u64, bool)>,
    stats: Stats,
}

// SAFETY: the runtime runs one vCPU; the raw table pointers are its own heap memory.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut g = STATE.lock();
    let s = g.get_or_insert_with(|| State {
        ctx: None,
        cp15: dbt_armv7::cp15::Cp15::new(),
        shadows: (0..MAX_SHADOWS).map(|_| None).collect(),
        current: None,
        free: Vec::new(),
        tables: 0,
        aliases: BTreeMap::new(),
        protected: BTreeSet::new(),
        clock: 0,
        generation: 1,
        shape: (0, 0),
        last_fill: None,
        stats: Stats::default(),
    });
    f(s)
}

/// Whether translated code runs with the guest's MMU on through shadows (one vCPU: the
/// shadows are not made safe for several yet, so an SMP guest's MMU-on code is
/// interpreted).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns shadowing on (`on`) or off, before the guest runs.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether shadowing is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Counters so far.
pub fn stats() -> Stats {
    with(|s| s.stats)
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
        if self.tables >= MAX_TABLES {
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
                for e2 in (*l2).0 {
                    if e2 & 3 == 3 {
                        self.free.push((e2 & super::OA_MASK) as *mut Table);
                    }
                }
                self.free.push(l2);
            }
        }
        self.free.push(sh.root);
        tlbi_asid(sh.asid);
        self.stats.dropped += 1;
    }

    fn drop_all(&mut self) {
        for i in 0..MAX_SHADOWS {
            self.drop_shadow(i);
        }
        self.aliases.clear();
    }

    /// Makes the shadow of `ctx` current, creating it if needed, and loads it.
    fn activate(&mut self, ctx: GuestMmu) {
        self.ctx = Some(ctx);
        self.cp15 = ctx.cp15();
        let shape = (ctx.ttbcr, ctx.sctlr & SCTLR_SHAPE);
        if shape != self.shape {
            self.drop_all();
            self.shape = shape;
        }
        let space = Space {
            asid: mmu::asid(&self.cp15),
            privileged: ctx.privileged,
            dacr: if self.cp15.lpae() { 0 } else { ctx.dacr },
        };
        self.clock += 1;
        let found = self
            .shadows
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.space == space));
        let i = match found {
            Some(i) => i,
            None => self.create(space),
        };
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
                let lru = (0..MAX_SHADOWS)
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
            asid: i as u16 + 1,
            generation: self.generation,
            last_use: self.clock,
        });
        self.stats.created += 1;
        i
    }

    /// The level-3 entry for `va` in shadow `i`, allocating tables if `make`.
    fn entry(&mut self, i: usize, va: u32, make: bool) -> Option<*mut u64> {
        let root = self.shadows[i].as_ref()?.root;
        let mut table = root;
        for shift in [30u32, 21] {
            // SAFETY: `table` is one of our tables; the index is below 512.
            let e = unsafe { &mut (*table).0[((va >> shift) & 511) as usize] };
            if *e & 3 != 3 {
                if !make {
                    return None;
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
        let writable = guest_write && !self.protected.contains(&page);
        if w.perms & r == 0 || (write && !writable) {
            return false;
        }
        let desc =
            super::guest_page(pa as u64, writable) | if guest_write { SW_GUEST_WRITE } else { 0 };
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
        self.aliases
            .entry(page)
            .or_default()
            .push((i as u8, sh.generation, va & !0xfff));
        self.stats.fills += 1;
        true
    }

    /// Sets the write permission of every live alias of guest physical page `page`: off
    /// (`protect`), or back to what the guest permits.
    fn set_aliases(&mut self, page: u32, protect: bool) {
        let Some(list) = self.aliases.remove(&page) else {
            return;
        };
        let mut keep = Vec::with_capacity(list.len());
        for (i, generation, va) in list {
            let Some(asid) = self.shadows[i as usize]
                .as_ref()
                .filter(|s| s.generation == generation)
                .map(|s| s.asid)
            else {
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

    fn maintenance(&mut self, op: TlbMaintenance) {
        match op {
            TlbMaintenance::All => self.drop_all(),
            TlbMaintenance::Asid(a) => {
                for i in 0..MAX_SHADOWS {
                    if self.shadows[i].as_ref().is_some_and(|s| s.space.asid == a) {
                        self.drop_shadow(i);
                    }
                }
            }
            TlbMaintenance::Page { va, .. } | TlbMaintenance::PageAllAsids(va) => {
                // Every shadow: global pages are copied into each ASID's.
                for i in 0..MAX_SHADOWS {
                    if let Some(e) = self.entry(i, va, false) {
                        // SAFETY: a level-3 entry of one of our tables.
                        unsafe { core::ptr::write_volatile(e, 0) };
                    }
                }
                tlbi_va_all(va);
            }
        }
        if self.current.is_none() {
            // The current shadow went: start it again (empty) before code runs.
            if let Some(ctx) = self.ctx {
                self.activate(ctx);
            }
        }
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

/// Applies the guest's TLB maintenance.
pub fn maintenance(op: TlbMaintenance) {
    with(|s| s.maintenance(op))
}

/// Write-protects guest physical page `page` (code was translated from it) in every shadow
/// that maps it, and in those filled later, or makes it writable again.
pub fn protect(page: u32, on: bool) {
    with(|s| {
        if on {
            s.protected.insert(page);
        } else {
            s.protected.remove(&page);
        }
        s.set_aliases(page, on);
    })
}

/// From the EL1 vector: fills the current shadow for translated code's access to `far`
/// (`write`: a store) that took a translation, access-flag or permission fault. True: the
/// access can be retried.
pub fn fill(far: u64, write: bool) -> bool {
    with(|s| {
        // The same fault again right after a fill: the entry did not make the access
        // possible (a bug, or something the shadow cannot express): not filled again, so
        // the interpreter runs the access.
        let again = s.last_fill == Some((far, write));
        let ok = !again && s.fill(far, write);
        s.last_fill = ok.then_some((far, write));
        if again {
            s.stats.refills += 1;
            if s.stats.refills <= 4 {
                crate::console::line(format_args!(
                    "shadow: fault at {far:#x} (write {write}) again after its fill: {:#x}",
                    s.current
                        .and_then(|i| s.entry(i, far as u32, false))
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
