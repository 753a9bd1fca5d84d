//! Mapping API: round trips, block usage, descriptor bits, splitting with break-before-make,
//! merging, freeing tables, error cases.

mod common;

use common::{hw_walk, Ev, RecTlb, TestAlloc};
use stage2::{Error, MemType, S2Attrs, Stage2Config, Stage2Table};

const K4: u64 = 4 << 10;
const M2: u64 = 2 << 20;
const G1: u64 = 1 << 30;

fn cfg40() -> Stage2Config {
    Stage2Config::new(0b0010, 40, false).unwrap()
}

fn new_table() -> (Stage2Table<TestAlloc, RecTlb>, TestAlloc, RecTlb) {
    let alloc = TestAlloc::new();
    let tlb = RecTlb::default();
    let s2 = Stage2Table::with_tlb(cfg40(), alloc.clone(), tlb.clone()).unwrap();
    tlb.attach(&alloc, s2.root_pa(), s2.config().start_level());
    (s2, alloc, tlb)
}

fn desc_of(s2: &Stage2Table<TestAlloc, RecTlb>, alloc: &TestAlloc, ipa: u64) -> Option<(u64, u32)> {
    hw_walk(&alloc.0, s2.root_pa(), s2.config().start_level(), ipa)
}

#[test]
fn lead_usage_shape_compiles_and_works() {
    let cfg = Stage2Config::new(0b0010, 40, false).unwrap();
    let mut s2 = Stage2Table::new(cfg, TestAlloc::new()).unwrap();
    let host_pa = 0x8000_0000;
    s2.map(0x4000_0000, host_pa, 128 << 20, S2Attrs::RAM)
        .unwrap();
    assert_eq!(cfg.vtcr(), 0x8002_3558);
    let vttbr = s2.vttbr(3);
    assert_eq!(vttbr, (3 << 48) | s2.root_pa());
    assert_eq!(
        s2.root_pa() % (2 * K4),
        0,
        "2 concatenated root tables are 8 KiB aligned"
    );
    assert_eq!(s2.translate(0x4000_1234), Some((0x8000_1234, S2Attrs::RAM)));
}

#[test]
fn uses_2m_blocks_when_aligned() {
    let (mut s2, alloc, _) = new_table();
    s2.map(0x4000_0000, 0x8000_0000, 128 << 20, S2Attrs::RAM)
        .unwrap();
    for off in (0..128 << 20).step_by(M2 as usize / 2) {
        let m = s2.lookup(0x4000_0000 + off + 0x10).unwrap();
        assert_eq!(m.level, 2);
        assert_eq!(m.size, M2);
        assert_eq!(m.pa, 0x8000_0000 + off + 0x10);
    }
    assert_eq!(s2.translate(0x4000_0000 + (128 << 20)), None);
    assert_eq!(s2.translate(0x3fff_f000), None);
    // Root (2 pages) + one level-2 table.
    assert_eq!(alloc.0.live(), 3);
    // Block descriptor bits: PA | AF | SH=IS | S2AP=RW | MemAttr=WB | block (0b01).
    let (d, level) = desc_of(&s2, &alloc, 0x4020_0000).unwrap();
    assert_eq!(level, 2);
    assert_eq!(d, 0x8020_0000 | 0x7fc | 0b01);
}

#[test]
fn uses_1g_blocks_when_aligned() {
    let (mut s2, alloc, _) = new_table();
    s2.map(G1, 4 * G1, 2 * G1 + M2 + K4, S2Attrs::RAM_NX)
        .unwrap();
    let m = s2.lookup(G1 + 0x1234_5678).unwrap();
    assert_eq!((m.level, m.size, m.pa), (1, G1, 4 * G1 + 0x1234_5678));
    assert_eq!(s2.lookup(2 * G1).unwrap().level, 1);
    assert_eq!(s2.lookup(3 * G1).unwrap().level, 2);
    let m = s2.lookup(3 * G1 + M2).unwrap();
    assert_eq!((m.level, m.pa), (3, 6 * G1 + M2));
    assert_eq!(s2.translate(3 * G1 + M2 + K4), None);
    let (d, _) = desc_of(&s2, &alloc, G1).unwrap();
    assert_eq!(d, (4 * G1) | (1 << 54) | 0x7fc | 0b01);
    let (d, _) = desc_of(&s2, &alloc, 3 * G1 + M2).unwrap();
    assert_eq!(d, (6 * G1 + M2) | (1 << 54) | 0x7fc | 0b11);
}

#[test]
fn misaligned_pa_uses_pages() {
    let (mut s2, alloc, _) = new_table();
    // IPA 2 MiB aligned, PA only 4 KiB aligned: no block possible.
    s2.map(0x4000_0000, 0x8000_1000, M2, S2Attrs::DEVICE)
        .unwrap();
    let m = s2.lookup(0x4000_0000).unwrap();
    assert_eq!((m.level, m.pa, m.attrs), (3, 0x8000_1000, S2Attrs::DEVICE));
    let m = s2.lookup(0x401f_f008).unwrap();
    assert_eq!(m.pa, 0x8020_0008);
    let (d, _) = desc_of(&s2, &alloc, 0x4000_0000).unwrap();
    // Device-nGnRE (MemAttr 0b0001), RW, SH=IS, AF, XN, page.
    assert_eq!(d, 0x8000_1000 | (1 << 54) | 0x7c4 | 0b11);
}

#[test]
fn all_attribute_kinds_round_trip() {
    let (mut s2, _, _) = new_table();
    let kinds = [
        S2Attrs::RAM,
        S2Attrs::RAM_RO,
        S2Attrs::RAM_NX,
        S2Attrs::DEVICE,
        S2Attrs::DEVICE_STRICT,
        S2Attrs {
            mem: MemType::NormalNonCacheable,
            read: true,
            write: false,
            exec: false,
        },
        S2Attrs {
            mem: MemType::NormalWriteBack,
            read: false,
            write: true,
            exec: false,
        },
        S2Attrs {
            mem: MemType::NormalWriteBack,
            read: false,
            write: false,
            exec: false,
        },
    ];
    for (i, a) in kinds.iter().enumerate() {
        let ipa = i as u64 * M2;
        s2.map(ipa, 0x1_0000_0000 + ipa, M2, *a).unwrap();
        assert_eq!(s2.translate(ipa + 8), Some((0x1_0000_0008 + ipa, *a)));
    }
}

#[test]
fn errors_never_change_anything() {
    let (mut s2, alloc, tlb) = new_table();
    s2.vttbr(1);
    s2.map(0x4000_0000, 0x8000_0000, M2, S2Attrs::RAM).unwrap();
    let live = alloc.0.live();
    tlb.take();
    let e = |r| -> Error { Result::<(), Error>::err(r).unwrap() };
    assert_eq!(
        e(s2.map(0x4000_0800, 0, K4, S2Attrs::RAM)),
        Error::Misaligned
    );
    assert_eq!(
        e(s2.map(0x5000_0000, 0x800, K4, S2Attrs::RAM)),
        Error::Misaligned
    );
    assert_eq!(
        e(s2.map(0x5000_0000, 0, 100, S2Attrs::RAM)),
        Error::Misaligned
    );
    assert_eq!(e(s2.unmap(0x5000_0004, K4)), Error::Misaligned);
    assert_eq!(
        e(s2.protect(0x5000_0000, 12, S2Attrs::RAM)),
        Error::Misaligned
    );
    // IPA range: 40 bits.
    assert_eq!(
        e(s2.map(1 << 40, 0, K4, S2Attrs::RAM)),
        Error::OutOfIpaRange
    );
    assert_eq!(
        e(s2.map((1 << 40) - K4, 0, 2 * K4, S2Attrs::RAM)),
        Error::OutOfIpaRange
    );
    assert_eq!(e(s2.unmap(!0xfffu64, 2 * K4)), Error::OutOfIpaRange);
    assert_eq!(
        e(s2.protect(1 << 41, K4, S2Attrs::RAM)),
        Error::OutOfIpaRange
    );
    // PA range: PS = 40 bits.
    assert_eq!(e(s2.map(0, 1 << 40, K4, S2Attrs::RAM)), Error::OutOfPaRange);
    assert_eq!(
        e(s2.map(0, !0xfffu64, 2 * K4, S2Attrs::RAM)),
        Error::OutOfPaRange
    );
    // Overlap: partly mapped range.
    assert_eq!(
        e(s2.map(0x3ff0_0000, 0, 2 * M2, S2Attrs::RAM)),
        Error::AlreadyMapped
    );
    // Executable device memory.
    let bad = S2Attrs {
        exec: true,
        ..S2Attrs::DEVICE
    };
    assert_eq!(e(s2.map(0x5000_0000, 0, K4, bad)), Error::InvalidAttrs);
    assert_eq!(e(s2.protect(0x4000_0000, K4, bad)), Error::InvalidAttrs);
    assert_eq!(alloc.0.live(), live);
    assert_eq!(s2.lookup(0x4000_0000).unwrap().level, 2);
    assert_eq!(s2.translate(0x3ff0_0000), None);
    assert!(
        tlb.take().is_empty(),
        "failed calls issue no TLB maintenance"
    );
    // Zero length is a no-op; translate out of range is None.
    s2.map(0x5000_0000, 0, 0, S2Attrs::RAM).unwrap();
    s2.unmap(0, 0).unwrap();
    assert_eq!(s2.translate(1 << 40), None);
    assert_eq!(s2.translate(u64::MAX), None);
}

#[test]
fn allocator_exhaustion_rolls_back_map() {
    let (mut s2, alloc, _) = new_table();
    let base = alloc.0.live();
    // Needs a level-2 table and three level-3 tables; allow only two pages.
    alloc.0.set_limit(Some(base + 2));
    let r = s2.map(0x4000_1000, 0x8000_1000, 3 * M2, S2Attrs::RAM);
    assert_eq!(r, Err(Error::OutOfMemory));
    assert_eq!(alloc.0.live(), base);
    assert_eq!(s2.translate(0x4000_1000), None);
    alloc.0.set_limit(None);
    s2.map(0x4000_1000, 0x8000_1000, 3 * M2, S2Attrs::RAM)
        .unwrap();
    assert_eq!(s2.translate(0x4060_0000), Some((0x8060_0000, S2Attrs::RAM)));
}

#[test]
fn split_on_partial_unmap_is_break_before_make() {
    let (mut s2, alloc, tlb) = new_table();
    s2.map(0x4000_0000, 0x8000_0000, M2, S2Attrs::RAM).unwrap();
    let vttbr = s2.vttbr(7);
    assert_eq!(vttbr >> 48, 7);
    tlb.take();
    let before = alloc.0.live();
    s2.unmap(0x4000_5000, K4).unwrap();
    let ev = tlb.take();
    // 1. The block is broken: invalid while its IPA is invalidated and synced.
    assert_eq!(
        ev[0],
        Ev::Ipa {
            vmid: 7,
            ipa: 0x4000_0000,
            level: 2,
            live: None
        }
    );
    assert_eq!(
        ev[1],
        Ev::Sync {
            vmid: 7,
            live: None
        }
    );
    // 2. Then the page is removed from the new table and invalidated; the op ends synced.
    assert_eq!(
        ev[2],
        Ev::Ipa {
            vmid: 7,
            ipa: 0x4000_5000,
            level: 3,
            live: None
        }
    );
    assert!(matches!(
        ev[3],
        Ev::Sync {
            vmid: 7,
            live: None
        }
    ));
    assert_eq!(ev.last(), Some(&Ev::Publish));
    assert_eq!(alloc.0.live(), before + 1);
    assert_eq!(s2.translate(0x4000_5000), None);
    for ipa in [0x4000_0000, 0x4000_4fff, 0x4000_6000, 0x401f_ffff] {
        let m = s2.lookup(ipa).unwrap();
        assert_eq!(
            (m.level, m.pa, m.attrs),
            (3, 0x8000_0000 + (ipa - 0x4000_0000), S2Attrs::RAM)
        );
    }
}

#[test]
fn split_on_partial_protect() {
    let (mut s2, _, tlb) = new_table();
    s2.map(G1, 2 * G1, G1, S2Attrs::RAM).unwrap();
    s2.vttbr(9);
    tlb.take();
    s2.protect(G1 + M2 + K4, K4, S2Attrs::RAM_RO).unwrap();
    let ev = tlb.take();
    // Breaks the 1 GiB block, then the new 2 MiB block; never maps while invalidating.
    assert_eq!(
        ev[0],
        Ev::Ipa {
            vmid: 9,
            ipa: G1,
            level: 1,
            live: None
        }
    );
    assert_eq!(
        ev[1],
        Ev::Sync {
            vmid: 9,
            live: None
        }
    );
    assert_eq!(
        ev[2],
        Ev::Ipa {
            vmid: 9,
            ipa: G1 + M2,
            level: 2,
            live: None
        }
    );
    assert_eq!(
        ev[3],
        Ev::Sync {
            vmid: 9,
            live: None
        }
    );
    // Permission-only change: written in place, then invalidated and synced.
    match &ev[4] {
        Ev::Ipa {
            ipa, level, live, ..
        } => {
            assert_eq!((*ipa, *level), (G1 + M2 + K4, 3));
            assert_eq!(live.unwrap() & 0xc0, 0x40, "S2AP already read-only");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert!(matches!(ev[5], Ev::Sync { .. }));
    assert_eq!(
        s2.translate(G1 + M2 + K4),
        Some((2 * G1 + M2 + K4, S2Attrs::RAM_RO))
    );
    assert_eq!(s2.lookup(G1 + M2).unwrap().level, 3);
    assert_eq!(s2.lookup(G1 + 2 * M2).unwrap().level, 2);
    assert_eq!(s2.lookup(G1).unwrap().level, 2);
    assert_eq!(s2.translate(2 * G1 - 1), Some((3 * G1 - 1, S2Attrs::RAM)));
}

#[test]
fn memory_type_change_is_break_before_make() {
    let (mut s2, _, tlb) = new_table();
    s2.map(0x4000_0000, 0x8000_0000, 4 * K4, S2Attrs::RAM)
        .unwrap();
    s2.vttbr(2);
    tlb.take();
    s2.protect(0x4000_0000, 4 * K4, S2Attrs::DEVICE).unwrap();
    let ev = tlb.take();
    let ipas: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Ev::Ipa { ipa, live, .. } => Some((*ipa, *live)),
            _ => None,
        })
        .collect();
    assert_eq!(ipas.len(), 4);
    assert!(ipas.iter().all(|(_, live)| live.is_none()));
    assert_eq!(
        s2.translate(0x4000_3000),
        Some((0x8000_3000, S2Attrs::DEVICE))
    );
}

#[test]
fn map_replace_remaps_with_bbm_and_merges_tables() {
    let (mut s2, alloc, tlb) = new_table();
    // 512 pages (PA not 2 MiB aligned) -> one level-3 table.
    s2.map(0x4000_0000, 0x8000_1000, M2, S2Attrs::RAM).unwrap();
    let with_table = alloc.0.live();
    s2.vttbr(4);
    tlb.take();
    assert_eq!(
        s2.map(0x4000_0000, 0x9000_0000, M2, S2Attrs::RAM),
        Err(Error::AlreadyMapped)
    );
    s2.map_replace(0x4000_0000, 0x9000_0000, M2, S2Attrs::RAM_RO)
        .unwrap();
    let m = s2.lookup(0x4000_0000).unwrap();
    assert_eq!((m.level, m.pa, m.attrs), (2, 0x9000_0000, S2Attrs::RAM_RO));
    assert_eq!(
        alloc.0.live(),
        with_table - 1,
        "level-3 table freed on merge"
    );
    let ev = tlb.take();
    assert_eq!(ev[0], Ev::Vmid { vmid: 4 });
    // Remapping one page of the block elsewhere: split, then BBM on that page.
    s2.map_replace(0x4000_2000, 0xa000_0000, K4, S2Attrs::RAM)
        .unwrap();
    let ev = tlb.take();
    let breaks: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Ev::Ipa {
                ipa, level, live, ..
            } => Some((*ipa, *level, *live)),
            _ => None,
        })
        .collect();
    assert_eq!(breaks, vec![(0x4000_0000, 2, None), (0x4000_2000, 3, None)]);
    assert_eq!(s2.translate(0x4000_2000), Some((0xa000_0000, S2Attrs::RAM)));
    assert_eq!(
        s2.translate(0x4000_3000),
        Some((0x9000_3000, S2Attrs::RAM_RO))
    );
}

#[test]
fn unmap_frees_empty_tables() {
    let (mut s2, alloc, _) = new_table();
    let base = alloc.0.live();
    assert_eq!(base, 2);
    let ipas = [
        0x1000,
        0x4000_3000,
        0x7f_0000_0000,
        0x55_5555_5000,
        0x4000_5000,
    ];
    for (i, ipa) in ipas.iter().enumerate() {
        s2.map(*ipa, 0x1000 * (i as u64 + 1), K4, S2Attrs::RAM)
            .unwrap();
    }
    assert!(alloc.0.live() > base);
    for ipa in ipas {
        s2.unmap(ipa, K4).unwrap();
    }
    assert_eq!(alloc.0.live(), base);
    // Blocks split into tables, then everything unmapped.
    s2.map(0, 0, 4 * G1, S2Attrs::RAM).unwrap();
    s2.protect(G1 + 3 * K4, K4, S2Attrs::RAM_RO).unwrap();
    s2.unmap(3 * G1 + M2 + K4, K4).unwrap();
    assert!(alloc.0.live() > base + 2);
    s2.unmap(0, 4 * G1).unwrap();
    assert_eq!(alloc.0.live(), base);
    // Unmapping a hole is fine.
    s2.unmap(0, 1 << 40).unwrap();
    assert_eq!(alloc.0.live(), base);
}

#[test]
fn drop_frees_everything_and_invalidates_vmid() {
    let (mut s2, alloc, tlb) = new_table();
    s2.map(0x1000, 0x1000, 3 * M2, S2Attrs::RAM).unwrap();
    s2.vttbr(5);
    tlb.take();
    drop(s2);
    assert_eq!(alloc.0.live(), 0);
    assert_eq!(tlb.take(), vec![Ev::Vmid { vmid: 5 }]);
}

#[test]
fn no_tlb_maintenance_before_a_vmid_is_assigned() {
    let (mut s2, _, tlb) = new_table();
    s2.map(0, 0, M2, S2Attrs::RAM).unwrap();
    s2.unmap(0, K4).unwrap();
    assert!(tlb.take().iter().all(|e| matches!(e, Ev::Publish)));
}

#[test]
fn every_start_level_and_concatenation() {
    // (PARange, IPA limit): level 2 x4, level 2 x16, level 1 x1, level 1 x16, level 0.
    for (parange, limit) in [
        (0b0000, 32),
        (0b0011, 34),
        (0b0010, 39),
        (0b0100, 43),
        (0b0101, 48),
    ] {
        let cfg = Stage2Config::new(parange, limit, true).unwrap();
        let alloc = TestAlloc::new();
        let mut s2 = Stage2Table::with_tlb(cfg, alloc.clone(), RecTlb::default()).unwrap();
        assert_eq!(alloc.0.live(), cfg.root_tables() as usize);
        let top = cfg.ipa_size();
        let pa_top = 1u64 << cfg.pa_bits();
        // Last 1 GiB + 2 MiB + 4 KiB below the top of the IPA space, and the first page.
        let ipa = top - G1 - M2 - K4;
        let pa = pa_top - G1 - M2 - K4;
        s2.map(ipa, pa, G1 + M2 + K4, S2Attrs::RAM).unwrap();
        s2.map(0, 0, K4, S2Attrs::RAM_RO).unwrap();
        assert_eq!(s2.translate(ipa), Some((pa, S2Attrs::RAM)));
        assert_eq!(s2.lookup(top - 1).unwrap().pa, pa_top - 1);
        // 1 GiB block at the top, unless the walk starts at level 2 (then 2 MiB blocks).
        let expect = cfg.start_level().max(1);
        assert_eq!(
            s2.lookup(top - G1).unwrap().level,
            expect,
            "{parange} {limit}"
        );
        assert_eq!(s2.lookup(ipa + K4).unwrap().level, 2);
        assert_eq!(s2.lookup(ipa).unwrap().level, 3);
        assert_eq!(s2.translate(0), Some((0, S2Attrs::RAM_RO)));
        assert_eq!(s2.translate(ipa - K4), None);
        assert_eq!(
            s2.map(top - K4, 0, 2 * K4, S2Attrs::RAM),
            Err(Error::OutOfIpaRange)
        );
        s2.unmap(0, top).unwrap();
        assert_eq!(alloc.0.live(), cfg.root_tables() as usize);
        assert_eq!(s2.translate(top - 1), None);
    }
}
