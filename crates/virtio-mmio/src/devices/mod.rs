//! Device models: console, block, network and entropy.

pub mod block;
pub mod console;
pub mod net;
pub mod rng;

/// Virtio device ids (VIRTIO 1.1 §5).
pub mod id {
    /// Network card.
    pub const NET: u32 = 1;
    /// Block device.
    pub const BLOCK: u32 = 2;
    /// Console.
    pub const CONSOLE: u32 = 3;
    /// Entropy source.
    pub const ENTROPY: u32 = 4;
}
