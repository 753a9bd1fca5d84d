//! Pointer chase over 64 MiB: one node per 4 KiB page at a pseudo-random offset, linked in
//! one random cycle (Sattolo), followed for 2 Mi steps.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

const WORDS: usize = 16 << 20; // 64 MiB
const PAGE: usize = 1024; // words
const NODES: usize = WORDS / PAGE;
static mut MEM: [u32; WORDS] = [0; WORDS];
static mut ORDER: [u32; NODES] = [0; NODES];

#[no_mangle]
extern "C" fn guest_main() {
    // SAFETY: single-threaded; the only references to MEM and ORDER.
    let (mem, order) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(MEM),
            &mut *core::ptr::addr_of_mut!(ORDER),
        )
    };
    let mut rng = rt::Rng(0x51ed_270b);
    for (i, o) in order.iter_mut().enumerate() {
        *o = (i * PAGE + (rng.next() as usize % (PAGE - 1))) as u32;
    }
    // Sattolo: a single cycle through every node.
    for i in (1..NODES).rev() {
        let j = rng.next() as usize % i;
        order.swap(i, j);
    }
    let base = mem.as_ptr() as u32;
    for i in 0..NODES {
        let next = order[(i + 1) % NODES];
        mem[order[i] as usize] = base + 4 * next;
    }
    let mut p = base + 4 * order[0];
    let mut h = 0u32;
    for _ in 0..(2 << 20) {
        // SAFETY: every node holds the address of another node inside MEM.
        p = unsafe { core::ptr::read_volatile(p as *const u32) };
        h = h.wrapping_add(p);
    }
    rt::report("chase", h);
}
