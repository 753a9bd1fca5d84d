//! Net: a broadcast frame out; with an echo peer, the frame back.

use core::arch::asm;

use virtio_drivers::device::net::VirtIONetRaw;
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// Ethertype of the test frames (IEEE local experimental).
const ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const PAYLOAD: &[u8] = b"virtio-test ping";
const QUEUE: usize = 16;
/// How long to wait for an echo.
const ECHO_TIMEOUT_MS: u64 = 2000;
/// How long to wait for the device to take a transmitted frame.
const TX_TIMEOUT_MS: u64 = 2000;

fn counter() -> (u64, u64) {
    let (cnt, frq): (u64, u64);
    // SAFETY: CNTPCT_EL0 and CNTFRQ_EL0 are readable at EL1 and reading them has no side
    // effects.
    unsafe {
        asm!("isb", "mrs {}, cntpct_el0", out(reg) cnt, options(nomem, nostack, preserves_flags));
        asm!("mrs {}, cntfrq_el0", out(reg) frq, options(nomem, nostack, preserves_flags));
    }
    (cnt, frq)
}

/// The counter value `ms` milliseconds from now.
fn deadline(ms: u64) -> u64 {
    let (now, frq) = counter();
    now + frq / 1000 * ms
}

/// Runs the network check; `echo` says a peer echoes frames back.
pub fn check(t: MmioTransport<'static>, echo: bool) -> Outcome {
    let mut net = match VirtIONetRaw::<GuestHal, _, QUEUE>::new(t) {
        Ok(n) => n,
        Err(e) => {
            say!("net: FAIL init: {:?}", e);
            return Outcome::Fail;
        }
    };
    let mac = net.mac_address();
    let mut frame = [0u8; 64];
    frame[..6].copy_from_slice(&[0xff; 6]);
    frame[6..12].copy_from_slice(&mac);
    frame[12..14].copy_from_slice(&ETHERTYPE);
    frame[14..14 + PAYLOAD.len()].copy_from_slice(PAYLOAD);

    let mut rx = [0u8; 2048];
    // Post the receive buffer before sending, so an immediate echo finds it.
    // SAFETY: `rx` is not touched until the request completes (`receive_complete`) or the
    // device is dropped at the end of this function.
    let token = if echo {
        match unsafe { net.receive_begin(&mut rx) } {
            Ok(t) => Some(t),
            Err(e) => {
                say!("net: FAIL receive_begin: {:?}", e);
                return Outcome::Fail;
            }
        }
    } else {
        None
    };
    // Transmit without blocking forever: a peer that never completes is a failure.
    // SAFETY: `frame` is not touched until `transmit_complete` below.
    let tx = match unsafe { net.transmit_begin(&frame) } {
        Ok(t) => t,
        Err(e) => {
            say!("net: FAIL transmit_begin: {:?}", e);
            return Outcome::Fail;
        }
    };
    let tx_until = deadline(TX_TIMEOUT_MS);
    while net.poll_transmit() != Some(tx) {
        if counter().0 > tx_until {
            say!(
                "net: FAIL transmit not completed within {} ms",
                TX_TIMEOUT_MS
            );
            return Outcome::Fail;
        }
    }
    // SAFETY: `tx` and `frame` are the pair passed to `transmit_begin`.
    if let Err(e) = unsafe { net.transmit_complete(tx, &frame) } {
        say!("net: FAIL transmit: {:?}", e);
        return Outcome::Fail;
    }
    let Some(token) = token else {
        say!(
            "net: ok (mac {:02x?}, broadcast sent; echo skipped: no net=echo peer)",
            mac
        );
        return Outcome::Ok;
    };
    let rx_until = deadline(ECHO_TIMEOUT_MS);
    loop {
        if net.poll_receive() == Some(token) {
            break;
        }
        if counter().0 > rx_until {
            say!("net: FAIL no echo within {} ms", ECHO_TIMEOUT_MS);
            return Outcome::Fail;
        }
    }
    // SAFETY: `token` and `rx` are the pair passed to `receive_begin`.
    match unsafe { net.receive_complete(token, &mut rx) } {
        Ok((hdr, len)) => {
            let got = &rx[hdr..hdr + len];
            if len >= 14 + PAYLOAD.len()
                && got[12..14] == ETHERTYPE
                && &got[14..14 + PAYLOAD.len()] == PAYLOAD
            {
                say!(
                    "net: ok (mac {:02x?}, broadcast sent, echo of {} bytes received)",
                    mac,
                    len
                );
                Outcome::Ok
            } else {
                say!(
                    "net: FAIL unexpected frame of {} bytes: {:02x?}",
                    len,
                    &got[..len.min(32)]
                );
                Outcome::Fail
            }
        }
        Err(e) => {
            say!("net: FAIL receive: {:?}", e);
            Outcome::Fail
        }
    }
}
