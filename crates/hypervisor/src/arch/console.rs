//! The hypervisor's console: the host PL011 or 16550 found in the device tree or the ACPI
//! SPCR, behind a spin lock.
//! `hv_log!` prints one `[hv] `-prefixed line; guest consoles write whole lines through
//! [`write_bytes`] so output of different VMs never interleaves within a line.

use core::fmt::{self, Write};
use spin::Mutex;
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite};

use crate::platform::UartKind;

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

/// 16550 registers (index; the byte offset is `index << shift`) and bits.
const NS_THR_RBR: u64 = 0;
const NS_IER: u64 = 1;
const NS_LSR: u64 = 5;
/// `LSR.DR`: a received byte is waiting.
const LSR_DR: u32 = 1 << 0;
/// `LSR.THRE`: the transmit holding register is empty.
const LSR_THRE: u32 = 1 << 5;
/// `IER.ERBFI`: received-data interrupt.
const IER_ERBFI: u32 = 1 << 0;

/// A polled PL011 or 16550 at a fixed (identity-mapped) address.
pub struct HostUart {
    regs: *const Pl011Regs,
    kind: UartKind,
}

// SAFETY: the UART is only reached through the `CONSOLE` mutex (or, before the MMU is on,
// by the single boot CPU).
unsafe impl Send for HostUart {}

impl HostUart {
    /// A driver for the UART of `kind` at `base`.
    ///
    /// # Safety
    /// `base` must be such a UART, mapped (or the MMU off) and used by nothing else.
    pub const unsafe fn new(base: u64, kind: UartKind) -> Self {
        Self {
            regs: base as *const Pl011Regs,
            kind,
        }
    }

    /// Reads 16550 register `index` (8-bit registers with stride 1, 32-bit otherwise).
    fn ns_read(&self, index: u64, shift: u8) -> u32 {
        let a = self.regs as u64 + (index << shift);
        // SAFETY: `new`'s contract: a mapped 16550 whose registers are `1 << shift` apart.
        unsafe {
            if shift == 0 {
                u32::from(core::ptr::read_volatile(a as *const u8))
            } else {
                core::ptr::read_volatile(a as *const u32)
            }
        }
    }

    /// Writes 16550 register `index`.
    fn ns_write(&self, index: u64, shift: u8, v: u32) {
        let a = self.regs as u64 + (index << shift);
        // SAFETY: as in `ns_read`.
        unsafe {
            if shift == 0 {
                core::ptr::write_volatile(a as *mut u8, v as u8)
            } else {
                core::ptr::write_volatile(a as *mut u32, v)
            }
        }
    }

    fn regs(&self) -> &Pl011Regs {
        // SAFETY: `new`'s contract: a valid, mapped PL011 register block.
        unsafe { &*self.regs }
    }

    /// Sends one byte, waiting while the FIFO (or holding register) is full.
    pub fn put(&mut self, b: u8) {
        match self.kind {
            UartKind::Pl011 => {
                while self.regs().fr.get() & FR_TXFF != 0 {
                    core::hint::spin_loop();
                }
                self.regs().dr.set(b as u32);
            }
            UartKind::Ns16550 { shift } => {
                while self.ns_read(NS_LSR, shift) & LSR_THRE == 0 {
                    core::hint::spin_loop();
                }
                self.ns_write(NS_THR_RBR, shift, u32::from(b));
            }
        }
    }

    /// Unmasks the receive interrupts (PL011 `UARTIMSC.RXIM`, `RTIM`; 16550 `IER.ERBFI`).
    pub fn enable_rx_interrupt(&mut self) {
        match self.kind {
            UartKind::Pl011 => self
                .regs()
                .imsc
                .set(self.regs().imsc.get() | (1 << 4) | (1 << 6)),
            UartKind::Ns16550 { shift } => {
                let ier = self.ns_read(NS_IER, shift);
                self.ns_write(NS_IER, shift, ier | IER_ERBFI);
            }
        }
    }

    /// Receives a byte if one is waiting.
    pub fn get(&mut self) -> Option<u8> {
        match self.kind {
            UartKind::Pl011 => {
                (self.regs().fr.get() & FR_RXFE == 0).then(|| self.regs().dr.get() as u8)
            }
            UartKind::Ns16550 { shift } => (self.ns_read(NS_LSR, shift) & LSR_DR != 0)
                .then(|| self.ns_read(NS_THR_RBR, shift) as u8),
        }
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
pub unsafe fn init(base: u64, kind: UartKind) {
    // SAFETY: forwarded contract.
    *CONSOLE.lock() = Some(unsafe { HostUart::new(base, kind) });
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
pub unsafe fn early_print(base: u64, kind: UartKind, s: &str) {
    // SAFETY: forwarded contract.
    let mut u = unsafe { HostUart::new(base, kind) };
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
