//! Block benchmark (bootarg `bench`): batches of sequential requests to the first virtio-blk
//! device through `virtio-drivers`' blocking API, timed with `CNTVCT_EL0`.
//!
//! The blocking API polls: it adds the request, writes `QueueNotify` (unless the device
//! suppressed notifications) and spins on the used ring; the device's used-buffer interrupt
//! is never enabled in this guest's GIC (it stays pending and is neither taken nor
//! acknowledged). The hypervisor's device processes the request inside the `QueueNotify`
//! write, so the spin finds it done at once.
//!
//! Per batch, the counter is read between ISBs before and after (the batch's own loop is
//! a handful of instructions per request and not subtracted), and outside that the calling
//! vCPU's exit counters (`guest_rt::exit_count`). Under QEMU `-icount shift=0` one
//! instruction is 1 ns of virtual time, so `t` ticks at `f` Hz are `t * 1e9 / f`
//! instructions; MB/s and requests/s are of that virtual time (10^6 bytes per MB). Lines:
//! `virtio-test: blk-bench <batch> <n> req: <instr/req> instr/req, <MB/s> MB/s, <req/s>
//! req/s` plus, under the hypervisor, `, exits/req <reason>=x.yy ...`; then
//! `virtio-test: blk-bench done`.

use alloc::vec;

use guest_rt::{exit_count, timer};
use virtio_drivers::device::blk::{VirtIOBlk, SECTOR_SIZE};
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// What one batch does.
#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
}

/// The batches: name, direction, requests, bytes per request. Each starts at sector 0 and
/// goes sequentially; the largest (50 x 64 KiB = 3.2 MiB) fits the hypervisor's 4 MiB RAM
/// disk.
const BATCHES: [(&str, Op, usize, usize); 3] = [
    ("read-4k", Op::Read, 200, 4096),
    ("write-4k", Op::Write, 200, 4096),
    ("read-64k", Op::Read, 50, 64 * 1024),
];

/// The largest request of [`BATCHES`].
const MAX_BYTES: usize = 64 * 1024;

/// Runs the benchmark on the block device `t`.
pub fn run(t: MmioTransport<'static>) -> Outcome {
    let mut blk = match VirtIOBlk::<GuestHal, _>::new(t) {
        Ok(b) => b,
        Err(e) => {
            say!("blk-bench: FAIL init: {:?}", e);
            return Outcome::Fail;
        }
    };
    let capacity = blk.capacity() as usize;
    let freq = timer::frequency();
    say!(
        "blk-bench: capacity {} sectors, counter {} Hz, polling (no interrupts)",
        capacity,
        freq
    );
    // From the heap, not the stack: 64 KiB, a filled pattern for the writes.
    let mut buf = vec![0u8; MAX_BYTES];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    for (name, op, n, bytes) in BATCHES {
        let sectors = bytes / SECTOR_SIZE;
        if n * sectors > capacity {
            say!(
                "blk-bench: FAIL {} needs {} sectors, the disk has {}",
                name,
                n * sectors,
                capacity
            );
            return Outcome::Fail;
        }
        if matches!(op, Op::Write) && blk.readonly() {
            say!("blk-bench: {} skipped (read-only disk)", name);
            continue;
        }
        let data = &mut buf[..bytes];
        let before = exit_count::snapshot();
        let start = timer::stamp();
        let mut result = Ok(());
        for i in 0..n {
            result = match op {
                Op::Read => blk.read_blocks(i * sectors, data),
                Op::Write => blk.write_blocks(i * sectors, data),
            };
            if result.is_err() {
                break;
            }
        }
        let end = timer::stamp();
        let after = exit_count::snapshot();
        if let Err(e) = result {
            say!("blk-bench: FAIL {}: {:?}", name, e);
            return Outcome::Fail;
        }
        let line = Line::new(end - start, freq, n as u64, bytes as u64);
        match exit_count::delta(before, after) {
            Some(d) => say!(
                "blk-bench {} {} req: {}, exits/req{}",
                name,
                n,
                line,
                d.per_op(n as u64)
            ),
            None => say!("blk-bench {} {} req: {}", name, n, line),
        }
    }
    say!("blk-bench done");
    Outcome::Ok
}

/// The figures of one batch: instructions (virtual ns) per request in tenths, MB/s and
/// requests per second of virtual time.
struct Line {
    tenths_per_req: u64,
    mb_s_tenths: u64,
    req_s: u64,
}

impl Line {
    fn new(ticks: u64, freq: u64, n: u64, bytes: u64) -> Self {
        // Virtual nanoseconds of the batch, times 10.
        let ns10 = (u128::from(ticks) * 10_000_000_000 / u128::from(freq.max(1))).max(1);
        let n = u128::from(n.max(1));
        let round = |num: u128, den: u128| ((num + den / 2) / den) as u64;
        Line {
            tenths_per_req: round(ns10, n),
            // bytes / ns = GB/s; MB/s = bytes * 1000 / ns; tenths: * 10_000 / ns = * 100_000 / ns10.
            mb_s_tenths: round(n * u128::from(bytes) * 100_000, ns10),
            // n * 1e9 / ns = n * 1e10 / ns10.
            req_s: round(n * 10_000_000_000, ns10),
        }
    }
}

impl core::fmt::Display for Line {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}.{} instr/req, {}.{} MB/s, {} req/s",
            self.tenths_per_req / 10,
            self.tenths_per_req % 10,
            self.mb_s_tenths / 10,
            self.mb_s_tenths % 10,
            self.req_s
        )
    }
}
