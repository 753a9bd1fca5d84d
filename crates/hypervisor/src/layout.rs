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
