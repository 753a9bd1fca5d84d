//! 96 x 96 integer matrix multiply.
#![no_std]
#![no_main]

#[path = "../rt.rs"]
mod rt;

const N: usize = 96;
static mut A: [[u32; N]; N] = [[0; N]; N];
static mut B: [[u32; N]; N] = [[0; N]; N];
static mut C: [[u32; N]; N] = [[0; N]; N];

#[no_mangle]
extern "C" fn guest_main() {
    // SAFETY: single-threaded; the only references to A, B, C.
    let (a, b, c) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(A),
            &mut *core::ptr::addr_of_mut!(B),
            &mut *core::ptr::addr_of_mut!(C),
        )
    };
    let mut rng = rt::Rng(0x0bad_cafe);
    for i in 0..N {
        for j in 0..N {
            a[i][j] = rng.next() & 0xffff;
            b[i][j] = rng.next() & 0xffff;
        }
    }
    let (a, b) = (core::hint::black_box(&*a), core::hint::black_box(&*b));
    for i in 0..N {
        for j in 0..N {
            let mut s = 0u32;
            for k in 0..N {
                s = s.wrapping_add(a[i][k].wrapping_mul(b[k][j]));
            }
            c[i][j] = s;
        }
    }
    let mut h = 0u32;
    for row in c.iter() {
        for &v in row {
            h = h.rotate_left(3) ^ v;
        }
    }
    rt::report("matmul", h);
}
