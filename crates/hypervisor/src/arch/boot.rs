//! Image header and first instructions: entered at EL2 with the MMU off and x0 = the host
//! device tree (arm64 boot protocol). The image is a static position-independent
//! executable: [`_start`] applies its own `R_AARCH64_RELATIVE` relocations (`.rela.dyn`,
//! produced by linking with `-pie`, see `build.rs`) for wherever it was placed, so any
//! 4 KiB-aligned load address works (the header's flags bit 3 says "anywhere in RAM").
//! Then it sets up the boot stack, clears .bss, installs the EL2 vectors and calls
//! [`crate::arch::start::primary_main`].
//!
//! The UEFI entry (`arch/uefi_entry.rs`) reaches `hv_relocate` first (with the firmware's
//! MMU on) and, after ExitBootServices, `_start` again: relocating is idempotent (each
//! word is set to `addend + delta`, never adjusted in place).

core::arch::global_asm!(
    r#"
.section .text.head, "ax"
.global _start
.global _head
_head:
    b       _start                  // code0
    .long   0                       // code1
    .quad   0x80000                 // text_offset
    .quad   __image_end - _head     // image_size (includes .bss)
    .quad   0xa                     // flags: LE (bit 0 = 0), 4K pages (bits 1-2 = 1),
                                    // placement anywhere in RAM (bit 3 = 1)
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
    // adrp/add address everything PC-relatively at 4 KiB granularity: the image must sit
    // at a 4 KiB-aligned address (the boot protocol gives 2 MiB + text_offset).
    adr     x1, _head
    tst     x1, #0xfff
    b.ne    .Lnot_el2
    bl      hv_relocate
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

// Applies .rela.dyn for the address the image runs at: for each R_AARCH64_RELATIVE entry
// (r_offset, r_info, r_addend), *(r_offset + delta) = r_addend + delta with delta = where
// `_head` is minus where it was linked (`HV_LINK_BASE`, linker.ld). Other types are not
// produced for this image (`cargo xtask check` would see them as a link change) and are
// skipped. Clobbers x1-x7 only; needs no stack.
.global hv_relocate
hv_relocate:
    adr     x1, _head
    movz    x2, #:abs_g3:HV_LINK_BASE
    movk    x2, #:abs_g2_nc:HV_LINK_BASE
    movk    x2, #:abs_g1_nc:HV_LINK_BASE
    movk    x2, #:abs_g0_nc:HV_LINK_BASE
    sub     x1, x1, x2              // delta
    adrp    x3, __rela_start
    add     x3, x3, :lo12:__rela_start
    adrp    x4, __rela_end
    add     x4, x4, :lo12:__rela_end
3:  cmp     x3, x4
    b.hs    4f
    ldp     x5, x6, [x3], #16       // r_offset, r_info
    ldr     x7, [x3], #8            // r_addend
    cmp     w6, #0x403              // R_AARCH64_RELATIVE
    b.ne    3b
    add     x7, x7, x1
    str     x7, [x5, x1]
    b       3b
4:  ret
"#
);

/// Where the image is linked (`HV_LINK_BASE` in `linker.ld`): its load address under QEMU
/// `-kernel`; anywhere else the boot code relocates it.
pub const LINK_BASE: u64 = 0x4008_0000;

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
