//! The translation contexts' return stacks and indirect branch target caches, and the
//! address-space switch that translated code performs without leaving the code cache
//! ([`InBlockSwitch`]): a guest `TTBR0`/`TTBR1`/`CONTEXTIDR` write at PL1 in a block that
//! runs under every ASID loads a shadow the host already has and this context's tables,
//! and the block goes on. Contexts that translated code switches to by itself are in the
//! [`switch_cache`].

pub mod switch_cache;

use alloc::vec;
use alloc::vec::Vec;

use super::engine::{InBlockTlb, SPACE_ASID, SPACE_FLAT};
use super::frontend::Key;
use super::host::GuestMmu;
use super::state::{GuestState, IBTC_ENTRIES, NO_ENTRY, RAS_ENTRIES};
use super::sys_call::SpaceSwitch;
use crate::cpu::{Cpu, Mode};
use crate::mmu;

/// A translation context: privilege, address space ([`Key::asid`]), with the MMU on
/// `DACR`, and whether VFP/Advanced SIMD is translated ([`Key::fp`]). Return stack and
/// target cache entries branch straight to host code, past the dispatcher's checks, so
/// each context has its own: without `fp` here, a thread whose `FPEXC.EN` the kernel had
/// cleared (Linux's lazy VFP switch) returned through an entry into a block translated
/// with the unit on and ran VFP code without the trap that loads its own registers.
pub type Ctx = (bool, u16, u32, bool);

/// The context of code with key `key` run by `cpu` (`DACR` counts only with the MMU on).
pub fn ctx_of(cpu: &Cpu, key: &Key) -> Ctx {
    let dacr = if key.asid == SPACE_FLAT {
        0
    } else {
        cpu.cp15.dacr
    };
    (key.privileged, key.asid, dacr, key.fp)
}

/// Most translation contexts whose tables are kept (a switch among them, e.g. kernel and
/// user of a few processes, keeps their entries).
const MAX_CTX_TABLES: usize = 8;

/// The shadow return stack and the indirect branch target cache of one context (pairs of
/// guest address, host address).
pub struct Tables {
    ctx: Option<Ctx>,
    ras: Vec<[u64; 2]>,
    /// The indirect branch target cache: `[guest target, host address]` per entry.
    pub ibtc: Vec<[u64; 2]>,
    /// Entries may point at dropped translations: cleared before the next use.
    stale: bool,
    last_use: u64,
}

impl Tables {
    fn new() -> Tables {
        Tables {
            ctx: None,
            // Room for a ring aligned to twice its size, plus its spare entry.
            ras: vec![[NO_ENTRY, NO_ENTRY]; 3 * RAS_ENTRIES + 1],
            ibtc: vec![[NO_ENTRY, 0]; IBTC_ENTRIES],
            stale: false,
            last_use: 0,
        }
    }

    fn clear(&mut self) {
        // Every word NO_ENTRY: the ring need not start on an entry of `ras`.
        self.ras.fill([NO_ENTRY, NO_ENTRY]);
        self.ibtc.fill([NO_ENTRY, 0]);
        self.stale = false;
    }
}

/// The tables of recent contexts; one of them is the current context's.
pub struct Contexts {
    tables: Vec<Tables>,
    cur: usize,
    /// The tables current before `cur` (a switch back and forth between two address
    /// spaces finds them first).
    prev: usize,
    clock: u64,
}

impl Contexts {
    /// One empty set of tables, of no context yet.
    pub fn new() -> Contexts {
        Contexts {
            tables: vec![Tables::new()],
            cur: 0,
            prev: 0,
            clock: 0,
        }
    }

    /// The current context's tables.
    pub fn current(&mut self) -> &mut Tables {
        &mut self.tables[self.cur]
    }

    /// Forgets every return stack and target cache entry (their host addresses may point
    /// at translations that are gone): the current context's now, the others' before
    /// their next use; and so `state`'s switch cache, which would reach them unchecked.
    pub fn clear(&mut self, state: &mut GuestState) {
        for t in self.tables.iter_mut() {
            t.stale = true;
        }
        self.tables[self.cur].clear();
        switch_cache::forget_all(state);
    }

    /// Makes `ctx`'s tables the current ones (recycling the least recently used, whose
    /// entry in `state`'s switch cache goes); returns whether they were not already.
    pub fn select(&mut self, ctx: Ctx, state: &mut GuestState) -> bool {
        if self.tables[self.cur].ctx == Some(ctx) {
            return false;
        }
        self.clock += 1;
        let found = if self.tables[self.prev].ctx == Some(ctx) {
            Some(self.prev)
        } else {
            self.tables.iter().position(|t| t.ctx == Some(ctx))
        };
        let i = match found {
            Some(i) => i,
            None if self.tables.len() < MAX_CTX_TABLES => {
                self.tables.push(Tables::new());
                self.tables.len() - 1
            }
            None => {
                let i = (0..self.tables.len())
                    .min_by_key(|&i| self.tables[i].last_use)
                    .expect("tables");
                self.tables[i].stale = true;
                switch_cache::forget_table(state, self.tables[i].ibtc.as_ptr() as u64);
                i
            }
        };
        let t = &mut self.tables[i];
        if t.stale {
            t.clear();
        }
        t.ctx = Some(ctx);
        t.last_use = self.clock;
        self.prev = self.cur;
        self.cur = i;
        true
    }

    /// The current tables' context (`None` before the first [`Contexts::select`]).
    pub fn current_ctx(&self) -> Option<Ctx> {
        self.tables[self.cur].ctx
    }

    /// Points `state`'s return stack and target cache at the current context's.
    pub fn install(&mut self, state: &mut GuestState) {
        let t = &mut self.tables[self.cur];
        let ras = t.ras.as_mut_ptr() as u64;
        let align = 2 * 16 * RAS_ENTRIES as u64;
        // The ring starts at the first suitably aligned entry of `ras`.
        state.ras_base = ras.next_multiple_of(align);
        state.ibtc_base = t.ibtc.as_mut_ptr() as u64;
        state.cur_key = t.ctx.map_or(0, switch_cache::key);
    }

    /// Records the current context, installed in `state`, in `state`'s switch cache, with
    /// the host's `TTBR0_EL1` value of its shadow (which the host has loaded; 0: nothing
    /// to load). Nothing is written when the entry holds it already.
    pub fn remember(&self, state: &mut GuestState, ttbr: u64) {
        let Some(ctx) = self.tables[self.cur].ctx else {
            return;
        };
        let key = switch_cache::key(ctx);
        let e = &state.switch_cache[switch_cache::slot(key)];
        if e.key == key
            && e.ttbr == ttbr
            && e.ibtc == state.ibtc_base
            && e.epoch == switch_cache::epoch_now(state)
        {
            return;
        }
        switch_cache::remember(state, key, ttbr, state.ras_base, state.ibtc_base);
    }

    /// Makes the tables that translated code holds (`state.ibtc_base`) the current ones
    /// again, if translated code switched context by itself through the switch cache
    /// since they were installed; returns whether it had (the host's shadow changed with
    /// them).
    pub fn sync(&mut self, state: &GuestState) -> bool {
        if state.cur_key == self.tables[self.cur].ctx.map_or(0, switch_cache::key) {
            return false;
        }
        let Some(i) = self
            .tables
            .iter()
            .position(|t| t.ibtc.as_ptr() as u64 == state.ibtc_base)
        else {
            // Not reached: entries name live tables (`select` forgets recycled ones).
            debug_assert!(false, "switch cache entry of no tables");
            return true;
        };
        debug_assert_eq!(
            self.tables[i].ctx.map(switch_cache::key),
            Some(state.cur_key)
        );
        self.clock += 1;
        self.tables[i].last_use = self.clock;
        self.prev = self.cur;
        self.cur = i;
        true
    }
}

impl Default for Contexts {
    fn default() -> Contexts {
        Contexts::new()
    }
}

/// The engine's side of an address-space switch inside a block (see
/// [`SpaceSwitch`]), for one entry into the code cache.
pub struct InBlockSwitch<'a> {
    /// The tables of the contexts.
    pub contexts: &'a mut Contexts,
    /// What the host was last told about the guest's stage 1 (hosts that mirror it);
    /// `None` once translated code switched the host's shadow itself (switch cache).
    pub host_mmu: &'a mut Option<GuestMmu>,
    /// The host mirrors the guest's stage 1, and this routine switches its shadow to one
    /// it already has (see [`CodeMemory::in_code_switch`](super::host::CodeMemory::in_code_switch)).
    pub mirror: Option<fn(&GuestMmu) -> bool>,
    /// The host's `TTBR0_EL1` value of the loaded shadow, for the switch cache (see
    /// [`CodeMemory::loaded_space`](super::host::CodeMemory::loaded_space)).
    pub loaded: Option<fn() -> u64>,
    /// Whether the host mirrors the guest's stage 1 at all.
    pub mirrors: bool,
    /// Switches performed (the engine's `Stats::switches_in_block`).
    pub switches: &'a mut u64,
    /// The guest's TLB maintenance inside the block.
    pub tlb: InBlockTlb<'a>,
}

impl InBlockSwitch<'_> {
    /// Has the host load the shadow of `cpu`'s state (the registers of a translation
    /// write just performed, or a new privilege), one it holds already, unless it is the
    /// one the host was last told; false when the host has none (nothing changed).
    fn host_to(&mut self, cpu: &Cpu, state: &GuestState) -> bool {
        if self.contexts.sync(state) {
            // Translated code switched by itself since: the host's view is the cache
            // entry's, which need not be what `host_mmu` says.
            *self.host_mmu = None;
        }
        if !self.mirrors {
            return true;
        }
        // `TTBCR`, `DACR`, `SCTLR` leave translated code when they change; with the
        // MMU off the host's view stays `GuestMmu::OFF` (every privilege and ASID).
        let g = GuestMmu::of(cpu);
        if *self.host_mmu != Some(g) {
            if g.on() && !self.mirror.is_some_and(|mirror| mirror(&g)) {
                return false;
            }
            *self.host_mmu = Some(g);
        }
        true
    }

    /// The switch cache learns the context just made current (the host's shadow of it is
    /// loaded).
    fn remember(&mut self, state: &mut GuestState) {
        let ttbr = match *self.host_mmu {
            Some(g) if g.on() => match self.loaded {
                Some(loaded) => loaded(),
                None => return,
            },
            _ => 0,
        };
        self.contexts.remember(state, ttbr);
    }
}

impl SpaceSwitch for InBlockSwitch<'_> {
    fn switch(&mut self, cpu: &Cpu, state: &mut GuestState) -> bool {
        if !self.host_to(cpu, state) {
            return false;
        }
        // The writes change the address space only: the privilege, `DACR`, the FP unit
        // and whether the MMU is on stay the block's.
        let Some((privileged, asid, dacr, fp)) = self.contexts.current_ctx() else {
            return false;
        };
        let new = if asid == SPACE_FLAT {
            SPACE_FLAT
        } else {
            SPACE_ASID | mmu::asid(&cpu.cp15) as u16
        };
        if self.contexts.select((privileged, new, dacr, fp), state) {
            self.contexts.install(state);
        }
        self.remember(state);
        *self.switches += 1;
        true
    }

    fn tlb_maintenance(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> bool {
        self.tlb.apply(cpu, state)
    }

    fn privilege(&mut self, cpu: &Cpu, fp: bool, state: &mut GuestState) -> bool {
        // The address space and `DACR` stay the block's; a change of the FP unit's
        // state leaves (the dispatcher sets the host's up on entry).
        if self.contexts.sync(state) {
            *self.host_mmu = None;
        }
        let Some((_, asid, dacr, old_fp)) = self.contexts.current_ctx() else {
            return false;
        };
        let privileged = cpu.mode != Mode::Usr;
        if fp != old_fp || !self.host_to(cpu, state) {
            return false;
        }
        if self.contexts.select((privileged, asid, dacr, fp), state) {
            self.contexts.install(state);
        }
        self.remember(state);
        true
    }
}
