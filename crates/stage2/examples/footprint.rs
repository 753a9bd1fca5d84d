//! Prints how many table pages 1 GiB and 4 GiB guests need (with and without blocks) and how
//! many map calls per second the table code sustains on this host. A measurement, not a test:
//! `cargo run --release -p stage2 --example footprint`.

use std::collections::HashMap;
use std::time::Instant;

use stage2::{NoTlb, S2Attrs, Stage2Config, Stage2Table, TableAllocator};

/// Heap-backed table pages with fake physical addresses.
#[derive(Default)]
struct HeapAlloc {
    pages: HashMap<u64, Box<[u64; 512]>>,
    next: u64,
    live: usize,
}

// SAFETY: every page is a separate heap box that stays put until freed; addresses are unique.
unsafe impl TableAllocator for HeapAlloc {
    fn alloc_pages(&mut self, count: usize) -> Option<u64> {
        let align = count as u64 * 4096;
        let pa = (self.next.max(0x100_0000_0000)).div_ceil(align) * align;
        self.next = pa + align;
        for i in 0..count as u64 {
            self.pages.insert(pa + i * 4096, Box::new([0; 512]));
        }
        self.live += count;
        Some(pa)
    }
    fn free_pages(&mut self, pa: u64, count: usize) {
        for i in 0..count as u64 {
            self.pages.remove(&(pa + i * 4096));
        }
        self.live -= count;
    }
    fn phys_to_virt(&self, pa: u64) -> *mut u64 {
        self.pages[&pa].as_ptr() as *mut u64
    }
}

fn table(cfg: Stage2Config) -> Stage2Table<HeapAlloc, NoTlb> {
    Stage2Table::with_tlb(cfg, HeapAlloc::default(), NoTlb).unwrap()
}

fn main() {
    let cfg = Stage2Config::new(0b0010, 40, false).unwrap();
    println!(
        "config: {} bit IPA, start level {}, {} root table(s), VTCR_EL2 = {:#x}",
        cfg.ipa_bits(),
        cfg.start_level(),
        cfg.root_tables(),
        cfg.vtcr()
    );
    for gib in [1u64, 4] {
        let len = gib << 30;
        for (what, pa) in [
            ("1 GiB-aligned PA", 0x10_0000_0000u64),
            ("2 MiB-aligned PA", 0x10_0020_0000),
            ("4 KiB-aligned PA", 0x10_0000_1000),
        ] {
            let mut s2 = table(cfg);
            s2.map(0x4000_0000, pa, len, S2Attrs::RAM).unwrap();
            println!(
                "{gib} GiB guest, {what}: {} table pages ({} KiB)",
                s2.allocator().live,
                s2.allocator().live * 4
            );
        }
    }
    let mut s2 = table(cfg);
    let pages = (1u64 << 30) / 4096;
    let t = Instant::now();
    for i in 0..pages {
        s2.map(
            0x4000_0000 + i * 4096,
            0x10_0000_0000 + i * 4096,
            4096,
            S2Attrs::RAM,
        )
        .unwrap();
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "4 KiB map calls: {pages} in {dt:.3} s = {:.0} calls/s",
        pages as f64 / dt
    );
    let t = Instant::now();
    s2.unmap(0x4000_0000, 1 << 30).unwrap();
    println!(
        "unmap 1 GiB of pages: {:.3} s, {} table pages left",
        t.elapsed().as_secs_f64(),
        s2.allocator().live
    );
    let mut s2 = table(cfg);
    let t = Instant::now();
    for i in 0..512u64 {
        s2.map(
            0x4000_0000 + (i << 21),
            0x10_0000_0000 + (i << 21),
            2 << 20,
            S2Attrs::RAM,
        )
        .unwrap();
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "2 MiB map calls: 512 in {dt:.4} s = {:.0} calls/s",
        512.0 / dt
    );
}
