//! The guest's TLB maintenance by address applied from inside a translated block
//! ([`SpaceSwitch::tlb_maintenance`](crate::translate::sys_call::SpaceSwitch::tlb_maintenance)),
//! when it names no translated code: the host's mirror of the guest's stage 1 and the
//! interpreter's TLB drop the page, the remembered abort verdicts are forgotten, and the
//! block goes on, without the dispatcher's round trip (about 540 host instructions per
//! operation; Linux issues about a million on its way to userland).
//!
//! Exactness: what the dispatcher does for such an operation (`Dbt::drop_translations_of`
//! after `CodeMemory::guest_tlb_maintenance`) besides the host's part is dropping the
//! blocks of the page that the operation names ([`drops`]) and those of a larger guest
//! mapping holding the address (`Dbt::block_maps`), and forgetting the verdicts. When the
//! page has no live block the operation names and no such mapping holds the address,
//! nothing translated depends on a translation the operation removes (a block never
//! crosses a page, and is in `Dbt::by_page` under its page from its translation on): the
//! running block's code, its links, the return stacks and target caches all stay valid,
//! so going on in the block is what leaving and re-entering at the next instruction
//! would do. Otherwise translated code leaves as before and the dispatcher applies it
//! all. `TLBIALL` and `TLBIASID` forms always leave.

use alloc::collections::{BTreeMap, BTreeSet};

use alloc::vec::Vec;

use super::{Block, SPACE_ASID, SPACE_GLOBAL};
use crate::cpu::Cpu;
use crate::mmu::TlbMaintenance;
use crate::translate::fault_sites::FaultSites;
use crate::translate::fetch_aborts::FetchAborts;
use crate::translate::host::CodeMemory;
use crate::translate::state::GuestState;

/// Words of each [`Named`] bit set (65536 bits).
const NAMED_WORDS: usize = 1 << 10;

/// A summary of [`Dbt::by_page`](super::Dbt) and `Dbt::block_maps` that TLB maintenance
/// by address looks at before their searches (about 90 host instructions per operation
/// when they miss, as almost all of Linux's do): a clear bit means no entry, a set one
/// means "search". Bits are set when an entry is made and cleared only with both maps
/// (a flush), so a set bit of an entry since removed only costs the search.
pub(super) struct Named {
    /// Bit `(va >> 12) % 65536`: `by_page` may have an entry for page `va >> 12`.
    pages: Vec<u64>,
    /// Bit `va >> 16`: a mapping in `block_maps` may hold `va` (their sizes are 64 KiB
    /// or more: large pages, sections, supersections, LPAE blocks).
    mappings: Vec<u64>,
}

impl Named {
    /// Nothing named.
    pub(super) fn new() -> Named {
        Named {
            pages: alloc::vec![0; NAMED_WORDS],
            mappings: alloc::vec![0; NAMED_WORDS],
        }
    }

    fn set(bits: &mut [u64], i: u32) {
        bits[(i >> 6) as usize % NAMED_WORDS] |= 1 << (i & 63);
    }

    fn get(bits: &[u64], i: u32) -> bool {
        bits[(i >> 6) as usize % NAMED_WORDS] >> (i & 63) & 1 != 0
    }

    /// `by_page` gets an entry for page `page` (an address >> 12).
    pub(super) fn note_page(&mut self, page: u32) {
        Self::set(&mut self.pages, page);
    }

    /// `block_maps` gets the mapping of `2^log2` bytes at `base`.
    pub(super) fn note_mapping(&mut self, base: u32, log2: u8) {
        let last = ((base as u64 + (1u64 << log2) - 1) >> 16) as u32;
        for i in base >> 16..=last {
            Self::set(&mut self.mappings, i);
        }
    }

    /// Both maps were emptied.
    pub(super) fn clear(&mut self) {
        self.pages.fill(0);
        self.mappings.fill(0);
    }

    /// Whether `by_page` may have an entry for `va`'s page.
    pub(super) fn page(&self, va: u32) -> bool {
        Self::get(&self.pages, va >> 12)
    }

    /// Whether a mapping of `block_maps` may hold `va`.
    pub(super) fn mapping(&self, va: u32) -> bool {
        Self::get(&self.mappings, va >> 16)
    }
}

/// Whether the TLB maintenance of one page by the guest drops block `b` of that page:
/// one of ASID `asid` or of a global page, or any with `asid` = `None` (the all-ASIDs
/// forms).
pub(super) fn drops(b: &Block, asid: Option<u8>) -> bool {
    match asid {
        Some(a) => b.key.asid == SPACE_ASID | a as u16 || b.key.asid == SPACE_GLOBAL,
        None => true,
    }
}

/// The host's side of TLB maintenance inside a block (asked once per `Dbt::run`: the
/// [`InBlockTlb`] is made at every entry into the code cache, about two million times in a
/// Linux boot).
#[derive(Clone, Copy, Debug)]
pub(super) enum HostTlb {
    /// The host does not mirror the guest's stage 1: nothing to apply there.
    Nothing,
    /// The host's routine (`CodeMemory::in_code_tlb_maintenance`).
    Routine(fn(TlbMaintenance) -> bool),
    /// The host mirrors the guest's stage 1 but has no routine: every operation leaves.
    Leave,
}

impl HostTlb {
    /// What host `mem` does.
    pub(super) fn of(mem: &dyn CodeMemory) -> HostTlb {
        if !mem.mirrors_guest_mmu() {
            return HostTlb::Nothing;
        }
        mem.in_code_tlb_maintenance()
            .map_or(HostTlb::Leave, HostTlb::Routine)
    }
}

/// The engine's side of TLB maintenance inside a block, for one entry into the code
/// cache: what it reads of the translations, and what it forgets.
pub struct InBlockTlb<'a> {
    blocks: &'a [Block],
    by_page: &'a BTreeMap<u32, Vec<u32>>,
    block_maps: &'a BTreeSet<(u32, u8)>,
    block_map_sizes: u32,
    named: &'a Named,
    fetch_aborts: &'a mut FetchAborts,
    host: HostTlb,
    /// Operations applied (for the engine's `Stats::tlb_maintenance`).
    pub applied: u64,
}

impl<'a> InBlockTlb<'a> {
    /// The [`InBlockTlb`] of the next entry into the code cache, from the engine's
    /// fields it reads and forgets and the host's side.
    pub(super) fn new(
        blocks: &'a [Block],
        by_page: &'a BTreeMap<u32, Vec<u32>>,
        block_maps: &'a BTreeSet<(u32, u8)>,
        block_map_sizes: u32,
        named: &'a Named,
        fetch_aborts: &'a mut FetchAborts,
        host: HostTlb,
    ) -> InBlockTlb<'a> {
        InBlockTlb {
            blocks,
            by_page,
            block_maps,
            block_map_sizes,
            named,
            fetch_aborts,
            host,
            applied: 0,
        }
    }
}

impl InBlockTlb<'_> {
    /// Whether `op` names translated code: a live block of its page that it drops, or a
    /// guest mapping larger than a page holding its address that blocks were translated
    /// from; always for the `TLBIALL` and `TLBIASID` forms.
    pub fn names_translations(&self, op: TlbMaintenance) -> bool {
        let (va, asid) = match op {
            TlbMaintenance::Page { va, asid } => (va, Some(asid)),
            TlbMaintenance::PageAllAsids(va) => (va, None),
            TlbMaintenance::All | TlbMaintenance::Asid(_) => return true,
        };
        let in_page = self.named.page(va)
            && self.by_page.get(&(va >> 12)).is_some_and(|ids| {
                ids.iter().any(|&id| {
                    let b = &self.blocks[id as usize];
                    b.live && drops(b, asid)
                })
            });
        if in_page {
            return true;
        }
        if !self.named.mapping(va) {
            return false;
        }
        let mut sizes = self.block_map_sizes;
        while sizes != 0 {
            let log2 = sizes.trailing_zeros() as u8;
            sizes &= sizes - 1;
            if self
                .block_maps
                .contains(&(va & !((1u32 << log2) - 1), log2))
            {
                return true;
            }
        }
        false
    }

    /// `cpu` just recorded TLB maintenance (`Cp15::tlb_maintenance`, from translated code
    /// through `step_from_code`): applies it here and returns true if it names no
    /// translated code ([`InBlockTlb::names_translations`]) and the host's side let the
    /// block go on (no other vCPU's maintenance waits for this one's engine); else false,
    /// and translated code leaves for the dispatcher, which applies what is still
    /// recorded.
    pub fn apply(&mut self, cpu: &mut Cpu, state: &mut GuestState) -> bool {
        let Some(op) = cpu.cp15.tlb_maintenance else {
            return false;
        };
        if self.names_translations(op) || matches!(self.host, HostTlb::Leave) {
            return false;
        }
        cpu.cp15.tlb_maintenance = None;
        self.applied += 1;
        self.fetch_aborts.clear();
        if state.fault_sites != 0 {
            // SAFETY: the engine's `FaultSites` (boxed, alive while it runs translated
            // code), which only the host's fault handler uses besides the engine, and not
            // during this call.
            unsafe { (*(state.fault_sites as *mut FaultSites)).forget_verdicts() };
        }
        // The host's mirror (the interpreter's TLB was flushed by the write itself).
        match self.host {
            HostTlb::Routine(host) => host(op),
            HostTlb::Nothing | HostTlb::Leave => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translate::frontend::Key;
    use alloc::vec;

    /// A block at `pc` of address space `asid` (a `Key::asid`).
    fn block(pc: u32, asid: u16, live: bool) -> Block {
        Block {
            key: Key {
                pc,
                thumb: false,
                privileged: true,
                asid,
                fp: false,
            },
            at: Some(0),
            guest_insns: 1,
            guest: (pc, pc + 4),
            phys: pc >> 12,
            domain: 0,
            dacr_field: 1,
            exits: Vec::new(),
            pcs: vec![pc],
            its: vec![0],
            starts: vec![0],
            incoming: Vec::new(),
            live,
            raws: vec![0xe320_f000],
            epoch: 0,
            size_log2: 12,
            switches_space: false,
        }
    }

    /// Blocks, `by_page`, `block_maps` and their [`Named`].
    type Engine = (
        Vec<Block>,
        BTreeMap<u32, Vec<u32>>,
        BTreeSet<(u32, u8)>,
        Named,
    );

    /// Block 0: ASID 5 at 0x1000; 1: global at 0x2000; 2: ASID 5 at 0x3000, dropped;
    /// 3: ASID 6 at 0x4000, in a 1 MiB section at 0x0040_0000 recorded in `block_maps`
    /// (its page 0x0040_4000).
    fn engine() -> Engine {
        let blocks = vec![
            block(0x1000, SPACE_ASID | 5, true),
            block(0x2000, SPACE_GLOBAL, true),
            block(0x3000, SPACE_ASID | 5, false),
            block(0x0040_4000, SPACE_ASID | 6, true),
        ];
        let by_page = BTreeMap::from([
            (0x1, vec![0]),
            (0x2, vec![1]),
            (0x3, vec![2]),
            (0x404, vec![3]),
        ]);
        let mut named = Named::new();
        for &page in by_page.keys() {
            named.note_page(page);
        }
        named.note_mapping(0x0040_0000, 20);
        (blocks, by_page, BTreeSet::from([(0x0040_0000, 20)]), named)
    }

    fn tlb<'a>(e: &'a Engine, fa: &'a mut FetchAborts, host: HostTlb) -> InBlockTlb<'a> {
        InBlockTlb {
            blocks: &e.0,
            by_page: &e.1,
            block_maps: &e.2,
            block_map_sizes: 1 << 20,
            named: &e.3,
            fetch_aborts: fa,
            host,
            applied: 0,
        }
    }

    #[test]
    fn names_exactly_what_the_dispatcher_drops() {
        let e = engine();
        let mut fa = FetchAborts::default();
        let t = tlb(&e, &mut fa, HostTlb::Nothing);
        let page = |va, asid| TlbMaintenance::Page { va, asid };
        assert!(t.names_translations(page(0x1000, 5)), "its ASID's block");
        assert!(
            t.names_translations(page(0x1ffc, 5)),
            "any address of the page"
        );
        assert!(
            !t.names_translations(page(0x1000, 4)),
            "another ASID's block stays"
        );
        assert!(t.names_translations(TlbMaintenance::PageAllAsids(0x1000)));
        assert!(
            t.names_translations(page(0x2000, 9)),
            "a global block, any ASID"
        );
        assert!(!t.names_translations(page(0x3000, 5)), "a dropped block");
        assert!(!t.names_translations(TlbMaintenance::PageAllAsids(0x5000)));
        assert!(
            !t.names_translations(TlbMaintenance::PageAllAsids(0x1000_1000)),
            "a page whose filter bit is 0x1000's"
        );
        assert!(
            t.names_translations(page(0x004f_f000, 7)),
            "another page of a section blocks were translated from"
        );
        assert!(
            !t.names_translations(page(0x0050_0000, 6)),
            "past the section"
        );
        assert!(
            !t.names_translations(page(0x003f_f000, 6)),
            "before the section"
        );
        assert!(t.names_translations(TlbMaintenance::All));
        assert!(t.names_translations(TlbMaintenance::Asid(200)));
    }

    #[test]
    fn the_filter_never_hides_an_entry() {
        let mut named = Named::new();
        named.note_page(0x12345);
        named.note_mapping(0xff00_0000, 24);
        named.note_mapping(0x0001_0000, 16);
        assert!(
            named.page(0x1234_5678) && named.page(0x2234_5000),
            "same bit"
        );
        assert!(!named.page(0x1234_4fff) && !named.page(0x1234_6000));
        assert!(named.mapping(0xff00_0000) && named.mapping(0xffff_ffff));
        assert!(!named.mapping(0xfeff_ffff));
        assert!(named.mapping(0x0001_ffff) && !named.mapping(0x0002_0000));
        assert!(!named.mapping(0xffff));
        named.clear();
        assert!(!named.page(0x1234_5000) && !named.mapping(0xff00_0000));
    }

    fn recorded(op: TlbMaintenance) -> Cpu {
        let mut cpu = Cpu::new();
        cpu.cp15.tlb_maintenance = Some(op);
        cpu
    }

    /// `apply` of `op` recorded: (its answer, the operation still recorded, applied).
    fn apply(e: &Engine, op: TlbMaintenance, host: HostTlb) -> (bool, Option<TlbMaintenance>, u64) {
        let mut fa = FetchAborts::default();
        let mut st = GuestState::default();
        let mut cpu = recorded(op);
        let mut t = tlb(e, &mut fa, host);
        let go_on = t.apply(&mut cpu, &mut st);
        (go_on, cpu.cp15.tlb_maintenance, t.applied)
    }

    #[test]
    fn applies_what_names_nothing_and_leaves_the_rest_recorded() {
        let e = engine();
        let op = TlbMaintenance::PageAllAsids(0x5000);
        // Without a mirror (MMU-off code): nothing but the engine's side.
        assert_eq!(apply(&e, op, HostTlb::Nothing), (true, None, 1));
        // Names a block: left for the dispatcher.
        let named = TlbMaintenance::PageAllAsids(0x1000);
        assert_eq!(apply(&e, named, HostTlb::Nothing), (false, Some(named), 0));
        assert_eq!(
            apply(&e, named, HostTlb::Routine(|_| true)),
            (false, Some(named), 0)
        );
        // A mirror without an in-code routine: left.
        assert_eq!(apply(&e, op, HostTlb::Leave), (false, Some(op), 0));
        // The mirror's routine says "dispatch first": applied, but left.
        assert_eq!(apply(&e, op, HostTlb::Routine(|_| false)), (false, None, 1));
        assert_eq!(apply(&e, op, HostTlb::Routine(|_| true)), (true, None, 1));
    }
}
