//! The arm64 `Image` header and the first instructions a guest executes.
//!
//! Contract (arm64 Linux boot protocol, also what QEMU `-kernel` and the hypervisor use):
//! entered at EL1h with the MMU off, interrupts masked and x0 = physical address of the
//! device tree. The code below checks it runs where it was linked, sets up the stack in
//! `.bss`, zeroes `.bss`, installs `VBAR_EL1`, sets `CPACR_EL1.FPEN` so compiled Rust may use
//! FP/SIMD registers, and calls `guest_main(dtb)`, which [`entry!`](crate::entry!) defines.

use core::arch::global_asm;

// The header fields are laid out exactly as in Linux `Documentation/arch/arm64/booting.rst`.
global_asm!(
    r#"
    .section .text.head, "ax"
    .global _head
_head:
    b       _start                  // code0: branch to the entry code
    .long   0                       // code1
    .quad   0x80000                 // text_offset: linked at RAM base + 0x80000
    .quad   __image_size            // image_size: file + .bss + stack, 4 KiB aligned
    .quad   0xa                     // flags: LE (bit 0 = 0), 4K pages (bits 1-2 = 1),
                                    //        placement anywhere (bit 3 = 1)
    .quad   0                       // res2
    .quad   0                       // res3
    .quad   0                       // res4
    .ascii  "ARM\x64"               // magic
    .long   0                       // res5

    .section .text.start, "ax"
    .global _start
_start:
    mov     x19, x0                 // keep the DTB address

    // The code is position dependent: refuse to run anywhere but the link address.
    adr     x1, _head
    movz    x2, #:abs_g3:_head
    movk    x2, #:abs_g2_nc:_head
    movk    x2, #:abs_g1_nc:_head
    movk    x2, #:abs_g0_nc:_head
    cmp     x1, x2
    b.ne    .Lwrong_address

    msr     spsel, #1               // run on SP_EL1 (EL1h)
    msr     tpidr_el1, xzr          // CPU index 0 (see smp::this_cpu)
    adrp    x1, __stack_top
    add     x1, x1, :lo12:__stack_top
    mov     sp, x1

    // Zero .bss (16-byte aligned bounds; the stack is inside but not yet in use).
    adrp    x1, __bss_start
    add     x1, x1, :lo12:__bss_start
    adrp    x2, __bss_end
    add     x2, x2, :lo12:__bss_end
1:  cmp     x1, x2
    b.hs    2f
    stp     xzr, xzr, [x1], #16
    b       1b
2:
    adrp    x1, __vectors
    add     x1, x1, :lo12:__vectors
    msr     vbar_el1, x1

    // CPACR_EL1.FPEN = 0b11: FP/SIMD does not trap at EL1/EL0.
    mrs     x1, cpacr_el1
    orr     x1, x1, #(0b11 << 20)
    msr     cpacr_el1, x1
    isb

    mov     x0, x19
    bl      guest_main
3:  wfe
    b       3b

    // Loaded at the wrong address: say so on the PL011 (polling UARTFR.TXFF), then
    // request PSCI SYSTEM_RESET over HVC.
.Lwrong_address:
    adr     x3, .Lwrong_msg
    movz    x6, #0x0900, lsl #16
4:  ldrb    w4, [x3], #1
    cbz     w4, 6f
5:  ldr     w5, [x6, #0x18]
    tbnz    w5, #5, 5b
    str     w4, [x6]
    b       4b
6:  movz    x0, #0x8400, lsl #16
    movk    x0, #0x0009
    hvc     #0
7:  wfe
    b       7b
.Lwrong_msg:
    .asciz  "guest-rt: FAIL image not loaded at its link address 0x40080000\n"
    .balign 4
"#
);

/// Names the guest's entry function: `guest_rt::entry!(main);` with `fn main(dtb: usize) -> !`.
///
/// `dtb` is the physical address of the device tree the loader passed in x0.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        /// Called by the guest-rt entry code once stack, `.bss`, vectors and FP are ready.
        // SAFETY: `guest_main` is the one symbol of this name in the image (one `entry!` per
        // binary); the entry assembly calls it with the C ABI and x0 = the DTB address.
        #[unsafe(no_mangle)]
        pub extern "C" fn guest_main(dtb: usize) -> ! {
            let main: fn(usize) -> ! = $main;
            main(dtb)
        }
    };
}
