//! A VM's console: its PL011 on the MMIO bus, fed with what is typed on the host console,
//! and its output on the hypervisor's console (line-prefixed with the VM's name when VMs
//! share it). The virtio console writes to the same place.

use crate::lock::Mutex;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use el2_core::mmio::{AccessSize, MmioCaller, MmioResult, SharedMmioDevice};

use crate::devices::pl011::{LinePrefixer, Pl011, UartOutput};
use crate::layout;

/// Most host console bytes kept waiting for room in a PL011's receive FIFO.
const CONSOLE_INPUT_MAX: usize = 4096;

/// A VM's PL011 and the host console input waiting for room in its receive FIFO.
pub struct ConsoleUart {
    /// The UART.
    pub pl011: Pl011,
    /// Typed bytes not yet in the receive FIFO.
    input: VecDeque<u8>,
}

impl ConsoleUart {
    /// Queues a byte typed on the host console (dropped beyond [`CONSOLE_INPUT_MAX`]).
    pub fn queue_input(&mut self, byte: u8) {
        if self.input.len() < CONSOLE_INPUT_MAX {
            self.input.push_back(byte);
        }
    }

    /// Moves waiting input into the receive FIFO while it has room.
    pub fn feed(&mut self) {
        while self.pl011.can_receive() {
            match self.input.pop_front() {
                Some(b) => {
                    self.pl011.push_rx(b);
                }
                None => break,
            }
        }
    }
}

/// The console UART on the MMIO bus: after each access, waiting input moves into the freed
/// FIFO and the UART's line is reported if it changed (under the UART's lock, so the
/// console-input path and accesses report in order).
pub struct UartOnBus(pub Arc<Mutex<ConsoleUart>>);

impl SharedMmioDevice for UartOnBus {
    fn read(&self, caller: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64> {
        let mut u = self.0.lock();
        let value = u.pl011.read_at(offset, size);
        // Only a read of DR changes the device (it pops the receive FIFO), and feeding
        // queued input refills it: otherwise the line cannot have moved (a status poll).
        let fed = !u.input.is_empty();
        if fed {
            u.feed();
        }
        if fed || offset == crate::devices::pl011::regs::DR {
            u.pl011.report_irq(caller.events);
        }
        value
    }

    fn write(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        let mut u = self.0.lock();
        let done = u.pl011.write_at(offset, size, value);
        u.pl011.report_irq(caller.events);
        done
    }
}

/// Guest console output: whole lines to the hypervisor console.
struct ConsoleOut;

impl UartOutput for ConsoleOut {
    fn write_bytes(&mut self, bytes: &[u8]) {
        super::console::write_bytes(bytes);
    }
}

fn log_pl011(args: core::fmt::Arguments<'_>) {
    crate::hv_warn!("{}", args);
}

/// Where a VM's console output goes: the hypervisor console, each line prefixed with
/// `name` when several VMs share it (`prefix`).
pub fn output(name: &str, prefix: bool) -> Box<dyn UartOutput> {
    if prefix {
        Box::new(LinePrefixer::new(name, ConsoleOut))
    } else {
        Box::new(ConsoleOut)
    }
}

/// A new console PL011 for VM `name`, its line on the guest's UART interrupt.
pub fn new_uart(name: &str, prefix: bool) -> Arc<Mutex<ConsoleUart>> {
    let mut pl011 = Pl011::new(output(name, prefix));
    pl011.set_log_hook(log_pl011);
    pl011.set_irq(layout::UART_INTID);
    Arc::new(Mutex::new(ConsoleUart {
        pl011,
        input: VecDeque::new(),
    }))
}
