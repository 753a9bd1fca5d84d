//! A toy UART in the style of a PL011: the guest writes bytes to its data register and
//! polls its flag register; what it writes collects in a shared console buffer.

use std::sync::{Arc, Mutex};

use el2_core::mmio::{AccessSize, MmioCaller, MmioDevice, MmioResult};

/// Guest-physical base of the UART (where QEMU `virt` puts its PL011).
pub const BASE: u64 = 0x0900_0000;
/// Size of the UART's register window.
pub const SIZE: u64 = 0x1000;
/// `UARTDR`: data register; a write transmits its low byte.
pub const DR: u64 = 0x000;
/// `UARTFR`: flag register.
pub const FR: u64 = 0x018;
/// `UARTFR.RXFE`: receive FIFO empty.
pub const FR_RXFE: u64 = 1 << 4;
/// `UARTFR.TXFE`: transmit FIFO empty (the toy transmits at once).
pub const FR_TXFE: u64 = 1 << 7;

/// What the guest wrote to the UART, shared between the device and the host.
pub type Console = Arc<Mutex<Vec<u8>>>;

/// The device model the `MmioBus` routes the UART's window to.
pub struct ToyUart {
    console: Console,
}

impl ToyUart {
    /// A UART transmitting into `console`.
    pub fn new(console: Console) -> Self {
        Self { console }
    }
}

impl MmioDevice for ToyUart {
    fn read(&mut self, _: &mut MmioCaller<'_>, offset: u64, _size: AccessSize) -> MmioResult<u64> {
        // Nothing is ever received and everything is sent at once; other registers read 0.
        Ok(if offset == FR { FR_TXFE | FR_RXFE } else { 0 })
    }

    fn write(
        &mut self,
        _: &mut MmioCaller<'_>,
        offset: u64,
        _size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        if offset == DR {
            let byte = value.to_le_bytes()[0];
            self.console.lock().expect("console lock").push(byte);
        }
        Ok(())
    }
}
