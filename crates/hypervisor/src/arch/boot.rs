//! Image header and first instructions: entered at EL2 with the MMU off and x0 = the host
//! device tree (arm64 boot protocol). The image runs only where it is linked (RAM base +
//! text_offset 0x80000, i.e. 0x4008_0000 on QEMU `virt`); elsewhere it parks the CPU. Sets up the boot stack, clears .bss, installs the
//! EL2 vectors and calls [`crate::arch::start::primary_main`].

core::arch::global_asm!(
    r#"
.section .text.head, "ax"
.global _start
_head:
    b       _start                  // code0
    .long   0                       // code1
    .quad   0x80000                 // text_offset
    .quad   __image_end - _head     // image_size (includes .bss)
    .quad   0x2                     // flags: LE, 4K pages, base near the start of RAM
                                    // (bit 3 clear: the image is linked at a fixed address
                                    // and does not relocate itself, see `_start`)
    .quad   0
    .quad   0
    .quad   0
    .ascii  "ARM\x64"               // magic
    .long   0

.section .text.boot, "ax"
_start:
    msr     daifset, #0xf
    mov     x19, x0                 // host DTB
    mrs     x1, CurrentEL
    cmp     x1, #(2 << 2)
    b.ne    .Lnot_el2
    // The image is linked for one address (text_offset above RAM base, `linker.ld`) and
    // has absolute pointers in its data: loaded anywhere else it must not run.
    adr     x1, _head
    ldr     x2, =_head
    cmp     x1, x2
    b.ne    .Lnot_el2
    adrp    x1, __boot_stack_top
    add     x1, x1, :lo12:__boot_stack_top
    mov     sp, x1
    adrp    x1, __bss_start
    add     x1, x1, :lo12:__bss_start
    adrp    x2, __bss_end
    add     x2, x2, :lo12:__bss_end
1:  cmp     x1, x2
    b.hs    2f
    str     xzr, [x1], #8
    b       1b
2:  adrp    x1, __el2_vectors
    add     x1, x1, :lo12:__el2_vectors
    msr     vbar_el2, x1
    isb
    mov     x0, x19
    bl      hv_primary_main
.Lnot_el2:
    wfe
    b       .Lnot_el2
.ltorg
"#
);

/// Size of the boot CPU's EL2 stack.
pub const BOOT_STACK_SIZE: usize = 64 * 1024;

#[repr(C, align(16))]
struct Stack([u8; BOOT_STACK_SIZE]);

// `static mut` because only the assembly above touches it (as the boot CPU's stack, through
// the linker symbol `__boot_stack_top`); Rust code never takes a reference to it.
#[no_mangle]
#[link_section = ".bss.boot_stack"]
static mut __BOOT_STACK: Stack = Stack([0; BOOT_STACK_SIZE]);

core::arch::global_asm!(
    r#"
.global __boot_stack_top
.set __boot_stack_top, __BOOT_STACK + {size}
"#,
    size = const BOOT_STACK_SIZE,
);
