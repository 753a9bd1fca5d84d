//! virtio-console (device id 3): one port, the VM's `hvc0`.
//!
//! Queue 0 (receiveq) carries host input to the guest, queue 1 (transmitq) guest output to
//! the host's [`ConsoleOutput`] (the hypervisor prefixes lines with the VM name there).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::id;
use crate::device::{read_config_bytes, VirtioDevice};
use crate::error::QueueError;
use crate::mem::GuestMemory;
use crate::queue::Queue;

/// `VIRTIO_CONSOLE_F_EMERG_WRITE`: the driver may write single bytes to `emerg_wr`.
pub const VIRTIO_CONSOLE_F_EMERG_WRITE: u64 = 1 << 2;

/// Receive queue index.
pub const RX_QUEUE: u16 = 0;
/// Transmit queue index.
pub const TX_QUEUE: u16 = 1;

/// Offset of `emerg_wr` in the configuration space.
const EMERG_WR: u64 = 8;
/// Largest chunk copied out of a transmit chain at a time.
const TX_CHUNK: usize = 256;

/// Where console output goes.
pub trait ConsoleOutput {
    /// The guest wrote `bytes` to its console.
    fn write(&mut self, bytes: &[u8]);
}

/// A virtio console with one port.
pub struct ConsoleDevice<O> {
    output: O,
    input: VecDeque<u8>,
    input_limit: usize,
    dropped_input: u64,
}

impl<O: ConsoleOutput> ConsoleDevice<O> {
    /// Default bound on buffered input bytes.
    pub const DEFAULT_INPUT_LIMIT: usize = 4096;

    /// A console writing to `output`.
    pub fn new(output: O) -> Self {
        Self {
            output,
            input: VecDeque::new(),
            input_limit: Self::DEFAULT_INPUT_LIMIT,
            dropped_input: 0,
        }
    }

    /// Queues host input for the guest; bytes beyond the input bound are dropped (counted in
    /// [`dropped_input`](Self::dropped_input)). Call the transport's `poll` afterwards.
    pub fn push_input(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.input.len() >= self.input_limit {
                self.dropped_input += 1;
            } else {
                self.input.push_back(b);
            }
        }
    }

    /// Input bytes waiting for receive buffers.
    pub fn pending_input(&self) -> usize {
        self.input.len()
    }

    /// Input bytes dropped because the buffer was full.
    pub fn dropped_input(&self) -> u64 {
        self.dropped_input
    }

    /// The output sink.
    pub fn output(&self) -> &O {
        &self.output
    }

    /// The output sink, mutable.
    pub fn output_mut(&mut self) -> &mut O {
        &mut self.output
    }

    fn transmit(&mut self, q: &mut Queue, mem: &mut dyn GuestMemory) -> Result<(), QueueError> {
        let mut buf = [0u8; TX_CHUNK];
        while let Some(chain) = q.pop(mem)? {
            let mut r = chain.reader();
            loop {
                let n = r.read(mem, &mut buf)?;
                if n == 0 {
                    break;
                }
                self.output.write(&buf[..n]);
            }
            q.add_used(mem, chain.head, 0)?;
        }
        Ok(())
    }

    fn receive(&mut self, q: &mut Queue, mem: &mut dyn GuestMemory) -> Result<(), QueueError> {
        while !self.input.is_empty() {
            let Some(chain) = q.pop(mem)? else {
                break;
            };
            let mut w = chain.writer();
            let n = core::cmp::min(w.remaining(), self.input.len() as u64) as usize;
            let bytes: Vec<u8> = self.input.drain(..n).collect();
            w.write(mem, &bytes)?;
            q.add_used(mem, chain.head, w.written())?;
        }
        Ok(())
    }
}

impl<O: ConsoleOutput> VirtioDevice for ConsoleDevice<O> {
    fn device_id(&self) -> u32 {
        id::CONSOLE
    }

    fn features(&self) -> u64 {
        VIRTIO_CONSOLE_F_EMERG_WRITE
    }

    fn num_queues(&self) -> u16 {
        2
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // cols, rows (0: unknown), max_nr_ports (unused without MULTIPORT), emerg_wr.
        let config = [0u8; 12];
        read_config_bytes(&config, offset, data);
    }

    fn write_config(&mut self, offset: u64, data: &[u8]) {
        if offset == EMERG_WR {
            if let Some(&b) = data.first() {
                self.output.write(&[b]);
            }
        }
    }

    fn reset(&mut self) {}

    fn process_queue(
        &mut self,
        queue: u16,
        q: &mut Queue,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        match queue {
            TX_QUEUE => self.transmit(q, mem),
            RX_QUEUE => self.receive(q, mem),
            _ => Ok(()),
        }
    }

    fn poll(
        &mut self,
        queues: &mut [Queue],
        mem: &mut dyn GuestMemory,
    ) -> Result<(), (u16, QueueError)> {
        match queues.get_mut(usize::from(RX_QUEUE)) {
            Some(q) => self.receive(q, mem).map_err(|e| (RX_QUEUE, e)),
            None => Ok(()),
        }
    }
}
