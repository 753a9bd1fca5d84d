//! Entry: stack, `.bss`, FP/SIMD access (`CPACR_EL1.FPEN`: Rust code on this target may use
//! the FP/SIMD registers), the exception vectors; then the heap, the MMU and the run loop.

use buddy_system_allocator::LockedHeap;

/// The runtime's heap (engine tables, metadata cache, page tables split on demand).
#[global_allocator]
static HEAP: LockedHeap<32> = LockedHeap::empty();

core::arch::global_asm!(
    ".section .text.start, \"ax\"",
    ".global _start",
    "_start:",
    "msr daifset, #0xf",
    // CPACR_EL1.FPEN = 0b11: no trap of FP/SIMD at EL1.
    "mov x9, #(3 << 20)",
    "msr cpacr_el1, x9",
    "isb",
    "adrp x9, __stack_top",
    "add x9, x9, :lo12:__stack_top",
    "mov sp, x9",
    "adrp x9, __bss_start",
    "add x9, x9, :lo12:__bss_start",
    "adrp x10, __bss_end",
    "add x10, x10, :lo12:__bss_end",
    "1: cmp x9, x10",
    "b.hs 2f",
    "str xzr, [x9], #8",
    "b 1b",
    "2: adrp x9, dbt_rt_vectors",
    "add x9, x9, :lo12:dbt_rt_vectors",
    "msr vbar_el1, x9",
    "isb",
    "bl dbt_rt_main",
    "3: wfi",
    "b 3b",
);

extern "C" {
    static __image_end: u8;
}

/// Bytes of the region's end given to the code cache.
pub const CODE_CACHE_SIZE: u64 = 16 << 20;

/// The Rust entry: `dtb`, `entry` of the guest; this runtime's region `[base, base + size)`.
#[no_mangle]
extern "C" fn dbt_rt_main(dtb: u64, entry: u64, base: u64, size: u64) -> ! {
    // First the MMU: with it off every access is Device memory, where the unaligned
    // accesses compiled Rust may make fault.
    crate::mmu::init(base);
    // A linker symbol: only its address is used.
    let image_end = core::ptr::addr_of!(__image_end) as u64;
    let code_base = base + size - CODE_CACHE_SIZE;
    if image_end + (4 << 20) > code_base {
        crate::console::fatal("runtime region too small");
    }
    // SAFETY: [image_end, code_base) is this runtime's own RAM, used for nothing else.
    unsafe {
        HEAP.lock()
            .init(image_end as usize, (code_base - image_end) as usize)
    };
    crate::run::run(dtb, entry, base, size, code_base)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::console::fatal_args(format_args!("panic: {info}"))
}
