//! The hypervisor's console: the host PL011 found in the device tree, behind a spin lock.
//! `hv_log!` prints one `[hv] `-prefixed line; guest consoles write whole lines through
//! [`write_bytes`] so output of different VMs never interleaves within a line.

use core::fmt::{self, Write};
use spin::Mutex;
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite};

register_structs! {
    /// The PL011 registers the host console needs.
    Pl011Regs {
        (0x00 => dr: ReadWrite<u32>),
        (0x04 => _reserved0),
        (0x18 => fr: ReadOnly<u32>),
        (0x1c => _reserved1),
        (0x38 => imsc: ReadWrite<u32>),
        (0x3c => @END),
    }
}

/// `UARTFR.TXFF`: transmit FIFO full.
const FR_TXFF: u32 = 1 << 5;
/// `UARTFR.RXFE`: receive FIFO empty.
const FR_RXFE: u32 = 1 << 4;

/// A polled PL011 at a fixed (identity-mapped) address.
pub struct HostUart {
    regs: *const Pl011Regs,
}

// SAFETY: the UART is only reached through the `CONSOLE` mutex (or, before the MMU is on,
// by the single boot CPU).
unsafe impl Send for HostUart {}

impl HostUart {
    /// A driver for the PL011 at `base`.
    ///
    /// # Safety
    /// `base` must be a PL011 that is mapped (or the MMU off) and used by nothing else.
    pub const unsafe fn new(base: u64) -> Self {
        Self {
            regs: base as *const Pl011Regs,
        }
    }

    fn regs(&self) -> &Pl011Regs {
        // SAFETY: `new`'s contract: a valid, mapped PL011 register block.
        unsafe { &*self.regs }
    }

    /// Sends one byte, waiting while the FIFO is full.
    pub fn put(&mut self, b: u8) {
        while self.regs().fr.get() & FR_TXFF != 0 {
            core::hint::spin_loop();
        }
        self.regs().dr.set(b as u32);
    }

    /// Unmasks the receive and receive-timeout interrupts (`UARTIMSC.RXIM`, `RTIM`).
    pub fn enable_rx_interrupt(&mut self) {
        self.regs()
            .imsc
            .set(self.regs().imsc.get() | (1 << 4) | (1 << 6));
    }

    /// Receives a byte if one is waiting.
    pub fn get(&mut self) -> Option<u8> {
        (self.regs().fr.get() & FR_RXFE == 0).then(|| self.regs().dr.get() as u8)
    }
}

impl Write for HostUart {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.put(b'\r');
            }
            self.put(b);
        }
        Ok(())
    }
}

static CONSOLE: Mutex<Option<HostUart>> = Mutex::new(None);

/// Installs the console UART (after the MMU is on).
///
/// # Safety
/// As [`HostUart::new`].
pub unsafe fn init(base: u64) {
    // SAFETY: forwarded contract.
    *CONSOLE.lock() = Some(unsafe { HostUart::new(base) });
}

/// Writes formatted text to the console (no-op before [`init`]).
pub fn write_fmt(args: fmt::Arguments<'_>) {
    if let Some(uart) = CONSOLE.lock().as_mut() {
        let _ = uart.write_fmt(args);
    }
}

/// Writes raw bytes (a guest's console line) to the console.
pub fn write_bytes(bytes: &[u8]) {
    if let Some(uart) = CONSOLE.lock().as_mut() {
        for &b in bytes {
            if b == b'\n' {
                uart.put(b'\r');
            }
            uart.put(b);
        }
    }
}

/// Reads one pending input byte, if any.
pub fn read_byte() -> Option<u8> {
    CONSOLE.lock().as_mut().and_then(|u| u.get())
}

/// Prints before the MMU (and so the lock) may be used: a direct, unlocked write.
///
/// # Safety
/// Only on the boot CPU before [`init`]; `base` as in [`HostUart::new`].
pub unsafe fn early_print(base: u64, s: &str) {
    // SAFETY: forwarded contract.
    let mut u = unsafe { HostUart::new(base) };
    let _ = u.write_str(s);
}

/// Turns on the receive interrupt of the console UART.
pub fn enable_rx_interrupt() {
    if let Some(u) = CONSOLE.lock().as_mut() {
        u.enable_rx_interrupt();
    }
}

/// Breaks a lock held by a CPU that faulted, so the fatal handler can still print.
pub fn force_unlock() {
    if CONSOLE.is_locked() {
        // SAFETY: only used on the fatal path, where the holder will never run again.
        unsafe { CONSOLE.force_unlock() };
    }
}
