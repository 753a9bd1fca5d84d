//! Net: a broadcast frame out; with an echo peer (another VM running this guest with
//! `net=echo-server`), the frame back.

use core::arch::asm;

use virtio_drivers::device::net::VirtIONetRaw;
use virtio_drivers::transport::mmio::MmioTransport;

use crate::hal::GuestHal;
use crate::{say, Outcome};

/// Ethertype of the test frames (IEEE local experimental).
const ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const PAYLOAD: &[u8] = b"virtio-test ping";
const QUEUE: usize = 16;
/// How long the echo client waits for an echo (both VMs boot at the same time).
const ECHO_TIMEOUT_MS: u64 = 5000;
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

/// What the network check does besides sending a broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Send one broadcast frame; expect nothing back.
    Send,
    /// `net=echo`: send the test frame (again every [`RESEND_MS`]) until a peer echoes it.
    Client,
    /// `net=echo-server`: wait for a test frame and send it back to its sender.
    Server,
}

/// How often the echo client sends its frame again while no echo came back (the peer VM
/// may not have posted its receive buffer yet: the switch drops frames nobody can take).
const RESEND_MS: u64 = 100;
/// How long the echo server waits for a frame.
const SERVE_TIMEOUT_MS: u64 = 10_000;

type Net = VirtIONetRaw<GuestHal, MmioTransport<'static>, QUEUE>;

/// Sends the Ethernet frame `frame` (at most 64 bytes) behind a virtio-net header and waits
/// until the device has taken it.
fn send(net: &mut Net, frame: &[u8]) -> Result<(), ()> {
    let mut buf = [0u8; 128];
    let hdr = match net.fill_buffer_header(&mut buf) {
        Ok(n) => n,
        Err(e) => {
            say!("net: FAIL fill_buffer_header: {:?}", e);
            return Err(());
        }
    };
    buf[hdr..hdr + frame.len()].copy_from_slice(frame);
    let packet = &buf[..hdr + frame.len()];
    // SAFETY: `packet` is not touched until `transmit_complete` below.
    let tx = match unsafe { net.transmit_begin(packet) } {
        Ok(t) => t,
        Err(e) => {
            say!("net: FAIL transmit_begin: {:?}", e);
            return Err(());
        }
    };
    let tx_until = deadline(TX_TIMEOUT_MS);
    while net.poll_transmit() != Some(tx) {
        if counter().0 > tx_until {
            say!(
                "net: FAIL transmit not completed within {} ms",
                TX_TIMEOUT_MS
            );
            return Err(());
        }
    }
    // SAFETY: `tx` and `packet` are the pair passed to `transmit_begin`.
    if let Err(e) = unsafe { net.transmit_complete(tx, packet) } {
        say!("net: FAIL transmit: {:?}", e);
        return Err(());
    }
    Ok(())
}

/// Whether `frame` is one of this test's frames.
fn is_test_frame(frame: &[u8]) -> bool {
    frame.len() >= 14 + PAYLOAD.len()
        && frame[12..14] == ETHERTYPE
        && &frame[14..14 + PAYLOAD.len()] == PAYLOAD
}

/// Runs the network check in `role`.
pub fn check(t: MmioTransport<'static>, role: Role) -> Outcome {
    let mut net: Net = match VirtIONetRaw::new(t) {
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

    if role == Role::Send {
        if send(&mut net, &frame).is_err() {
            return Outcome::Fail;
        }
        say!(
            "net: ok (mac {:02x?}, broadcast sent; echo skipped: no net=echo peer)",
            mac
        );
        return Outcome::Ok;
    }

    let mut rx = [0u8; 2048];
    // Post the receive buffer before sending, so an immediate echo finds it.
    // SAFETY: `rx` is not touched until the request completes (`receive_complete`) or the
    // device is dropped at the end of this function.
    let mut token = match unsafe { net.receive_begin(&mut rx) } {
        Ok(t) => t,
        Err(e) => {
            say!("net: FAIL receive_begin: {:?}", e);
            return Outcome::Fail;
        }
    };
    let timeout_ms = if role == Role::Server {
        SERVE_TIMEOUT_MS
    } else {
        ECHO_TIMEOUT_MS
    };
    let until = deadline(timeout_ms);
    let mut next_send = 0;
    let mut sent = 0u32;
    loop {
        if role == Role::Client && counter().0 >= next_send {
            if send(&mut net, &frame).is_err() {
                return Outcome::Fail;
            }
            sent += 1;
            next_send = deadline(RESEND_MS);
        }
        if net.poll_receive() == Some(token) {
            // SAFETY: `token` and `rx` are the pair passed to `receive_begin`.
            let (hdr, len) = match unsafe { net.receive_complete(token, &mut rx) } {
                Ok(r) => r,
                Err(e) => {
                    say!("net: FAIL receive: {:?}", e);
                    return Outcome::Fail;
                }
            };
            let got = &rx[hdr..hdr + len];
            if is_test_frame(got) && (role == Role::Server || got[6..12] != mac) {
                if role == Role::Client {
                    say!(
                        "net: ok (mac {:02x?}, broadcast sent {} time(s), echo of {} bytes \
                         from {:02x?} received)",
                        mac,
                        sent,
                        len,
                        &got[6..12]
                    );
                    return Outcome::Ok;
                }
                // Server: back to the sender, from us.
                let mut reply = [0u8; 64];
                let n = len.min(reply.len());
                reply[..n].copy_from_slice(&got[..n]);
                reply[..6].copy_from_slice(&got[6..12]);
                reply[6..12].copy_from_slice(&mac);
                if send(&mut net, &reply[..n]).is_err() {
                    return Outcome::Fail;
                }
                say!(
                    "net: ok (mac {:02x?}, echoed a frame of {} bytes back to {:02x?})",
                    mac,
                    len,
                    &got[6..12]
                );
                return Outcome::Ok;
            }
            say!(
                "net: ignoring a frame of {} bytes: {:02x?}",
                len,
                &got[..len.min(32)]
            );
            // SAFETY: as above; the previous request on `rx` has completed.
            token = match unsafe { net.receive_begin(&mut rx) } {
                Ok(t) => t,
                Err(e) => {
                    say!("net: FAIL receive_begin: {:?}", e);
                    return Outcome::Fail;
                }
            };
        }
        if counter().0 > until {
            say!(
                "net: FAIL no {} within {} ms",
                if role == Role::Server {
                    "frame to echo"
                } else {
                    "echo"
                },
                timeout_ms
            );
            return Outcome::Fail;
        }
    }
}
