//! The translation contexts' return stacks and indirect branch target caches, and the
//! address-space switch that translated code performs without leaving the code cache
//! ([`InBlockSwitch`]): a guest `TTBR0`/`TTBR1`/`CONTEXTIDR` write at PL1 in a block that
//! runs under every ASID loads a shadow the host already has and this context's tables,
//! and the block goes on.

use alloc::vec;
use alloc::vec::Vec;

use super::engine::{SPACE_ASID, SPACE_FLAT};
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
    /// their next use.
    pub fn clear(&mut self) {
        for t in self.tables.iter_mut() {
            t.stale = true;
        }
        self.tables[self.cur].clear();
    }

    /// Makes `ctx`'s tables the current ones (recycling the least recently used);
    /// returns whether they were not already.
    pub fn select(&mut self, ctx: Ctx) -> bool {
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
    /// What the host was last told about the guest's stage 1 (hosts that mirror it).
    pub host_mmu: &'a mut Option<GuestMmu>,
    /// The host mirrors the guest's stage 1, and this routine switches its shadow to one
    /// it already has (see [`CodeMemory::in_code_switch`](super::host::CodeMemory::in_code_switch)).
    pub mirror: Option<fn(&GuestMmu) -> bool>,
    /// Whether the host mirrors the guest's stage 1 at all.
    pub mirrors: bool,
    /// Switches performed (the engine's `Stats::switches_in_block`).
    pub switches: &'a mut u64,
}

impl SpaceSwitch for InBlockSwitch<'_> {
    fn switch(&mut self, cpu: &Cpu, state: &mut GuestState) -> bool {
        if self.mirrors {
            let Some(host) = self.host_mmu.as_mut() else {
                return false;
            };
            // Only these registers changed since the dispatcher told the host (`TTBCR`,
            // `DACR`, `SCTLR` and the mode leave translated code when they change); with
            // the MMU off the host's view stays `GuestMmu::OFF`.
            let c = &cpu.cp15;
            if host.on()
                && (host.ttbr0 != c.ttbr0
                    || host.ttbr1 != c.ttbr1
                    || host.contextidr != c.contextidr)
            {
                let (ttbr0, ttbr1, contextidr) = (host.ttbr0, host.ttbr1, host.contextidr);
                (host.ttbr0, host.ttbr1, host.contextidr) = (c.ttbr0, c.ttbr1, c.contextidr);
                debug_assert_eq!(*host, GuestMmu::of(cpu));
                if !self.mirror.is_some_and(|mirror| mirror(host)) {
                    (host.ttbr0, host.ttbr1, host.contextidr) = (ttbr0, ttbr1, contextidr);
                    return false;
                }
            }
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
        if new != asid && self.contexts.select((privileged, new, dacr, fp)) {
            self.contexts.install(state);
        }
        *self.switches += 1;
        true
    }

    fn privilege(&mut self, cpu: &Cpu, fp: bool, state: &mut GuestState) -> bool {
        // The address space and `DACR` stay the block's; a change of the FP unit's
        // state leaves (the dispatcher sets the host's up on entry).
        let Some((_, asid, dacr, old_fp)) = self.contexts.current_ctx() else {
            return false;
        };
        let privileged = cpu.mode != Mode::Usr;
        if fp != old_fp {
            return false;
        }
        if self.mirrors {
            let Some(host) = self.host_mmu.as_mut() else {
                return false;
            };
            // With the MMU off the host's view stays `GuestMmu::OFF` (every privilege).
            if host.on() && host.privileged != privileged {
                host.privileged = privileged;
                debug_assert_eq!(*host, GuestMmu::of(cpu));
                if !self.mirror.is_some_and(|mirror| mirror(host)) {
                    host.privileged = !privileged;
                    return false;
                }
            }
        }
        if self.contexts.select((privileged, asid, dacr, fp)) {
            self.contexts.install(state);
        }
        true
    }
}
