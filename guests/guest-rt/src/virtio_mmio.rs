//! The virtio-mmio (version 2) transport's register offsets and magic value, for guests
//! that drive or probe a device by hand (virtio 1.2, section 4.2.2).

/// `MagicValue`: "virt" in little-endian.
pub const MAGIC: u32 = 0x7472_6976;

/// Register offsets from the start of a transport.
pub mod reg {
    /// `MagicValue`.
    pub const MAGIC: u64 = 0x000;
    /// `Version` (2 for the modern transport).
    pub const VERSION: u64 = 0x004;
    /// `DeviceID` (0: no device).
    pub const DEVICE_ID: u64 = 0x008;
    /// `DeviceFeatures` (the 32 bits `DeviceFeaturesSel` picks).
    pub const DEVICE_FEATURES: u64 = 0x010;
    /// `DeviceFeaturesSel`.
    pub const DEVICE_FEATURES_SEL: u64 = 0x014;
    /// `DriverFeatures`.
    pub const DRIVER_FEATURES: u64 = 0x020;
    /// `DriverFeaturesSel`.
    pub const DRIVER_FEATURES_SEL: u64 = 0x024;
    /// `QueueSel`.
    pub const QUEUE_SEL: u64 = 0x030;
    /// `QueueNumMax`.
    pub const QUEUE_NUM_MAX: u64 = 0x034;
    /// `QueueNum`.
    pub const QUEUE_NUM: u64 = 0x038;
    /// `QueueReady`.
    pub const QUEUE_READY: u64 = 0x044;
    /// `QueueNotify`.
    pub const QUEUE_NOTIFY: u64 = 0x050;
    /// `InterruptStatus`.
    pub const INTERRUPT_STATUS: u64 = 0x060;
    /// `InterruptACK`.
    pub const INTERRUPT_ACK: u64 = 0x064;
    /// `Status`.
    pub const STATUS: u64 = 0x070;
    /// `QueueDescLow` (`QueueDescHigh` at +4).
    pub const QUEUE_DESC: u64 = 0x080;
    /// `QueueDriverLow` (the available ring).
    pub const QUEUE_DRIVER: u64 = 0x090;
    /// `QueueDeviceLow` (the used ring).
    pub const QUEUE_DEVICE: u64 = 0x0a0;
    /// Start of the device-specific configuration space.
    pub const CONFIG: u64 = 0x100;
}
