//! The guest's physical address space as this host builds it: RAM in a host `Vec` and a
//! tiny PL011-compatible UART, behind the crate's [`Bus`] trait.

use dbt_armv7::{Bus, BusFault};

/// Physical base of guest RAM (as on QEMU `virt`).
pub const RAM_BASE: u64 = 0x4000_0000;
/// Bytes of guest RAM.
pub const RAM_SIZE: usize = 64 * 1024;
/// Physical base of the UART (the PL011 of QEMU `virt`).
pub const UART_BASE: u64 = 0x0900_0000;
/// Bytes of the UART's register window.
const UART_WINDOW: u64 = 0x1000;
/// PL011 `UARTDR`: writing the low byte transmits it.
const UARTDR: u64 = 0x000;
/// PL011 `UARTFR`: flag register.
const UARTFR: u64 = 0x018;
/// `UARTFR.TXFF`: the transmit FIFO is full; the driver waits while it is set.
pub const UARTFR_TXFF: u32 = 1 << 5;

/// A slow transmitter: after each byte, `UARTFR.TXFF` reads as set once, so the guest's
/// wait loop is exercised.
#[derive(Debug, Default)]
pub struct Uart {
    output: Vec<u8>,
    busy_reads_left: u32,
    busy_reads: u32,
}

impl Uart {
    /// Bytes transmitted so far.
    pub fn output(&self) -> &[u8] {
        &self.output
    }

    /// How many `UARTFR` reads found the FIFO full.
    pub fn busy_reads(&self) -> u32 {
        self.busy_reads
    }

    fn read(&mut self, offset: u64) -> Result<u64, BusFault> {
        match offset {
            UARTFR if self.busy_reads_left > 0 => {
                self.busy_reads_left -= 1;
                self.busy_reads += 1;
                Ok(u64::from(UARTFR_TXFF))
            }
            UARTFR => Ok(0),
            UARTDR => Ok(0), // no receiver
            _ => Err(BusFault),
        }
    }

    fn write(&mut self, offset: u64, value: u64) -> Result<(), BusFault> {
        match offset {
            UARTDR => {
                self.output.push(value as u8);
                self.busy_reads_left = 1;
                Ok(())
            }
            _ => Err(BusFault),
        }
    }
}

/// RAM plus the UART; any other address is a bus fault (a synchronous external abort in the
/// guest), which the host also logs.
pub struct Board {
    ram: Vec<u8>,
    uart: Uart,
    faults: Vec<u64>,
}

impl Board {
    /// Zeroed RAM and an idle UART.
    pub fn new() -> Self {
        Self {
            ram: vec![0; RAM_SIZE],
            uart: Uart::default(),
            faults: Vec::new(),
        }
    }

    /// Copies A32 `words` (little endian) into RAM at physical address `pa`.
    pub fn load_words(&mut self, pa: u64, words: &[u32]) {
        let start = self
            .ram_offset(pa, words.len() * 4)
            .expect("program fits in RAM");
        for (i, w) in words.iter().enumerate() {
            self.ram[start + 4 * i..start + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
    }

    /// The UART.
    pub fn uart(&self) -> &Uart {
        &self.uart
    }

    /// Physical addresses of the accesses that faulted.
    pub fn faults(&self) -> &[u64] {
        &self.faults
    }

    /// Offset in `ram` of `len` bytes at `pa`, if they are all RAM.
    fn ram_offset(&self, pa: u64, len: usize) -> Option<usize> {
        let offset = usize::try_from(pa.checked_sub(RAM_BASE)?).ok()?;
        (offset.checked_add(len)? <= self.ram.len()).then_some(offset)
    }

    fn fault(&mut self, pa: u64) -> BusFault {
        println!("    [host] bus fault at {pa:#010x}");
        self.faults.push(pa);
        BusFault
    }
}

impl Bus for Board {
    fn read(&mut self, pa: u64, size: u8) -> Result<u64, BusFault> {
        if let Some(o) = self.ram_offset(pa, usize::from(size)) {
            let mut bytes = [0u8; 8];
            bytes[..usize::from(size)].copy_from_slice(&self.ram[o..o + usize::from(size)]);
            return Ok(u64::from_le_bytes(bytes));
        }
        match pa.checked_sub(UART_BASE) {
            Some(offset) if offset < UART_WINDOW => match self.uart.read(offset) {
                Ok(v) => Ok(v),
                Err(BusFault) => Err(self.fault(pa)),
            },
            _ => Err(self.fault(pa)),
        }
    }

    fn write(&mut self, pa: u64, size: u8, value: u64) -> Result<(), BusFault> {
        if let Some(o) = self.ram_offset(pa, usize::from(size)) {
            let bytes = value.to_le_bytes();
            self.ram[o..o + usize::from(size)].copy_from_slice(&bytes[..usize::from(size)]);
            return Ok(());
        }
        match pa.checked_sub(UART_BASE) {
            Some(offset) if offset < UART_WINDOW => match self.uart.write(offset, value) {
                Ok(()) => Ok(()),
                Err(BusFault) => Err(self.fault(pa)),
            },
            _ => Err(self.fault(pa)),
        }
    }

    /// Instruction fetch and plain RAM accesses skip `read`/`write`: the rest of RAM from `pa`.
    fn ram(&mut self, pa: u64) -> Option<&[u8]> {
        let o = self.ram_offset(pa, 1)?;
        Some(&self.ram[o..])
    }
}
