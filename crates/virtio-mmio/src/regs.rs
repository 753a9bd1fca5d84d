//! The virtio-mmio version 2 register map (VIRTIO 1.1 §4.2.2).

/// `"virt"` in little endian.
pub const MAGIC_VALUE: u32 = 0x7472_6976;
/// The non-legacy virtio-mmio interface.
pub const VERSION: u32 = 2;
/// Vendor id this crate reports unless told otherwise (`"HVIO"` little endian).
pub const DEFAULT_VENDOR_ID: u32 = 0x4f49_5648;
/// Size of the MMIO window of one device (registers + config space).
pub const MMIO_WINDOW_SIZE: u64 = 0x200;
/// Start of the device-specific configuration space.
pub const CONFIG_SPACE: u64 = 0x100;

/// `InterruptStatus` bit: a used buffer was returned.
pub const INT_USED_BUFFER: u32 = 1;
/// `InterruptStatus` bit: the configuration (or `DEVICE_NEEDS_RESET`) changed.
pub const INT_CONFIG_CHANGE: u32 = 2;

/// Register offsets. R = read-only, W = write-only, RW = both.
#[allow(missing_docs)]
pub mod offset {
    pub const MAGIC_VALUE: u64 = 0x000; // R
    pub const VERSION: u64 = 0x004; // R
    pub const DEVICE_ID: u64 = 0x008; // R
    pub const VENDOR_ID: u64 = 0x00c; // R
    pub const DEVICE_FEATURES: u64 = 0x010; // R
    pub const DEVICE_FEATURES_SEL: u64 = 0x014; // W
    pub const DRIVER_FEATURES: u64 = 0x020; // W
    pub const DRIVER_FEATURES_SEL: u64 = 0x024; // W
    pub const QUEUE_SEL: u64 = 0x030; // W
    pub const QUEUE_NUM_MAX: u64 = 0x034; // R
    pub const QUEUE_NUM: u64 = 0x038; // W
    pub const QUEUE_READY: u64 = 0x044; // RW
    pub const QUEUE_NOTIFY: u64 = 0x050; // W
    pub const INTERRUPT_STATUS: u64 = 0x060; // R
    pub const INTERRUPT_ACK: u64 = 0x064; // W
    pub const STATUS: u64 = 0x070; // RW
    pub const QUEUE_DESC_LOW: u64 = 0x080; // W
    pub const QUEUE_DESC_HIGH: u64 = 0x084; // W
    pub const QUEUE_DRIVER_LOW: u64 = 0x090; // W
    pub const QUEUE_DRIVER_HIGH: u64 = 0x094; // W
    pub const QUEUE_DEVICE_LOW: u64 = 0x0a0; // W
    pub const QUEUE_DEVICE_HIGH: u64 = 0x0a4; // W
    pub const SHM_SEL: u64 = 0x0ac; // W
    pub const SHM_LEN_LOW: u64 = 0x0b0; // R
    pub const SHM_LEN_HIGH: u64 = 0x0b4; // R
    pub const SHM_BASE_LOW: u64 = 0x0b8; // R
    pub const SHM_BASE_HIGH: u64 = 0x0bc; // R
    pub const QUEUE_RESET: u64 = 0x0c0; // RW (only with VIRTIO_F_RING_RESET: not offered)
    pub const CONFIG_GENERATION: u64 = 0x0fc; // R
}
