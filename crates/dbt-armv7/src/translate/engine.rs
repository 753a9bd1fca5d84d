//! [`Dbt`]: the dispatcher. It looks blocks up in the metadata cache, translates missing
//! ones into the code cache, enters translated code, links direct exits to their target
//! blocks, and hands every instruction the back end does not translate to the interpreter.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;

use super::a64::vfp_host;
use super::backend::{CodeGen, ExitSite, HostBlock, Runtime};
use super::contexts::{ctx_of, switch_cache, Contexts, InBlockSwitch};
use super::exc_assume::{ExcAssume, ExcHint};
use super::fault_sites::FaultSites;
use super::fetch_aborts::FetchAborts;
use super::frontend::{self, GuestBlock, Key};
use super::host::{CodeMemory, GuestMmu};
use super::state::{
    GuestState, EXIT_BRANCH, EXIT_BX, EXIT_FALLBACK, EXIT_FAULT, EXIT_SIDE, IBTC_ENTRIES,
    MAX_BLOCK_INSNS, NO_LINK, PREEMPT,
};
use super::sys_call::{CallCtx, SpaceSwitch, EXIT_CALL};
use crate::bus::{Bus, BusFault};
use crate::cpu::{psr, Cpu, Exit, Mode};
use crate::decode::{Insn, Op};
use crate::mmu::{self, Access, TlbMaintenance};

mod tlb_in_block;
pub use tlb_in_block::InBlockTlb;
use tlb_in_block::{HostTlb, Named};

/// `SCTLR.M`: MMU enabled.
const SCTLR_M: u32 = 1 << 0;
/// `SCTLR.A`: alignment checks on every access.
const SCTLR_A: u32 = 1 << 1;
/// Most blocks the metadata cache holds before it is flushed with the code cache, unless
/// the host sets another limit ([`Dbt::set_max_blocks`]).
pub const MAX_BLOCKS: usize = 1 << 14;
/// NZCV bits of the CPSR.
const NZCV: u32 = 0xf000_0000;

/// [`Key::asid`] of code translated with the guest's MMU off (virtual = physical).
pub const SPACE_FLAT: u16 = 0;
/// [`Key::asid`] of code translated with the MMU on from a non-global page (nG = 1) of
/// ASID `a`: `SPACE_ASID | a`.
pub const SPACE_ASID: u16 = 0x100;
/// [`Key::asid`] of code translated with the MMU on from a global page (nG = 0): valid in
/// every address space. A global and a non-global translation of the same virtual
/// address at once is a TLB conflict the guest must avoid (ARM ARM B3.9); the non-global
/// one is looked up first.
pub const SPACE_GLOBAL: u16 = 0x200;
/// Whether code translated for `key` runs under every address space: fetched with the
/// MMU off, or from a global page.
pub(super) fn any_space(key: Key) -> bool {
    key.asid & SPACE_ASID == 0
}

/// [`Block::dacr_field`] when no domain check applies (MMU off, LPAE).
const NO_DOMAIN: u8 = 0xff;

/// Counters of the engine's work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Blocks translated.
    pub blocks: u64,
    /// Guest instructions translated (static).
    pub guest_insns: u64,
    /// Host instructions emitted for them (static, stubs included).
    pub host_insns: u64,
    /// Guest instructions executed in translated code.
    pub executed_translated: u64,
    /// Guest instructions executed by the interpreter (fallback and untranslatable state).
    pub executed_interpreted: u64,
    /// Entries into the code cache from the dispatcher.
    pub entries: u64,
    /// Direct exits linked to their target block.
    pub links: u64,
    /// Links undone by invalidation.
    pub unlinks: u64,
    /// Code cache flushes (cache full).
    pub flushes: u64,
    /// Host faults in translated code mapped back to their guest instruction.
    pub faults: u64,
    /// Side exits (an instruction handed to the interpreter from inside a block).
    pub side_exits: u64,
    /// Writes to guest pages holding translated code (self-modifying code), each of which
    /// invalidated the page's translations.
    pub smc: u64,
    /// Calls from translated code into the system model that left the code cache (see
    /// [`sys_call`](super::sys_call)).
    pub system_calls: u64,
    /// Instruction-cache invalidations by the guest that dropped translations.
    pub code_invalidations: u64,
    /// TLB maintenance operations of the guest (with the MMU on they drop the
    /// translations of the pages they name).
    pub tlb_maintenance: u64,
    /// Blocks translated with the guest's MMU on.
    pub blocks_mmu_on: u64,
    /// Entries into the code cache in another translation context (privilege, address
    /// space, `DACR`) than the previous one.
    pub entries_ctx_switch: u64,
    /// Address-space switches (`TTBR0`/`TTBR1`/`CONTEXTIDR` writes) performed inside a
    /// block, without leaving translated code.
    pub switches_in_block: u64,
    /// Guest Data Aborts that the host's fault handler delivered itself
    /// ([`a64::deliver_guest_abort`](super::a64::deliver_guest_abort)), without the
    /// dispatcher and the interpreter (not counted in `faults`).
    pub aborts_delivered: u64,
    /// Guest Prefetch Aborts that translated code raised itself from a remembered verdict
    /// at an indirect branch's target-cache miss
    /// ([`FetchAborts::raise_from_code`](super::fetch_aborts::FetchAborts::raise_from_code)),
    /// without the dispatcher (counted in `executed_translated`).
    pub fetch_aborts_in_code: u64,
}

#[derive(Clone, Debug)]
struct Block {
    key: Key,
    /// Code cache offset, or `None` when the first instruction needs the interpreter.
    at: Option<usize>,
    guest_insns: u32,
    /// Guest virtual addresses `[lo, hi)` it was built from.
    guest: (u32, u32),
    /// The guest physical page (address >> 12) holding its code.
    phys: u32,
    /// Short descriptors with the MMU on: the domain of its code page and that
    /// domain's `DACR` field when it was fetched (it runs only while the field is the
    /// same); [`NO_DOMAIN`] otherwise.
    domain: u8,
    dacr_field: u8,
    exits: Vec<ExitSite>,
    /// Side table for faults: the guest PC of each instruction and where its host code
    /// starts (offset from `at`).
    pcs: Vec<u32>,
    its: Vec<u8>,
    starts: Vec<u32>,
    /// Exits of other blocks linked to this one: (block, exit index).
    incoming: Vec<(u32, u16)>,
    live: bool,
    /// The encodings it was translated from (`Insn::raw`, one per instruction).
    raws: Vec<u32>,
    /// The [`Dbt::epoch`] in which it was translated or last found unchanged (an older
    /// one also after TLB maintenance of another page of its guest block mapping).
    epoch: u32,
    /// The size of the guest mapping of its code page, log2 of bytes (12: a page).
    size_log2: u8,
    /// It runs under every address space and holds a translation-register write that may
    /// switch the address space without leaving it (`sys_call::switches_in_block`): its
    /// exits link only to blocks of every space.
    switches_space: bool,
}

/// The translator engine for one guest CPU, generic over the code generator.
pub struct Dbt<G: CodeGen> {
    gen: G,
    rt: Option<(Runtime, usize)>,
    blocks: Vec<Block>,
    map: BTreeMap<Key, u32>,
    /// A direct-mapped cache of [`Dbt::lookup`]'s answers (key, block, `map_generation`)
    /// in front of `map`'s two searches (about 290 host instructions per dispatcher
    /// entry with the MMU on: a global page's block misses its ASID's key first).
    lookup_cache: [(Key, u32, u32); LOOKUP_CACHE],
    /// Changes whenever `map` does: cached answers of older generations are stale.
    map_generation: u32,
    by_addr: BTreeMap<usize, u32>,
    /// The block [`Dbt::fault_site`] found last and its host code `[start, end)` (the next
    /// block's start when it was cached: code is allocated upwards until a flush, which
    /// clears this), so repeated faults in one block (a guest's abort loop) skip the
    /// search of `by_addr`.
    last_fault_block: Option<(usize, usize, u32)>,
    /// Loads and stores that took a guest Data Abort, by host address, for the host's
    /// fault handler to deliver the next abort itself (boxed: `state` holds its address).
    fault_sites: alloc::boxed::Box<FaultSites>,
    /// Guest pages whose fetch a valid entry refuses (Prefetch Aborts without a walk;
    /// boxed: `state` holds its address for translated code's miss path).
    fetch_aborts: alloc::boxed::Box<FetchAborts>,
    /// Blocks translated with the MMU on, by guest virtual page (address >> 12; a block
    /// never crosses a page): TLB maintenance by address drops a page's blocks without a
    /// pass over every block (Linux invalidates page by page, up to ~10^5 pages for one
    /// vmalloc purge). Holds dropped ids too, until the next flush.
    by_page: BTreeMap<u32, Vec<u32>>,
    /// Guest mappings larger than a page (sections, LPAE blocks...) that blocks were
    /// translated from: `(virtual base, log2 of the size)`. TLB maintenance by one address
    /// in such a mapping invalidates all of it: the blocks of all its pages go.
    block_maps: BTreeSet<(u32, u8)>,
    /// The sizes (bit `log2`) in `block_maps`.
    block_map_sizes: u32,
    /// Which pages `by_page` and `block_maps` may name, looked at first.
    named: Named,
    used: usize,
    state: GuestState,
    stats: Stats,
    /// The shadow return stacks and indirect branch target caches, one per recent
    /// translation context.
    contexts: Contexts,
    /// Guest pages the host write-protects because code was translated from them.
    protected: BTreeSet<u32>,
    /// Guest PCs of accesses whose host address passed 4 GiB (a guest address that
    /// wraps): translated again, and from then on, with 32-bit address arithmetic.
    wraps: BTreeSet<u32>,
    /// Whether the translations check alignment on every access (made with `SCTLR.A`
    /// set).
    strict_align: bool,
    /// What the translations' inline exception entries assume (a change flushes).
    exc: ExcAssume,
    /// The CPU state the next translation's inline exceptions specialise on.
    exc_hint: ExcHint,
    /// What the host was last told about the guest's stage 1 (hosts that mirror it).
    host_mmu: Option<GuestMmu>,
    /// [`Dbt::set_budget_is_slice`].
    slices: bool,
    /// Blocks (live or dropped) that make the metadata cache full.
    max_blocks: usize,
    /// Advanced by an invalidation of every translation's basis (the whole instruction
    /// cache, the whole TLB): a block of an older epoch is checked (its code page's
    /// mapping and its encodings) before it runs again, and translated again only if
    /// something changed. Linux invalidates the whole instruction cache whenever it maps
    /// a user page executable (`__sync_icache_dcache`), about once per page fault on
    /// code: dropping every translation each time retranslated ~10^5 blocks per 20 M
    /// guest instructions of busybox userland.
    epoch: u32,
    /// Blocks given an incoming link since the last epoch (or flush): the only ones a new
    /// epoch has links of to undo, since the last one undid every link (Linux starts one
    /// per executable page it maps, some 100 while busybox starts a command: a pass over
    /// every block slot each time cost more than the command's own instructions).
    linked: Vec<u32>,
}

/// Entries of [`Dbt::lookup`]'s direct-mapped cache.
const LOOKUP_CACHE: usize = 64;

/// Where a block's code comes from: its physical page, and (MMU on) whether the page is
/// global and its domain.
#[derive(Clone, Copy, Debug)]
struct Origin {
    phys: u32,
    global: bool,
    domain: u8,
    dacr_field: u8,
    /// The size of the guest mapping of its page, log2 of bytes (12: a page; MMU off: 12).
    size_log2: u8,
}

/// Guest memory as instruction fetch at one privilege sees it with the MMU on: each
/// read is translated by the guest's stage 1 (a fault ends the block: the interpreter
/// raises the prefetch abort).
struct Fetch<'a> {
    cpu: &'a mut Cpu,
    bus: &'a mut dyn Bus,
    user: bool,
}

impl Bus for Fetch<'_> {
    fn read(&mut self, va: u64, size: u8) -> Result<u64, BusFault> {
        let acc = Access {
            write: false,
            fetch: true,
            user: self.user,
        };
        let pa = self
            .cpu
            .translate(self.bus, va as u32, acc)
            .map_err(|_| BusFault)?;
        self.bus.read(pa, size)
    }
    fn write(&mut self, _va: u64, _size: u8, _value: u64) -> Result<(), BusFault> {
        Err(BusFault)
    }
}

/// The back end with unprivileged accesses (`LDRT` family) left to the interpreter: with
/// the MMU on, PL1 code's translated accesses are checked with PL1 permissions by the
/// host, and `LDRT` needs PL0's.
struct NoUnpriv<'a>(&'a dyn CodeGen);

impl CodeGen for NoUnpriv<'_> {
    fn supports(&self, insn: &Insn) -> bool {
        !matches!(insn.op, Op::Mem { unpriv: true, .. }) && self.0.supports(insn)
    }
    fn runtime(&self) -> (Vec<u8>, Runtime) {
        self.0.runtime()
    }
    fn translate(&self, block: &GuestBlock, at: usize, rt: &Runtime) -> HostBlock {
        self.0.translate(block, at, rt)
    }
    fn branch(&self, site: usize, target: usize) -> [u8; 4] {
        self.0.branch(site, target)
    }
}

/// The bus as the interpreter sees it inside [`Dbt::run`]: a write to a write-protected
/// code page makes it writable first and records it, so that its translations are dropped
/// after the instruction.
struct Watch<'a> {
    bus: &'a mut dyn Bus,
    mem: &'a mut dyn CodeMemory,
    protected: &'a mut BTreeSet<u32>,
    hit: Vec<u32>,
}

impl Bus for Watch<'_> {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, crate::bus::BusFault> {
        self.bus.read(pa, size)
    }
    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), crate::bus::BusFault> {
        for page in [pa >> 12, (pa + size as u64 - 1) >> 12] {
            if let Ok(p) = u32::try_from(page) {
                if self.protected.remove(&p) {
                    self.mem.unprotect_guest_page(p);
                    self.hit.push(p);
                }
            }
        }
        self.bus.write(pa, size, value)
    }
    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        self.bus.ram(pa)
    }
}

/// Continues at `pc` in the instruction set that bit 0 says (1: Thumb), as translated
/// code's exits report it.
fn set_pc_isa(cpu: &mut Cpu, pc: u32) {
    if pc & 1 != 0 {
        cpu.cpsr |= psr::T;
    } else {
        cpu.cpsr &= !psr::T;
    }
    cpu.r[15] = pc & !1;
}

impl<G: CodeGen> Dbt<G> {
    /// An engine with an empty code cache.
    pub fn new(gen: G) -> Dbt<G> {
        let fault_sites = alloc::boxed::Box::<FaultSites>::default();
        let fetch_aborts = alloc::boxed::Box::<FetchAborts>::default();
        let state = GuestState {
            fault_sites: &*fault_sites as *const FaultSites as u64,
            fetch_aborts: &*fetch_aborts as *const FetchAborts as u64,
            ..GuestState::default()
        };
        Dbt {
            gen,
            rt: None,
            blocks: Vec::new(),
            map: BTreeMap::new(),
            lookup_cache: [(
                Key {
                    pc: 0,
                    thumb: false,
                    privileged: false,
                    asid: 0,
                    fp: false,
                },
                0,
                0,
            ); LOOKUP_CACHE],
            map_generation: 1,
            by_addr: BTreeMap::new(),
            last_fault_block: None,
            fault_sites,
            fetch_aborts,
            by_page: BTreeMap::new(),
            block_maps: BTreeSet::new(),
            block_map_sizes: 0,
            named: Named::new(),
            used: 0,
            state,
            stats: Stats::default(),
            contexts: Contexts::new(),
            protected: BTreeSet::new(),
            wraps: BTreeSet::new(),
            strict_align: false,
            exc: ExcAssume::default(),
            exc_hint: ExcHint::default(),
            host_mmu: None,
            slices: false,
            max_blocks: MAX_BLOCKS,
            epoch: 0,
            linked: Vec::new(),
        }
    }

    /// Sets how many blocks (live or dropped since the last flush) the metadata cache
    /// holds before everything is flushed (default [`MAX_BLOCKS`]). A guest OS with many
    /// processes (each address space has its own translations) needs more than the
    /// default; each block costs a few hundred bytes of the host's heap.
    pub fn set_max_blocks(&mut self, n: usize) {
        self.max_blocks = n.max(1);
    }

    /// With `on`, the budget of [`Dbt::run`] is a time slice, not an exact count: once
    /// it has run something, `run` returns [`Exit::Budget`] at the first block that the
    /// budget left does not cover, instead of interpreting the instructions up to the
    /// budget. For a host that only looks at interrupts between calls (the in-VM
    /// runtime): the next slice then starts at that block, not at an instruction in the
    /// middle of one, which would be interpreted up to the end of this slice (some 500
    /// host instructions each) and then translated as a block of its own. Off by default
    /// (the interpreter's and the tests' exact budgets).
    pub fn set_budget_is_slice(&mut self, on: bool) {
        self.slices = on;
    }

    /// Forgets every return stack and target cache entry (see [`Contexts::clear`]).
    fn clear_tables(&mut self) {
        self.contexts.clear(&mut self.state);
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        Stats {
            aborts_delivered: self.fault_sites.delivered,
            fetch_aborts_in_code: self.fetch_aborts.delivered,
            ..self.stats
        }
    }

    /// Whether translated code may run in this CPU state. Not translated: a start inside
    /// an IT block (blocks hold whole IT blocks), big-endian data (`CPSR.E`: the
    /// interpreter runs it), `CPSR.J` set (inline exception entries assume it clear), and the MMU on unless the host mirrors the guest's stage 1
    /// (`mirrors`). With `SCTLR.A` set, translations check alignment (see
    /// `strict_align`).
    fn translatable(cpu: &Cpu, mirrors: bool) -> bool {
        cpu.it == 0
            && cpu.cpsr & (psr::E | psr::J) == 0
            && (mirrors || cpu.cp15.sctlr & SCTLR_M == 0)
            && (!cpu.irq_line || cpu.flag(psr::I))
            && (!cpu.fiq_line || cpu.flag(psr::F))
    }

    /// The key of the code at the CPU's PC in its current address space: with the MMU
    /// on, the ASID's (non-global pages; see [`SPACE_GLOBAL`] for global ones).
    fn key(cpu: &Cpu) -> Key {
        let asid = if cpu.cp15.sctlr & SCTLR_M == 0 {
            SPACE_FLAT
        } else {
            SPACE_ASID | mmu::asid(&cpu.cp15) as u16
        };
        Key {
            pc: cpu.r[15],
            thumb: cpu.thumb(),
            privileged: cpu.mode != Mode::Usr,
            asid,
            fp: vfp_host::fp_translatable(cpu),
        }
    }

    /// The block translated for `key`: the address space's own, else (MMU on) a global
    /// page's.
    fn lookup(&mut self, key: Key) -> Option<u32> {
        let slot = (key.pc as usize >> 1 ^ key.asid as usize) % LOOKUP_CACHE;
        let (k, id, generation) = self.lookup_cache[slot];
        if generation == self.map_generation && k == key {
            return Some(id);
        }
        let found = self.search(key);
        if let Some(id) = found {
            self.lookup_cache[slot] = (key, id, self.map_generation);
        }
        found
    }

    /// Makes every cached [`Dbt::lookup`] answer stale (`map` changed).
    fn map_changed(&mut self) {
        self.map_generation = self.map_generation.wrapping_add(1);
        if self.map_generation == 0 {
            // Wrapped: no entry of 2^32 changes ago may match again.
            for e in self.lookup_cache.iter_mut() {
                e.2 = 0;
            }
            self.map_generation = 1;
        }
    }

    /// [`Dbt::lookup`] in `map` itself.
    fn search(&self, key: Key) -> Option<u32> {
        self.map.get(&key).copied().or_else(|| {
            (key.asid != SPACE_FLAT)
                .then(|| {
                    self.map.get(&Key {
                        asid: SPACE_GLOBAL,
                        ..key
                    })
                })
                .flatten()
                .copied()
        })
    }

    /// Where the code at `key.pc` comes from, `None` if its fetch faults (the interpreter
    /// raises the prefetch abort) or it lies outside the 32-bit physical space.
    fn origin(cpu: &mut Cpu, bus: &mut dyn Bus, key: Key) -> Option<Origin> {
        if key.asid == SPACE_FLAT {
            return Some(Origin {
                phys: key.pc >> 12,
                global: false,
                domain: NO_DOMAIN,
                dacr_field: NO_DOMAIN,
                size_log2: 12,
            });
        }
        let acc = Access {
            write: false,
            fetch: true,
            user: !key.privileged,
        };
        let pa = cpu.translate(bus, key.pc, acc).ok()?;
        let w = mmu::walk(&cpu.cp15, bus, key.pc).ok()?;
        let short = !cpu.cp15.lpae();
        Some(Origin {
            phys: u32::try_from(pa >> 12).ok()?,
            global: w.global,
            size_log2: w.size_log2,
            domain: if short { w.domain } else { NO_DOMAIN },
            dacr_field: if short {
                ((cpu.cp15.dacr >> (2 * w.domain)) & 3) as u8
            } else {
                NO_DOMAIN
            },
        })
    }

    /// Whether block `id` may run under the current `DACR` (its domain's field is the one
    /// it was fetched under).
    fn domain_ok(&self, cpu: &Cpu, id: u32) -> bool {
        let b = &self.blocks[id as usize];
        b.dacr_field == NO_DOMAIN || ((cpu.cp15.dacr >> (2 * b.domain)) & 3) as u8 == b.dacr_field
    }

    /// Runs at most `budget` guest instructions, translated where possible, and returns
    /// as [`Cpu::run`] does. The guest state lives in `cpu` between calls.
    pub fn run(
        &mut self,
        cpu: &mut Cpu,
        bus: &mut dyn Bus,
        mem: &mut dyn CodeMemory,
        budget: u64,
    ) -> Exit {
        let (rt, _) = self.runtime(mem);
        // Remembered Data Abort verdicts hold host addresses in the previous run's bus.
        self.fault_sites.new_run();
        let mirrors = mem.mirrors_guest_mmu();
        let in_code_switch = if mirrors { mem.in_code_switch() } else { None };
        // TLB maintenance inside a block: the host's side, asked once.
        let host_tlb = HostTlb::of(mem);
        // Inline TTBR0/TTBR1 writes: the host walks with the guest's registers, if any.
        self.state.inline_ttbr = (!mirrors || in_code_switch.is_some()) as u32;
        // The switch cache: contexts translated code switches to by itself.
        let (loaded, epoch) = match (in_code_switch.and(mem.loaded_space()), mem.switch_epoch()) {
            (Some(loaded), Some(epoch)) => (Some(loaded), epoch),
            _ => (None, &switch_cache::NO_EPOCH),
        };
        self.state.switch_epoch = epoch as *const core::sync::atomic::AtomicU32 as u64;
        let mut left = budget;
        let mut link_from: Option<(u32, u16)> = None;
        let mut indirect_to = false;
        loop {
            if left == 0 {
                return Exit::Budget;
            }
            if mirrors {
                // Another PE's broadcast TLB maintenance: honoured before any more guest
                // code runs here (the host waits for this before that PE continues).
                while let Some(op) = mem.remote_tlb_maintenance() {
                    // The interpreter's TLB too: it fetches the code it translates.
                    cpu.tlb.flush();
                    self.drop_translations_of(mem, op);
                    link_from = None;
                    indirect_to = false;
                }
            }
            // The interrupt inputs now, not as the host last set them: a line that rose
            // since (while the guest had it masked, then unmasked it with `CPS` or `MSR`,
            // which leave translated code) is taken at this block boundary, as the
            // interpreter would before its next instruction; a raised line also makes a
            // translated exception return that may unmask it leave (`lines_raised`), so
            // it is sampled with both masked too.
            cpu.sample_interrupt_lines();
            if !Self::translatable(cpu, mirrors) {
                link_from = None;
                indirect_to = false;
                if let Some(e) = self.interpret(cpu, bus, mem, &mut left) {
                    return e;
                }
                continue;
            }
            let mut key = Self::key(cpu);
            if (cpu.cp15.sctlr & SCTLR_A != 0) != self.strict_align {
                // SCTLR.A changed: translations check alignment, or do not.
                self.strict_align = !self.strict_align;
                self.flush();
                link_from = None;
                indirect_to = false;
            }
            let exc = ExcAssume::of(cpu);
            if exc != self.exc {
                // Translated exception entries assume it: translate them again (if any).
                self.exc = exc;
                if !self.blocks.is_empty() {
                    self.flush();
                }
                link_from = None;
                indirect_to = false;
            }
            if let Some(ifsr) = self.fetch_aborts.verdict(cpu, key.pc) {
                // A branch to a page whose fetch the guest's valid entry refuses: the
                // Prefetch Abort, as the interpreter's fetch would raise it.
                if cpu.take_fetch_abort(ifsr) {
                    left -= 1;
                    self.stats.executed_interpreted += 1;
                    link_from = None;
                    indirect_to = false;
                    if left == 0 || !Self::translatable(cpu, mirrors) {
                        continue;
                    }
                    // Straight on to the vector's block: no guest instruction ran since
                    // this pass polled the TLB mailbox and sampled the interrupt lines,
                    // and an exception entry changes nothing `SCTLR.A` or `ExcAssume`
                    // depend on.
                    key = Self::key(cpu);
                }
            }
            let found = match self.lookup(key) {
                Some(id) if self.blocks[id as usize].epoch != self.epoch => {
                    // Translated before the last invalidation of everything: it runs if
                    // its code and (MMU on) its code page's mapping are the same.
                    link_from = None;
                    indirect_to = false;
                    if self.domain_ok(cpu, id) && self.unchanged(cpu, bus, id) {
                        self.blocks[id as usize].epoch = self.epoch;
                        self.note_mapping(id);
                        Some(id)
                    } else {
                        self.drop_ids(mem, vec![id]);
                        None
                    }
                }
                Some(id) if self.domain_ok(cpu, id) => Some(id),
                Some(id) => {
                    // Its domain's access changed since it was fetched: fetch it again.
                    self.drop_blocks(mem, |b, i| i == id && b.live);
                    link_from = None;
                    indirect_to = false;
                    None
                }
                None => None,
            };
            let id = match found {
                Some(id) => id,
                None if left < MAX_BLOCK_INSNS as u64 => {
                    // The end of the budget: a new block would most likely not fit and be
                    // interpreted anyway, and every instruction interpreted here starts
                    // another one (a translation per instruction at the end of a slice).
                    if self.slices && left < budget {
                        return Exit::Budget;
                    }
                    link_from = None;
                    indirect_to = false;
                    if let Some(e) = self.interpret(cpu, bus, mem, &mut left) {
                        return e;
                    }
                    continue;
                }
                None => {
                    if self.blocks.len() >= self.max_blocks {
                        self.flush();
                        link_from = None;
                        indirect_to = false;
                    }
                    let Some(origin) = Self::origin(cpu, bus, key) else {
                        // The fetch faults (cached only for a valid entry's refusal: the
                        // guest may map an unmapped page without TLB maintenance).
                        self.fetch_aborts.learn(cpu, bus, key.pc);
                        link_from = None;
                        indirect_to = false;
                        if let Some(e) = self.interpret(cpu, bus, mem, &mut left) {
                            return e;
                        }
                        continue;
                    };
                    let key = if origin.global {
                        Key {
                            asid: SPACE_GLOBAL,
                            ..key
                        }
                    } else {
                        key
                    };
                    self.exc_hint = ExcHint::of(cpu);
                    let (id, flushed) = if key.asid == SPACE_FLAT {
                        self.translate(key, origin, bus, mem)
                    } else {
                        let mut fetch = Fetch {
                            cpu: &mut *cpu,
                            bus: &mut *bus,
                            user: !key.privileged,
                        };
                        self.translate(key, origin, &mut fetch, mem)
                    };
                    if flushed {
                        link_from = None;
                        indirect_to = false;
                    }
                    id
                }
            };
            let b = &self.blocks[id as usize];
            let Some(at) = b.at.filter(|_| b.guest_insns as u64 <= left) else {
                if self.slices && b.at.is_some() && left < budget {
                    // A slice ends before a block it does not cover.
                    return Exit::Budget;
                }
                link_from = None;
                indirect_to = false;
                if let Some(e) = self.interpret(cpu, bus, mem, &mut left) {
                    return e;
                }
                continue;
            };
            if let Some((from, e)) = link_from.take() {
                self.link(mem, from, e, id);
            }
            // Whether the context changes here (the switch cache then learns the new one).
            let mut switched = false;
            if mirrors {
                let g = GuestMmu::of(cpu);
                if self.host_mmu != Some(g) {
                    mem.guest_mmu(&g);
                    self.host_mmu = Some(g);
                    switched = true;
                }
            }
            // The return stack and target cache hold blocks of one privilege, address
            // space and domain access (they bypass the dispatcher's checks).
            if self.contexts.select(ctx_of(cpu, &key), &mut self.state) {
                self.stats.entries_ctx_switch += 1;
                switched = true;
            }
            if core::mem::take(&mut indirect_to) {
                // Translated code branched here indirectly: cache the target.
                let host = mem.bytes().as_ptr() as u64 + at as u64;
                // The target as a branch writes it: Thumb with bit 0 set.
                let target = key.pc | key.thumb as u32;
                self.contexts.current().ibtc[(key.pc as usize >> 2) % IBTC_ENTRIES] =
                    [target as u64, host];
            }
            // Enter the code cache.
            super::copy::copy_u32s(&mut self.state.r, &cpu.r);
            self.state.nzcv = cpu.cpsr & NZCV;
            let start = left as i64 - MAX_BLOCK_INSNS as i64;
            self.state.budget = start;
            self.contexts.install(&mut self.state);
            // The host's shadow of this context is loaded: the switch cache learns it
            // (else it holds it already, or learns it at the next call that switches to
            // it: `InBlockSwitch`).
            if switched {
                let ttbr = match self.host_mmu {
                    Some(g) if g.on() => loaded.map(|loaded| loaded()),
                    _ => Some(0),
                };
                if let Some(ttbr) = ttbr {
                    self.contexts.remember(&mut self.state, ttbr);
                }
            }
            self.stats.entries += 1;
            let host_fp = vfp_host::enter(cpu, &mut self.state);
            // A translation-register write in a block of every space switches the
            // address space from inside the block (`sys_call::SpaceSwitch`).
            let mut space = InBlockSwitch {
                contexts: &mut self.contexts,
                host_mmu: &mut self.host_mmu,
                mirror: in_code_switch,
                loaded,
                mirrors,
                switches: &mut self.stats.switches_in_block,
                tlb: InBlockTlb::new(
                    &self.blocks,
                    &self.by_page,
                    &self.block_maps,
                    self.block_map_sizes,
                    &self.named,
                    &mut self.fetch_aborts,
                    host_tlb,
                ),
            };
            // Instructions that translated code hands to the system model find the CPU
            // and the bus through `link_site` while it runs (see `sys_call`).
            let mut call = CallCtx {
                cpu: &mut *cpu,
                bus: &mut *bus,
                exit: None,
                counted: 0,
                space: Some(&mut space as &mut dyn SpaceSwitch as *mut dyn SpaceSwitch),
            };
            self.state.link_site = &mut call as *mut CallCtx<'_> as u64;
            // Inline CP15 accesses and exception entries and returns use its fields.
            self.state.cpu = call.cpu as u64;
            // SAFETY: the cache holds the runtime and blocks this engine generated with
            // `self.gen` for the host that `mem` belongs to; `state` is ours; `call`
            // outlives the call.
            unsafe { mem.enter(rt.prologue, &mut self.state, at) };
            if self.state.budget < -(PREEMPT / 2) {
                // A host interrupt made the code leave at its next budget check
                // (`a64::preempt`): what it ran is counted as for any exit, and the
                // interrupt lines are looked at below as at every dispatch.
                self.state.budget += PREEMPT;
            }
            if space.contexts.sync(&self.state) {
                // Translated code switched context by itself (switch cache): the host
                // is told the registers again at the next entry.
                *space.host_mmu = None;
            }
            self.stats.tlb_maintenance += space.tlb.applied;
            vfp_host::leave(cpu, &self.state, host_fp);
            let mut done = (start - self.state.budget) as u64;
            if self.state.exit == EXIT_CALL {
                // The system model ran an instruction and asked to leave: the CPU holds
                // the state after it; the block's instructions before it are charged.
                let (exit, counted) = (call.exit.take(), call.counted);
                left -= done + counted;
                cpu.icount += done;
                self.stats.executed_translated += done;
                self.stats.executed_interpreted += counted;
                self.stats.system_calls += 1;
                link_from = None;
                self.code_maintenance(cpu, mem);
                if let Some(e) = exit {
                    return e;
                }
                continue;
            }
            let fault = if matches!(self.state.exit, EXIT_FAULT | EXIT_SIDE) {
                // The faulting block's own instructions before the faulting one are not
                // charged yet: its exits charge them.
                let base = mem.bytes().as_ptr() as u64;
                let (pc, it, k, thumb) =
                    self.fault_site(self.state.link_site.wrapping_sub(base) as usize);
                done += k;
                Some((pc | thumb as u32, it))
            } else {
                None
            };
            left -= done;
            cpu.icount += done;
            self.stats.executed_translated += done;
            super::copy::copy_u32s(&mut cpu.r[..15], &self.state.r[..15]);
            cpu.cpsr = (cpu.cpsr & !NZCV) | (self.state.nzcv & NZCV);
            let next = self.state.r[15];
            match self.state.exit {
                EXIT_BRANCH => {
                    // Translated code may have changed the instruction set (through the
                    // return stack or the target cache): exits carry it in bit 0.
                    set_pc_isa(cpu, next);
                    if self.state.link_site != NO_LINK {
                        // The stub put the branch's host address: make it a cache offset.
                        let base = mem.bytes().as_ptr() as u64;
                        let site = self.state.link_site.wrapping_sub(base) as usize;
                        link_from = self.exit_at(site);
                    }
                }
                EXIT_BX => {
                    cpu.bx_write_pc(next);
                    cpu.r[15] = cpu.next_pc;
                    indirect_to = true;
                }
                EXIT_FAULT | EXIT_SIDE => {
                    // The guest state is the one the faulting instruction started from: the
                    // interpreter runs it again through the bus, which raises the
                    // architectural abort or performs the device access. A write to a
                    // protected code page drops that page's translations (the interpreter's
                    // `Watch` does it for each write it performs; see below for the others).
                    let fault_exit = self.state.exit == EXIT_FAULT;
                    if fault_exit {
                        self.stats.faults += 1;
                    } else {
                        self.stats.side_exits += 1;
                    }
                    let user = cpu.mode == Mode::Usr;
                    let (pc, it) = fault.unwrap_or((next, 0));
                    if self.state.exit == EXIT_FAULT
                        && self.state.addr_hi != 0
                        && self.wraps.insert(pc & !1)
                    {
                        // The access wrapped in the host's 64-bit addressing: translate
                        // it again with 32-bit address arithmetic (once per instruction).
                        self.invalidate(mem, pc & !1, (pc & !1).wrapping_add(1));
                        link_from = None;
                    }
                    // The site, should the interpreter take the guest's Data Abort there.
                    let site = self
                        .last_fault_block
                        .filter(|_| fault_exit)
                        .map(|(_, _, id)| (id, self.state.link_site, self.stats.flushes));
                    set_pc_isa(cpu, pc);
                    cpu.it = it;
                    let interpreted = left > 0;
                    let exit = if interpreted {
                        self.interpret(cpu, bus, mem, &mut left)
                    } else {
                        None
                    };
                    // A host write fault the interpreter did not repeat as a write (a
                    // failed STREX: translated LDREX leaves the interpreter's monitor
                    // open) still unprotects the page, or translated code would fault
                    // on it forever. An instruction that took the guest's Data Abort
                    // needs no such check (its writes went through `Watch`): the
                    // guest-visible abort path walks the guest's tables once less.
                    let aborted = interpreted
                        && match exit {
                            Some(Exit::Exception(e)) => e.is_data_abort(),
                            Some(_) => false,
                            None => cpu.just_took_data_abort(pc),
                        };
                    if let Some(site) = site.filter(|_| aborted) {
                        self.learn_fault_site(site, pc, it);
                    }
                    if fault_exit && !aborted {
                        // The written page, physical (the protection is by physical page).
                        let acc = Access {
                            write: true,
                            fetch: false,
                            user,
                        };
                        let page = cpu
                            .translate(bus, next, acc)
                            .ok()
                            .and_then(|pa| u32::try_from(pa >> 12).ok());
                        if let Some(page) = page.filter(|p| self.protected.remove(p)) {
                            mem.unprotect_guest_page(page);
                            self.invalidate_phys(mem, page);
                            self.stats.smc += 1;
                            link_from = None;
                        }
                    }
                    if let Some(e) = exit {
                        return e;
                    }
                }
                EXIT_FALLBACK => {
                    set_pc_isa(cpu, next);
                    if left > 0 {
                        if let Some(e) = self.interpret(cpu, bus, mem, &mut left) {
                            return e;
                        }
                    }
                }
                x => unreachable!("exit reason {x}"),
            }
        }
    }

    fn interpret(
        &mut self,
        cpu: &mut Cpu,
        bus: &mut dyn Bus,
        mem: &mut dyn CodeMemory,
        left: &mut u64,
    ) -> Option<Exit> {
        *left -= 1;
        self.stats.executed_interpreted += 1;
        if self.protected.is_empty() {
            let exit = cpu.step(bus);
            self.code_maintenance(cpu, mem);
            return exit;
        }
        let mut w = Watch {
            bus,
            mem,
            protected: &mut self.protected,
            hit: Vec::new(),
        };
        let exit = cpu.step(&mut w);
        let hit = core::mem::take(&mut w.hit);
        for page in hit {
            self.invalidate_phys(mem, page);
            self.stats.smc += 1;
        }
        self.code_maintenance(cpu, mem);
        exit
    }

    /// Drops the translations of the code an instruction-cache invalidation by the guest
    /// (`ICIALLU`, `ICIMVAU`...) made stale, if it made any since the last call.
    /// Also applies the guest's TLB maintenance (see [`Dbt::tlb_maintenance`]).
    fn code_maintenance(&mut self, cpu: &mut Cpu, mem: &mut dyn CodeMemory) {
        if let Some((lo, hi)) = cpu.take_code_invalidation() {
            if lo == 0 && hi > u32::MAX as u64 {
                self.new_epoch(mem);
            } else {
                self.invalidate(mem, lo, hi.min(u32::MAX as u64) as u32);
            }
            self.stats.code_invalidations += 1;
        }
        if let Some(op) = cpu.cp15.take_tlb_maintenance() {
            self.tlb_maintenance(mem, op);
        }
    }

    /// Applies the guest's TLB maintenance `op`: the translations made with the MMU on
    /// from the virtual pages it names (whose mapping may have changed) are dropped, and
    /// a host that mirrors the guest's stage 1 drops its own. Translations made with the
    /// MMU off do not depend on any table and stay.
    pub fn tlb_maintenance(&mut self, mem: &mut dyn CodeMemory, op: TlbMaintenance) {
        self.stats.tlb_maintenance += 1;
        if mem.mirrors_guest_mmu() {
            mem.guest_tlb_maintenance(op);
        }
        self.drop_translations_of(mem, op);
    }

    /// Drops the translations made with the MMU on that TLB maintenance `op` names.
    fn drop_translations_of(&mut self, mem: &mut dyn CodeMemory, op: TlbMaintenance) {
        self.fetch_aborts.clear();
        self.fault_sites.forget_verdicts();
        match op {
            TlbMaintenance::All => self.new_epoch(mem),
            TlbMaintenance::Asid(a) => {
                self.drop_blocks(mem, |b, _| b.key.asid == SPACE_ASID | a as u16)
            }
            TlbMaintenance::Page { va, asid } => {
                self.drop_in_mapping(mem, va, |b| tlb_in_block::drops(b, Some(asid)))
            }
            TlbMaintenance::PageAllAsids(va) => {
                self.drop_in_mapping(mem, va, |b| tlb_in_block::drops(b, None))
            }
        }
    }

    /// Records block `id`'s guest mapping in [`Dbt::block_maps`] when it is larger than a
    /// page (translated with the MMU on).
    fn note_mapping(&mut self, id: u32) {
        let b = &self.blocks[id as usize];
        let log2 = b.size_log2;
        if b.key.asid != SPACE_FLAT && log2 > 12 && log2 < 32 {
            let base = b.key.pc & !((1u32 << log2) - 1);
            self.block_maps.insert((base, log2));
            self.named.note_mapping(base, log2);
            self.block_map_sizes |= 1 << log2;
        }
    }

    /// Applies the guest's TLB maintenance of virtual address `va` to the live blocks
    /// translated with the MMU on for which `which` holds: its page's are dropped, and if
    /// blocks were translated from a larger mapping holding `va` (a section...), which
    /// the guest's invalidation by one address invalidates whole, every other page's are
    /// checked again at their next dispatch (same physical page, global, domain,
    /// executable, same encodings: [`Dbt::unchanged`]) as after a new [`Dbt::epoch`].
    /// The mapping leaves [`Dbt::block_maps`] (unless blocks of it that `which` spares,
    /// other ASIDs', remain) until a block of it is translated or found unchanged again, so Linux invalidating a range page by page (`flush_tlb_kernel_range`
    /// over lowmem mapped by sections, its own code included) re-checks each mapping's
    /// blocks once instead of dropping and translating them again at every page.
    fn drop_in_mapping(
        &mut self,
        mem: &mut dyn CodeMemory,
        va: u32,
        which: impl Fn(&Block) -> bool,
    ) {
        self.drop_in_page(mem, va, &which);
        if !self.named.mapping(va) {
            return;
        }
        let mut sizes = self.block_map_sizes;
        while sizes != 0 {
            let log2 = sizes.trailing_zeros() as u8;
            sizes &= sizes - 1;
            let base = va & !((1u32 << log2) - 1);
            if self.block_maps.remove(&(base, log2)) {
                let last = (base as u64 + (1u64 << log2) - 1) as u32;
                let stale = self.epoch.wrapping_sub(1);
                let mut marked = Vec::new();
                let mut others = false;
                for ids in self.by_page.range(base >> 12..=last >> 12).map(|(_, v)| v) {
                    for &id in ids {
                        let b = &self.blocks[id as usize];
                        if b.live && b.epoch != stale {
                            if which(b) {
                                marked.push(id);
                            } else {
                                others = true;
                            }
                        }
                    }
                }
                if others {
                    // Blocks of other ASIDs stay valid, and a later invalidation by one
                    // of those must find the mapping.
                    self.block_maps.insert((base, log2));
                }
                if !marked.is_empty() {
                    self.clear_tables();
                }
                for id in marked {
                    self.unlink_incoming(mem, id as usize);
                    self.blocks[id as usize].epoch = stale;
                }
            }
        }
    }

    /// Drops the live blocks translated with the MMU on from guest virtual page `va` (its
    /// address) for which `which` holds, through [`Dbt::by_page`].
    fn drop_in_page(&mut self, mem: &mut dyn CodeMemory, va: u32, which: impl Fn(&Block) -> bool) {
        if !self.named.page(va) {
            return;
        }
        let Some(mut ids) = self.by_page.remove(&(va >> 12)) else {
            return;
        };
        ids.retain(|&id| self.blocks[id as usize].live);
        let (drop, keep): (Vec<u32>, Vec<u32>) = ids
            .into_iter()
            .partition(|&id| which(&self.blocks[id as usize]));
        if !keep.is_empty() {
            self.by_page.insert(va >> 12, keep);
        }
        self.drop_ids(mem, drop);
    }

    /// The runtime's offsets and end, placing it in the cache first if needed.
    fn runtime(&mut self, mem: &mut dyn CodeMemory) -> (Runtime, usize) {
        if let Some(r) = self.rt {
            return r;
        }
        let (code, rt) = self.gen.runtime();
        mem.bytes()[..code.len()].copy_from_slice(&code);
        mem.sync(0, code.len());
        let end = (code.len() + 63) & !63;
        self.rt = Some((rt, end));
        self.used = end;
        (rt, end)
    }

    /// Translates the block at `key` from `origin`, fetching through `bus` (guest
    /// virtual addresses), and records it. Returns its id and whether the code cache was
    /// flushed to make room.
    fn translate(
        &mut self,
        key: Key,
        origin: Origin,
        bus: &mut dyn Bus,
        mem: &mut dyn CodeMemory,
    ) -> (u32, bool) {
        let (rt, _) = self.runtime(mem);
        let nofp = vfp_host::NoFp(&self.gen);
        let gen: &dyn CodeGen = if key.fp { &self.gen } else { &nofp };
        let nounpriv = NoUnpriv(gen);
        let gen: &dyn CodeGen = if key.asid != SPACE_FLAT && key.privileged {
            &nounpriv
        } else {
            gen
        };
        let mut gb = frontend::discover(key, bus, gen);
        gb.strict_align = self.strict_align;
        gb.exc = self.exc;
        gb.hint = self.exc_hint;
        gb.wraps = gb
            .insns
            .iter()
            .map(|i| i.pc)
            .filter(|pc| self.wraps.contains(pc))
            .collect();
        let mut block = Block {
            key,
            at: None,
            guest_insns: gb.insns.len() as u32,
            guest: (key.pc, gb.guest_end().max(key.pc.wrapping_add(1))),
            phys: origin.phys,
            domain: origin.domain,
            dacr_field: origin.dacr_field,
            exits: Vec::new(),
            pcs: gb.insns.iter().map(|i| i.pc).collect(),
            its: gb.insns.iter().map(|i| i.it).collect(),
            starts: Vec::new(),
            incoming: Vec::new(),
            live: true,
            raws: gb.insns.iter().map(|i| i.insn.raw).collect(),
            epoch: self.epoch,
            size_log2: origin.size_log2,
            switches_space: any_space(key)
                && gb
                    .insns
                    .iter()
                    .any(|i| super::sys_call::switches_in_block(i.insn.raw)),
        };
        let mut flushed = false;
        if !gb.insns.is_empty() {
            let cap = mem.bytes().len();
            let mut hb = self.gen.translate(&gb, self.used, &rt);
            if self.used + hb.code.len() > cap {
                self.flush();
                flushed = true;
                hb = self.gen.translate(&gb, self.used, &rt);
                assert!(self.used + hb.code.len() <= cap, "code cache too small");
            }
            let at = self.used;
            mem.bytes()[at..at + hb.code.len()].copy_from_slice(&hb.code);
            mem.sync(at, hb.code.len());
            self.used = (at + hb.code.len() + 15) & !15;
            self.stats.blocks += 1;
            self.stats.blocks_mmu_on += (key.asid != SPACE_FLAT) as u64;
            self.stats.guest_insns += gb.insns.len() as u64;
            self.stats.host_insns += hb.code.len() as u64 / 4;
            block.at = Some(at);
            block.exits = hb.exits;
            let page = origin.phys;
            if !self.protected.contains(&page) && mem.protect_guest_page(page) {
                self.protected.insert(page);
            }
            block.starts = hb.insn_starts;
        }
        let id = self.blocks.len() as u32;
        if let Some(at) = block.at {
            self.by_addr.insert(at, id);
        }
        if key.asid != SPACE_FLAT {
            self.by_page.entry(key.pc >> 12).or_default().push(id);
            self.named.note_page(key.pc >> 12);
        }
        self.blocks.push(block);
        self.note_mapping(id);
        self.map.insert(key, id);
        self.map_changed();
        (id, flushed)
    }

    /// The guest PC, ITSTATE, index in its block and instruction set (Thumb) of the guest instruction whose host code holds
    /// cache offset `host` (a faulting access), from the blocks' side tables.
    fn fault_site(&mut self, host: usize) -> (u32, u8, u64, bool) {
        let (at, id) = match self.last_fault_block {
            Some((at, end, id)) if (at..end).contains(&host) && self.blocks[id as usize].live => {
                (at, id)
            }
            _ => {
                let (&at, &id) = self
                    .by_addr
                    .range(..=host)
                    .next_back()
                    .expect("host fault outside translated code");
                let end = self
                    .by_addr
                    .range(at + 1..)
                    .next()
                    .map_or(self.used, |(&next, _)| next);
                self.last_fault_block = Some((at, end, id));
                (at, id)
            }
        };
        let b = &self.blocks[id as usize];
        let rel = (host - at) as u32;
        let k = b.starts.partition_point(|&s| s <= rel).saturating_sub(1);
        (b.pcs[k], b.its[k], k as u64, b.key.thumb)
    }

    /// Records the guest instruction at `pc` (bit 0: Thumb; ITSTATE `it`), which just took
    /// the guest's Data Abort after its host code faulted at host address `host` in block
    /// `id`, in [`Dbt::fault_sites`], unless the code cache was flushed since (`flushes`).
    fn learn_fault_site(&mut self, (id, host, flushes): (u32, u64, u64), pc: u32, it: u8) {
        let Some(b) = self.blocks.get(id as usize) else {
            return;
        };
        let Some(k) = b.pcs.iter().position(|&p| p == pc & !1) else {
            return;
        };
        if self.stats.flushes != flushes || !b.live {
            return;
        }
        let raw = b.raws[k];
        let insn = if !b.key.thumb {
            crate::decode::decode_a32(raw)
        } else if raw >> 16 != 0 {
            crate::decode::decode_thumb((raw >> 16) as u16, raw as u16)
        } else {
            crate::decode::decode_thumb(raw as u16, 0)
        };
        self.fault_sites.record(host, pc, k as u64, it, &insn);
    }

    /// The (block, exit) whose branch is at cache offset `site`.
    fn exit_at(&self, site: usize) -> Option<(u32, u16)> {
        let (_, &id) = self.by_addr.range(..=site).next_back()?;
        let b = &self.blocks[id as usize];
        let e = b.exits.iter().position(|e| e.site == site)?;
        b.live.then_some((id, e as u16))
    }

    /// Patches exit `e` of block `from` to branch straight to block `to`.
    fn link(&mut self, mem: &mut dyn CodeMemory, from: u32, e: u16, to: u32) {
        let (Some(site), Some(target)) = (
            self.blocks[from as usize]
                .exits
                .get(e as usize)
                .map(|x| x.site),
            self.blocks[to as usize].at,
        ) else {
            return;
        };
        let (f, t) = (&self.blocks[from as usize], &self.blocks[to as usize]);
        if !f.live || !t.live || f.domain != t.domain {
            // A chain of linked blocks stays in one domain: the dispatcher checks the
            // domain's access when it enters the chain.
            return;
        }
        if (f.key.asid != t.key.asid || f.switches_space) && !any_space(t.key) {
            // `to` belongs to one address space and `from` may run in others (a global
            // page's block runs under every ASID) or switch to another itself: only the
            // dispatcher may pick `to`.
            return;
        }
        mem.bytes()[site..site + 4].copy_from_slice(&self.gen.branch(site, target));
        mem.sync(site, 4);
        let incoming = &mut self.blocks[to as usize].incoming;
        if incoming.is_empty() {
            self.linked.push(to);
        }
        incoming.push((from, e));
        self.stats.links += 1;
    }

    /// Drops every translation made from guest addresses in `[lo, hi)` (self-modifying
    /// code, or the host rewrote guest code): their incoming links are undone, so no
    /// other block can reach them, and the next execution translates them again.
    pub fn invalidate(&mut self, mem: &mut dyn CodeMemory, lo: u32, hi: u32) {
        self.drop_blocks(mem, |b, _| b.guest.0 < hi && lo < b.guest.1);
    }

    /// Drops every translation of code in guest physical page `page` (address >> 12),
    /// through whichever virtual address it was fetched.
    pub fn invalidate_phys(&mut self, mem: &mut dyn CodeMemory, page: u32) {
        self.drop_blocks(mem, |b, _| b.phys == page);
    }

    /// Drops the translations of guest physical page `page` because another guest CPU
    /// wrote it (a host running one engine per CPU over one guest memory tracks which of
    /// them translated from a page): this engine no longer counts on the page being
    /// write-protected, and protects it again when it next translates from it.
    pub fn page_written_elsewhere(&mut self, mem: &mut dyn CodeMemory, page: u32) {
        self.protected.remove(&page);
        self.invalidate_phys(mem, page);
        self.stats.smc += 1;
    }

    /// Starts a new [`Dbt::epoch`]: every link between blocks is undone and the return
    /// stacks and target caches are cleared, so that each block is entered through the
    /// dispatcher, which checks it ([`Dbt::unchanged`]) before it runs again.
    fn new_epoch(&mut self, mem: &mut dyn CodeMemory) {
        self.epoch = self.epoch.wrapping_add(1);
        self.clear_tables();
        let mut linked = core::mem::take(&mut self.linked);
        for &id in &linked {
            self.unlink_incoming(mem, id as usize);
        }
        linked.clear();
        self.linked = linked;
    }

    /// Points every live exit linked to block `id` back at its stub (through the
    /// dispatcher again) and forgets those links.
    fn unlink_incoming(&mut self, mem: &mut dyn CodeMemory, id: usize) {
        let mut incoming = core::mem::take(&mut self.blocks[id].incoming);
        for &(from, e) in &incoming {
            let b = &self.blocks[from as usize];
            if !b.live {
                continue;
            }
            let x = b.exits[e as usize];
            mem.bytes()[x.site..x.site + 4].copy_from_slice(&self.gen.branch(x.site, x.stub));
            mem.sync(x.site, 4);
            self.stats.unlinks += 1;
        }
        // Kept for the block's next links (a block relinked after every epoch would
        // otherwise free and allocate its list each time).
        incoming.clear();
        self.blocks[id].incoming = incoming;
    }

    /// Whether block `id` (of an older epoch) still translates what the guest would run:
    /// with the MMU on, its code page maps to the same physical page, as global or not,
    /// in the same domain, with execute permission for its privilege; and the encodings
    /// there are the ones it was made from.
    fn unchanged(&self, cpu: &mut Cpu, bus: &mut dyn Bus, id: u32) -> bool {
        let b = &self.blocks[id as usize];
        if b.key.asid != SPACE_FLAT {
            match Self::origin(cpu, bus, b.key) {
                Some(o)
                    if o.phys == b.phys
                        && o.global == (b.key.asid == SPACE_GLOBAL)
                        && o.domain == b.domain => {}
                _ => return false,
            }
        }
        // A block lies in one page (an unrolled loop repeats its pcs).
        let page = (b.phys as u64) << 12;
        for (&pc, &raw) in b.pcs.iter().zip(&b.raws) {
            let pa = page | (pc & 0xfff) as u64;
            let now = if b.key.thumb {
                let Ok(hw1) = bus.read(pa, 2) else {
                    return false;
                };
                if crate::decode::t32_is_32bit(hw1 as u16) {
                    if pc & 0xfff == 0xffe {
                        return false; // its second halfword is on the next page
                    }
                    let Ok(hw2) = bus.read(pa + 2, 2) else {
                        return false;
                    };
                    (hw1 << 16 | hw2) as u32
                } else {
                    hw1 as u32
                }
            } else {
                let Ok(w) = bus.read(pa, 4) else {
                    return false;
                };
                w as u32
            };
            if now != raw {
                return false;
            }
        }
        true
    }

    /// Drops the live blocks `(block, id)` for which `which` holds: their incoming links
    /// are undone, so no other block can reach them, and the next execution translates
    /// them again.
    fn drop_blocks(&mut self, mem: &mut dyn CodeMemory, which: impl Fn(&Block, u32) -> bool) {
        let ids: Vec<u32> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(i, b)| b.live && which(b, *i as u32))
            .map(|(i, _)| i as u32)
            .collect();
        self.drop_ids(mem, ids);
    }

    /// Drops the live blocks `ids` (see [`Dbt::drop_blocks`]).
    fn drop_ids(&mut self, mem: &mut dyn CodeMemory, ids: Vec<u32>) {
        if !ids.is_empty() {
            self.clear_tables();
        }
        for id in ids {
            self.unlink_incoming(mem, id as usize);
            let b = &mut self.blocks[id as usize];
            b.live = false;
            let key = b.key;
            if let Some(at) = b.at {
                self.by_addr.remove(&at);
            }
            if self.map.get(&key) == Some(&id) {
                self.map.remove(&key);
                self.map_changed();
            }
        }
    }

    /// Translates again, after a flush, every block translated so far with the MMU off
    /// (the others are dropped), and returns the
    /// number of guest instructions translated: a measurement aid (the cost of
    /// translation is the difference between a run with and without it).
    pub fn retranslate_all(&mut self, bus: &mut dyn Bus, mem: &mut dyn CodeMemory) -> u64 {
        let keys: Vec<Key> = self
            .blocks
            .iter()
            .filter(|b| b.live && b.at.is_some() && b.key.asid == SPACE_FLAT)
            .map(|b| b.key)
            .collect();
        self.flush();
        let before = self.stats.guest_insns;
        for key in keys {
            let origin = Origin {
                phys: key.pc >> 12,
                global: false,
                domain: NO_DOMAIN,
                dacr_field: NO_DOMAIN,
                size_log2: 12,
            };
            self.translate(key, origin, bus, mem);
        }
        self.stats.guest_insns - before
    }

    /// Drops every translation (the code cache is reused from the start).
    pub fn flush(&mut self) {
        self.clear_tables();
        self.blocks.clear();
        self.linked.clear();
        self.map.clear();
        self.map_changed();
        self.by_addr.clear();
        self.last_fault_block = None;
        self.fault_sites.clear();
        self.by_page.clear();
        self.block_maps.clear();
        self.named.clear();
        self.block_map_sizes = 0;
        if let Some((_, end)) = self.rt {
            self.used = end;
        }
        self.stats.flushes += 1;
    }
}
