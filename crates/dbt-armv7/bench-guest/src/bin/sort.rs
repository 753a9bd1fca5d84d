//! Sorts 64 Ki pseudo-random words (`sort_unstable`, pattern-defeating quicksort).
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

static mut DATA: [u32; 65536] = [0; 65536];

#[no_mangle]
extern "C" fn guest_main() {
    // SAFETY: single-threaded; the only reference to DATA.
    let data = unsafe { &mut *core::ptr::addr_of_mut!(DATA) };
    let mut rng = rt::Rng(0x9e37_79b9);
    for v in data.iter_mut() {
        *v = rng.next();
    }
    core::hint::black_box(&mut data[..]).sort_unstable();
    let mut h = 0u32;
    for (i, &v) in data.iter().enumerate() {
        h = h.rotate_left(5) ^ v ^ i as u32;
    }
    let sorted = data.windows(2).all(|w| w[0] <= w[1]);
    rt::report("sort", h ^ sorted as u32);
}
