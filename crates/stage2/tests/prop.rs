//! Property test: random map / map_replace / unmap / protect sequences against a reference
//! model (a BTreeMap of 4 KiB pages); `translate` must agree on every page of the window, and
//! unmapping everything must return the allocator to its baseline (no leaked tables).

mod common;

use std::collections::BTreeMap;

use common::{Ev, RecTlb, TestAlloc};
use proptest::prelude::*;
use stage2::{Error, MemType, S2Attrs, Stage2Config, Stage2Table};

const PAGE: u64 = 4096;
/// The window straddles a 1 GiB boundary, so level-1 and level-2 tables are crossed.
const WINDOW_BASE: u64 = (1 << 30) - (8 << 20);
const WINDOW_PAGES: u64 = 4096;
const PA_BASE: u64 = 0x20_0000_0000;

const ATTRS: [S2Attrs; 5] = [
    S2Attrs::RAM,
    S2Attrs::RAM_RO,
    S2Attrs::RAM_NX,
    S2Attrs::DEVICE,
    S2Attrs {
        mem: MemType::NormalNonCacheable,
        read: true,
        write: false,
        exec: false,
    },
];

#[derive(Debug, Clone)]
enum Op {
    Map {
        page: u64,
        pages: u64,
        pa_delta: u64,
        attrs: usize,
        replace: bool,
    },
    Unmap {
        page: u64,
        pages: u64,
    },
    Protect {
        page: u64,
        pages: u64,
        attrs: usize,
    },
}

fn page_idx() -> impl Strategy<Value = u64> {
    prop_oneof![
        (0..8u64).prop_map(|k| k * 512),
        0..WINDOW_PAGES,
        (0..8u64, 0..4u64).prop_map(|(k, d)| k * 512 + 511 - d),
    ]
}

fn page_count() -> impl Strategy<Value = u64> {
    prop_oneof![(1..=4u64).prop_map(|k| k * 512), 1..64u64, 1..1100u64]
}

fn op() -> impl Strategy<Value = Op> {
    let pa_delta = prop_oneof![
        Just(0u64),
        (1..4u64).prop_map(|k| k * (2 << 20)),
        (1..16u64).prop_map(|k| k * PAGE),
    ];
    prop_oneof![
        4 => (page_idx(), page_count(), pa_delta, 0..ATTRS.len(), any::<bool>()).prop_map(
            |(page, pages, pa_delta, attrs, replace)| Op::Map { page, pages, pa_delta, attrs, replace }
        ),
        2 => (page_idx(), page_count()).prop_map(|(page, pages)| Op::Unmap { page, pages }),
        2 => (page_idx(), page_count(), 0..ATTRS.len())
            .prop_map(|(page, pages, attrs)| Op::Protect { page, pages, attrs }),
    ]
}

type Model = BTreeMap<u64, (u64, S2Attrs)>;

fn clip(page: u64, pages: u64) -> (u64, u64) {
    (page, pages.min(WINDOW_PAGES - page))
}

fn run(ops: &[Op]) {
    let alloc = TestAlloc::new();
    let tlb = RecTlb::default();
    let cfg = Stage2Config::new(0b0010, 40, false).unwrap();
    let mut s2 = Stage2Table::with_tlb(cfg, alloc.clone(), tlb.clone()).unwrap();
    tlb.attach(&alloc, s2.root_pa(), cfg.start_level());
    s2.vttbr(1);
    let baseline = alloc.0.live();
    let mut model = Model::new();
    for op in ops {
        match *op {
            Op::Map {
                page,
                pages,
                pa_delta,
                attrs,
                replace,
            } => {
                let (page, pages) = clip(page, pages);
                let ipa = WINDOW_BASE + page * PAGE;
                let pa = PA_BASE + ipa + pa_delta;
                let a = ATTRS[attrs];
                let overlap = (page..page + pages).any(|p| model.contains_key(&p));
                let r = if replace {
                    s2.map_replace(ipa, pa, pages * PAGE, a)
                } else {
                    s2.map(ipa, pa, pages * PAGE, a)
                };
                if overlap && !replace {
                    assert_eq!(r, Err(Error::AlreadyMapped), "{op:?}");
                } else {
                    assert_eq!(r, Ok(()), "{op:?}");
                    for p in 0..pages {
                        model.insert(page + p, (pa + p * PAGE, a));
                    }
                }
            }
            Op::Unmap { page, pages } => {
                let (page, pages) = clip(page, pages);
                s2.unmap(WINDOW_BASE + page * PAGE, pages * PAGE).unwrap();
                for p in page..page + pages {
                    model.remove(&p);
                }
            }
            Op::Protect { page, pages, attrs } => {
                let (page, pages) = clip(page, pages);
                s2.protect(WINDOW_BASE + page * PAGE, pages * PAGE, ATTRS[attrs])
                    .unwrap();
                for (_, v) in model.range_mut(page..page + pages) {
                    v.1 = ATTRS[attrs];
                }
            }
        }
        // Every invalidation of a changed memory type or output address happened while the
        // entry was invalid (break-before-make); in-place updates only change permissions.
        for ev in tlb.take() {
            if let Ev::Ipa { live: Some(d), .. } = ev {
                assert!(d & 1 == 1);
            }
        }
    }
    for p in 0..WINDOW_PAGES {
        let ipa = WINDOW_BASE + p * PAGE + 0x18;
        let want = model.get(&p).map(|&(pa, a)| (pa + 0x18, a));
        assert_eq!(s2.translate(ipa), want, "page {p} (ipa {ipa:#x})");
        if let Some(m) = s2.lookup(ipa) {
            // A block is used only where IPA and PA agree modulo its size.
            assert_eq!((ipa ^ m.pa) % m.size, 0);
        }
    }
    s2.unmap(WINDOW_BASE, WINDOW_PAGES * PAGE).unwrap();
    assert_eq!(alloc.0.live(), baseline, "table pages leaked");
    drop(s2);
    assert_eq!(alloc.0.live(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn matches_reference_model(ops in proptest::collection::vec(op(), 1..24)) {
        run(&ops);
    }
}

#[test]
fn fixed_sequence_smoke() {
    run(&[
        Op::Map {
            page: 0,
            pages: 2048,
            pa_delta: 0,
            attrs: 0,
            replace: false,
        },
        Op::Protect {
            page: 700,
            pages: 3,
            attrs: 1,
        },
        Op::Map {
            page: 1000,
            pages: 100,
            pa_delta: PAGE,
            attrs: 3,
            replace: true,
        },
        Op::Unmap {
            page: 1500,
            pages: 600,
        },
    ]);
}
