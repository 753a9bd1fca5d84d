//! The guest physical address map: QEMU `virt`-compatible, so guests built for `virt`
//! (and Linux with a generated device tree) run unchanged.

/// Guest RAM base.
pub const RAM_BASE: u64 = 0x4000_0000;
/// Emulated PL011 UART.
pub const UART_BASE: u64 = 0x0900_0000;
/// Size of the PL011 register window.
pub const UART_SIZE: u64 = 0x1000;
/// GIC distributor.
pub const GICD_BASE: u64 = 0x0800_0000;
/// GICv2 CPU interface.
pub const GICC_BASE: u64 = 0x0801_0000;
/// GICv3 redistributors.
pub const GICR_BASE: u64 = 0x080a_0000;
/// IPA size given to guests (bits): 40, i.e. 1 TiB.
pub const IPA_BITS: u32 = 40;
/// Size of the guest's GICv3 redistributor frame per vCPU (RD_base + SGI_base).
pub const GICR_FRAME: u64 = 0x2_0000;
/// Size of the guest's GICv2 CPU interface mapping (GICC incl. GICC_DIR at 0x1000).
pub const GICC_SIZE: u64 = 0x2000;
/// Size of the guest's distributor window.
pub const GICD_SIZE: u64 = 0x1_0000;
/// Number of SPIs each guest's distributor implements.
pub const GUEST_SPIS: u32 = 256;
/// INTID of the PL011's SPI (SPI 1, as on QEMU virt).
pub const UART_INTID: u32 = 33;
/// First virtio-mmio window (QEMU virt's address); window `n` is at `VIRTIO_BASE + n * VIRTIO_SIZE`.
pub const VIRTIO_BASE: u64 = 0x0a00_0000;
/// Size of one virtio-mmio window.
pub const VIRTIO_SIZE: u64 = 0x200;
/// INTID of the first virtio-mmio window's SPI (SPI 16, as on QEMU virt).
pub const VIRTIO_FIRST_INTID: u32 = 48;
