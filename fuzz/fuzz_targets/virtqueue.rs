//! Virtqueues from a hostile driver (`virtio-mmio`): a block, console, entropy or network
//! device behind the virtio-mmio transport, brought up the usual way with its rings in a
//! guest memory whose bytes (descriptors, available ring, buffers) the input writes, then
//! register writes, notifications and polls in any order. Chain walking also runs alone
//! (`parse_chain`) over the same memory. Errors are answers; nothing may panic.
#![no_main]

use hv_fuzz::Input;
use libfuzzer_sys::fuzz_target;
use virtio_mmio::devices::block::{BlockDevice, RamDisk};
use virtio_mmio::devices::console::{ConsoleDevice, ConsoleOutput};
use virtio_mmio::devices::net::{NetBackend, NetDevice};
use virtio_mmio::devices::rng::{RngDevice, XorShiftEntropy};
use virtio_mmio::features::status;
use virtio_mmio::queue::parse_chain;
use virtio_mmio::regs::offset as reg;
use virtio_mmio::{NoInterrupt, VecMemory, VirtioDevice, VirtioMmio};

/// Guest RAM of the device.
const RAM_BASE: u64 = 0x4000_0000;
/// Its size.
const RAM_SIZE: u64 = 0x4000;
/// Where queue `q`'s rings go: descriptor table at `q * QUEUE_STRIDE`, then the available
/// and used rings.
const QUEUE_STRIDE: u64 = 0x800;
/// Offset of the available ring from the descriptor table.
const AVAIL_OFFSET: u64 = 0x200;
/// Offset of the used ring from the descriptor table.
const USED_OFFSET: u64 = 0x400;
/// Queue size the driver picks.
const QUEUE_SIZE: u32 = 16;
/// Sectors of the RAM disk.
const DISK_SECTORS: u64 = 8;
/// Bytes one memory-write operation stores.
const CHUNK: usize = 16;
/// Size of the transport's register window.
const WINDOW: u64 = 0x200;
/// Most operations per input.
const MAX_OPS: usize = 128;

struct Sink;

impl ConsoleOutput for Sink {
    fn write(&mut self, _bytes: &[u8]) {}
}

/// A network backend that echoes what the guest sends.
#[derive(Default)]
struct Loop(Vec<Vec<u8>>);

impl NetBackend for Loop {
    fn send(&mut self, frame: &[u8]) {
        self.0.push(frame.to_vec());
    }
    fn recv(&mut self) -> Option<Vec<u8>> {
        self.0.pop()
    }
}

fn w32<D: VirtioDevice>(t: &mut VirtioMmio<D, VecMemory, NoInterrupt>, off: u64, v: u64) {
    let _ = t.write(off, 4, v);
}

fn drive<D: VirtioDevice>(device: D, input: &mut Input<'_>) {
    let mut t = VirtioMmio::new(
        device,
        VecMemory::new(RAM_BASE, RAM_SIZE as usize),
        NoInterrupt,
    );
    // Bring-up as a driver does it, with the features the input accepts.
    w32(&mut t, reg::STATUS, 0);
    w32(
        &mut t,
        reg::STATUS,
        u64::from(status::ACKNOWLEDGE | status::DRIVER),
    );
    let features = t.device_features() & input.u64();
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 0);
    w32(&mut t, reg::DRIVER_FEATURES, features & u64::from(u32::MAX));
    w32(&mut t, reg::DRIVER_FEATURES_SEL, 1);
    w32(&mut t, reg::DRIVER_FEATURES, features >> 32);
    let ready = status::ACKNOWLEDGE | status::DRIVER | status::FEATURES_OK;
    w32(&mut t, reg::STATUS, u64::from(ready));
    let queues = t.device().num_queues();
    for q in 0..queues {
        let desc = RAM_BASE + u64::from(q) * QUEUE_STRIDE;
        w32(&mut t, reg::QUEUE_SEL, u64::from(q));
        w32(&mut t, reg::QUEUE_NUM, u64::from(QUEUE_SIZE));
        w32(&mut t, reg::QUEUE_DESC_LOW, desc);
        w32(&mut t, reg::QUEUE_DRIVER_LOW, desc + AVAIL_OFFSET);
        w32(&mut t, reg::QUEUE_DEVICE_LOW, desc + USED_OFFSET);
        w32(&mut t, reg::QUEUE_READY, 1);
    }
    w32(&mut t, reg::STATUS, u64::from(ready | status::DRIVER_OK));
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        match input.u8() % 8 {
            // Descriptors, ring entries and buffers.
            0..=3 => {
                let at = usize::from(input.u16()) % (RAM_SIZE as usize - CHUNK);
                let bytes: [u8; CHUNK] = input.array();
                t.memory_mut().bytes_mut()[at..at + CHUNK].copy_from_slice(&bytes);
            }
            4 => {
                let q = u64::from(input.u8() % (queues as u8 + 1));
                w32(&mut t, reg::QUEUE_NOTIFY, q);
                let _ = t.poll();
            }
            5 => {
                let off = u64::from(input.u16()) % WINDOW;
                let width = input.pick(&[1u8, 2, 4, 8]);
                let value = input.u64();
                let _ = t.write(off, width, value);
            }
            6 => {
                let off = u64::from(input.u16()) % WINDOW;
                let _ = t.read(off, input.pick(&[1u8, 2, 4, 8]));
            }
            _ => {
                let desc = RAM_BASE + u64::from(input.u8() % (queues as u8 + 1)) * QUEUE_STRIDE;
                let size = input.u16();
                let head = input.u16();
                let _ = parse_chain(t.memory(), desc, size, head, input.bool());
            }
        }
    }
    let _ = t.poll();
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    match input.u8() % 4 {
        0 => drive(
            BlockDevice::new(RamDisk::new(DISK_SECTORS), "fuzz"),
            &mut input,
        ),
        1 => drive(ConsoleDevice::new(Sink), &mut input),
        2 => drive(RngDevice::new(XorShiftEntropy::new(1)), &mut input),
        _ => drive(
            NetDevice::new(Loop::default(), [2, 0, 0, 0, 0, 1]),
            &mut input,
        ),
    }
});
