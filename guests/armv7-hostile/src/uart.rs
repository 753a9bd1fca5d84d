//! PL011 output at 0x0900_0000 (QEMU `virt`).

use core::ptr::{read_volatile, write_volatile};

/// PL011 data register.
const DR: *mut u32 = 0x0900_0000 as *mut u32;
/// PL011 flag register.
const FR: *const u32 = 0x0900_0018 as *const u32;

/// Writes one byte.
pub fn putc(c: u8) {
    // SAFETY: the PL011 registers are identity-mapped (or the MMU is off).
    unsafe {
        while read_volatile(FR) & (1 << 5) != 0 {}
        write_volatile(DR, c as u32);
    }
}

/// Writes a string.
pub fn puts(s: &str) {
    s.bytes().for_each(putc);
}

/// Writes a 32-bit value in hex.
pub fn puthex(v: u32) {
    puts("0x");
    for i in (0..8).rev() {
        putc(b"0123456789abcdef"[((v >> (4 * i)) & 15) as usize]);
    }
}

/// Writes a 32-bit value in decimal.
pub fn putdec(v: u32) {
    let mut digits = [0u8; 10];
    let (mut v, mut n) = (v, 0);
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    digits[..n].iter().rev().for_each(|&c| putc(c));
}
