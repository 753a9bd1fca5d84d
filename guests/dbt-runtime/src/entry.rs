//! Entry: stack, `.bss`, FP/SIMD access (`CPACR_EL1.FPEN`: Rust code on this target may use
//! the FP/SIMD registers), the exception vectors; then the heap, the MMU and the run loop.
//!
//! Every vCPU enters here (`crates/hypervisor/src/dbt_runtime.rs`): `x4` = its index, which
//! picks its stack and goes to `TPIDR_EL1` (`smp::me`); `x5` = how it starts: the boot
//! vCPU with `x0` = the guest's device tree (it zeroes `.bss`, builds the tables and the
//! heap), or a vCPU the guest started with PSCI `CPU_ON` with `x0` = its context id (it
//! uses what the boot vCPU built).

use talc::source::Manual;
use talc::TalcLock;

/// The runtime's heap (engine tables, metadata cache, page tables split on demand), shared
/// by the vCPUs. Talc (binned free lists, O(1) free with coalescing) rather than a buddy
/// allocator: `buddy_system_allocator` frees by a linear search of the size class's free
/// list for the buddy, and the translator's churn of small vectors (assembler buffers,
/// link lists) left those lists thousands long: ~10,800 host instructions per free,
/// 5.2 G of the 8.3 G host instructions of the armhf Linux boot to `Run /init` (issue 18).
#[global_allocator]
static HEAP: TalcLock<spin::mutex::SpinMutex<(), crate::smp::Yield>, Manual> =
    TalcLock::new(Manual);

core::arch::global_asm!(
    ".section .text.start, \"ax\"",
    ".global _start",
    "_start:",
    "msr daifset, #0xf",
    // CPACR_EL1.FPEN = 0b11: no trap of FP/SIMD at EL1.
    "mov x9, #(3 << 20)",
    "msr cpacr_el1, x9",
    "isb",
    // A vCPU index beyond the stacks the image has parks the vCPU.
    "cmp x4, #{max}",
    "b.hs 3f",
    "msr tpidr_el1, x4",
    // sp = __stack_top - index * STACK_SIZE.
    "adrp x9, __stack_top",
    "add x9, x9, :lo12:__stack_top",
    "mov x10, #{stack}",
    "msub x9, x4, x10, x9",
    "mov sp, x9",
    // Only the boot vCPU zeroes .bss (the others share it, already in use).
    "cbnz x5, 2f",
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
    max = const crate::smp::MAX_VCPUS,
    stack = const STACK_SIZE,
);

/// Bytes of stack per vCPU (`link.ld` `STACK_SIZE`).
const STACK_SIZE: usize = 128 << 10;

extern "C" {
    static __image_end: u8;
}

/// Bytes of the region's end given to the code cache.
pub const CODE_CACHE_SIZE: u64 = 16 << 20;

/// `x5` of the boot vCPU (`dbt_runtime::START_BOOT` in the hypervisor).
const START_BOOT: u64 = 0;

/// The Rust entry: `x0` = the guest's device tree (boot) or context id (`CPU_ON`), `entry`
/// of the guest, this runtime's region `[base, base + size)`, the vCPU's index (already in
/// `TPIDR_EL1`) and how it starts.
#[no_mangle]
extern "C" fn dbt_rt_main(x0: u64, entry: u64, base: u64, size: u64, _index: u64, start: u64) -> ! {
    if start != START_BOOT {
        // Tables, heap and machine are the boot vCPU's; it started this one.
        crate::mmu::init_secondary();
        crate::run::run_cpu_on(x0, entry)
    }
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
    let claimed = unsafe {
        HEAP.lock()
            .claim(image_end as *mut u8, (code_base - image_end) as usize)
    };
    if claimed.is_none() {
        crate::console::fatal("the heap could not be set up");
    }
    crate::run::run(x0, entry, base, size, code_base)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::console::fatal_args(format_args!("panic: {info}"))
}
