//! TLB maintenance by one address of a section (issue 17: under the DBT the guest's
//! 1 MiB section is shadowed as 4 KiB pages, and its translated code is indexed by page).
//! A global section at [`VA`] maps frame 1; the program reads a word of one page of it and
//! runs code from another. It then points the section at frame 2 and invalidates with
//! `TLBIMVA` of the section's first address only: that drops the whole section's TLB
//! entry, so the other page's data must now come from frame 2 (the code too, but
//! qemu-system-arm, the reference, keeps running the old code: see `test_section_tlbi`).

use core::ptr::{addr_of_mut, read_volatile, write_volatile};

use crate::identity_map::{mmu_off, mmu_on_with_section, put_code, remap_section, L1};

static mut TT: L1 = L1([0; 4096]);

/// The section's virtual address, and the two frames (1 MiB aligned guest RAM that
/// nothing else of this program uses).
const VA: u32 = 0x40d0_0000;
const FRAMES: [u32; 2] = [0x4300_0000, 0x4310_0000];
/// Where the data word and the code are in the section.
const DATA_OFF: u32 = 0x5000;
const CODE_OFF: u32 = 0x6000;

/// Fills both frames (MMU off): a data word and `mov r0, #n; bx lr` each.
fn fill_frames() {
    for (n, &f) in FRAMES.iter().enumerate() {
        // SAFETY: guest RAM this check owns (see FRAMES), written with the MMU off.
        unsafe {
            write_volatile((f + DATA_OFF) as *mut u32, 0x5ec0_0000 | n as u32);
            put_code(
                (f + CODE_OFF) as *mut u32,
                &[0xe3a0_0001 + n as u32, 0xe12f_ff1e], // mov r0, #n + 1; bx lr
            );
        }
    }
}

/// The data word and what the code returns through the section now.
fn probe() -> (u32, u32) {
    // SAFETY: the section maps one of the frames, both filled by `fill_frames`.
    unsafe {
        let d = read_volatile((VA + DATA_OFF) as *const u32);
        let f: extern "C" fn() -> u32 = core::mem::transmute((VA + CODE_OFF) as usize);
        (d, f())
    }
}

/// Runs the check and reports it through `check`.
pub fn test_section_tlbi(check: fn(&str, bool)) {
    fill_frames();
    // SAFETY: the table maps all RAM and the UART by identity but for VA's section, which
    // this program uses only through `probe`; nothing moves when the MMU goes on.
    let (before, after) = unsafe {
        let slot = mmu_on_with_section(addr_of_mut!(TT), VA, FRAMES[0]);
        // Twice: the second call runs translated code under the DBT.
        probe();
        let before = probe();
        // TLBIMVA of the section's first page.
        remap_section(slot, FRAMES[1], VA);
        let after = probe();
        mmu_off();
        (before, after)
    };
    check(
        "section mapping read and run through another page",
        before == (0x5ec0_0000, 1),
    );
    check(
        "TLBIMVA of a section's first page: another page's data remapped",
        after.0 == 0x5ec0_0001,
    );
    // What the code returns after the remap is not checked: qemu-system-arm 7.2 keeps
    // running frame 1's code there (its TLB flush of a large page does not clear its
    // translated-block cache for the section's other pages), so it is no reference.
    let _ = after.1;
}
