//! `role=neighbour`: the VM beside the storm. For `rounds` rounds it fills the upper half
//! of its RAM with a pattern tagged [`crate::NEIGH_TAG`] (which the storm looks for in
//! everything it reads) and reads it back, and reads its whole virtio disk, whose image
//! xtask wrote with a known pattern (word `j` = [`crate::DISK_TAG`] << 32 | `j`), checking
//! every word and summing them; each round also writes the round number into the disk's
//! last sector and reads it back. It prints both checksums with the values the patterns
//! give, and `neighbour: PASS` (SYSTEM_OFF) or a `FAIL` line (SYSTEM_RESET).

use core::cell::UnsafeCell;

use guest_rt::platform::Platform;
use guest_rt::psci;
use guest_rt::virtio_mmio::{reg, MAGIC};

use crate::{neighbour_word, DISK_TAG};

/// virtio-blk's `capacity` (in 512-byte sectors), the first field of its configuration.
const BLK_CAPACITY: u64 = reg::CONFIG;

/// Queue size the driver uses.
const QSIZE: usize = 4;
/// Bytes per request.
const CHUNK: usize = 4096;

/// Descriptor table, available ring, used ring, request header, data and status, in one
/// page-aligned block.
#[repr(C, align(4096))]
struct Dma {
    desc: [[u64; 2]; QSIZE],
    avail: [u16; 3 + QSIZE],
    _pad: [u8; 4096 - 16 * QSIZE - 2 * (3 + QSIZE)],
    used: [u32; 2 + 2 * QSIZE],
    header: [u64; 2],
    status: u8,
    _pad2: [u8; 4096 - 4 * (2 + 2 * QSIZE) - 16 - 1],
    data: [u8; CHUNK],
}

struct DmaCell(UnsafeCell<Dma>);
// SAFETY: the neighbour runs on one vCPU.
unsafe impl Sync for DmaCell {}
static DMA: DmaCell = DmaCell(UnsafeCell::new(Dma {
    desc: [[0; 2]; QSIZE],
    avail: [0; 3 + QSIZE],
    _pad: [0; 4096 - 16 * QSIZE - 2 * (3 + QSIZE)],
    used: [0; 2 + 2 * QSIZE],
    header: [0; 2],
    status: 0,
    _pad2: [0; 4096 - 4 * (2 + 2 * QSIZE) - 16 - 1],
    data: [0; CHUNK],
}));

fn r32(a: u64) -> u32 {
    // SAFETY: a virtio-mmio register of the VM's own transport (identity-mapped device
    // gigabyte).
    unsafe { (a as *const u32).read_volatile() }
}

fn w32(a: u64, v: u32) {
    // SAFETY: as in `r32`.
    unsafe { (a as *mut u32).write_volatile(v) }
}

fn fail(what: core::fmt::Arguments<'_>) -> ! {
    guest_rt::println!("neighbour: FAIL {what}");
    psci::system_reset()
}

/// The virtio-blk transport, set up with one queue.
struct Blk {
    base: u64,
    sectors: u64,
    avail_idx: u16,
}

impl Blk {
    fn find(dtb: usize) -> Blk {
        // SAFETY: the DTB from the boot protocol, identity mapped.
        let fdt = unsafe { fdt::Fdt::from_ptr(dtb as *const u8) }
            .unwrap_or_else(|_| fail(format_args!("device tree")));
        for node in fdt.find_all_nodes("/virtio_mmio") {
            let _ = node;
        }
        let base = fdt
            .all_nodes()
            .filter(|n| {
                n.compatible()
                    .is_some_and(|c| c.all().any(|x| x == "virtio,mmio"))
            })
            .filter_map(|n| n.reg()?.next().map(|r| r.starting_address as u64))
            .find(|&b| r32(b + reg::MAGIC) == MAGIC && r32(b + reg::DEVICE_ID) == 2)
            .unwrap_or_else(|| fail(format_args!("no virtio-blk transport")));
        if r32(base + reg::VERSION) != 2 {
            fail(format_args!(
                "virtio-mmio version {}",
                r32(base + reg::VERSION)
            ));
        }
        w32(base + reg::STATUS, 0);
        w32(base + reg::STATUS, 1 | 2);
        w32(base + reg::DEVICE_FEATURES_SEL, 1);
        if r32(base + reg::DEVICE_FEATURES) & 1 == 0 {
            fail(format_args!("no VIRTIO_F_VERSION_1"));
        }
        w32(base + reg::DRIVER_FEATURES_SEL, 0);
        w32(base + reg::DRIVER_FEATURES, 0);
        w32(base + reg::DRIVER_FEATURES_SEL, 1);
        w32(base + reg::DRIVER_FEATURES, 1);
        w32(base + reg::STATUS, 1 | 2 | 8);
        if r32(base + reg::STATUS) & 8 == 0 {
            fail(format_args!("FEATURES_OK refused"));
        }
        w32(base + reg::QUEUE_SEL, 0);
        if (r32(base + reg::QUEUE_NUM_MAX) as usize) < QSIZE {
            fail(format_args!("queue too small"));
        }
        w32(base + reg::QUEUE_NUM, QSIZE as u32);
        let dma = DMA.0.get();
        // SAFETY: only the addresses of the static DMA block's fields are taken.
        let (d, a, u) = unsafe {
            (
                core::ptr::addr_of!((*dma).desc) as u64,
                core::ptr::addr_of!((*dma).avail) as u64,
                core::ptr::addr_of!((*dma).used) as u64,
            )
        };
        for (off, addr) in [
            (reg::QUEUE_DESC, d),
            (reg::QUEUE_DRIVER, a),
            (reg::QUEUE_DEVICE, u),
        ] {
            w32(base + off, addr as u32);
            w32(base + off + 4, (addr >> 32) as u32);
        }
        w32(base + reg::QUEUE_READY, 1);
        w32(base + reg::STATUS, 1 | 2 | 8 | 4);
        let sectors =
            u64::from(r32(base + BLK_CAPACITY)) | (u64::from(r32(base + BLK_CAPACITY + 4)) << 32);
        Blk {
            base,
            sectors,
            avail_idx: 0,
        }
    }

    /// One request of [`CHUNK`] bytes at `sector` (`write`: from the data buffer).
    fn request(&mut self, write: bool, sector: u64) {
        let dma = DMA.0.get();
        // SAFETY: the neighbour's own DMA block; the device reads and writes it only
        // between the notify below and the used-ring update polled for.
        unsafe {
            (*dma).header = [u64::from(write), sector];
            (*dma).status = 0xff;
            let h = core::ptr::addr_of!((*dma).header) as u64;
            let dat = core::ptr::addr_of!((*dma).data) as u64;
            let st = core::ptr::addr_of!((*dma).status) as u64;
            // addr, then len | flags << 32 | next << 48
            (*dma).desc[0] = [h, 16 | (1 << 32) | (1 << 48)];
            let dflags = 1 | if write { 0 } else { 2 };
            (*dma).desc[1] = [dat, CHUNK as u64 | (dflags << 32) | (2 << 48)];
            (*dma).desc[2] = [st, 1 | (2 << 32)];
            let slot = usize::from(self.avail_idx) % QSIZE;
            core::ptr::write_volatile(&mut (*dma).avail[2 + slot], 0);
            self.avail_idx = self.avail_idx.wrapping_add(1);
            aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::SY);
            core::ptr::write_volatile(&mut (*dma).avail[1], self.avail_idx);
            aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::SY);
            w32(self.base + reg::QUEUE_NOTIFY, 0);
            let mut polls = 0u64;
            while core::ptr::read_volatile(&(*dma).used[0]) >> 16 != u32::from(self.avail_idx) {
                polls += 1;
                if polls > 50_000_000 {
                    fail(format_args!(
                        "virtio-blk request at sector {sector} never completed"
                    ));
                }
            }
            let s = r32(self.base + reg::INTERRUPT_STATUS);
            w32(self.base + reg::INTERRUPT_ACK, s);
            let status = core::ptr::read_volatile(&(*dma).status);
            if status != 0 {
                fail(format_args!(
                    "virtio-blk request at sector {sector}: status {status}"
                ));
            }
        }
    }

    fn data(&self) -> &'static mut [u8; CHUNK] {
        // SAFETY: one vCPU; the device is idle between requests.
        unsafe { &mut (*DMA.0.get()).data }
    }
}

/// Sum of the disk pattern's words `0..words`.
fn disk_sum(words: u64) -> u64 {
    (0..words).fold(0u64, |s, j| s.wrapping_add((u64::from(DISK_TAG) << 32) | j))
}

/// The neighbour's workload; never returns.
pub fn run(plat: &Platform, rounds: u64) -> ! {
    guest_rt::mmu::enable();
    let (ram, size) = plat.ram;
    let lo = ram + size / 2;
    let hi = ram + size;
    let mut blk = Blk::find(plat.dtb);
    // the image xtask wrote: whole sectors of pattern, the last sector free for writes
    let pattern_sectors = blk.sectors.saturating_sub(8) & !7;
    guest_rt::println!(
        "neighbour: {rounds} rounds over RAM {lo:#x}..{hi:#x} and {} disk sectors",
        blk.sectors
    );
    if pattern_sectors == 0 {
        fail(format_args!("disk of {} sectors: too small", blk.sectors));
    }
    let ram_expect = (lo..hi)
        .step_by(8)
        .fold(0u64, |s, a| s.wrapping_add(neighbour_word(a)));
    let disk_expect = disk_sum(pattern_sectors * 64);
    let (mut ram_sum, mut disk_sum_seen) = (0, 0);
    for round in 0..rounds {
        let mut a = lo;
        while a < hi {
            // SAFETY: the upper half of RAM, above this image and its stack, identity mapped.
            unsafe { (a as *mut u64).write_volatile(neighbour_word(a)) };
            a += 8;
        }
        ram_sum = 0u64;
        let mut a = lo;
        while a < hi {
            // SAFETY: as above.
            let v = unsafe { (a as *const u64).read_volatile() };
            if v != neighbour_word(a) {
                fail(format_args!(
                    "RAM word at {a:#x} is {v:#x}, wrote {:#x} (round {round})",
                    neighbour_word(a)
                ));
            }
            ram_sum = ram_sum.wrapping_add(v);
            a += 8;
        }
        disk_sum_seen = 0u64;
        let mut sector = 0;
        while sector < pattern_sectors {
            blk.request(false, sector);
            for (i, w) in blk.data().chunks_exact(8).enumerate() {
                let v = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
                let j = sector * 64 + i as u64;
                if v != (u64::from(DISK_TAG) << 32) | j {
                    fail(format_args!(
                        "disk word {j} (sector {sector}) is {v:#x} (round {round})"
                    ));
                }
                disk_sum_seen = disk_sum_seen.wrapping_add(v);
            }
            sector += (CHUNK / 512) as u64;
        }
        let last = blk.sectors - 8;
        blk.data().fill(round as u8 ^ 0xa5);
        blk.request(true, last);
        blk.data().fill(0);
        blk.request(false, last);
        if blk.data().iter().any(|&b| b != round as u8 ^ 0xa5) {
            fail(format_args!(
                "disk sectors {last}.. did not keep what round {round} wrote"
            ));
        }
    }
    if ram_sum != ram_expect || disk_sum_seen != disk_expect {
        fail(format_args!("checksums: RAM {ram_sum:#x} (pattern gives {ram_expect:#x}), disk {disk_sum_seen:#x} (pattern gives {disk_expect:#x})"));
    }
    guest_rt::println!(
        "neighbour: RAM checksum {ram_sum:#x} ok ({} MiB x {rounds} rounds)",
        (hi - lo) >> 20
    );
    guest_rt::println!("neighbour: disk checksum {disk_sum_seen:#x} ok ({pattern_sectors} sectors x {rounds} rounds)");
    guest_rt::println!("neighbour: PASS");
    psci::system_off()
}
