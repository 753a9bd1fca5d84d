//! Leaving UEFI: the memory map (into the hand-off record's RAM ranges), ExitBootServices,
//! then caches cleaned, the EL2 MMU and data cache off, and `_start` entered as a boot
//! loader would (x0 = device tree or 0).

use core::ptr::null_mut;

use uefi_raw::table::boot::{AllocateType, BootServices, MemoryDescriptor, MemoryType};
use uefi_raw::{Handle, Status};

use crate::firmware::handoff::Handoff;
use crate::firmware::uefi_memmap::usable_ram;

extern "C" {
    static _head: u8;
    static __image_end: u8;
    fn hv_efi_mmu_off_and_start(dtb: u64) -> !;
}

core::arch::global_asm!(
    r#"
.section .text.boot, "ax"
.global hv_efi_mmu_off_and_start
hv_efi_mmu_off_and_start:
    msr     daifset, #0xf
    mrs     x1, sctlr_el2
    bic     x1, x1, #(1 << 0)       // M: EL2 stage 1 off
    bic     x1, x1, #(1 << 2)       // C: data cache off
    msr     sctlr_el2, x1
    isb
    ic      iallu
    tlbi    alle2
    dsb     sy
    isb
    b       _start
"#
);

/// Gets the memory map, records its usable RAM in `h`, and exits boot services (retrying
/// when the map changed in between, as the UEFI spec allows).
///
/// # Safety
/// Boot services must be running; `image` is our handle. On success they are gone.
pub unsafe fn exit_boot_services(
    bs: &BootServices,
    image: Handle,
    h: &mut Handoff,
) -> Result<(), Status> {
    let (mut size, mut key, mut desc_size, mut version) = (0usize, 0usize, 0usize, 0u32);
    // SAFETY: a size query (null buffer) is allowed.
    let s = unsafe {
        (bs.get_memory_map)(
            &mut size,
            null_mut(),
            &mut key,
            &mut desc_size,
            &mut version,
        )
    };
    if s != Status::BUFFER_TOO_SMALL && s != Status::SUCCESS {
        return Err(s);
    }
    // Room for the entries our own allocation adds.
    let capacity = size + 16 * desc_size.max(core::mem::size_of::<MemoryDescriptor>());
    let mut buf = 0u64;
    // SAFETY: boot services are up.
    let s = unsafe {
        (bs.allocate_pages)(
            AllocateType::ANY_PAGES,
            MemoryType::LOADER_DATA,
            capacity.div_ceil(4096),
            &mut buf,
        )
    };
    if s != Status::SUCCESS {
        return Err(s);
    }
    let mut last = Status::SUCCESS;
    for _ in 0..4 {
        let mut size = capacity;
        // SAFETY: `buf` has `capacity` bytes. After a failed ExitBootServices only
        // GetMemoryMap and ExitBootServices may be called, which is all this loop does.
        let s = unsafe {
            (bs.get_memory_map)(
                &mut size,
                buf as *mut MemoryDescriptor,
                &mut key,
                &mut desc_size,
                &mut version,
            )
        };
        if s != Status::SUCCESS {
            return Err(s);
        }
        let count = size / desc_size.max(1);
        let descriptors = (0..count).map(|i| {
            // SAFETY: `count` descriptors of `desc_size` bytes each were written to `buf`.
            let d = unsafe { &*((buf as usize + i * desc_size) as *const MemoryDescriptor) };
            (d.ty.0, d.phys_start, d.page_count)
        });
        let (n, _lost) = usable_ram(descriptors, &mut h.ram);
        h.ram_count = n;
        // SAFETY: `key` is from the map just read.
        last = unsafe { (bs.exit_boot_services)(image, key) };
        if last == Status::SUCCESS {
            return Ok(());
        }
    }
    Err(last)
}

/// `DC CIVAC` over `[base, base + size)`: what was written with the caches on reaches
/// memory, and no line is left to shadow what is written with them off.
fn clean_invalidate(base: u64, size: u64) {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effects.
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let line = 4u64 << ((ctr >> 16) & 0xf);
    let mut a = base & !(line - 1);
    while a < base.saturating_add(size) {
        // SAFETY: cache maintenance by VA on mapped RAM (the firmware's identity map).
        unsafe { core::arch::asm!("dc civac, {}", in(reg) a, options(nostack)) };
        a += line;
    }
    // SAFETY: barrier only.
    unsafe { core::arch::asm!("dsb sy", options(nostack)) };
}

/// Cleans the image (with the hand-off record in it) and the device tree to the point of
/// coherency, turns the EL2 MMU and data cache off and enters `_start` with x0 = `dtb`.
///
/// # Safety
/// Boot services must be gone; the firmware's EL2 identity map must still be live.
pub unsafe fn enter_start(dtb: u64) -> ! {
    // SAFETY: only the addresses of linker symbols are taken.
    let (start, end) = unsafe { (&_head as *const u8 as u64, &__image_end as *const u8 as u64) };
    clean_invalidate(start, end - start);
    if dtb != 0 {
        // SAFETY: the firmware's device tree; only its header's totalsize is read.
        let size = unsafe { crate::platform::fdt_total_size(dtb as *const u8) }.unwrap_or(4096);
        clean_invalidate(dtb, size as u64);
    }
    // SAFETY: everything `_start` and the code after it read with the MMU off is clean.
    unsafe { hv_efi_mmu_off_and_start(dtb) }
}
