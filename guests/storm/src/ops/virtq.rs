//! Malformed virtqueues on every virtio-mmio transport of the VM: random feature and
//! status sequences, queue sizes of 0, 1, not a power of two or beyond the maximum,
//! descriptor tables with self-loops and cycles, `next` indices out of range, indirect
//! tables, buffers outside RAM, across the end of RAM or 4 GiB long, available indices
//! that jump, used rings across the end of RAM, notifications of queues that do not exist,
//! and resets in the middle.
//!
//! What the device may write is confined by construction: buffers the device can write
//! lie in the DMA area at the top of RAM, outside RAM, or across its end; descriptor
//! tables and available rings (which the device only reads) in the descriptor area.
//! Checked: every register access completes or aborts, the device never writes outside
//! those areas (a canary page between the storm and them stays intact), the storm keeps
//! running (no hang: the poll for used entries is bounded).

use crate::ops::{dev_read32, dev_write32, Ctx};
use crate::rng::Rng;
use crate::tally::{self, Kind};
use crate::targets::{DevKind, Targets, DMA_BUF_SIZE, DMA_DESC_SIZE, DMA_USED_SIZE};
use guest_rt::virtio_mmio::{reg, MAGIC};

/// Descriptor flags.
const F_NEXT: u16 = 1;
const F_WRITE: u16 = 2;
const F_INDIRECT: u16 = 4;

/// A buffer address the device may write at (DMA area, outside RAM, across RAM's end).
fn writable_addr(rng: &mut Rng, t: &Targets) -> u64 {
    match rng.below(4) {
        0 | 1 => t.dma_buf() + rng.below(DMA_BUF_SIZE),
        2 => t.outside(rng),
        _ => t.ram_end - rng.below(64),
    }
}

/// A table the device only reads: in the descriptor area, or outside RAM.
fn table_addr(rng: &mut Rng, t: &Targets) -> u64 {
    match rng.below(6) {
        0..=3 => t.dma_desc() + (rng.below(DMA_DESC_SIZE - 0x1_0000) & !0xf),
        4 => t.dma_desc() + rng.below(DMA_DESC_SIZE - 0x1_0000), // misaligned
        _ => t.outside(rng),
    }
}

/// A length: zero, small, huge.
fn length(rng: &mut Rng) -> u32 {
    match rng.below(5) {
        0 => 0,
        1 => 1 + rng.below(512) as u32,
        2 => u32::MAX,
        3 => 1 << (12 + rng.below(20)),
        _ => rng.next() as u32,
    }
}

/// Writes `n` random malformed descriptors at `table` (inside the descriptor area).
fn fill_descriptors(rng: &mut Rng, t: &Targets, table: u64, n: u64) {
    for i in 0..n {
        let mut flags = (rng.next() as u16) & (F_NEXT | F_WRITE | F_INDIRECT | 0x8);
        let addr = if flags & F_INDIRECT != 0 {
            table_addr(rng, t)
        } else {
            flags |= F_WRITE * u16::from(rng.chance(1, 2));
            writable_addr(rng, t)
        };
        let next: u16 = match rng.below(4) {
            0 => i as u16,                    // self-loop
            1 => ((i + 1) % n.max(1)) as u16, // a cycle through the table
            2 => rng.next() as u16,           // out of range
            _ => rng.below(n.max(1)) as u16,
        };
        let d = table + 16 * i;
        if !(t.dma_desc()..t.dma_used()).contains(&(d + 15)) {
            break;
        }
        // SAFETY: `d..d + 16` is inside the descriptor area (checked above), RAM the storm
        // owns and devices only read.
        unsafe {
            (d as *mut u64).write_volatile(addr);
            let len = if flags & F_INDIRECT != 0 {
                // an indirect table stays inside the descriptor area, however long
                length(rng) % 0x1_0000
            } else {
                length(rng)
            };
            ((d + 8) as *mut u32).write_volatile(len);
            ((d + 12) as *mut u16).write_volatile(flags);
            ((d + 14) as *mut u16).write_volatile(next);
        }
    }
}

/// One malformed-queue episode on a random transport.
pub fn op(ctx: &mut Ctx) {
    let t = ctx.targets;
    let virtio: [Option<u64>; 32] = {
        let mut v = [None; 32];
        for (slot, r) in v
            .iter_mut()
            .zip(t.regions().iter().filter(|r| r.kind == DevKind::Virtio))
        {
            *slot = Some(r.base);
        }
        v
    };
    let n = virtio.iter().filter(|v| v.is_some()).count() as u64;
    if n == 0 {
        return;
    }
    let rng = &mut ctx.rng;
    let base = virtio[rng.below(n) as usize].unwrap_or(0);
    if dev_read32(base + reg::MAGIC) != Some(MAGIC) {
        tally::fail(
            Kind::Virtq,
            format_args!("virtio-mmio at {base:#x}: bad MagicValue"),
        );
        return;
    }
    tally::count(Kind::Virtq);
    let w = |off: u64, v: u32| {
        dev_write32(base + off, v);
    };
    // features and status, in a random and often wrong order
    if rng.chance(3, 4) {
        w(reg::STATUS, 0);
    }
    w(reg::STATUS, 1 | 2);
    for _ in 0..rng.below(4) {
        w(reg::DEVICE_FEATURES_SEL, rng.below(4) as u32);
        let _ = dev_read32(base + 0x010);
        w(reg::DRIVER_FEATURES_SEL, rng.below(4) as u32);
        w(reg::DRIVER_FEATURES, rng.next() as u32);
    }
    let odd = rng.next() as u32 & 0xff;
    w(
        reg::STATUS,
        rng.pick(&[1 | 2 | 8, 1 | 2 | 8 | 4, odd, 1 | 2 | 4]),
    );
    // a queue
    let q = if rng.chance(7, 8) {
        rng.below(3) as u32
    } else {
        rng.next() as u32
    };
    w(reg::QUEUE_SEL, q);
    let max = dev_read32(base + reg::QUEUE_NUM_MAX).unwrap_or(0);
    let num = match rng.below(6) {
        0 => 0,
        1 => 1,
        2 => max,
        3 => max.wrapping_add(1),
        4 => 3 + 2 * rng.below(60) as u32,
        _ => rng.next() as u32 & 0xfff,
    };
    w(reg::QUEUE_READY, 0);
    w(reg::QUEUE_NUM, num);
    let desc = table_addr(rng, t);
    let avail = table_addr(rng, t);
    let used = match rng.below(4) {
        0 | 1 => t.dma_used() + (rng.below(DMA_USED_SIZE - 0x1_0000) & !3),
        2 => t.ram_end - 4 * rng.below(8),
        _ => t.outside(rng),
    };
    let entries = u64::from(num.clamp(1, 1024));
    if (t.dma_desc()..t.dma_used()).contains(&desc) {
        fill_descriptors(rng, t, desc, entries);
    }
    if (t.dma_desc()..t.dma_used()).contains(&avail) && avail + 6 + 2 * entries < t.dma_used() {
        // SAFETY: the available ring lies inside the descriptor area (checked above).
        unsafe {
            (avail as *mut u16).write_volatile(rng.next() as u16);
            for i in 0..entries {
                let head = if rng.chance(3, 4) {
                    rng.below(entries)
                } else {
                    rng.next()
                } as u16;
                ((avail + 4 + 2 * i) as *mut u16).write_volatile(head);
            }
            let idx = match rng.below(3) {
                0 => 1 + rng.below(entries) as u16,
                1 => rng.next() as u16, // an index that jumps
                _ => 0xffff,
            };
            ((avail + 2) as *mut u16).write_volatile(idx);
        }
    }
    for (off, addr) in [
        (reg::QUEUE_DESC, desc),
        (reg::QUEUE_DRIVER, avail),
        (reg::QUEUE_DEVICE, used),
    ] {
        w(off, addr as u32);
        w(off + 4, (addr >> 32) as u32);
    }
    w(
        reg::QUEUE_READY,
        if rng.chance(7, 8) {
            1
        } else {
            rng.next() as u32
        },
    );
    aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::SY);
    for _ in 0..1 + rng.below(3) {
        let which = if rng.chance(3, 4) {
            q
        } else {
            rng.next() as u32
        };
        w(reg::QUEUE_NOTIFY, which);
    }
    // bounded wait: the device answers (or not) without the storm ever blocking
    for _ in 0..rng.below(32) {
        if let Some(s) = dev_read32(base + reg::INTERRUPT_STATUS) {
            w(reg::INTERRUPT_ACK, s | rng.below(4) as u32);
        }
    }
    for _ in 0..rng.below(3) {
        let off = reg::CONFIG + (rng.below(0x100) & !3);
        if rng.chance(1, 2) {
            let _ = dev_read32(base + off);
        } else {
            w(off, rng.next() as u32);
        }
    }
    if rng.chance(1, 2) {
        w(reg::STATUS, 0); // reset in the middle of it all
    }
    crate::check_canary(Kind::Virtq);
}
