//! The interface between the transport and a device model.

use crate::error::QueueError;
use crate::mem::GuestMemory;
use crate::queue::Queue;

/// A virtio device type behind a [`VirtioMmio`](crate::VirtioMmio) transport.
///
/// The transport owns the queues and guest memory; it calls the device when the driver
/// notifies a queue ([`process_queue`](Self::process_queue)) and when the host has work for
/// the device ([`poll`](Self::poll), e.g. console input or network frames arrived). A device
/// returns a [`QueueError`] for a malformed chain or request; the transport then sets
/// `DEVICE_NEEDS_RESET`. Devices never panic on guest input.
pub trait VirtioDevice {
    /// Virtio device id (1 net, 2 block, 3 console, 4 entropy).
    fn device_id(&self) -> u32;

    /// Device-type feature bits offered (the transport adds
    /// [`TRANSPORT_FEATURES`](crate::features::TRANSPORT_FEATURES)).
    fn features(&self) -> u64;

    /// Number of virtqueues.
    fn num_queues(&self) -> u16;

    /// `QueueNumMax` of queue `queue`.
    fn queue_max_size(&self, _queue: u16) -> u16 {
        256
    }

    /// Reads `data.len()` bytes of the device configuration space from `offset`; bytes past the
    /// end of the configuration read as zero.
    fn read_config(&self, offset: u64, data: &mut [u8]);

    /// A driver write into the configuration space (ignored unless the device has writable
    /// fields).
    fn write_config(&mut self, _offset: u64, _data: &[u8]) {}

    /// The driver set `DRIVER_OK` with `features` negotiated.
    fn activate(&mut self, _features: u64) {}

    /// The driver reset the device (wrote 0 to `Status`).
    fn reset(&mut self) {}

    /// The driver notified queue `queue`: consume its available chains.
    fn process_queue(
        &mut self,
        queue: u16,
        q: &mut Queue,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError>;

    /// Host-side work: move pending input into the device's receive queues. On error returns
    /// the queue index with the error.
    fn poll(
        &mut self,
        _queues: &mut [Queue],
        _mem: &mut dyn GuestMemory,
    ) -> Result<(), (u16, QueueError)> {
        Ok(())
    }
}

/// Copies the part of `config` (a device's configuration space) at `offset` into `data`;
/// bytes past its end read as zero.
pub fn read_config_bytes(config: &[u8], offset: u64, data: &mut [u8]) {
    for (i, b) in data.iter_mut().enumerate() {
        *b = usize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(i))
            .and_then(|o| config.get(o))
            .copied()
            .unwrap_or(0);
    }
}
