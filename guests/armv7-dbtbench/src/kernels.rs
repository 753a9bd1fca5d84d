//! The kernels and the driver.

use core::arch::asm;
use core::hint::black_box;

use crate::rt::{counter, system_off};
use crate::uart::{puthex, puts};

/// Data for the memory kernels (in `.bss`, guest RAM).
static mut BUF: [u32; 16384] = [0; 16384];
/// The CRC-32 table.
static mut CRC_TABLE: [u32; 256] = [0; 256];

fn crc_init() {
    for i in 0..256u32 {
        let mut c = i;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        // SAFETY: one CPU, no other reference.
        unsafe { (*core::ptr::addr_of_mut!(CRC_TABLE))[i as usize] = c };
    }
}

/// Table-driven CRC-32 over the 64 KiB buffer.
fn crc32() -> u32 {
    // SAFETY: one CPU, shared references only.
    let (t, b) = unsafe { (&*core::ptr::addr_of!(CRC_TABLE), &*core::ptr::addr_of!(BUF)) };
    let mut c = !0u32;
    for w in b.iter() {
        for k in 0..4 {
            c = t[((c ^ (w >> (8 * k))) & 0xff) as usize] ^ (c >> 8);
        }
    }
    !c
}

/// Insertion sort of 1024 pseudo-random words.
fn sort() -> u32 {
    // SAFETY: one CPU, no other reference.
    let b = unsafe { &mut (&mut *core::ptr::addr_of_mut!(BUF))[..1024] };
    let mut x = 12345u32;
    for v in b.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *v = x;
    }
    for i in 1..b.len() {
        let v = b[i];
        let mut j = i;
        while j > 0 && b[j - 1] > v {
            b[j] = b[j - 1];
            j -= 1;
        }
        b[j] = v;
    }
    b[512]
}

/// Recursive Fibonacci (calls and returns).
#[inline(never)]
fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(black_box(n - 1)) + fib(black_box(n - 2))
    }
}

/// 2000 `SVC #0` and returns.
fn svc_loop() -> u32 {
    for _ in 0..2000 {
        // SAFETY: the SVC vector returns to the next instruction; LR_svc and SPSR_svc are
        // the only state it changes (declared clobbered).
        unsafe { asm!("svc #0", out("lr") _, options(nostack)) };
    }
    2000
}

/// 2000 UNDEFINED instructions (`UDF`) and returns.
fn udf_loop() -> u32 {
    for _ in 0..2000 {
        // SAFETY: the UNDEFINED vector returns to the next instruction.
        unsafe { asm!("udf #0", options(nostack)) };
    }
    2000
}

/// 2000 CP15 writes and reads (`TPIDRURW`).
fn cp15_loop() -> u32 {
    let mut acc = 0u32;
    for i in 0..2000u32 {
        let v: u32;
        // SAFETY: TPIDRURW is a scratch register.
        unsafe {
            asm!("mcr p15, 0, {i}, c13, c0, 2", "mrc p15, 0, {v}, c13, c0, 2",
                 i = in(reg) i, v = out(reg) v, options(nomem, nostack))
        };
        acc = acc.wrapping_add(v);
    }
    acc
}

/// One run of `f` between two counter reads: (ticks, result). Never inlined, so the
/// warm-up run and the timed run execute the same code: under the DBT every block the
/// timed run touches, the return into this function included, was translated by the
/// warm-up run (inlined into `main`, the code after the timed call ran for the first time
/// inside the window and its translation was counted as the kernel's).
#[inline(never)]
fn timed(f: fn() -> u32) -> (u64, u32) {
    let t0 = counter();
    let r = black_box(f());
    let t1 = counter();
    (t1 - t0, r)
}

/// Runs `f` twice, times the second run, prints the ticks.
fn bench(name: &str, f: fn() -> u32) {
    black_box(timed(f));
    let (ticks, r) = timed(f);
    puts("armv7-dbtbench: ");
    puts(name);
    puts(" ");
    puthex(ticks as u32);
    puts(" result ");
    puthex(r);
    puts("\n");
}

/// The program.
#[no_mangle]
extern "C" fn main() -> ! {
    crc_init();
    // SAFETY: one CPU, no other reference.
    unsafe {
        for (i, w) in (&mut *core::ptr::addr_of_mut!(BUF)).iter_mut().enumerate() {
            *w = (i as u32).wrapping_mul(2_654_435_761);
        }
    }
    bench("crc32", crc32);
    bench("sort", sort);
    bench("fib", || fib(black_box(18)));
    bench("svc", svc_loop);
    bench("udf", udf_loop);
    crate::syscall::use_vectors(true);
    bench("syscall", crate::syscall::syscall_loop);
    crate::syscall::use_vectors(false);
    bench("cp15", cp15_loop);
    crate::part1::setup();
    bench("matmul", crate::part1::matmul);
    bench("vfp", crate::part1::vfp);
    // The same machine with its MMU on (short descriptors, two address spaces).
    crate::mmu::enable();
    bench("crc32-mmu", crc32);
    bench("sort-mmu", sort);
    bench("chase-mmu", crate::mmu::chase);
    bench("switch", crate::mmu::switch);
    bench("tlbi", crate::mmu::tlbi);
    bench("miss", crate::mmu::miss);
    bench("dabt", crate::aborts::dabt);
    bench("pabt", crate::aborts::pabt);
    black_box(crate::mmu::fill_spaces());
    bench("tlbi-asid", crate::mmu::tlbi_asid);
    puts("armv7-dbtbench: done\n");
    system_off()
}
