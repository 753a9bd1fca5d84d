//! 4. Dirty-page logging (the hypervisor's vendor service, see
//!    `crates/hypervisor/src/arch/dirty_log.rs`): logs 4 MiB of RAM (two 2 MiB Stage-2 blocks,
//!    split into pages by the hypervisor), writes chosen pages, reads others, and checks that
//!    the collected bitmap names exactly the written pages, that collecting re-arms the log,
//!    that the data written is intact, and that after stopping, writes no longer exit.
//!    Natively (no hypervisor) the calls answer NOT_SUPPORTED and the check is skipped.

use core::ptr::{read_volatile, write_volatile};

use guest_rt::report::Report;
use guest_rt::{exit_count, psci};

const HV_DIRTY_LOG_START: u32 = 0xc600_0003;
const HV_DIRTY_LOG_COLLECT: u32 = 0xc600_0004;
const HV_DIRTY_LOG_STOP: u32 = 0xc600_0005;
const NOT_SUPPORTED: i64 = -1;

const PAGE: u64 = 4096;
/// Offset of the logged range from the start of RAM (well past the image and its stack).
const LOG_OFFSET: u64 = 16 << 20;
/// Length of the logged range: 1024 pages.
const LOG_LEN: u64 = 4 << 20;
const PAGES: usize = (LOG_LEN / PAGE) as usize;

/// The bitmap the hypervisor fills in (outside the logged range: in the image's .bss).
static mut BITMAP: [u64; PAGES / 64] = [0; PAGES / 64];

fn bitmap() -> [u64; PAGES / 64] {
    // SAFETY: only this (single-CPU) guest touches BITMAP, and only through these volatile
    // copies; the hypervisor writes it during the COLLECT call, before this read.
    unsafe { read_volatile(&raw const BITMAP) }
}

fn collect() -> (i64, [u64; PAGES / 64]) {
    let n = psci::call(
        HV_DIRTY_LOG_COLLECT,
        &raw const BITMAP as u64,
        core::mem::size_of::<[u64; PAGES / 64]>() as u64,
        0,
    );
    (n, bitmap())
}

fn page_addr(base: u64, page: usize) -> *mut u64 {
    (base + page as u64 * PAGE + 8 * (page as u64 % 16)) as *mut u64
}

fn write_page(base: u64, page: usize, round: u64) {
    // SAFETY: the page lies in this VM's RAM, 16 MiB past its start, which nothing else in
    // this guest uses.
    unsafe {
        write_volatile(
            page_addr(base, page),
            0xd1d1_0000 ^ (page as u64) ^ (round << 32),
        )
    };
}

fn read_page(base: u64, page: usize) -> u64 {
    // SAFETY: as in `write_page`.
    unsafe { read_volatile(page_addr(base, page)) }
}

/// The pages whose bits are set.
fn set_pages(map: &[u64; PAGES / 64]) -> impl Iterator<Item = usize> + '_ {
    (0..PAGES).filter(|p| map[p / 64] >> (p % 64) & 1 != 0)
}

/// Whether `map` holds exactly `want` (sorted).
fn exactly(map: &[u64; PAGES / 64], want: &[usize]) -> bool {
    set_pages(map).eq(want.iter().copied())
}

/// Runs the dirty-log checks on RAM starting at `ram_base`.
pub fn run(report: &mut Report, ram_base: u64) {
    let base = ram_base + LOG_OFFSET;
    let r = psci::call(HV_DIRTY_LOG_START, base, LOG_LEN, 0);
    if r == NOT_SUPPORTED {
        crate::say!("dirty log: skipped (no hypervisor dirty-log service)");
        return;
    }
    report.check(
        "dirty log: start 1024 pages",
        r == 0,
        format_args!("START returned {r}"),
    );
    let again = psci::call(HV_DIRTY_LOG_START, base, LOG_LEN, 0);
    report.check(
        "dirty log: second start refused",
        again == -3,
        format_args!("returned {again}, DENIED (-3) expected"),
    );

    // Round 1: writes to pages at both ends and across the 2 MiB boundary; reads elsewhere.
    let written = [0usize, 3, 511, 512, 1023];
    for &p in &written {
        write_page(base, p, 1);
        write_page(base, p, 1); // a second write to the same page faults no more
    }
    let reads: u64 = [7usize, 100, 700].iter().map(|&p| read_page(base, p)).sum();
    let (n, map) = collect();
    report.check(
        "dirty log: round 1 bitmap",
        n == written.len() as i64 && exactly(&map, &written),
        format_args!(
            "{n} dirty page(s), expected {:?} (pages read, sum {reads:#x}, not dirty)",
            written
        ),
    );
    let (n, map) = collect();
    report.check(
        "dirty log: collect again without writes",
        n == 0 && exactly(&map, &[]),
        format_args!("{n} dirty page(s), expected none"),
    );

    // Round 2: the pages written before are write-protected again.
    let written2 = [3usize, 700];
    for &p in &written2 {
        write_page(base, p, 2);
    }
    let (n, map) = collect();
    report.check(
        "dirty log: round 2 bitmap",
        n == 2 && exactly(&map, &written2),
        format_args!("{n} dirty page(s), expected {written2:?}"),
    );
    let intact = written.iter().all(|&p| {
        let round = if written2.contains(&p) { 2 } else { 1 };
        read_page(base, p) == 0xd1d1_0000 ^ (p as u64) ^ (round << 32)
    }) && read_page(base, 700) == 0xd1d1_0000 ^ 700 ^ (2 << 32);
    report.check(
        "dirty log: data written under logging",
        intact,
        format_args!("every written value reads back"),
    );

    // Stop: writes no longer exit.
    write_page(base, 42, 3);
    let stopped = psci::call(HV_DIRTY_LOG_STOP, 0, 0, 0);
    let before = exit_count::snapshot();
    for p in [1usize, 42, 900] {
        write_page(base, p, 4);
    }
    let dirty_exits = exit_count::delta(before, exit_count::snapshot()).map(|d| d.get("dirty"));
    report.check(
        "dirty log: stop",
        stopped == 1 && dirty_exits == Some(0),
        format_args!(
            "STOP reported {stopped} page(s) dirtied since the last collect (1 expected); \
             dirty-log exits during three writes: {dirty_exits:?} (Some(0) expected)"
        ),
    );
}
