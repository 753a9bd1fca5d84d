//! Messages on the firmware's console (`EFI_SIMPLE_TEXT_OUTPUT_PROTOCOL`) before boot
//! services end: UCS-2, `\n` sent as CR LF.

use uefi_raw::protocol::console::SimpleTextOutputProtocol;

/// The firmware's ConOut.
pub struct EfiConsole(*mut SimpleTextOutputProtocol);

impl EfiConsole {
    /// Wraps the system table's `ConOut` (may be null: then nothing is printed).
    pub fn new(out: *mut SimpleTextOutputProtocol) -> Self {
        EfiConsole(out)
    }

    /// Prints `s` (non-ASCII characters as `?`).
    pub fn print(&self, s: &str) {
        if self.0.is_null() {
            return;
        }
        let mut buf = [0u16; 64];
        let mut n = 0;
        let flush = |buf: &mut [u16; 64], n: &mut usize| {
            buf[*n] = 0;
            // SAFETY: ConOut is valid while boot services run (the only time this is
            // used); the buffer is NUL-terminated.
            let _ = unsafe { ((*self.0).output_string)(self.0, buf.as_ptr()) };
            *n = 0;
        };
        for c in s.chars() {
            if n >= buf.len() - 3 {
                flush(&mut buf, &mut n);
            }
            if c == '\n' {
                buf[n] = u16::from(b'\r');
                n += 1;
            }
            buf[n] = if c.is_ascii() {
                c as u16
            } else {
                u16::from(b'?')
            };
            n += 1;
        }
        flush(&mut buf, &mut n);
    }
}
