//! An emulated Arm PrimeCell UART (PL011, r1p5), complete enough for Linux's `amba-pl011`
//! driver and for bare-metal polling consoles.
//!
//! Register map (PL011 TRM, DDI 0183, 3.2), offsets into the 4 KiB frame:
//!
//! | offset | name    | here |
//! |--------|---------|------|
//! | 0x000  | DR      | write: transmit a byte; read: pop the receive FIFO (data + error bits [11:8]) |
//! | 0x004  | RSR/ECR | receive status; any write clears it |
//! | 0x018  | FR      | flags: TXFE always (transmission is instantaneous), RXFE/RXFF from the FIFO |
//! | 0x020  | ILPR    | stored |
//! | 0x024  | IBRD    | stored (16 bits) |
//! | 0x028  | FBRD    | stored (6 bits) |
//! | 0x02C  | LCR_H   | stored; FEN selects a 16-deep or 1-deep receive FIFO (toggling it empties the FIFO) |
//! | 0x030  | CR      | stored; LBE (loopback) sends transmitted bytes to the receive FIFO |
//! | 0x034  | IFLS    | stored (trigger levels are not modelled: RX interrupts at one byte) |
//! | 0x038  | IMSC    | interrupt mask |
//! | 0x03C  | RIS     | raw interrupt status |
//! | 0x040  | MIS     | RIS & IMSC |
//! | 0x044  | ICR     | write 1 to clear RIS bits |
//! | 0x048  | DMACR   | stored; DMA is not modelled |
//! | 0xFE0..0xFFC | PeriphID0-3, PCellID0-3 | `0x11 0x10 0x14 0x00`, `0x0D 0xF0 0x05 0xB1` |
//!
//! Interrupts follow QEMU's PL011: the transmit FIFO drains instantly, so every write to DR
//! raises TXRIS (the "FIFO fell to its trigger level" event) until the guest clears it through
//! ICR; RXRIS is raised when a byte arrives and dropped when the FIFO is read empty (or through
//! ICR). The device is lenient like QEMU: it transmits and receives even while CR.UARTEN,
//! TXE or RXE are clear, so that firmware-style consoles that never program CR still work.
//!
//! Accesses: 8-, 16- and 32-bit reads inside one register's word return the addressed bytes
//! of the register (all registers are at most 16 bits wide); a read that spans two registers
//! (e.g. 32 bits at 0xFE1) fails with [`MmioError::ExternalAbort`]; writes take effect only at
//! a register's offset (`offset % 4 == 0`); 64-bit accesses fail with an external abort.
//! Reserved offsets and writes to read-only registers are RAZ/WI and reported through the
//! optional [`LogHook`], so the run loop can log them.
//!
//! On an MMIO bus the UART reports its interrupt line (`UARTINTR`, the SPI given to
//! [`Pl011::set_irq`]) through the caller's [`MmioEvents`] when its level changes.

mod output;
#[cfg(test)]
mod tests;

pub use output::{LinePrefixer, UartOutput, MAX_LINE};

use alloc::boxed::Box;
use el2_core::mmio::{AccessSize, MmioCaller, MmioDevice, MmioError, MmioEvents, MmioResult};

/// A function receiving log lines about odd guest accesses (reserved offsets, writes to
/// read-only registers, receive overruns).
pub type LogHook = fn(core::fmt::Arguments<'_>);

/// Register offsets.
pub mod regs {
    /// Data register.
    pub const DR: u64 = 0x000;
    /// Receive status / error clear register.
    pub const RSR_ECR: u64 = 0x004;
    /// Flag register.
    pub const FR: u64 = 0x018;
    /// IrDA low-power counter register.
    pub const ILPR: u64 = 0x020;
    /// Integer baud rate divisor.
    pub const IBRD: u64 = 0x024;
    /// Fractional baud rate divisor.
    pub const FBRD: u64 = 0x028;
    /// Line control register.
    pub const LCR_H: u64 = 0x02C;
    /// Control register.
    pub const CR: u64 = 0x030;
    /// Interrupt FIFO level select.
    pub const IFLS: u64 = 0x034;
    /// Interrupt mask set/clear.
    pub const IMSC: u64 = 0x038;
    /// Raw interrupt status.
    pub const RIS: u64 = 0x03C;
    /// Masked interrupt status.
    pub const MIS: u64 = 0x040;
    /// Interrupt clear.
    pub const ICR: u64 = 0x044;
    /// DMA control.
    pub const DMACR: u64 = 0x048;
    /// First identification register (PeriphID0); 8 registers follow at 4-byte strides.
    pub const ID_BASE: u64 = 0xFE0;
}

/// Flag register bits.
pub mod fr {
    /// Transmit FIFO empty.
    pub const TXFE: u32 = 1 << 7;
    /// Receive FIFO full.
    pub const RXFF: u32 = 1 << 6;
    /// Transmit FIFO full.
    pub const TXFF: u32 = 1 << 5;
    /// Receive FIFO empty.
    pub const RXFE: u32 = 1 << 4;
    /// UART busy transmitting.
    pub const BUSY: u32 = 1 << 3;
}

/// Interrupt bits (IMSC, RIS, MIS, ICR).
pub mod int {
    /// Receive.
    pub const RX: u32 = 1 << 4;
    /// Transmit.
    pub const TX: u32 = 1 << 5;
    /// Receive timeout.
    pub const RT: u32 = 1 << 6;
    /// Overrun error.
    pub const OE: u32 = 1 << 10;
    /// All 11 interrupt bits (modem status, RX, TX, RT, framing, parity, break, overrun).
    pub const ALL: u32 = 0x7FF;
}

/// LCR_H.FEN: FIFOs enabled.
const LCR_H_FEN: u32 = 1 << 4;
/// CR.LBE: loopback.
const CR_LBE: u32 = 1 << 7;
/// Reset value of CR: TXE | RXE.
const CR_RESET: u32 = 0x300;
/// Reset value of IFLS: both trigger levels at 1/2.
const IFLS_RESET: u32 = 0x12;
/// RSR.OE, and DR bit 11 (overrun).
const RSR_OE: u32 = 1 << 3;

/// PeriphID0-3 (part 0x011, designer 0x41 'A', revision r1p5 = 3) then PCellID0-3.
const ID_REGS: [u32; 8] = [0x11, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1];

/// Receive FIFO depth with FEN set.
pub const FIFO_DEPTH: usize = 16;

/// The emulated PL011.
pub struct Pl011 {
    out: Box<dyn UartOutput>,
    log: Option<LogHook>,
    /// Receive FIFO: data byte plus error bits [11:8], as DR returns them.
    rx: [u16; FIFO_DEPTH],
    rx_pos: usize,
    rx_count: usize,
    rsr: u32,
    ilpr: u32,
    ibrd: u32,
    fbrd: u32,
    lcr_h: u32,
    cr: u32,
    ifls: u32,
    imsc: u32,
    ris: u32,
    dmacr: u32,
    /// The INTID its interrupt line drives, once set.
    irq: Option<u32>,
    /// The line level last reported through [`Pl011::report_irq`].
    reported: bool,
}

impl Pl011 {
    /// A PL011 in its reset state whose transmitted bytes go to `out`.
    pub fn new(out: Box<dyn UartOutput>) -> Pl011 {
        Pl011 {
            out,
            log: None,
            rx: [0; FIFO_DEPTH],
            rx_pos: 0,
            rx_count: 0,
            rsr: 0,
            ilpr: 0,
            ibrd: 0,
            fbrd: 0,
            lcr_h: 0,
            cr: CR_RESET,
            ifls: IFLS_RESET,
            imsc: 0,
            ris: 0,
            dmacr: 0,
            irq: None,
            reported: false,
        }
    }

    /// Its interrupt line drives INTID `intid` (reported by [`Pl011::report_irq`]).
    pub fn set_irq(&mut self, intid: u32) {
        self.irq = Some(intid);
    }

    /// Reports the interrupt line to `events` if its level changed since the last report
    /// (after register accesses and received bytes). Without [`Pl011::set_irq`], nothing.
    pub fn report_irq(&mut self, events: &mut dyn MmioEvents) {
        let level = self.irq_level();
        if let Some(intid) = self.irq.filter(|_| level != self.reported) {
            self.reported = level;
            events.set_irq_level(intid, level);
        }
    }

    /// Report odd guest accesses through `hook`.
    pub fn set_log_hook(&mut self, hook: LogHook) {
        self.log = Some(hook);
    }

    /// Back to the reset state (the output sink, log hook and interrupt are kept; the
    /// receive FIFO is emptied; the line counts as reported low, as after a reset of the
    /// interrupt controller).
    pub fn reset(&mut self) {
        let out = core::mem::replace(&mut self.out, Box::new(NullOutput));
        let (log, irq) = (self.log, self.irq);
        *self = Pl011::new(out);
        self.log = log;
        self.irq = irq;
    }

    /// The receive FIFO's current depth: 16 with LCR_H.FEN, else a 1-byte holding register.
    pub fn rx_capacity(&self) -> usize {
        if self.lcr_h & LCR_H_FEN != 0 {
            FIFO_DEPTH
        } else {
            1
        }
    }

    /// True when `push_rx` would accept a byte.
    pub fn can_receive(&self) -> bool {
        self.rx_count < self.rx_capacity()
    }

    /// Deliver a received byte (input typed for this VM). Returns false, and records an
    /// overrun (RSR.OE, RIS.OE) as the hardware does, if the FIFO is full: the byte is lost.
    pub fn push_rx(&mut self, byte: u8) -> bool {
        if !self.can_receive() {
            self.rsr |= RSR_OE;
            self.ris |= int::OE;
            self.note(format_args!(
                "pl011: receive overrun, byte {byte:#04x} lost"
            ));
            return false;
        }
        let slot = (self.rx_pos + self.rx_count) % FIFO_DEPTH;
        self.rx[slot] = u16::from(byte);
        self.rx_count += 1;
        self.ris |= int::RX;
        true
    }

    /// The level of the UART's interrupt line (`UARTINTR`): any unmasked interrupt pending.
    pub fn irq_level(&self) -> bool {
        self.mis() != 0
    }

    /// Flush the output sink (e.g. a [`LinePrefixer`]'s partial line).
    pub fn flush_output(&mut self) {
        self.out.flush();
    }

    fn mis(&self) -> u32 {
        self.ris & self.imsc
    }

    fn note(&self, args: core::fmt::Arguments<'_>) {
        if let Some(log) = self.log {
            log(args);
        }
    }

    fn flags(&self) -> u32 {
        let mut flags = fr::TXFE;
        if self.rx_count == 0 {
            flags |= fr::RXFE;
        }
        if self.rx_count >= self.rx_capacity() {
            flags |= fr::RXFF;
        }
        flags
    }

    fn pop_rx(&mut self) -> u32 {
        if self.rx_count == 0 {
            return 0;
        }
        let value = u32::from(self.rx[self.rx_pos]);
        self.rx_pos = (self.rx_pos + 1) % FIFO_DEPTH;
        self.rx_count -= 1;
        if self.rx_count == 0 {
            self.ris &= !(int::RX | int::RT);
        }
        self.rsr = (value >> 8) & 0xf;
        value
    }

    fn transmit(&mut self, byte: u8) {
        if self.cr & CR_LBE != 0 {
            self.push_rx(byte);
        } else {
            self.out.write_bytes(&[byte]);
        }
        self.ris |= int::TX;
    }

    /// Read the 32-bit register at `reg` (4-byte aligned). `pop` allows DR's side effect.
    fn read_reg(&mut self, reg: u64, pop: bool) -> Option<u32> {
        Some(match reg {
            regs::DR if pop => self.pop_rx(),
            regs::DR if self.rx_count == 0 => 0,
            regs::DR => u32::from(self.rx[self.rx_pos % FIFO_DEPTH]),
            regs::RSR_ECR => self.rsr,
            regs::FR => self.flags(),
            regs::ILPR => self.ilpr,
            regs::IBRD => self.ibrd,
            regs::FBRD => self.fbrd,
            regs::LCR_H => self.lcr_h,
            regs::CR => self.cr,
            regs::IFLS => self.ifls,
            regs::IMSC => self.imsc,
            regs::RIS => self.ris,
            regs::MIS => self.mis(),
            regs::DMACR => self.dmacr,
            0xFE0..=0xFFC => ID_REGS[((reg - regs::ID_BASE) / 4) as usize & 7],
            _ => return None,
        })
    }

    /// Write the register at `reg` (4-byte aligned); false if reserved or read-only.
    fn write_reg(&mut self, reg: u64, value: u32) -> bool {
        match reg {
            regs::DR => self.transmit(value as u8),
            regs::RSR_ECR => self.rsr = 0,
            regs::ILPR => self.ilpr = value & 0xff,
            regs::IBRD => self.ibrd = value & 0xffff,
            regs::FBRD => self.fbrd = value & 0x3f,
            regs::LCR_H => {
                if (self.lcr_h ^ value) & LCR_H_FEN != 0 {
                    self.rx_count = 0;
                    self.rx_pos = 0;
                    self.ris &= !(int::RX | int::RT);
                }
                self.lcr_h = value & 0xff;
            }
            regs::CR => self.cr = value & 0xffff,
            regs::IFLS => self.ifls = value & 0x3f,
            regs::IMSC => self.imsc = value & int::ALL,
            regs::ICR => self.ris &= !value,
            regs::DMACR => self.dmacr = value & 0x7,
            _ => return false,
        }
        true
    }
}

impl Pl011 {
    /// A guest load of `size` bytes at `offset`.
    pub fn read_at(&mut self, offset: u64, size: AccessSize) -> MmioResult<u64> {
        if size == AccessSize::Double {
            return Err(MmioError::ExternalAbort);
        }
        let reg = offset & !3;
        let lane = offset & 3;
        if lane + size.bytes() > 4 {
            // The bytes of two registers: refused rather than half of one and zeros.
            return Err(MmioError::ExternalAbort);
        }
        match self.read_reg(reg, lane == 0) {
            Some(value) => Ok((u64::from(value) >> (lane * 8)) & size.mask()),
            None => {
                self.note(format_args!(
                    "pl011: read of reserved offset {offset:#x} (RAZ)"
                ));
                Ok(0)
            }
        }
    }

    /// A guest store of `value` (`size` bytes) at `offset`.
    pub fn write_at(&mut self, offset: u64, size: AccessSize, value: u64) -> MmioResult<()> {
        if size == AccessSize::Double {
            return Err(MmioError::ExternalAbort);
        }
        let value = (value & size.mask()) as u32;
        if offset & 3 != 0 || !self.write_reg(offset, value) {
            self.note(format_args!(
                "pl011: write of {value:#x} to reserved or read-only offset {offset:#x} (WI)"
            ));
        }
        Ok(())
    }
}

impl MmioDevice for Pl011 {
    fn read(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
    ) -> MmioResult<u64> {
        let value = self.read_at(offset, size);
        self.report_irq(caller.events);
        value
    }

    fn write(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        let done = self.write_at(offset, size, value);
        self.report_irq(caller.events);
        done
    }
}

impl core::fmt::Debug for Pl011 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Pl011")
            .field("rx_count", &self.rx_count)
            .field("lcr_h", &self.lcr_h)
            .field("cr", &self.cr)
            .field("imsc", &self.imsc)
            .field("ris", &self.ris)
            .finish_non_exhaustive()
    }
}

/// Discards everything (used transiently by [`Pl011::reset`]).
struct NullOutput;

impl UartOutput for NullOutput {
    fn write_bytes(&mut self, _bytes: &[u8]) {}
}
