//! Where a UART's transmitted bytes go, and the per-VM line prefixer.

use alloc::string::String;
use alloc::vec::Vec;

/// A sink for the bytes a guest transmits on its UART (the hypervisor's own console, a log
/// buffer, a test vector...).
pub trait UartOutput: Send {
    /// Emit `bytes`. One call should be written atomically with respect to other sinks sharing
    /// the same console, so that whole lines from different VMs do not interleave.
    fn write_bytes(&mut self, bytes: &[u8]);

    /// Emit anything buffered. The default does nothing.
    fn flush(&mut self) {}
}

/// The longest line kept before it is broken: a guest that never sends a newline cannot make
/// the hypervisor buffer without bound.
pub const MAX_LINE: usize = 256;

/// Prefixes every line with the VM's name: `[name] text\n`.
///
/// Bytes are buffered up to a newline, then the whole line goes to the inner sink in one
/// `write_bytes` call. A line reaching [`MAX_LINE`] bytes without a newline is emitted with a
/// newline added, and the rest continues on a new prefixed line. [`UartOutput::flush`] emits a
/// pending partial line the same way (e.g. when the VM stops).
pub struct LinePrefixer<O: UartOutput> {
    name: String,
    inner: O,
    line: Vec<u8>,
}

impl<O: UartOutput> LinePrefixer<O> {
    /// Prefix lines with `[name] ` before handing them to `inner`.
    pub fn new(name: &str, inner: O) -> LinePrefixer<O> {
        LinePrefixer {
            name: String::from(name),
            inner,
            line: Vec::with_capacity(MAX_LINE),
        }
    }

    /// The wrapped sink.
    pub fn inner(&self) -> &O {
        &self.inner
    }

    fn emit_line(&mut self) {
        let mut out = Vec::with_capacity(self.name.len() + self.line.len() + 4);
        out.push(b'[');
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(b"] ");
        out.extend_from_slice(&self.line);
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        self.inner.write_bytes(&out);
        self.line.clear();
    }
}

impl<O: UartOutput> UartOutput for LinePrefixer<O> {
    fn write_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.line.push(b);
            if b == b'\n' || self.line.len() >= MAX_LINE {
                self.emit_line();
            }
        }
    }

    fn flush(&mut self) {
        if !self.line.is_empty() {
            self.emit_line();
        }
        self.inner.flush();
    }
}
