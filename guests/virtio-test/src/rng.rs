//! Entropy: 32 bytes that are not all equal.

use virtio_drivers::device::rng::VirtIORng;
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// Runs the entropy check.
pub fn check(t: MmioTransport<'static>) -> Outcome {
    let mut rng = match VirtIORng::<GuestHal, _>::new(t) {
        Ok(r) => r,
        Err(e) => {
            say!("rng: FAIL init: {:?}", e);
            return Outcome::Fail;
        }
    };
    let mut buf = [0u8; 32];
    let mut got = 0;
    // The device may return fewer bytes than asked; ask until 32 arrived (bounded).
    for _ in 0..32 {
        match rng.request_entropy(&mut buf[got..]) {
            Ok(n) => got += n,
            Err(e) => {
                say!("rng: FAIL request: {:?}", e);
                return Outcome::Fail;
            }
        }
        if got == buf.len() {
            break;
        }
    }
    if got < buf.len() || buf.iter().all(|&b| b == buf[0]) {
        say!(
            "rng: FAIL {} bytes, all equal or short: {:02x?}",
            got,
            &buf[..got]
        );
        return Outcome::Fail;
    }
    say!("rng: ok (32 bytes, first 8: {:02x?})", &buf[..8]);
    Outcome::Ok
}
