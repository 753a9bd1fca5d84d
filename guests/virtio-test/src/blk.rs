//! Block: what sector 2 starts with (a disk image's marker), a read past the end (must
//! fail), pattern write/read-back, the host-visible marker at sector 1, flush.

use virtio_drivers::device::blk::{VirtIOBlk, SECTOR_SIZE};
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// What a host test looks for in the disk image.
pub const MARKER: &[u8] = b"VIRTIO-TEST-MARKER";
const FIRST: usize = 2;
const SECTORS: usize = 4;
/// Bytes of sector `FIRST` shown as text.
const PEEK: usize = 16;

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
    // Before anything is written: the start of sector 2 as text (up to the first NUL,
    // anything but printable ASCII as '.'), so a test can check a disk image's contents.
    let mut first = [0u8; SECTOR_SIZE];
    if let Err(e) = blk.read_blocks(FIRST, &mut first) {
        say!("block: FAIL read of sector {}: {:?}", FIRST, e);
        return Outcome::Fail;
    }
    let mut text = [0u8; PEEK];
    let n = first[..PEEK].iter().position(|&b| b == 0).unwrap_or(PEEK);
    for (t, &b) in text.iter_mut().zip(&first[..n]) {
        *t = if b.is_ascii_graphic() || b == b' ' {
            b
        } else {
            b'.'
        };
    }
    say!(
        "block: sector {} starts \"{}\"",
        FIRST,
        core::str::from_utf8(&text[..n]).unwrap_or("?")
    );
    // A read past the capacity is an I/O error (VIRTIO_BLK_S_IOERR), never data.
    if blk.read_blocks(capacity as usize, &mut first).is_ok() {
        say!(
            "block: FAIL read of sector {} (past the end) succeeded",
            capacity
        );
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
