//! Image header and first instructions: entered at EL2 with the MMU off and x0 = the host
//! device tree (arm64 boot protocol). Sets up the boot stack, clears .bss, installs the
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
    .quad   0xa                     // flags: LE, 4K pages, 2 MiB-aligned base anywhere
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
"#
);

/// Size of the boot CPU's EL2 stack.
pub const BOOT_STACK_SIZE: usize = 64 * 1024;

#[repr(C, align(16))]
struct Stack([u8; BOOT_STACK_SIZE]);

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
