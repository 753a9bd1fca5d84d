//! Dirty logging: write protection, block splitting, fault handling, bitmap hand-out,
//! restart, interaction with map/protect, TLB maintenance, and a property test.

mod common;

use std::collections::BTreeSet;

use common::{hw_walk, Ev, RecTlb, TestAlloc};
use proptest::prelude::*;
use stage2::{Error, S2Attrs, Stage2Config, Stage2Table};

const K4: u64 = 4 << 10;
const M2: u64 = 2 << 20;
const RAM: u64 = 0x4000_0000;
const PA: u64 = 0x8000_0000;
/// S2AP[1], the stage-2 write permission bit.
const W: u64 = 1 << 7;
/// The software "write-protected for logging" bit.
const SW: u64 = 1 << 55;

type Table = Stage2Table<TestAlloc, RecTlb>;

fn new_table() -> (Table, TestAlloc, RecTlb) {
    let alloc = TestAlloc::new();
    let tlb = RecTlb::default();
    let cfg = Stage2Config::new(0b0010, 40, false).unwrap();
    let s2 = Stage2Table::with_tlb(cfg, alloc.clone(), tlb.clone()).unwrap();
    tlb.attach(&alloc, s2.root_pa(), s2.config().start_level());
    (s2, alloc, tlb)
}

fn desc(s2: &Table, alloc: &TestAlloc, ipa: u64) -> (u64, u32) {
    hw_walk(&alloc.0, s2.root_pa(), s2.config().start_level(), ipa).expect("mapped")
}

/// 8 MiB of RAM in 2 MiB blocks, then a 2 MiB read-only block, a 4 KiB page region.
fn populated() -> (Table, TestAlloc, RecTlb) {
    let (mut s2, alloc, tlb) = new_table();
    s2.map(RAM, PA, 8 << 20, S2Attrs::RAM).unwrap();
    s2.map(RAM + (8 << 20), PA + (8 << 20), M2, S2Attrs::RAM_RO)
        .unwrap();
    s2.map(
        RAM + (10 << 20),
        PA + (10 << 20) + K4,
        16 * K4,
        S2Attrs::RAM,
    )
    .unwrap();
    s2.vttbr(5);
    tlb.take();
    (s2, alloc, tlb)
}

#[test]
fn start_splits_writable_blocks_and_write_protects() {
    let (mut s2, alloc, tlb) = populated();
    assert_eq!(s2.lookup(RAM).unwrap().level, 2);
    let before = alloc.0.live();
    s2.start_dirty_log(RAM, 12 << 20).unwrap();
    // Four writable 2 MiB blocks became four level-3 tables; the read-only block stays.
    assert_eq!(alloc.0.live(), before + 4);
    for ipa in (RAM..RAM + (8 << 20)).step_by(K4 as usize) {
        let (d, level) = desc(&s2, &alloc, ipa);
        assert_eq!(level, 3, "{ipa:#x}");
        assert_eq!(d & (W | SW), SW, "{ipa:#x} write-protected and marked");
        // The VM's view is unchanged.
        assert_eq!(s2.translate(ipa), Some((PA + ipa - RAM, S2Attrs::RAM)));
    }
    let (d, level) = desc(&s2, &alloc, RAM + (8 << 20));
    assert_eq!((level, d & (W | SW)), (2, 0), "read-only block untouched");
    let (d, _) = desc(&s2, &alloc, RAM + (10 << 20));
    assert_eq!(d & (W | SW), SW);
    // Splits were break-before-make: each broken block was invalid when invalidated.
    let log = tlb.take();
    let breaks: Vec<_> = log
        .iter()
        .filter(|e| matches!(e, Ev::Ipa { level: 2, .. }))
        .collect();
    assert_eq!(breaks.len(), 4);
    assert!(breaks.iter().all(|e| matches!(
        e,
        Ev::Ipa {
            live: None,
            vmid: 5,
            ..
        }
    )));
    // 2048 + 16 pages changed: one VMID-wide invalidation instead of 2064 TLBIs.
    assert!(log.contains(&Ev::Vmid { vmid: 5 }));
    assert!(
        log.iter()
            .filter(|e| matches!(e, Ev::Ipa { level: 3, .. }))
            .count()
            <= 64
    );
    assert_eq!(s2.start_dirty_log(RAM, K4), Err(Error::DirtyLogActive));
}

#[test]
fn exactly_the_written_pages_are_dirty() {
    let (mut s2, alloc, tlb) = populated();
    s2.start_dirty_log(RAM, 12 << 20).unwrap();
    tlb.take();
    let written = [
        RAM,
        RAM + 0x234,
        RAM + M2 + 5 * K4,
        RAM + (10 << 20) + 15 * K4,
    ];
    for ipa in written {
        assert_eq!(s2.handle_write_fault(ipa), Ok(true));
        let (d, _) = desc(&s2, &alloc, ipa);
        assert_eq!(d & (W | SW), W | SW, "writable again, still marked");
    }
    // Giving write permission back is followed by a completed TLBI of that page.
    let log = tlb.take();
    assert!(log.contains(&Ev::Ipa {
        vmid: 5,
        ipa: RAM + M2 + 5 * K4,
        level: 3,
        live: Some(desc(&s2, &alloc, RAM + M2 + 5 * K4).0),
    }));
    assert!(matches!(log.last(), Some(Ev::Sync { vmid: 5, .. })));
    // Not tracked: read-only RAM, outside the range, unmapped.
    assert_eq!(s2.handle_write_fault(RAM + (8 << 20)), Ok(false));
    assert_eq!(s2.handle_write_fault(RAM + (20 << 20)), Ok(false));
    assert_eq!(s2.handle_write_fault(RAM + (11 << 20)), Ok(false));

    let dirty = s2.take_dirty().unwrap();
    let got: Vec<u64> = dirty.iter().collect();
    assert_eq!(
        got,
        vec![RAM, RAM + M2 + 5 * K4, RAM + (10 << 20) + 15 * K4],
        "page granularity, deduplicated"
    );
    assert_eq!(dirty.count(), 3);
    assert!(dirty.is_dirty(RAM + 0xfff) && !dirty.is_dirty(RAM + K4));
    assert_eq!((dirty.base(), dirty.pages()), (RAM, 3072));
    // The reported pages are write-protected again, the others never stopped being.
    for ipa in written {
        let (d, _) = desc(&s2, &alloc, ipa);
        assert_eq!(d & (W | SW), SW);
    }
    // A few pages: per-page invalidation, no VMID-wide flush.
    let log = tlb.take();
    assert!(!log.iter().any(|e| matches!(e, Ev::Vmid { .. })));
    assert_eq!(
        log.iter().filter(|e| matches!(e, Ev::Ipa { .. })).count(),
        3
    );
    assert!(s2.take_dirty().unwrap().is_empty());
    // Written again after the hand-out: dirty again.
    assert_eq!(s2.handle_write_fault(RAM), Ok(true));
    assert_eq!(
        s2.take_dirty().unwrap().iter().collect::<Vec<_>>(),
        vec![RAM]
    );
}

#[test]
fn stop_restores_write_permission_and_restart_is_clean() {
    let (mut s2, alloc, _tlb) = populated();
    assert!(s2.take_dirty().is_none() && s2.stop_dirty_log().is_none());
    s2.start_dirty_log(RAM, 8 << 20).unwrap();
    s2.handle_write_fault(RAM + 3 * K4).unwrap();
    let last = s2.stop_dirty_log().unwrap();
    assert_eq!(last.iter().collect::<Vec<_>>(), vec![RAM + 3 * K4]);
    for ipa in (RAM..RAM + (8 << 20)).step_by(K4 as usize) {
        let (d, level) = desc(&s2, &alloc, ipa);
        assert_eq!(
            (level, d & (W | SW)),
            (3, W),
            "{ipa:#x}: writable, unmarked, still split"
        );
    }
    assert_eq!(s2.handle_write_fault(RAM + 3 * K4), Ok(false));
    assert_eq!(s2.dirty_log_range(), None);
    // Restart: nothing dirty from the previous run.
    let live = alloc.0.live();
    s2.start_dirty_log(RAM, 8 << 20).unwrap();
    assert_eq!(alloc.0.live(), live, "already split: no new tables");
    assert_eq!(s2.dirty_log_range(), Some((RAM, 8 << 20)));
    assert!(s2.take_dirty().unwrap().is_empty());
    s2.handle_write_fault(RAM + 7 * K4).unwrap();
    assert_eq!(
        s2.take_dirty().unwrap().iter().collect::<Vec<_>>(),
        vec![RAM + 7 * K4]
    );
    s2.stop_dirty_log();
    // Remapping merges blocks again.
    s2.map_replace(RAM, PA, 8 << 20, S2Attrs::RAM).unwrap();
    assert_eq!(s2.lookup(RAM).unwrap().level, 2);
}

#[test]
fn map_and_protect_inside_a_logged_range() {
    let (mut s2, alloc, _tlb) = new_table();
    s2.vttbr(1);
    s2.start_dirty_log(RAM, 16 << 20).unwrap();
    // A new mapping in the logged range is tracked (and split) at once.
    s2.map(RAM, PA, 4 << 20, S2Attrs::RAM).unwrap();
    let (d, level) = desc(&s2, &alloc, RAM + M2);
    assert_eq!((level, d & (W | SW)), (3, SW));
    assert_eq!(s2.handle_write_fault(RAM + M2), Ok(true));
    // Made read-only: no longer tracked, stays read-only on a write fault.
    s2.protect(RAM + M2, K4, S2Attrs::RAM_RO).unwrap();
    let (d, _) = desc(&s2, &alloc, RAM + M2);
    assert_eq!(d & (W | SW), 0);
    assert_eq!(s2.handle_write_fault(RAM + M2), Ok(false));
    assert_eq!(s2.translate(RAM + M2).unwrap().1, S2Attrs::RAM_RO);
    // Made writable again: write-protected for logging again.
    s2.protect(RAM + M2, K4, S2Attrs::RAM).unwrap();
    let (d, _) = desc(&s2, &alloc, RAM + M2);
    assert_eq!(d & (W | SW), SW);
    // map_replace of a page inside the range: tracked too.
    s2.map_replace(RAM + K4, PA + (64 << 20), K4, S2Attrs::RAM_NX)
        .unwrap();
    let (d, _) = desc(&s2, &alloc, RAM + K4);
    assert_eq!(d & (W | SW), SW);
    assert_eq!(s2.handle_write_fault(RAM + K4), Ok(true));
    let dirty = s2.take_dirty().unwrap();
    assert_eq!(dirty.iter().collect::<Vec<_>>(), vec![RAM + K4, RAM + M2]);
    // Unmapped pages simply disappear; dropping the table with a log running leaks nothing.
    s2.unmap(RAM, 4 << 20).unwrap();
    assert_eq!(s2.handle_write_fault(RAM + K4), Ok(false));
    drop(s2);
    assert_eq!(alloc.0.live(), 0);
}

#[test]
fn out_of_memory_while_splitting_rolls_back() {
    let (mut s2, alloc, _tlb) = populated();
    alloc.0.set_limit(Some(alloc.0.live() + 2));
    assert_eq!(s2.start_dirty_log(RAM, 8 << 20), Err(Error::OutOfMemory));
    assert_eq!(s2.dirty_log_range(), None);
    for ipa in (RAM..RAM + (8 << 20)).step_by(K4 as usize) {
        let (d, _) = desc(&s2, &alloc, ipa);
        assert_eq!(d & (W | SW), W, "{ipa:#x} writable again");
        assert_eq!(s2.translate(ipa), Some((PA + ipa - RAM, S2Attrs::RAM)));
    }
    alloc.0.set_limit(None);
    s2.start_dirty_log(RAM, 8 << 20).unwrap();
}

#[test]
fn errors() {
    let (mut s2, _, _) = new_table();
    assert_eq!(s2.start_dirty_log(RAM + 1, K4), Err(Error::Misaligned));
    assert_eq!(s2.start_dirty_log(1 << 40, K4), Err(Error::OutOfIpaRange));
    assert_eq!(s2.handle_write_fault(RAM), Ok(false));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random writes over several rounds: each hand-out equals exactly the set of pages
    /// written in that round (within the logged, writable part), and every logged page is
    /// write-protected after each hand-out.
    #[test]
    fn bitmap_equals_written_set(
        rounds in proptest::collection::vec(
            proptest::collection::vec(0u64..(6 << 8), 0..64), 1..5),
        log_start in 0u64..64,
        log_pages in 1u64..1600,
    ) {
        let (mut s2, alloc, _tlb) = populated();
        // Pages of the 12 MiB window; 0x800..0xa00 is the read-only block; 0xa10.. unmapped.
        let start = RAM + log_start * K4;
        s2.start_dirty_log(start, log_pages * K4).unwrap();
        let logged = |p: u64| (log_start..log_start + log_pages).contains(&p);
        let writable = |p: u64| p < 0x800 || (0xa00..0xa10).contains(&p);
        for writes in &rounds {
            let mut want = BTreeSet::new();
            for &p in writes {
                let p = p * 2; // spread over the 12 MiB window
                let tracked = s2.handle_write_fault(RAM + p * K4 + 8).unwrap();
                prop_assert_eq!(tracked, logged(p) && writable(p));
                if tracked {
                    want.insert(RAM + p * K4);
                }
            }
            let got: BTreeSet<u64> = s2.take_dirty().unwrap().iter().collect();
            prop_assert_eq!(got, want);
            for p in log_start..log_start + log_pages {
                if writable(p) {
                    let (d, _) = desc(&s2, &alloc, RAM + p * K4);
                    prop_assert_eq!(d & (W | SW), SW);
                }
            }
        }
        s2.stop_dirty_log();
        for p in 0..0xa10u64 {
            let want = if writable(p) { S2Attrs::RAM } else { S2Attrs::RAM_RO };
            prop_assert_eq!(s2.translate(RAM + p * K4).map(|m| m.1), Some(want));
        }
    }
}
