//! PL011 console at the QEMU `virt` address 0x0900_0000, transmit only, by polling.
//!
//! The UART is used as the loader left it (QEMU and the hypervisor's emulated PL011 need no
//! set-up); a byte is written to `UARTDR` once `UARTFR.TXFF` (transmit FIFO full) is clear.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::registers::{ReadOnly, ReadWrite};
use tock_registers::{register_bitfields, register_structs};

/// Physical address of the PL011 on the `virt` machine (and in every guest the hypervisor runs).
pub const PL011_BASE: usize = 0x0900_0000;

register_bitfields! [u32,
    /// UARTDR, data register.
    UARTDR [
        /// Data character (write: transmit).
        DATA OFFSET(0) NUMBITS(8) []
    ],
    /// UARTFR, flag register.
    UARTFR [
        /// Transmit FIFO full.
        TXFF OFFSET(5) NUMBITS(1) [],
        /// UART busy transmitting.
        BUSY OFFSET(3) NUMBITS(1) []
    ]
];

register_structs! {
    /// The part of the PL011 register block the console uses.
    Pl011Regs {
        (0x00 => dr: ReadWrite<u32, UARTDR::Register>),
        (0x04 => _reserved0),
        (0x18 => fr: ReadOnly<u32, UARTFR::Register>),
        (0x1c => @END),
    }
}

/// The guest console; zero-sized, every instance drives the same PL011.
#[derive(Clone, Copy, Debug, Default)]
pub struct Console;

impl Console {
    fn regs(&self) -> &'static Pl011Regs {
        // SAFETY: PL011_BASE is the PL011 MMIO block on every platform these guests run on; it
        // is always mapped (MMU off: PA = VA) and only accessed through volatile registers.
        unsafe { &*(PL011_BASE as *const Pl011Regs) }
    }

    /// Writes one byte, waiting while `UARTFR.TXFF` is set.
    pub fn write_byte(&self, byte: u8) {
        let regs = self.regs();
        while regs.fr.is_set(UARTFR::TXFF) {
            core::hint::spin_loop();
        }
        regs.dr.write(UARTDR::DATA.val(u32::from(byte)));
    }
}

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        s.bytes().for_each(|b| self.write_byte(b));
        Ok(())
    }
}

/// Owner of the console lock: 0 = free, else `this_cpu() + 1`.
static LOCK_OWNER: AtomicU64 = AtomicU64::new(0);

/// Formats `args` to the console (used by [`print!`](crate::print!)).
///
/// With the MMU on (see [`crate::mmu`]) each call holds a console lock with IRQs masked, so
/// lines from several CPUs do not interleave. The lock is re-entrant per CPU (a fault or
/// panic while printing still prints). With the MMU off there is no lock (exclusives may not
/// work on Device memory): such guests print from one CPU.
pub fn print_fmt(args: fmt::Arguments<'_>) {
    if !crate::mmu::is_enabled() {
        // Console::write_str never fails.
        let _ = fmt::Write::write_fmt(&mut Console, args);
        return;
    }
    crate::irq::without_interrupts(|| {
        let me = crate::smp::this_cpu() as u64 + 1;
        let nested = LOCK_OWNER.load(Ordering::Relaxed) == me;
        if !nested {
            while LOCK_OWNER
                .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                core::hint::spin_loop();
            }
        }
        let _ = fmt::Write::write_fmt(&mut Console, args);
        if !nested {
            LOCK_OWNER.store(0, Ordering::Release);
        }
    });
}

/// Prints to the guest console, like `std::print!`.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::print_fmt(format_args!($($arg)*)) };
}

/// Prints a line to the guest console, like `std::println!`.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::console::print_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}
