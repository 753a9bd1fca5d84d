//! A learning Ethernet switch between the VMs' network devices, with an optional uplink.
//!
//! Each VM's [`NetDevice`](crate::devices::net::NetDevice) gets a [`SwitchPort`] as its
//! [`NetBackend`]. A transmitted frame is switched at once: its source MAC is learnt for the
//! sending port, a unicast frame to a known MAC goes to that port's queue, everything else
//! (broadcast, multicast, unknown unicast) is flooded to every other port and the uplink.
//! Port queues are bounded; a full queue drops the frame. The receiving VM's device takes
//! frames from its queue when the host polls it (`VirtioMmio::poll`); the host finds which
//! ones to poll with [`VirtualSwitch::has_pending`]. Frames from the uplink enter in
//! [`VirtualSwitch::poll`].

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;

use spin::Mutex;

use crate::devices::net::{NetBackend, MIN_FRAME_LEN};

/// Identifies a port of a [`VirtualSwitch`].
pub type PortId = usize;

/// An Ethernet MAC address.
pub type Mac = [u8; 6];

/// Default bound on frames queued per port.
pub const DEFAULT_PORT_QUEUE: usize = 64;
/// Bound on learnt MAC addresses (oldest forgotten first).
pub const MAC_TABLE_SIZE: usize = 256;

/// A link to a network outside the switch (e.g. a physical virtio-net device).
pub trait Uplink: Send {
    /// Sends a frame out of the uplink.
    fn transmit(&mut self, frame: &[u8]);
    /// The next frame received on the uplink, if any.
    fn receive(&mut self) -> Option<Vec<u8>>;
}

/// Where a learnt MAC lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A VM's port.
    Port(PortId),
    /// Behind the uplink.
    Uplink,
}

/// Per-port counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames sent by the VM on this port.
    pub tx_frames: u64,
    /// Frames queued for the VM on this port.
    pub rx_frames: u64,
    /// Frames for this port dropped because its queue was full.
    pub rx_dropped: u64,
}

struct Port {
    queue: VecDeque<Vec<u8>>,
    stats: PortStats,
}

/// The switch. Share it between devices as `Arc<spin::Mutex<VirtualSwitch>>`
/// ([`VirtualSwitch::shared`]).
pub struct VirtualSwitch {
    ports: Vec<Port>,
    queue_limit: usize,
    macs: VecDeque<(Mac, Location)>,
    uplink: Option<Box<dyn Uplink>>,
}

impl Default for VirtualSwitch {
    fn default() -> Self {
        Self::new(DEFAULT_PORT_QUEUE)
    }
}

impl VirtualSwitch {
    /// A switch with no ports, queueing at most `queue_limit` frames per port.
    pub fn new(queue_limit: usize) -> Self {
        Self {
            ports: Vec::new(),
            queue_limit,
            macs: VecDeque::new(),
            uplink: None,
        }
    }

    /// The switch wrapped for sharing between devices.
    pub fn shared(self) -> Arc<Mutex<VirtualSwitch>> {
        Arc::new(Mutex::new(self))
    }

    /// Adds a port; returns its id.
    pub fn add_port(&mut self) -> PortId {
        self.ports.push(Port {
            queue: VecDeque::new(),
            stats: PortStats::default(),
        });
        self.ports.len() - 1
    }

    /// Connects an uplink.
    pub fn set_uplink(&mut self, uplink: Box<dyn Uplink>) {
        self.uplink = Some(uplink);
    }

    /// Counters of `port`.
    pub fn stats(&self, port: PortId) -> Option<PortStats> {
        self.ports.get(port).map(|p| p.stats)
    }

    /// Whether `port` has frames waiting.
    pub fn has_pending(&self, port: PortId) -> bool {
        self.ports.get(port).is_some_and(|p| !p.queue.is_empty())
    }

    /// Where `mac` was last seen.
    pub fn lookup(&self, mac: &Mac) -> Option<Location> {
        self.macs.iter().find(|(m, _)| m == mac).map(|&(_, l)| l)
    }

    fn learn(&mut self, mac: Mac, at: Location) {
        // Group addresses are never sources.
        if mac[0] & 1 != 0 {
            return;
        }
        if let Some(e) = self.macs.iter_mut().find(|(m, _)| *m == mac) {
            e.1 = at;
            return;
        }
        if self.macs.len() >= MAC_TABLE_SIZE {
            self.macs.pop_front();
        }
        self.macs.push_back((mac, at));
    }

    fn enqueue(&mut self, port: PortId, frame: &[u8]) {
        let limit = self.queue_limit;
        if let Some(p) = self.ports.get_mut(port) {
            if p.queue.len() >= limit {
                p.stats.rx_dropped += 1;
            } else {
                p.queue.push_back(frame.to_vec());
                p.stats.rx_frames += 1;
            }
        }
    }

    /// Switches `frame` arriving from `from`.
    pub fn forward(&mut self, from: Location, frame: &[u8]) {
        if frame.len() < MIN_FRAME_LEN {
            return;
        }
        let mut dst = [0u8; 6];
        let mut src = [0u8; 6];
        dst.copy_from_slice(&frame[0..6]);
        src.copy_from_slice(&frame[6..12]);
        if let Location::Port(p) = from {
            match self.ports.get_mut(p) {
                Some(port) => port.stats.tx_frames += 1,
                None => return,
            }
        }
        self.learn(src, from);
        let known = if dst[0] & 1 == 0 {
            self.lookup(&dst)
        } else {
            None
        };
        match known {
            Some(to) if to == from => {}
            Some(Location::Port(p)) => self.enqueue(p, frame),
            Some(Location::Uplink) => {
                if let Some(u) = self.uplink.as_mut() {
                    u.transmit(frame);
                }
            }
            None => {
                for p in 0..self.ports.len() {
                    if Location::Port(p) != from {
                        self.enqueue(p, frame);
                    }
                }
                if from != Location::Uplink {
                    if let Some(u) = self.uplink.as_mut() {
                        u.transmit(frame);
                    }
                }
            }
        }
    }

    /// Takes the next frame queued for `port`.
    pub fn take(&mut self, port: PortId) -> Option<Vec<u8>> {
        self.ports.get_mut(port)?.queue.pop_front()
    }

    /// Switches up to `budget` frames received on the uplink; returns how many.
    pub fn poll(&mut self, budget: usize) -> usize {
        let mut n = 0;
        while n < budget {
            let Some(frame) = self.uplink.as_mut().and_then(|u| u.receive()) else {
                break;
            };
            self.forward(Location::Uplink, &frame);
            n += 1;
        }
        n
    }
}

/// A VM's attachment to a shared [`VirtualSwitch`]: the [`NetBackend`] of its net device.
#[derive(Clone)]
pub struct SwitchPort {
    switch: Arc<Mutex<VirtualSwitch>>,
    port: PortId,
}

impl SwitchPort {
    /// Adds a port to `switch` and returns the attachment.
    pub fn attach(switch: &Arc<Mutex<VirtualSwitch>>) -> Self {
        let port = switch.lock().add_port();
        Self {
            switch: switch.clone(),
            port,
        }
    }

    /// The port id.
    pub fn id(&self) -> PortId {
        self.port
    }
}

impl NetBackend for SwitchPort {
    fn send(&mut self, frame: &[u8]) {
        self.switch.lock().forward(Location::Port(self.port), frame);
    }

    fn recv(&mut self) -> Option<Vec<u8>> {
        self.switch.lock().take(self.port)
    }
}
