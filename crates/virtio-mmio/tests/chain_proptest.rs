//! Property tests (the fuzz target of the chain parser): random descriptor tables and rings
//! never panic, and every accepted chain stays inside guest memory.

mod common;

use proptest::prelude::*;
use virtio_mmio::devices::block::{BlockDevice, RamDisk};
use virtio_mmio::queue::{parse_chain, Descriptor, MAX_CHAIN_BYTES};
use virtio_mmio::{GuestMemory, VecMemory};

const BASE: u64 = 0x8000_0000;
const LEN: usize = 0x1_0000;
const TABLE: u64 = BASE;
const INDIRECT: u64 = BASE + 0x1000;

/// Addresses near and inside the memory, plus wild ones.
fn addr() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (0u64..LEN as u64 + 64).prop_map(|o| BASE + o),
        1 => any::<u64>(),
        1 => Just(INDIRECT),
        1 => (0u64..64).prop_map(|o| BASE - o),
    ]
}

fn desc() -> impl Strategy<Value = Descriptor> {
    (
        addr(),
        prop_oneof![0u32..0x2000, Just(16), Just(32), any::<u32>()],
        0u16..8,
        prop_oneof![0u16..20, any::<u16>()],
    )
        .prop_map(|(addr, len, flags, next)| Descriptor {
            addr,
            len,
            flags,
            next,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_tables_never_escape(
        table in prop::collection::vec(desc(), 1..17),
        indirect in prop::collection::vec(desc(), 0..8),
        head in 0u16..20,
        indirect_ok in any::<bool>(),
    ) {
        let mut mem = VecMemory::new(BASE, LEN);
        for (i, d) in table.iter().enumerate() {
            mem.write(TABLE + 16 * i as u64, &d.to_bytes()).unwrap();
        }
        for (i, d) in indirect.iter().enumerate() {
            mem.write(INDIRECT + 16 * i as u64, &d.to_bytes()).unwrap();
        }
        let size = table.len() as u16;
        if let Ok(chain) = parse_chain(&mem, TABLE, size, head, indirect_ok) {
            prop_assert!(head < size);
            let segs = chain.readable.iter().chain(chain.writable.iter());
            let mut total = 0u64;
            let mut count = 0usize;
            for s in segs {
                prop_assert!(s.len > 0);
                prop_assert!(s.addr >= BASE);
                prop_assert!(s.addr + u64::from(s.len) <= BASE + LEN as u64);
                total += u64::from(s.len);
                count += 1;
            }
            prop_assert!(total <= MAX_CHAIN_BYTES);
            prop_assert!(count <= table.len() + 1024);
            // Reading and writing through the chain stays in bounds too.
            let mut r = chain.reader();
            let mut buf = vec![0u8; 256];
            while r.read(&mem, &mut buf).unwrap() > 0 {}
            let mut w = chain.writer();
            prop_assert!(w.write(&mut mem, &[0xaa; 300]).is_ok());
        }
    }

    #[test]
    fn random_rings_never_panic_the_transport(
        ring_bytes in prop::collection::vec(any::<u8>(), 0x300),
        table in prop::collection::vec(desc(), 16),
        notifies in 1usize..4,
    ) {
        use common::*;
        let (mut t, _) = new_dev(BlockDevice::new(RamDisk::new(64), "p"));
        let rings = bring_up(&mut t, with_event_idx());
        let ring = &rings[0];
        // Random avail ring (flags, idx, entries, used_event) and used ring contents.
        t.memory_mut().write(ring.avail, &ring_bytes[..0x100]).unwrap();
        t.memory_mut().write(ring.used, &ring_bytes[0x100..]).unwrap();
        for (i, d) in table.iter().enumerate() {
            let mut d = *d;
            // Point some buffers into this test's RAM.
            if d.addr >= BASE && d.addr < BASE + LEN as u64 {
                d.addr = d.addr - BASE + DATA;
            }
            ring.write_desc(t.memory_mut(), i as u16, d);
        }
        for _ in 0..notifies {
            let _ = ring.notify(&mut t);
            let _ = t.poll();
        }
        // Every completion belongs to a chain the device took.
        let q = t.queue(0).unwrap();
        prop_assert!(q.next_used() <= q.next_avail());
    }
}
