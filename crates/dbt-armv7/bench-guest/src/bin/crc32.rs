//! CRC-32 (IEEE, table-driven) over 64 KiB, eight times.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

static mut DATA: [u8; 65536] = [0; 65536];

#[no_mangle]
extern "C" fn guest_main() {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    // SAFETY: single-threaded; the only reference to DATA.
    let data = unsafe { &mut *core::ptr::addr_of_mut!(DATA) };
    let mut rng = rt::Rng(0x1234_5678);
    for b in data.iter_mut() {
        *b = rng.next() as u8;
    }
    let mut acc = 0u32;
    for _ in 0..8 {
        let mut crc = !0u32;
        for &b in core::hint::black_box(&data[..]) {
            crc = table[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
        }
        acc = acc.rotate_left(1) ^ !crc;
    }
    rt::report("crc32", acc);
}
