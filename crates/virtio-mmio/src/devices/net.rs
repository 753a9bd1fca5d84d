//! virtio-net (device id 1): frames between the guest's queues and a [`NetBackend`].
//!
//! Queue 0 is receiveq1, queue 1 transmitq1. Every buffer starts with a 12-byte
//! `virtio_net_hdr_v1` (VIRTIO 1.x always has `num_buffers`). No offloads are offered, so the
//! header on transmit is skipped and on receive is all zero except `num_buffers = 1`.

use alloc::vec;
use alloc::vec::Vec;

use super::id;
use crate::device::{read_config_bytes, VirtioDevice};
use crate::error::QueueError;
use crate::mem::GuestMemory;
use crate::queue::Queue;

/// `VIRTIO_NET_F_MAC`: the configuration holds the MAC address.
pub const VIRTIO_NET_F_MAC: u64 = 1 << 5;
/// `VIRTIO_NET_F_STATUS`: the configuration holds the link status.
pub const VIRTIO_NET_F_STATUS: u64 = 1 << 16;
/// `VIRTIO_NET_S_LINK_UP` in the configuration's `status`.
pub const VIRTIO_NET_S_LINK_UP: u16 = 1;

/// Size of `virtio_net_hdr_v1`.
pub const NET_HDR_LEN: usize = 12;
/// Largest Ethernet frame accepted from the guest (no GSO: 1514 + VLAN tag, rounded up).
pub const MAX_FRAME_LEN: usize = 1536;
/// Smallest frame forwarded (destination + source MAC + ethertype).
pub const MIN_FRAME_LEN: usize = 14;

/// Receive queue index.
pub const RX_QUEUE: u16 = 0;
/// Transmit queue index.
pub const TX_QUEUE: u16 = 1;

/// Where a network device's frames go and come from (a [`SwitchPort`](crate::switch::SwitchPort),
/// or a host network).
pub trait NetBackend {
    /// The guest transmitted `frame` (Ethernet header onwards, no virtio header).
    fn send(&mut self, frame: &[u8]);
    /// The next frame for the guest, if any.
    fn recv(&mut self) -> Option<Vec<u8>>;
}

/// A virtio network device.
pub struct NetDevice<B> {
    backend: B,
    mac: [u8; 6],
    link_up: bool,
    /// A frame taken from the backend while the guest had no receive buffer.
    pending: Option<Vec<u8>>,
    dropped_tx: u64,
    dropped_rx: u64,
}

impl<B: NetBackend> NetDevice<B> {
    /// A device with address `mac`, link up, attached to `backend`.
    pub fn new(backend: B, mac: [u8; 6]) -> Self {
        Self {
            backend,
            mac,
            link_up: true,
            pending: None,
            dropped_tx: 0,
            dropped_rx: 0,
        }
    }

    /// The MAC address in the configuration.
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Sets the link state; the host then calls the transport's `config_changed`.
    pub fn set_link_up(&mut self, up: bool) {
        self.link_up = up;
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutable.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Transmitted frames dropped as runt or oversized.
    pub fn dropped_tx(&self) -> u64 {
        self.dropped_tx
    }

    /// Received frames dropped because the guest's buffer was too small.
    pub fn dropped_rx(&self) -> u64 {
        self.dropped_rx
    }

    fn transmit(&mut self, q: &mut Queue, mem: &mut dyn GuestMemory) -> Result<(), QueueError> {
        let mut frame = vec![0u8; MAX_FRAME_LEN];
        while let Some(chain) = q.pop(mem)? {
            let mut r = chain.reader();
            let len = r.remaining();
            if r.skip(NET_HDR_LEN as u64) == NET_HDR_LEN as u64
                && (MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&((len as usize) - NET_HDR_LEN))
            {
                let n = r.read(mem, &mut frame)?;
                if self.link_up {
                    self.backend.send(&frame[..n]);
                }
            } else {
                self.dropped_tx += 1;
            }
            q.add_used(mem, chain.head, 0)?;
        }
        Ok(())
    }

    fn receive(&mut self, q: &mut Queue, mem: &mut dyn GuestMemory) -> Result<(), QueueError> {
        if !self.link_up {
            return Ok(());
        }
        loop {
            let frame = match self.pending.take().or_else(|| self.backend.recv()) {
                Some(f) => f,
                None => return Ok(()),
            };
            let Some(chain) = q.pop(mem)? else {
                self.pending = Some(frame);
                return Ok(());
            };
            let mut w = chain.writer();
            if w.remaining() < (NET_HDR_LEN + frame.len()) as u64 {
                // Without VIRTIO_NET_F_MRG_RXBUF a frame must fit one buffer.
                self.dropped_rx += 1;
                q.add_used(mem, chain.head, 0)?;
                continue;
            }
            let mut hdr = [0u8; NET_HDR_LEN];
            hdr[10..12].copy_from_slice(&1u16.to_le_bytes()); // num_buffers
            w.write(mem, &hdr)?;
            w.write(mem, &frame)?;
            q.add_used(mem, chain.head, w.written())?;
        }
    }
}

impl<B: NetBackend> VirtioDevice for NetDevice<B> {
    fn device_id(&self) -> u32 {
        id::NET
    }

    fn features(&self) -> u64 {
        VIRTIO_NET_F_MAC | VIRTIO_NET_F_STATUS
    }

    fn num_queues(&self) -> u16 {
        2
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // mac[6], status, max_virtqueue_pairs (1), mtu (not offered).
        let mut c = [0u8; 12];
        c[..6].copy_from_slice(&self.mac);
        let status = if self.link_up {
            VIRTIO_NET_S_LINK_UP
        } else {
            0
        };
        c[6..8].copy_from_slice(&status.to_le_bytes());
        c[8..10].copy_from_slice(&1u16.to_le_bytes());
        read_config_bytes(&c, offset, data);
    }

    fn reset(&mut self) {
        self.pending = None;
    }

    fn process_queue(
        &mut self,
        queue: u16,
        q: &mut Queue,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        match queue {
            TX_QUEUE => self.transmit(q, mem),
            RX_QUEUE => self.receive(q, mem),
            _ => Ok(()),
        }
    }

    fn poll(
        &mut self,
        queues: &mut [Queue],
        mem: &mut dyn GuestMemory,
    ) -> Result<(), (u16, QueueError)> {
        match queues.get_mut(usize::from(RX_QUEUE)) {
            Some(q) => self.receive(q, mem).map_err(|e| (RX_QUEUE, e)),
            None => Ok(()),
        }
    }
}
