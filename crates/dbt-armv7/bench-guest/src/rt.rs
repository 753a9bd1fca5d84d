//! The guest runtime: entry (a stack of its own), Linux `write`/`exit` system calls,
//! decimal output, and a deterministic pseudo-random generator.

#![allow(dead_code)]

use core::fmt::Write;

const STACK: usize = 256 * 1024;

#[repr(align(16))]
pub struct Stack(#[allow(dead_code)] pub [u8; STACK]);

#[no_mangle]
pub static mut GUEST_STACK: Stack = Stack([0; STACK]);

core::arch::global_asm!(
    ".section .text._start, \"ax\"",
    ".global _start",
    ".arm",
    "_start:",
    "ldr sp, =GUEST_STACK + {size}",
    "bl guest_main",
    "mov r0, #0",
    "mov r7, #1",
    "svc #0",
    size = const STACK,
);

/// `write(1, b)`.
pub fn write(b: &[u8]) {
    // SAFETY: the Linux ARM EABI `write` system call on a valid buffer.
    unsafe {
        core::arch::asm!("svc #0", inout("r0") 1u32 => _, in("r1") b.as_ptr(),
            in("r2") b.len(), in("r7") 4u32, options(nostack));
    }
}

/// `exit(code)`.
pub fn exit(code: u32) -> ! {
    // SAFETY: the Linux ARM EABI `exit` system call.
    unsafe { core::arch::asm!("svc #0", in("r0") code, in("r7") 1u32, options(noreturn)) }
}

/// Formats into a fixed buffer and writes it.
pub struct Out {
    buf: [u8; 128],
    len: usize,
}

impl Write for Out {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        Ok(())
    }
}

/// Prints `name result` on a line.
pub fn report(name: &str, result: u32) {
    let mut o = Out {
        buf: [0; 128],
        len: 0,
    };
    let _ = writeln!(o, "{name} {result:#010x}");
    write(&o.buf[..o.len]);
}

/// A xorshift generator.
pub struct Rng(pub u32);

impl Rng {
    /// The next value.
    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    write(b"panic\n");
    exit(101)
}
