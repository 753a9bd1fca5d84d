//! Block: pattern write/read-back, the host-visible marker at sector 1, flush.

use virtio_drivers::device::blk::{VirtIOBlk, SECTOR_SIZE};
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// What a host test looks for in the disk image.
pub const MARKER: &[u8] = b"VIRTIO-TEST-MARKER";
const FIRST: usize = 2;
const SECTORS: usize = 4;

fn pattern(sector: usize, i: usize) -> u8 {
    (sector * 31 + i * 7 + 1) as u8
}

/// Runs the block check.
pub fn check(t: MmioTransport<'static>) -> Outcome {
    let mut blk = match VirtIOBlk::<GuestHal, _>::new(t) {
        Ok(b) => b,
        Err(e) => {
            say!("block: FAIL init: {:?}", e);
            return Outcome::Fail;
        }
    };
    let capacity = blk.capacity();
    if capacity < (FIRST + SECTORS) as u64 {
        say!("block: FAIL capacity {} sectors is too small", capacity);
        return Outcome::Fail;
    }
    if blk.readonly() {
        say!("block: skipped writes (read-only, {} sectors)", capacity);
        return Outcome::Ok;
    }
    let mut buf = [0u8; SECTOR_SIZE * SECTORS];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern(FIRST + i / SECTOR_SIZE, i % SECTOR_SIZE);
    }
    if let Err(e) = blk.write_blocks(FIRST, &buf) {
        say!("block: FAIL write: {:?}", e);
        return Outcome::Fail;
    }
    let mut back = [0u8; SECTOR_SIZE * SECTORS];
    if let Err(e) = blk.read_blocks(FIRST, &mut back) {
        say!("block: FAIL read: {:?}", e);
        return Outcome::Fail;
    }
    if back != buf {
        let at = back.iter().zip(buf.iter()).position(|(a, b)| a != b);
        say!("block: FAIL read-back differs at byte {:?}", at);
        return Outcome::Fail;
    }
    let mut marker = [0u8; SECTOR_SIZE];
    marker[..MARKER.len()].copy_from_slice(MARKER);
    if let Err(e) = blk.write_blocks(1, &marker) {
        say!("block: FAIL marker write: {:?}", e);
        return Outcome::Fail;
    }
    if let Err(e) = blk.flush() {
        say!("block: FAIL flush: {:?}", e);
        return Outcome::Fail;
    }
    let mut id = [0u8; 20];
    let id_len = blk.device_id(&mut id).unwrap_or(0);
    let id = core::str::from_utf8(&id[..id_len]).unwrap_or("?");
    say!(
        "block: ok (capacity {} sectors, {} sectors written and read back, marker at sector 1, flushed, id \"{}\")",
        capacity,
        SECTORS,
        id
    );
    Outcome::Ok
}
