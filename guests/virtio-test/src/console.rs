//! Console: one line out through virtio-console.

use virtio_drivers::device::console::VirtIOConsole;
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

const LINE: &[u8] = b"virtio-test: hello from virtio-console\r\n";

/// Runs the console check.
pub fn check(t: MmioTransport<'static>) -> Outcome {
    let mut console = match VirtIOConsole::<GuestHal, _>::new(t) {
        Ok(c) => c,
        Err(e) => {
            say!("console: FAIL init: {:?}", e);
            return Outcome::Fail;
        }
    };
    match console.send_bytes(LINE) {
        Ok(()) => {
            say!("console: ok ({} bytes sent)", LINE.len());
            Outcome::Ok
        }
        Err(e) => {
            say!("console: FAIL send: {:?}", e);
            Outcome::Fail
        }
    }
}
