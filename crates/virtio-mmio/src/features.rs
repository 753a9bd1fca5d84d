//! Device-independent feature bits (VIRTIO 1.1 §6) and device status bits (§2.1).

/// `VIRTIO_RING_F_INDIRECT_DESC`: indirect descriptor tables.
pub const VIRTIO_F_INDIRECT_DESC: u64 = 1 << 28;
/// `VIRTIO_RING_F_EVENT_IDX`: `used_event` / `avail_event` notification suppression.
pub const VIRTIO_F_EVENT_IDX: u64 = 1 << 29;
/// `VIRTIO_F_VERSION_1`: a VIRTIO 1.x (non-legacy) driver. Required by this transport.
pub const VIRTIO_F_VERSION_1: u64 = 1 << 32;

/// Features every device of this crate offers on top of its own.
pub const TRANSPORT_FEATURES: u64 =
    VIRTIO_F_INDIRECT_DESC | VIRTIO_F_EVENT_IDX | VIRTIO_F_VERSION_1;

/// Device status bits as the driver writes them into `Status`.
pub mod status {
    /// The guest has noticed the device.
    pub const ACKNOWLEDGE: u32 = 1;
    /// The guest knows how to drive the device.
    pub const DRIVER: u32 = 2;
    /// The driver is set up and ready to drive the device.
    pub const DRIVER_OK: u32 = 4;
    /// The driver has acknowledged the features it understands; negotiation is complete.
    pub const FEATURES_OK: u32 = 8;
    /// The device has hit an error from which it can only recover by a reset.
    pub const DEVICE_NEEDS_RESET: u32 = 64;
    /// The guest has given up on the device.
    pub const FAILED: u32 = 128;
}
