//! Image header and first instructions: entered at EL2 with the MMU off and x0 = the host
//! device tree (arm64 boot protocol), or through the PE/COFF header by UEFI firmware. The image is a static position-independent
//! executable: [`_start`] applies its own `R_AARCH64_RELATIVE` relocations (`.rela.dyn`,
//! produced by linking with `-pie`, see `build.rs`) for wherever it was placed, so any
//! 4 KiB-aligned load address works (the header's flags bit 3 says "anywhere in RAM").
//! Then it sets up the boot stack, clears .bss, installs the EL2 vectors and calls
//! `hv_primary_main` (`arch/start.rs`) — or, entered below EL2, calls
//! `hv_refuse_below_el2` (`arch/below_el2.rs`), which says so on the console and stops.
//!
//! The UEFI entry (`arch/uefi/mod.rs`) reaches `hv_relocate` first (with the firmware's
//! MMU on) and, after ExitBootServices, `_start` again: relocating is idempotent (each
//! word is set to `addend + delta`, never adjusted in place).

core::arch::global_asm!(
    r#"
.section .text.head, "ax"
.global _start
.global _head
_head:
    // code0: "MZ", the MS-DOS/PE signature UEFI looks for, which as an instruction is
    // `ccmp x18, #0, #0xd, pl` (changes only flags); code1: the jump to the real entry.
    .long   0xfa405a4d
    b       _start
    .quad   0x80000                 // text_offset
    .quad   __image_end - _head     // image_size (includes .bss)
    .quad   0xa                     // flags: LE (bit 0 = 0), 4K pages (bits 1-2 = 1),
                                    // placement anywhere in RAM (bit 3 = 1)
    .quad   0
    .quad   0
    .quad   0
    .ascii  "ARM\x64"               // magic
    .long   .Lpe_header - _head     // at 0x3c, as in an MS-DOS stub: the PE header

// PE32+ header (Microsoft PE/COFF spec, UEFI 2.10 section 2.1.1): one section that spans
// the image from 4 KiB on, readable, writable and executable (the image relocates itself
// in place, so the base-relocation directory is empty and the loader places it anywhere,
// 4 KiB aligned). The file layout is the memory layout; .bss is the zero-filled tail of the
// section's VirtualSize.
.Lpe_header:
    .ascii  "PE\0\0"
    .short  0xaa64                  // Machine: IMAGE_FILE_MACHINE_ARM64
    .short  1                       // NumberOfSections
    .long   0                       // TimeDateStamp
    .long   0                       // PointerToSymbolTable
    .long   0                       // NumberOfSymbols
    .short  .Lsection_table - .Loptional_header // SizeOfOptionalHeader
    .short  0x0206                  // EXECUTABLE_IMAGE | LINE_NUMS_STRIPPED | DEBUG_STRIPPED
.Loptional_header:
    .short  0x20b                   // PE32+
    .byte   0x02, 0x14              // linker version
    .long   __pe_file_end - .Lpe_text_start // SizeOfCode
    .long   0                       // SizeOfInitializedData
    .long   0                       // SizeOfUninitializedData
    .long   hv_efi_entry - _head    // AddressOfEntryPoint (arch/uefi/mod.rs)
    .long   .Lpe_text_start - _head // BaseOfCode
    .quad   0                       // ImageBase
    .long   0x1000                  // SectionAlignment
    .long   0x200                   // FileAlignment
    .short  0, 0                    // OperatingSystemVersion
    .short  0, 0                    // ImageVersion
    .short  0, 0                    // SubsystemVersion
    .long   0                       // Win32VersionValue
    .long   __image_end - _head     // SizeOfImage
    .long   .Lpe_text_start - _head // SizeOfHeaders
    .long   0                       // CheckSum
    .short  10                      // Subsystem: IMAGE_SUBSYSTEM_EFI_APPLICATION
    .short  0                       // DllCharacteristics
    .quad   0, 0, 0, 0              // stack and heap reserve/commit
    .long   0                       // LoaderFlags
    .long   6                       // NumberOfRvaAndSizes
    .quad   0, 0, 0, 0, 0, 0        // export, import, resource, exception, certificate,
                                    // base relocation: none
.Lsection_table:
    .ascii  ".text\0\0\0"
    .long   __image_end - .Lpe_text_start   // VirtualSize (with .bss)
    .long   .Lpe_text_start - _head         // VirtualAddress
    .long   __pe_file_end - .Lpe_text_start // SizeOfRawData
    .long   .Lpe_text_start - _head         // PointerToRawData
    .long   0                       // PointerToRelocations
    .long   0                       // PointerToLinenumbers
    .short  0                       // NumberOfRelocations
    .short  0                       // NumberOfLinenumbers
    .long   0xe0000060              // CNT_CODE | CNT_INITIALIZED_DATA | MEM_EXECUTE |
                                    // MEM_READ | MEM_WRITE
    .balign 0x1000
.Lpe_text_start:

.section .text.boot, "ax"
_start:
    msr     daifset, #0xf
    mov     x19, x0                 // host DTB
    // adrp/add address everything PC-relatively at 4 KiB granularity: the image must sit
    // at a 4 KiB-aligned address (the boot protocol gives 2 MiB + text_offset).
    adr     x1, _head
    tst     x1, #0xfff
    b.ne    .Lpark
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
2:  mrs     x1, CurrentEL
    cmp     x1, #(2 << 2)
    b.ne    .Lbelow_el2
    adrp    x1, __el2_vectors
    add     x1, x1, :lo12:__el2_vectors
    msr     vbar_el2, x1
    isb
    mov     x0, x19
    bl      hv_primary_main
    // Entered at EL1 (or below): say so on the console and stop (`arch/below_el2.rs`).
.Lbelow_el2:
    mov     x0, x19
    lsr     x1, x1, #2
    bl      hv_refuse_below_el2
.Lpark:
    wfe
    b       .Lpark

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
