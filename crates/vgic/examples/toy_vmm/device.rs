//! An emulated device with a level-sensitive interrupt line: a UART that raises its SPI when a
//! byte arrives and lowers it when the guest reads the byte.

use vgic::{Vgic, VgicError};

/// The device model.
pub struct ToyUart {
    /// INTID of the SPI its interrupt line is wired to.
    pub intid: u32,
    rx: Option<u8>,
}

impl ToyUart {
    /// A UART with no data, wired to SPI `intid`.
    pub fn new(intid: u32) -> Self {
        Self { intid, rx: None }
    }

    /// A byte arrives from outside: the interrupt line goes high.
    pub fn receive(&mut self, byte: u8, vgic: &mut Vgic) -> Result<(), VgicError> {
        self.rx = Some(byte);
        vgic.set_spi_level(self.intid, true)
    }

    /// The guest reads the data register (a trapped MMIO load): returns the byte and lowers
    /// the line.
    pub fn read_data(&mut self, vgic: &mut Vgic) -> Result<Option<u8>, VgicError> {
        let byte = self.rx.take();
        vgic.set_spi_level(self.intid, false)?;
        Ok(byte)
    }
}
